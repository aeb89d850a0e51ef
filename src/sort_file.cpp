// sort_file: checks the input, chooses the chunk sorter, plans from the budgets, then either
// sorts the input as one chunk straight into the output or forms runs and merges them, always
// writing through an AtomicOutputFile. Whole-record keys (--type) and records with a key spec
// take the same steps; runs of records hold entries (record_layout.hpp) and are merged on the host.
#include "src/sort_file.hpp"

#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "src/make_chunk_sorter.hpp"
#include "src/record_layout.hpp"
#include "src/record_output.hpp"
#include "src/run_formation.hpp"
#include "src/run_merge.hpp"
#include "src/slice_merge.hpp"
#include "src/sort_output.hpp"

#include <chrono>
#include <memory>
#include <optional>

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

// One chunk: read from the input (records of `width` bytes) and sorted, then written to the
// output in its raw form; or, with `unique` (records only), as entries through it.
void sort_as_one_chunk(const io::File& input, std::size_t width, const SortOutput& output, const SortPlan& plan,
                       ChunkSorter& sorter, RecordOutput* unique, SortReport& report) {
    OutputPrefault prefault(output, sorter);
    ChunkIo chunk_io;
    chunk_io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
        io::read_parallel(input, first * width, bytes);
    };
    chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
        if (unique)
            unique->put(0, first, bytes);
        else
            output.write(first * width, bytes);
    };
    sorter.prepare(1, plan.records);
    report.times += sorter.sort_chunk(0, plan.records, unique ? ChunkForm::raw_to_normalized : ChunkForm::raw_to_raw,
                                      chunk_io);
    report.output_records = unique ? unique->finish() : plan.records;
}

template <class T>
void sort_external(const io::File& input, const SortOutput& output, const SortPlan& plan, const KeyOrder& order,
                   ChunkSorter& sorter, const std::string& tmp_dir, SortReport& report) {
    // No OutputPrefault here: during run formation the host's threads are busy with the runs, and
    // faulting in the output then slowed the whole sort down on the GPU machine.
    std::vector<SortedRun<T>> runs = form_runs<T>(input, sizeof(T), plan, sorter, tmp_dir, report.times);
    report.runs = runs.size();
    report.output_records = plan.records;
    report.bytes_spilled = plan.runs_in_memory ? 0 : plan.records * sizeof(T);

    ScopedPhase phase(report.times.merge);
    if (!sorter.chunks_in_host_memory()) {
        // The GPU merges by sorting exact slices of all runs, in one pass.
        report.merge_passes = 1;
        merge_by_sorting_slices<T>(runs, sorter, plan.run_records, 2, [&](std::uint64_t first, std::span<const std::byte> bytes) {
            output.write(first * sizeof(T), bytes);
        });
        return;
    }
    report.merge_passes = merge_to_fan_in<T>(runs, plan, tmp_dir, report.bytes_spilled) + 1;
    MergeTarget<T> target;
    target.file = &output.file;
    target.mapped = output.mapped();
    if (!normalization_is_identity(order))
        target.finish = [order](std::span<T> keys) { denormalize_keys(keys, order); };
    merge_runs<T>(runs, target, plan);
}

