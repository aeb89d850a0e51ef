// gpusort-file --lines: the plan as text and JSON, and the --stats JSON.
#include "src/cli/line_report.hpp"

#include "io/file.hpp"
#include "src/plan/plan_report.hpp"

#include <sstream>

namespace gpusort {

namespace {

std::string memory_text(const LinePlan& plan) {
    std::ostringstream out;
    out << "at most " << size_text(plan.memory_bytes) << ": chunks " << size_text(plan.chunk_bytes) << " + writer "
        << size_text(plan.write_buffer_bytes) << " + a read " << size_text(plan.read_bytes) << " + input queue "
        << size_text(plan.reader.memory());
    if (plan.writer.memory() > 0) out << " + compression " << size_text(plan.writer.memory());
    return out.str();
}

std::string chunks_text(const LinePlan& plan) {
    if (!plan.input_bytes) return "not known ahead (a stream, or compressed): one chunk holds " + size_text(plan.chunk_bytes) +
                                  " of text and entries (" + std::to_string(kLineCost) + " bytes per line)";
    std::ostringstream out;
    out << "about " << plan.chunk_lines << " lines of " << static_cast<std::uint64_t>(plan.mean_line_bytes + 0.5)
        << " bytes each (the mean of the first MiB): ";
    if (plan.runs <= 1) out << (plan.runs == 0 ? "no lines" : "one chunk, sorted in memory");
    else out << "about " << plan.runs << " runs, spilled to '" << plan.tmp_dir << "'";
    return out.str();
}

std::string merge_text(const LinePlan& plan) {
    std::string text = "up to " + std::to_string(plan.fan_in) + " runs at once; ";
    if (!plan.input_bytes) return text + "passes not known ahead";
    if (plan.merge_passes == 0) return text + "none needed";
    return text + std::to_string(plan.merge_passes) + (plan.merge_passes == 1 ? " pass" : " passes");
}

std::string disk_text(const LinePlan& plan) {
    if (plan.disk.empty()) return plan.input_bytes ? "nothing" : "not known ahead";
    std::string text;
    for (const DiskNeed& need : plan.disk) {
        if (!text.empty()) text += "; ";
        text += size_text(need.bytes) + " in '" + need.folder + "' for " + need.what;
        if (const auto free = io::free_space(need.folder)) text += " (" + size_text(*free) + " free)";
    }
    return text;
}

}  // namespace

std::string line_plan_text(const LinePlan& plan) {
    std::ostringstream out;
    out << "input:        " << (plan.input_bytes ? size_text(*plan.input_bytes) + " of text lines" : std::string("a stream of text lines")) << "\n"
        << "budgets:      host memory " << size_text(plan.memory_bytes) << ", " << plan.threads << " threads\n"
        << "chunks:       " << chunks_text(plan) << "\n"
        << "merge:        " << merge_text(plan) << "\n"
        << "host memory:  " << memory_text(plan) << "\n"
        << "disk:         " << disk_text(plan) << "\n";
    return out.str();
}

std::string line_plan_json(const LinePlan& plan, int indent) {
    const std::string pad(static_cast<std::size_t>(indent) + 2, ' ');
    std::ostringstream out;
    out << "{\n"
        << pad << "\"memory_bytes\": " << plan.memory_bytes << ", \"threads\": " << plan.threads << ",\n"
        << pad << "\"size_known\": " << (plan.input_bytes ? "true" : "false") << ", \"input_bytes\": " << plan.input_bytes.value_or(0)
        << ", \"mean_line_bytes\": " << plan.mean_line_bytes << ",\n"
        << pad << "\"sort_bytes\": " << plan.sort_bytes << ", \"chunk_bytes\": " << plan.chunk_bytes
        << ", \"write_buffer_bytes\": " << plan.write_buffer_bytes << ", \"read_bytes\": " << plan.read_bytes << ", \"line_limit\": " << plan.line_limit << ",\n"
        << pad << "\"chunk_lines\": " << plan.chunk_lines << ", \"runs\": " << plan.runs << ", \"fan_in\": " << plan.fan_in
        << ", \"merge_passes\": " << plan.merge_passes << ",\n"
        << pad << "\"reader\": {\"block_bytes\": " << plan.reader.block_bytes << ", \"queued_blocks\": " << plan.reader.queued_blocks << "},\n"
        << pad << "\"writer\": {\"block_bytes\": " << plan.writer.block_bytes << ", \"compressing_threads\": "
        << plan.writer.compressing_threads << ", \"blocks_in_flight\": " << plan.writer.blocks_in_flight
        << ", \"encoder_bytes\": " << plan.writer.encoder_bytes << "},\n"
        << pad << "\"tmp_dir\": " << json_string(plan.tmp_dir) << ",\n"
        << pad << "\"disk\": [";
    for (std::size_t i = 0; i < plan.disk.size(); ++i)
        out << (i > 0 ? ", " : "") << "{\"folder\": " << json_string(plan.disk[i].folder) << ", \"bytes\": " << plan.disk[i].bytes
            << ", \"what\": " << json_string(plan.disk[i].what) << "}";
    out << "]\n" << std::string(static_cast<std::size_t>(indent), ' ') << "}";
    return out.str();
}

std::string line_plan_report_json(const SortOptions& options, const LinePlan& plan) {
    return "{\n  \"input\": " + json_string(options.input) + ",\n  \"output\": " + json_string(options.output) +
           ",\n  \"lines\": true,\n  \"plan\": " + line_plan_json(plan, 2) + "\n}\n";
}

std::string line_stats_json(const SortOptions& options, const TextKeys& keys, const LineFileReport& report) {
    const LineSortTimes& t = report.sort.times;
    const double seconds = report.seconds > 0 ? report.seconds : 1e-9;
    std::ostringstream out;
    out << "{\n"
        << "  \"input\": " << json_string(options.input) << ",\n"
        << "  \"output\": " << json_string(options.output) << ",\n"
        << "  \"lines\": true,\n"
        << "  \"input_compression\": " << json_compression(options.input_compression, options.input) << ",\n"
        << "  \"output_compression\": " << json_compression(options.output_compression, options.output) << ",\n"
        << "  \"keys\": " << keys.keys.size() << ", \"descending\": " << json_flag(keys.reverse) << ", \"unique\": " << json_flag(keys.unique)
        << ", \"stable\": " << json_flag(keys.stable) << ", \"zero_terminated\": " << json_flag(keys.zero_terminated) << ",\n"
        << "  \"verified\": " << json_flag(report.verified) << ",\n"
        << "  \"input_bytes\": " << report.input_bytes << ",\n"
        << "  \"input_lines\": " << report.sort.lines << ",\n"
        << "  \"output_bytes\": " << report.output_bytes << ",\n"
        << "  \"output_lines\": " << report.output_lines << ",\n"
        << "  \"output_stored_bytes\": " << report.output_stored_bytes << ",\n"
        << "  \"runs\": " << report.sort.runs << ",\n"
        << "  \"merge_passes\": " << report.sort.merge_passes << ",\n"
        << "  \"bytes_spilled\": " << report.sort.bytes_spilled << ",\n"
        << "  \"budgets\": {\"memory\": " << report.plan.memory_bytes << ", \"sort\": " << report.plan.sort_bytes
        << ", \"threads\": " << report.plan.threads << "},\n"
        << "  \"plan\": " << line_plan_json(report.plan, 2) << ",\n"
        << "  \"seconds\": {\"total\": " << report.seconds << ", \"read\": " << t.read << ", \"sort\": " << t.sort
        << ", \"prefixes\": " << t.prefixes << ", \"ties\": " << t.ties << ", \"runs\": " << t.runs << ", \"merge\": " << t.merge << ", \"write\": " << t.write
        << ", \"flush\": " << report.flush_seconds << ", \"verify\": " << report.verify_seconds << "},\n"
        << "  \"throughput_mb_per_s\": " << static_cast<double>(report.input_bytes) / 1e6 / seconds << "\n"
        << "}\n";
    return out.str();
}

}  // namespace gpusort
