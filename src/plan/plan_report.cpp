// plan_text and plan_json: every field of a SortPlan, for people and for programs.
#include "src/plan/plan_report.hpp"

#include "io/file.hpp"

#include <cstdio>
#include <optional>
#include <sstream>

namespace gpusort {

std::string size_text(std::uint64_t bytes) {
    char text[64];
    const double b = static_cast<double>(bytes);
    if (bytes >= (std::uint64_t{1} << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", b / (1 << 30));
    else if (bytes >= (std::uint64_t{1} << 20))
        std::snprintf(text, sizeof text, "%.1f MiB", b / (1 << 20));
    else if (bytes >= (std::uint64_t{1} << 10))
        std::snprintf(text, sizeof text, "%.1f KiB", b / (1 << 10));
    else
        std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
    return text;
}

const char* json_flag(bool value) { return value ? "true" : "false"; }

std::string json_compression(const std::optional<Compression>& forced, const std::string& path) {
    return json_string(compression_name(forced.value_or(compression_of(path))));
}

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

namespace {

std::string count_text(std::uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// How a file is read or written: with direct I/O in pieces of `piece`, or through the page cache.
std::string io_text(bool direct, std::uint64_t piece) {
    return direct ? "with direct I/O in pieces of " + size_text(piece) : "through the page cache";
}

// "sorter 60.0 MiB + samples 1.0 MiB" of the parts that are not 0.
std::string parts_text(std::initializer_list<std::pair<const char*, std::uint64_t>> parts) {
    std::string text;
    for (const auto& [name, bytes] : parts)
        if (bytes > 0) text += (text.empty() ? "" : " + ") + std::string(name) + " " + size_text(bytes);
    return text.empty() ? "nothing" : text;
}

// input:, files:, budgets: and device: lines.
void input_and_budgets_text(std::ostream& out, const SortPlan& p) {
    out << "input:        "
        << (p.size_known ? count_text(p.records, "record", "records") + " of " + count_text(p.record_size, "byte", "bytes") +
                               " (" + size_text(p.records * p.record_size) + ")"
                         : "a stream of records of " + count_text(p.record_size, "byte", "bytes") +
                               ", its size known only at its end")
        << "\n";
    if (!p.value_bytes.empty() || p.index_bytes > 0) {
        out << "columns:      each record joins the key's " << count_text(p.key_bytes, "byte", "bytes");
        for (const std::size_t bytes : p.value_bytes) out << ", a value's " << count_text(bytes, "byte", "bytes");
        if (p.index_bytes > 0) out << " and the index's " << p.index_bytes;
        out << "; the outputs are split out of them\n";
    }
    out << "files:        INPUT " << (p.size_known ? io_text(p.input_direct, p.direct_io_piece) : "read in order") << ", OUTPUT "
        << (p.output_streamed ? "written in order" : io_text(p.output_direct, p.direct_io_piece)) << "\n";
    out << "budgets:      host memory " << size_text(p.memory_bytes) << ", " << count_text(p.threads, "thread", "threads")
        << "\n";
    if (p.device)
        out << "device:       " << p.device->name << ": " << size_text(p.device->budget_bytes) << " of "
            << size_text(p.device->free_bytes) << " free (" << size_text(p.device->reserve_bytes)
            << " left to others), " << count_text(p.device->slots, "chunk", "chunks") << " at once, pinned staging "
            << size_text(p.device->staging_memory()) << " (" << size_text(p.device->staging_bytes) << " buffers)\n";
    else
        out << "device:       none (chunks are sorted on the CPU)\n";
}

// The chunks: line, and for runs the samples: and merge: lines.
void chunks_text(std::ostream& out, const SortPlan& p) {
    out << "chunks:       ";
    if (p.size_known && p.one_chunk) {
        out << "one chunk of " << count_text(p.records, "record", "records") << ", no runs, no merge\n";
        return;
    }
    if (!p.size_known)
        out << "one chunk if the stream holds at most " << count_text(p.one_chunk_records, "record", "records") << ", else ";
    out << "runs of " << count_text(p.run_records, "record", "records") << " (" << size_text(p.run_records * p.entry_bytes)
        << " each), two formed at once";
    if (p.size_known) out << ": " << count_text(p.runs, "run", "runs");
    if (p.runs_kept_in_memory)
        out << ", kept in host memory\n";
    else if (p.spill_direct)
        out << ", spilled to disk over " << count_text(p.spill_files, "file", "files") << " with direct I/O in pieces of "
            << size_text(p.direct_io_piece) << " (bounce buffers " << size_text(p.host.direct_io) << ")\n";
    else
        out << ", spilled to disk over " << count_text(p.spill_files, "file", "files") << " through the page cache\n";
    out << "samples:      every " << p.sample_stride << "th entry of each run, at most " << size_text(p.sample_memory) << "\n";
    out << "merge:        ";
    if (p.merge_on_device) {
        out << "one pass on the device, sorting exact slices of " << count_text(p.run_records, "record", "records") << ", "
            << p.device_merge_slots << " at once\n";
        return;
    }
    out << (p.size_known ? count_text(p.merge_passes, "pass", "passes") : std::string("passes as the runs need"))
        << " on the host: " << count_text(p.merge_tasks, "task", "tasks") << ", up to " << count_text(p.fan_in, "run", "runs")
        << " at once, buffers of " << size_text(p.merge_memory) << " in all";
    if (p.in_order_slice_buffers > 0)
        out << "; in order through " << p.in_order_slice_buffers << " slices of up to " << size_text(p.in_order_slice_bytes);
    out << "\n";
}

// The stream input: and compression: lines, where there is a stream input or a compressed output.
void streams_text(std::ostream& out, const SortPlan& p) {
    if (p.stream_chunk_bytes > 0)
        out << "stream input: read ahead in " << p.reader.queued_blocks << " blocks of " << size_text(p.reader.block_bytes)
            << ", into two chunk buffers of " << size_text(p.stream_chunk_bytes) << "\n";
    if (p.writer.compressing_threads > 0)
        out << "compression:  " << count_text(p.writer.compressing_threads, "thread", "threads") << " (encoders of "
            << size_text(p.writer.encoder_bytes) << "), blocks of " << size_text(p.writer.block_bytes) << ", "
            << p.writer.blocks_in_flight << " in flight\n";
}

// The host memory: line: the peak, and the parts while sorting and (for runs) while merging.
void host_memory_text(std::ostream& out, const SortPlan& p) {
    const HostMemoryPlan& h = p.host;
    out << "host memory:  at most " << size_text(h.peak()) << " of " << size_text(p.memory_bytes) << ": while sorting "
        << size_text(h.forming()) << " ("
        << parts_text({{"sorter", h.sorter}, {"pinned staging", h.staging}, {"stream chunks", h.stream_chunks},
                       {"reader", h.reader}, {"writer", h.writer}, {"samples", h.samples}, {"runs", h.runs}})
        << ")";
    if (!p.one_chunk || !p.size_known)
        out << ", while merging " << size_text(h.merging()) << " ("
            << parts_text({{"merge buffers", h.merge_buffers}, {"slices", h.in_order_slices},
                           {"pinned staging", h.staging}, {"reader", h.reader}, {"writer", h.writer},
                           {"samples", h.samples}, {"runs", h.runs}})
            << ")";
    out << "; --verify reads back " << size_text(p.verify_block_bytes) << " at once\n";
}

// The disk: lines: a stream's runs per record, or each folder's need with the free space there now.
void disk_text(std::ostream& out, const SortPlan& p) {
    if (!p.size_known) {
        out << "disk:         sorted runs of " << p.entry_bytes << " bytes per record of the stream, when it is not one chunk\n";
        return;
    }
    if (p.disk.empty()) out << "disk:         nothing\n";
    for (const DiskNeed& need : p.disk) {
        const std::optional<std::uint64_t> free = io::free_space(need.folder);
        out << "disk:         " << size_text(need.bytes) << " in '" << need.folder << "' for " << need.what;
        if (free) out << " (" << size_text(*free) << " free)";
        out << "\n";
    }
}

}  // namespace

std::string plan_text(const SortPlan& p) {
    std::ostringstream out;
    input_and_budgets_text(out, p);
    chunks_text(out, p);
    streams_text(out, p);
    host_memory_text(out, p);
    disk_text(out, p);
    return out.str();
}

std::string plan_json(const SortPlan& p, int indent) {
    const std::string pad(static_cast<std::size_t>(indent) + 2, ' '), end(static_cast<std::size_t>(indent), ' ');
    const HostMemoryPlan& h = p.host;
    std::ostringstream out;
    out << "{\n"
        << pad << "\"memory_bytes\": " << p.memory_bytes << ", \"threads\": " << p.threads << ",\n"
        << pad << "\"size_known\": " << json_flag(p.size_known) << ", \"records\": " << p.records
        << ", \"record_size\": " << p.record_size << ", \"entry_bytes\": " << p.entry_bytes
        << ", \"output_streamed\": " << json_flag(p.output_streamed) << ",\n"
        << pad << "\"key_bytes\": " << p.key_bytes << ", \"value_bytes\": [";
    for (std::size_t i = 0; i < p.value_bytes.size(); ++i) out << (i > 0 ? ", " : "") << p.value_bytes[i];
    out << "], \"index_bytes\": " << p.index_bytes << ",\n"
        << pad << "\"one_chunk\": " << json_flag(p.one_chunk) << ", \"one_chunk_records\": " << p.one_chunk_records
        << ", \"run_records\": " << p.run_records << ", \"runs\": " << p.runs << ",\n"
        << pad << "\"chunk_memory\": {\"host\": " << p.chunk_memory.host_bytes << ", \"device\": " << p.chunk_memory.device_bytes
        << ", \"staging\": " << p.chunk_memory.staging_bytes << "},\n"
        << pad << "\"stream_chunk_bytes\": " << p.stream_chunk_bytes << ", \"runs_kept_in_memory\": " << json_flag(p.runs_kept_in_memory)
        << ", \"spill_direct\": " << json_flag(p.spill_direct) << ", \"input_direct\": " << json_flag(p.input_direct)
        << ", \"output_direct\": " << json_flag(p.output_direct) << ", \"direct_io_piece\": " << p.direct_io_piece
        << ", \"spill_files\": " << p.spill_files
        << ", \"sample_stride\": " << p.sample_stride << ", \"sample_memory\": " << p.sample_memory << ",\n"
        << pad << "\"merge_on_device\": " << json_flag(p.merge_on_device) << ", \"device_merge_slots\": " << p.device_merge_slots
        << ", \"merge_memory\": " << p.merge_memory << ", \"fan_in\": " << p.fan_in << ", \"merge_tasks\": " << p.merge_tasks
        << ", \"extra_buffers\": " << p.extra_buffers << ",\n"
        << pad << "\"in_order_slice_bytes\": " << p.in_order_slice_bytes
        << ", \"in_order_slice_buffers\": " << p.in_order_slice_buffers << ", \"merge_passes\": " << p.merge_passes << ",\n"
        << pad << "\"reader\": {\"block_bytes\": " << p.reader.block_bytes << ", \"queued_blocks\": " << p.reader.queued_blocks
        << "},\n"
        << pad << "\"writer\": {\"block_bytes\": " << p.writer.block_bytes
        << ", \"compressing_threads\": " << p.writer.compressing_threads
        << ", \"blocks_in_flight\": " << p.writer.blocks_in_flight << ", \"encoder_bytes\": " << p.writer.encoder_bytes
        << "},\n"
        << pad << "\"verify_block_bytes\": " << p.verify_block_bytes << ",\n"
        << pad << "\"device\": ";
    if (p.device)
        out << "{\"name\": " << json_string(p.device->name) << ", \"free\": " << p.device->free_bytes
            << ", \"reserve\": " << p.device->reserve_bytes << ", \"budget\": " << p.device->budget_bytes
            << ", \"staging_bytes\": " << p.device->staging_bytes << ", \"slots\": " << p.device->slots << "},\n";
    else
        out << "null,\n";
    out << pad << "\"host_memory\": {\"sorter\": " << h.sorter << ", \"staging\": " << h.staging
        << ", \"stream_chunks\": " << h.stream_chunks
        << ", \"reader\": " << h.reader << ", \"writer\": " << h.writer << ", \"samples\": " << h.samples
        << ", \"runs\": " << h.runs << ", \"merge_buffers\": " << h.merge_buffers
        << ", \"in_order_slices\": " << h.in_order_slices << ", \"direct_io\": " << h.direct_io
        << ", \"forming\": " << h.forming()
        << ", \"merging\": " << h.merging() << ", \"peak\": " << h.peak() << "},\n"
        << pad << "\"disk\": [";
    for (std::size_t i = 0; i < p.disk.size(); ++i)
        out << (i ? ", " : "") << "{\"folder\": " << json_string(p.disk[i].folder) << ", \"bytes\": " << p.disk[i].bytes
            << ", \"what\": " << json_string(p.disk[i].what) << "}";
    out << "]\n" << end << "}";
    return out.str();
}

}  // namespace gpusort