// Records: runs of entries with W key words, merged on the host into records.
template <std::size_t W>
void sort_records_external(const io::File& input, const KeySpec& spec, bool unique, const SortOutput& output,
                           const SortPlan& plan, ChunkSorter& sorter, const std::string& tmp_dir, SortReport& report) {
    using T = RecordKey<W>;
    std::vector<SortedRun<T>> runs = form_runs<T>(input, spec.record_size, plan, sorter, tmp_dir, report.times);
    report.runs = runs.size();
    report.bytes_spilled = plan.runs_in_memory ? 0 : plan.records * plan.record_size;

    ScopedPhase phase(report.times.merge);
    report.merge_passes = merge_to_fan_in<T>(runs, plan, tmp_dir, report.bytes_spilled) + 1;
    RecordOutput records(output, 8 * W, spec.record_size, unique, plan.merge_slices(plan.records));
    MergeTarget<T> target;
    target.sink = [&](std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries) {
        records.put(slice, rank, entries);
    };
    merge_runs<T>(runs, target, plan);
    report.output_records = records.finish();
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

    io::File input = io::File::open_read(options.input);
    report.bytes = input.size();
    if (report.bytes % record_size != 0)
        throw SortError("'" + options.input + "' is " + std::to_string(report.bytes) +
                        " bytes long, which is not a multiple of the record size " + std::to_string(record_size) +
                        (options.records ? "" : " (" + std::string(key_type_name(options.order.type)) + ")"));
    report.records = report.bytes / record_size;

    Budgets budgets;
    budgets.memory_bytes = options.memory_bytes.value_or(default_memory_budget());
    budgets.threads = options.threads.value_or(default_threads());
    if (budgets.memory_bytes < kMinMemoryBudget) throw std::invalid_argument("the memory budget must be at least 1M");
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, std::max(1u, budgets.threads));
    std::unique_ptr<ChunkSorter> sorter =
        make_chunk_sorter(options, records ? &spec : nullptr, std::max(1u, budgets.threads));
    report.backend = sorter->name();
    const std::uint64_t memory = chunk_memory(budgets.memory_bytes);
    // Runs of records hold entries (key words and record): plan with their size.
    report.plan = plan_sort(report.records, records ? entry_bytes(spec) : record_size, budgets,
                            {sorter->capacity(1, memory), sorter->capacity(2, memory), sorter->chunks_in_host_memory()});
    if (options.max_fan_in)
        report.plan.fan_in = std::max<std::size_t>(2, std::min(report.plan.fan_in, *options.max_fan_in));
    const SortPlan& plan = report.plan;

    io::FileId input_id, output_id;
    const bool replaces_input = io::file_id(options.input, input_id) && io::file_id(options.output, output_id) &&
                                input_id == output_id;
    const std::string tmp_dir = options.tmp_dir.value_or(io::parent_folder(options.output));
    // A --tmp-dir that cannot be used is an error even when this input would not need it.
    if (options.tmp_dir) io::create_temp_file(tmp_dir);

    io::AtomicOutputFile output_file(options.output);
    if (plan.records > 0) {
        // Written through a memory map when the space is reserved (no page can then meet a full disk).
        const bool reserved = output_file.file().allocate(report.bytes);
        std::optional<io::FileMapping> mapping;
        if (reserved) mapping.emplace(output_file.file(), report.bytes);
        const SortOutput output{output_file.file(), mapping ? &*mapping : nullptr};
        if (plan.in_memory) {
            report.runs = 1;
            std::optional<RecordOutput> unique;
            if (options.unique) unique.emplace(output, 8 * key_words(spec), spec.record_size, true, 1);
            sort_as_one_chunk(input, record_size, output, plan, *sorter, unique ? &*unique : nullptr, report);
        } else if (records) {
            switch (key_words(spec)) {
            case 1: sort_records_external<1>(input, spec, options.unique, output, plan, *sorter, tmp_dir, report); break;
            case 2: sort_records_external<2>(input, spec, options.unique, output, plan, *sorter, tmp_dir, report); break;
            case 3: sort_records_external<3>(input, spec, options.unique, output, plan, *sorter, tmp_dir, report); break;
            default: sort_records_external<4>(input, spec, options.unique, output, plan, *sorter, tmp_dir, report); break;
            }
        } else {
            switch (record_size) {
            case 1: sort_external<std::uint8_t>(input, output, plan, options.order, *sorter, tmp_dir, report); break;
            case 2: sort_external<std::uint16_t>(input, output, plan, options.order, *sorter, tmp_dir, report); break;
            case 4: sort_external<std::uint32_t>(input, output, plan, options.order, *sorter, tmp_dir, report); break;
            default: sort_external<std::uint64_t>(input, output, plan, options.order, *sorter, tmp_dir, report); break;
            }
        }
    }
    // Duplicates dropped by --unique leave the reserved space unused at the end.
    if (report.output_records < report.records) output_file.file().truncate(report.output_records * record_size);
    // A file that changed size while it was read would give a wrong result: refuse to commit it.
    if (input.size() != report.bytes)
        throw SortError("'" + options.input + "' changed size while it was being sorted");
    output_file.commit(options.sync || replaces_input);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace gpusort
