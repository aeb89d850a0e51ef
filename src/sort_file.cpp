// sort_file: checks the input, plans from the budgets, then either sorts in memory or forms
// runs and merges them, writing through an AtomicOutputFile.
#include "src/sort_file.hpp"

#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "src/cpu_chunk_sorter.hpp"
#include "src/run_formation.hpp"
#include "src/run_merge.hpp"

#include <chrono>
#include <memory>

#include <tbb/global_control.h>

namespace gpusort {

namespace {

template <class T>
void sort_in_memory(const io::File& input, const io::File& output, const SortPlan& plan, const KeyOrder& order,
                    ChunkSorter& sorter, SortReport& report) {
    auto buffer = std::make_unique_for_overwrite<T[]>(static_cast<std::size_t>(plan.records));
    std::span<T> keys(buffer.get(), static_cast<std::size_t>(plan.records));
    {
        ScopedPhase phase(report.times.read);
        io::read_parallel(input, 0, std::as_writable_bytes(keys));
    }
    {
        ScopedPhase phase(report.times.sort);
        normalize_keys(keys, order);
        sorter.sort(keys);
        denormalize_keys(keys, order);
    }
    ScopedPhase phase(report.times.write);
    io::write_parallel(output, 0, std::as_bytes(keys));
}

template <class T>
void sort_external(const io::File& input, const io::File& output, const SortPlan& plan, const KeyOrder& order,
                   ChunkSorter& sorter, const std::string& tmp_dir, SortReport& report) {
    std::vector<SortedRun<T>> runs = form_runs<T>(input, plan, order, sorter, tmp_dir, report.times);
    report.runs = runs.size();
    report.bytes_spilled = plan.records * sizeof(T);

    ScopedPhase phase(report.times.merge);
    report.merge_passes = merge_to_fan_in<T>(runs, plan, tmp_dir, report.bytes_spilled) + 1;
    MergeTarget<T> target;
    target.file = &output;
    if (!normalization_is_identity(order))
        target.finish = [order](std::span<T> keys) { denormalize_keys(keys, order); };
    merge_runs<T>(runs, target, plan);
}

template <class T>
void sort_keys_of_width(const io::File& input, const io::File& output, const SortPlan& plan, const KeyOrder& order,
                        ChunkSorter& sorter, const std::string& tmp_dir, SortReport& report) {
    if (plan.records == 0) return;
    if (plan.in_memory) {
        report.runs = 1;
        sort_in_memory<T>(input, output, plan, order, sorter, report);
    } else {
        sort_external<T>(input, output, plan, order, sorter, tmp_dir, report);
    }
}

}  // namespace

SortReport sort_file(const SortOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    SortReport report;
    const std::size_t record_size = key_width(options.order.type);

    io::File input = io::File::open_read(options.input);
    report.bytes = input.size();
    if (report.bytes % record_size != 0)
        throw SortError("'" + options.input + "' is " + std::to_string(report.bytes) +
                        " bytes long, which is not a multiple of the record size " + std::to_string(record_size) +
                        " (" + std::string(key_type_name(options.order.type)) + ")");
    report.records = report.bytes / record_size;

    Budgets budgets;
    budgets.memory_bytes = options.memory_bytes.value_or(default_memory_budget());
    budgets.threads = options.threads.value_or(default_threads());
    report.plan = plan_sort(report.records, record_size, budgets);
    if (options.max_fan_in) report.plan.fan_in = std::max<std::size_t>(2, std::min(report.plan.fan_in, *options.max_fan_in));
    const SortPlan& plan = report.plan;

    io::FileId input_id, output_id;
    const bool replaces_input = io::file_id(options.input, input_id) && io::file_id(options.output, output_id) &&
                                input_id == output_id;

    const std::string tmp_dir = options.tmp_dir.value_or(io::parent_folder(options.output));
    // A --tmp-dir that cannot be used is an error even when this input would not need it.
    if (options.tmp_dir) io::create_temp_file(tmp_dir);

    io::AtomicOutputFile output(options.output);
    output.file().allocate(report.bytes);

    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, plan.threads);
    CpuChunkSorter sorter(plan.threads);
    report.backend = sorter.name();
    switch (record_size) {
    case 1: sort_keys_of_width<std::uint8_t>(input, output.file(), plan, options.order, sorter, tmp_dir, report); break;
    case 2: sort_keys_of_width<std::uint16_t>(input, output.file(), plan, options.order, sorter, tmp_dir, report); break;
    case 4: sort_keys_of_width<std::uint32_t>(input, output.file(), plan, options.order, sorter, tmp_dir, report); break;
    case 8: sort_keys_of_width<std::uint64_t>(input, output.file(), plan, options.order, sorter, tmp_dir, report); break;
    default: throw SortError("unsupported record size " + std::to_string(record_size));
    }
    // Runs were checked against the file's size when it was opened; a file that changed since
    // would give a wrong result, so say so rather than commit it.
    if (input.size() != report.bytes)
        throw SortError("'" + options.input + "' changed size while it was being sorted");
    output.commit(options.sync || replaces_input);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace gpusort
