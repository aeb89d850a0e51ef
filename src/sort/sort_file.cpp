// sort_file: opens the input (a file read at any offsets, or a stream) and the output (a file
// renamed into place when complete, or a stream), chooses the chunk sorter, plans from the
// budgets, then either sorts the input as one chunk straight into the output or forms runs and
// merges them; finally verifies (--verify) and commits. Whole-record keys (--type) and records
// with a key spec take the same steps; runs of records hold entries (record_layout.hpp) and are
// merged on the host.
#include "gpusort/sort_file.hpp"

#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/temp_file.hpp"
#include "src/sorters/make_chunk_sorter.hpp"
#include "src/keys/key_normalization.hpp"
#include "src/keys/record_layout.hpp"
#include "src/output/record_output.hpp"
#include "src/runs/run_formation.hpp"
#include "src/merge/run_merge.hpp"
#include "src/merge/slice_merge.hpp"
#include "src/input/sort_input.hpp"
#include "src/output/sort_output.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

namespace gpusort {

namespace {

// While a one-chunk sort runs on the GPU the host's threads are mostly idle: they fault in the
// output's pages meanwhile (without changing them), so that writing the output later is a plain
// copy. Waits for that work when it goes out of scope, an exception included.
class OutputPrefault {
public:
    OutputPrefault(const SortOutput& output, const ChunkSorter& sorter) {
        if (!output.mapping || sorter.chunks_in_host_memory()) return;
        const io::FileMapping& mapping = *output.mapping;
        group_.run([&mapping] {
            constexpr std::uint64_t kBlock = std::uint64_t{64} << 20;
            const std::uint64_t blocks = (mapping.size() + kBlock - 1) / kBlock;
            tbb::parallel_for(std::uint64_t{0}, blocks, [&](std::uint64_t b) {
                mapping.populate(b * kBlock, std::min(kBlock, mapping.size() - b * kBlock));
            });
        });
    }
    ~OutputPrefault() { group_.wait(); }
    OutputPrefault(const OutputPrefault&) = delete;
    OutputPrefault& operator=(const OutputPrefault&) = delete;

private:
    tbb::task_group group_;
};

// What the steps of one sort share.
struct SortJob {
    const SortOptions& options;
    SortInput& input;
    OutputTarget& target;
    ChunkSorter& sorter;
    SortReport& report;
    Budgets budgets;
    KeySpec spec;            // the records' key (whole-record keys included)
    bool records = false;    // runs hold entries of key words and record
    std::size_t width = 0;   // bytes per input record
    std::string tmp_dir;
    std::size_t entry_bytes() const { return records ? gpusort::entry_bytes(spec) : width; }
    void phase(ProgressPhase p, std::uint64_t total) const {
        if (options.progress) options.progress->start_phase(p, total);
    }
};

// One chunk of `records` records, pulled through `read` (record index, bytes) and sorted, then
// written to the output in its raw form; or, with --unique, as entries through a RecordOutput.
void sort_as_one_chunk(SortJob& job, std::uint64_t records, const std::function<void(std::uint64_t, std::span<std::byte>)>& read,
                       const SortOutput& output) {
    SortReport& report = job.report;
    report.runs = records > 0 ? 1 : 0;
    report.output_records = records;
    if (records == 0) return;
    OutputPrefault prefault(output, job.sorter);
    std::optional<RecordOutput> unique;
    if (job.options.unique) unique.emplace(output, 8 * key_words(job.spec), job.spec.record_size, true, 1);
    ChunkIo chunk_io;
    chunk_io.read = read;
    chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
        if (unique)
            unique->put(0, first, bytes);
        else
            output.write(first * job.width, bytes);
    };
    job.sorter.prepare(1, records);
    report.times += job.sorter.sort_chunk(0, records, unique ? ChunkForm::raw_to_normalized : ChunkForm::raw_to_raw,
                                          chunk_io);
    if (unique) report.output_records = unique->finish();
}

// Merges the runs into the output, in as many passes as the plan's fan-in needs.
template <class T>
void merge_into_output(SortJob& job, std::vector<SortedRun<T>>& runs, const SortPlan& plan, const SortOutput& output) {
    SortReport& report = job.report;
    report.runs = runs.size();
    report.bytes_spilled = plan.runs_in_memory ? 0 : plan.records * plan.record_size;
    // The chunk buffers of a CPU sorter are not used by the merge: their memory goes back first.
    if (job.sorter.chunks_in_host_memory()) job.sorter.prepare(0, 0);
    ScopedPhase phase(report.times.merge);
    MergeTarget<T> target;
    target.in_order = output.sequential();
    if constexpr (!std::is_unsigned_v<T>) {
        // Entries of key words and record: the keys are stripped (and duplicates dropped) on the way out.
        report.merge_passes = merge_to_fan_in<T>(runs, plan, job.tmp_dir, report.bytes_spilled, job.options.progress) + 1;
        job.phase(ProgressPhase::writing, plan.records * job.width);
        RecordOutput records(output, sizeof(T), job.spec.record_size, job.options.unique, plan.merge_slices(plan.records));
        target.sink = [&](std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries) {
            records.put(slice, rank, entries);
        };
        merge_runs<T>(runs, target, plan);
        report.output_records = records.finish();
    } else {
        report.output_records = plan.records;
        if (!job.sorter.chunks_in_host_memory()) {
            // The GPU merges by sorting exact slices of all runs, in one pass (in order, one slice
            // at a time, for a stream).
            report.merge_passes = 1;
            job.phase(ProgressPhase::writing, plan.records * job.width);
            merge_by_sorting_slices<T>(runs, job.sorter, plan.run_records, output.sequential() ? 1 : 2,
                                       [&](std::uint64_t first, std::span<const std::byte> bytes) {
                                           output.write(first * sizeof(T), bytes);
                                       });
            return;
        }
        report.merge_passes = merge_to_fan_in<T>(runs, plan, job.tmp_dir, report.bytes_spilled, job.options.progress) + 1;
        job.phase(ProgressPhase::writing, plan.records * job.width);
        if (output.sequential()) {
            target.sink = [&](std::uint64_t, std::uint64_t rank, std::span<const std::byte> keys) {
                output.write(rank * sizeof(T), keys);
            };
        } else {
            target.file = output.file;
            target.mapped = output.mapped();
            target.progress = output.progress;
        }
        const KeyOrder order = job.options.order;
        if (!normalization_is_identity(order))
            target.finish = [order](std::span<T> keys) { denormalize_keys(keys, order); };
        merge_runs<T>(runs, target, plan);
    }
}

// Calls f.template operator()<T>() with the run entry's key type: RecordKey<W> for records, the
// plain key type for whole-record keys.
template <class F>
void with_key_type(const SortJob& job, F&& f) {
    if (job.records) {
        switch (key_words(job.spec)) {
        case 1: f.template operator()<RecordKey<1>>(); break;
        case 2: f.template operator()<RecordKey<2>>(); break;
        case 3: f.template operator()<RecordKey<3>>(); break;
        default: f.template operator()<RecordKey<4>>(); break;
        }
        return;
    }
    switch (job.width) {
    case 1: f.template operator()<std::uint8_t>(); break;
    case 2: f.template operator()<std::uint16_t>(); break;
    case 4: f.template operator()<std::uint32_t>(); break;
    default: f.template operator()<std::uint64_t>(); break;
    }
}

std::string size_text(std::uint64_t bytes) {
    char text[64];
    if (bytes >= (std::uint64_t{1} << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
    else
        std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return text;
}

// Free space needed up front: the output (when its size is known) and the spilled runs, with a
// second copy of them when the merge takes more than one pass.
void check_free_space(const SortJob& job, const SortPlan& plan) {
    struct Need {
        std::string folder;
        std::uint64_t bytes = 0;
        std::string what;
    };
    std::vector<Need> needs;
    if (!job.target.sequential() && !job.target.folder().empty())
        needs.push_back({job.target.folder(), plan.records * job.width, "the output '" + job.target.name() + "'"});
    if (!plan.in_memory && !plan.runs_in_memory) {
        const std::uint64_t chunks = (plan.records + plan.run_records - 1) / plan.run_records;
        const std::uint64_t spill = plan.records * plan.record_size * (chunks > plan.fan_in ? 2 : 1);
        needs.push_back({job.tmp_dir, spill, "sorted runs"});
    }
    // Needs on one file system add up.
    for (std::size_t i = 0; i < needs.size(); ++i) {
        std::uint64_t total = 0;
        std::string parts;
        for (std::size_t j = 0; j < needs.size(); ++j) {
            if (!io::same_file_system(needs[i].folder, needs[j].folder)) continue;
            total += needs[j].bytes;
            parts += (parts.empty() ? "" : " + ") + size_text(needs[j].bytes) + " for " + needs[j].what;
        }
        const std::optional<std::uint64_t> free = io::free_space(needs[i].folder);
        if (free && *free < total)
            throw SortError("not enough free space in '" + needs[i].folder + "': the sort needs " + size_text(total) + " (" +
                            parts + "), " + size_text(*free) + " are free");
    }
}

// Records the sorter may take as one chunk, cut down by the max_run_records testing aid.
std::uint64_t chunk_limit(const SortJob& job, std::uint64_t records) {
    const auto& limit = job.options.max_run_records;
    return limit ? std::min(records, std::max<std::uint64_t>(1, *limit)) : records;
}

// Plans from the budgets and the sorter's capacity for a chunk.
SortPlan make_plan(const SortJob& job, std::uint64_t records, const ChunkCapacity& capacity) {
    SortPlan plan = plan_sort(records, job.entry_bytes(), job.budgets, capacity);
    if (job.options.max_fan_in) plan.fan_in = std::max<std::size_t>(2, std::min(plan.fan_in, *job.options.max_fan_in));
    return plan;
}

// A file of known size, read at any offsets.
void sort_known_size(SortJob& job) {
    SortReport& report = job.report;
    report.bytes = job.input.size();
    if (report.bytes % job.width != 0)
        throw SortError("'" + job.input.name() + "' is " + std::to_string(report.bytes) +
                        " bytes long, which is not a multiple of the record size " + std::to_string(job.width) +
                        (job.options.records ? "" : " (" + std::string(key_type_name(job.options.order.type)) + ")"));
    report.records = report.bytes / job.width;
    const std::uint64_t memory = chunk_memory(job.budgets.memory_bytes);
    const ChunkCapacity capacity{chunk_limit(job, job.sorter.capacity(1, memory)),
                                 chunk_limit(job, job.sorter.capacity(2, memory)), job.sorter.chunks_in_host_memory()};
    report.plan = make_plan(job, report.records, capacity);
    const SortPlan& plan = report.plan;
    check_free_space(job, plan);
    const SortOutput& output = job.target.open(report.bytes);
    job.phase(ProgressPhase::sorting, report.bytes);
    auto read = [&](std::uint64_t offset, std::span<std::byte> bytes) { job.input.read_at(offset, bytes); };
    if (plan.in_memory) {
        sort_as_one_chunk(job, plan.records, [&](std::uint64_t first, std::span<std::byte> bytes) { read(first * job.width, bytes); },
                          output);
        return;
    }
    with_key_type(job, [&]<class T>() {
        // No OutputPrefault here: during run formation the host's threads are busy with the runs, and
        // faulting in the output then slowed the whole sort down on the GPU machine.
        std::vector<SortedRun<T>> runs = form_runs<T>(read, job.width, plan, job.sorter, job.tmp_dir, report.times);
        merge_into_output<T>(job, runs, plan, output);
    });
}

// A stream of unknown size (stdin, a pipe, a compressed file), read front to back. Chunks are
// read into host buffers; when the stream ends within the first two, it is sorted as one chunk,
// otherwise each chunk becomes a run as it comes.
void sort_streamed(SortJob& job) {
    SortReport& report = job.report;
    const std::uint64_t usable = chunk_memory(job.budgets.memory_bytes);
    const bool host_chunks = job.sorter.chunks_in_host_memory();
    // The chunk buffers take host memory besides the chunks themselves: a CPU sorter gets half.
    const std::uint64_t sorter_memory = host_chunks ? usable / 2 : usable;
    const std::uint64_t buffer_memory = host_chunks ? usable / 2 : usable;
    const std::uint64_t chunk =
        chunk_limit(job, std::min(job.sorter.capacity(2, sorter_memory), buffer_memory / 2 / job.width));
    if (chunk == 0) throw std::invalid_argument("the memory budget holds no record of a streamed input; give more --memory");
    const ChunkCapacity capacity{std::min(job.sorter.capacity(1, sorter_memory), 2 * chunk), chunk, host_chunks};

    job.phase(ProgressPhase::sorting, 0);
    auto read_next = [&](std::span<std::byte> bytes) { return job.input.read_next(bytes); };
    StreamChunks chunks(job.width, chunk);
    std::size_t pre_read = 0;
    {
        ScopedPhase phase(report.times.read);
        pre_read = chunks.fill(0, read_next) == chunk ? 2 : 1;
        if (pre_read == 2) chunks.fill(1, read_next);
    }
    const std::uint64_t first_two = chunks.records[0] + chunks.records[1];
    if (chunks.records[1] < chunk && first_two <= capacity.one_slot) {
        report.records = first_two;
        report.bytes = first_two * job.width;
        report.plan = make_plan(job, first_two, capacity);
        const SortOutput& output = job.target.open(report.bytes);
        sort_as_one_chunk(job, first_two,
                          [&](std::uint64_t first, std::span<std::byte> bytes) {
                              // Records [first, ...) of the two buffers, one after the other.
                              std::byte* out = bytes.data();
                              std::uint64_t n = bytes.size() / job.width;
                              for (std::size_t b = 0; b < 2 && n > 0; ++b) {
                                  if (first >= chunks.records[b]) {
                                      first -= chunks.records[b];
                                      continue;
                                  }
                                  const std::uint64_t take = std::min(n, chunks.records[b] - first);
                                  io::copy_parallel(out, std::span<const std::byte>(chunks.buffers[b].data() + first * job.width,
                                                                                take * job.width));
                                  out += take * job.width;
                                  n -= take;
                                  first = 0;
                              }
                          },
                          output);
        return;
    }
    // Runs, however few records the stream turns out to hold (two full chunks may be all): the
    // plans must not take it for a one-chunk sort, which has no merge (and no fan-in).
    const ChunkCapacity runs_only{0, chunk, host_chunks};
    with_key_type(job, [&]<class T>() {
        // The sample stride is fixed before the size is known: planned as for 64 chunks.
        SortPlan forming = make_plan(job, 64 * chunk, runs_only);
        forming.run_records = chunk;
        forming.runs_in_memory = false;
        std::vector<SortedRun<T>> runs =
            form_runs_from_stream<T>(chunks, pre_read, read_next, forming, job.sorter, job.tmp_dir, report.times);
        chunks = StreamChunks(job.width, 0);  // their memory goes back before the merge
        std::uint64_t records = 0;
        for (const auto& run : runs) records += run.size;
        report.records = records;
        report.bytes = records * job.width;
        report.plan = make_plan(job, records, runs_only);
        report.plan.run_records = chunk;
        report.plan.runs_in_memory = false;
        report.plan.sample_stride = forming.sample_stride;
        const SortOutput& output = job.target.open(report.bytes);
        merge_into_output<T>(job, runs, report.plan, output);
    });
}

}  // namespace

SortReport sort_file(const SortOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    SortReport report;
    // Records with a key spec, or whole-record keys that --unique needs to see as records.
    const bool records = options.records || options.unique;
    const KeySpec spec = options.records.value_or(whole_record_key(options.order.type, options.order.descending));
    if (records) spec.validate();
    const std::size_t record_size = records ? spec.record_size : key_width(options.order.type);
    report.record_size = record_size;

    Budgets budgets;
    budgets.memory_bytes = options.memory_bytes.value_or(default_memory_budget());
    budgets.threads = options.threads.value_or(default_threads());
    if (budgets.memory_bytes < kMinMemoryBudget) throw std::invalid_argument("the memory budget must be at least 1M");
    // Under a limit on the address space the budget and the threads' stacks must fit in what is left
    // of it, checked now: a thread that cannot be started later would end the program.
    const std::optional<std::uint64_t> address_space = address_space_room();
    if (address_space) {
        const std::uint64_t overhead = address_space_overhead(budgets.threads);
        const std::uint64_t room = *address_space > overhead ? *address_space - overhead : 0;
        if (!options.memory_bytes) budgets.memory_bytes = std::max(kMinMemoryBudget, std::min(budgets.memory_bytes, room));
        if (budgets.memory_bytes + overhead > *address_space)
            throw SortError("cannot sort " + (options.input == "-" ? "standard input" : "'" + options.input + "'") +
                            ": out of memory under the address-space limit (ulimit -v): " +
                            size_text(*address_space) + " are left, the --memory budget of " +
                            size_text(budgets.memory_bytes) + " and " + std::to_string(budgets.threads) +
                            " threads need " + size_text(budgets.memory_bytes + overhead) +
                            "; give a smaller --memory or --threads");
    }

    if (options.progress) options.progress->start_phase(ProgressPhase::starting, 0);
    SortInput input({options.input, options.input_compression, record_size, options.verify && !options.unique,
                     options.progress});
    report.input_streamed = input.streamed();
    io::FileId input_id, output_id;
    const bool replaces_input = options.input != "-" && options.output != "-" && io::file_id(options.input, input_id) &&
                                io::file_id(options.output, output_id) && input_id == output_id;
    OutputTarget target({options.output, options.output_compression, options.compression_level,
                         std::max(1u, budgets.threads), options.progress});
    report.output_streamed = target.sequential();
    if (address_space) target.write_without_map();  // a map would take address space as large as the output
    if (options.verify && target.in_place()) target.check_as_written(spec, options.unique);
    // Spilled runs go next to a regular OUTPUT, else to $TMPDIR (or /tmp).
    std::string tmp_dir = options.tmp_dir.value_or(target.folder());
    if (tmp_dir.empty()) {
        const char* env = std::getenv("TMPDIR");
        tmp_dir = env && *env ? env : "/tmp";
    }
    // A --tmp-dir that cannot be used is an error even when this input would not need it.
    if (options.tmp_dir) io::create_temp_file(tmp_dir);

    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, std::max(1u, budgets.threads));
    std::unique_ptr<ChunkSorter> sorter =
        make_chunk_sorter(options, records ? &spec : nullptr, std::max(1u, budgets.threads));
    report.backend = sorter->name();
    report.device_memory = sorter->device_memory();

    SortJob job{options, input, target, *sorter, report, budgets, spec, records, record_size, tmp_dir};
    if (input.streamed())
        sort_streamed(job);
    else
        sort_known_size(job);

    report.output_bytes = report.output_records * record_size;
    target.finish(report.output_bytes);
    input.check_unchanged();
    if (options.verify) {
        OutputExpectation expected{spec, options.unique, report.output_records, std::nullopt};
        if (!options.unique) expected.checksum = input.checksum();
        target.verify(expected);
        report.verified = true;
    }
    target.commit(options.sync || replaces_input);
    report.output_stored_bytes = target.bytes_out();
    if (options.progress) options.progress->start_phase(ProgressPhase::done, 0);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace gpusort
