// sort_file: opens the input (a file read at any offsets, or a stream), looks at the output,
// chooses the chunk sorter and plans every size from the budgets (plan_file stops there), then
// opens the output (a file renamed into place when complete, or a stream) and either sorts the
// input as one chunk straight into it or forms runs and merges them; finally verifies (--verify)
// and commits. Whole-record keys (--type) and records with a key spec take the same steps; runs of
// records hold entries (record_layout.hpp) and are merged on the host.
#include "gpusort/sort_file.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/sort/sort_part.hpp"

#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "src/sorters/make_chunk_sorter.hpp"
#include "src/keys/key_dispatch.hpp"
#include "src/keys/key_normalization.hpp"
#include "src/keys/record_layout.hpp"
#include "src/output/record_output.hpp"
#include "src/runs/run_formation.hpp"
#include "src/merge/run_merge.hpp"
#include "src/merge/multiway_selection.hpp"
#include "src/sort/sort_columns.hpp"
#include "src/merge/slice_merge.hpp"
#include "src/input/sort_input.hpp"
#include "src/output/sort_output.hpp"
#include "src/plan/plan_report.hpp"
#include "src/plan/cgroup_memory.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

namespace gpusort {

namespace {

// Faults in the output's pages (without changing them) ahead of the writes, so that writing the
// output is a plain copy: while a one-chunk sort runs on the GPU, the host's threads are mostly
// idle; during a merge on the GPU, the writes follow the output from front to back, and
// `workers` tasks take its blocks in that order. Waits for that work when it goes out of scope,
// an exception included. `fault` (when set) gets the seconds spent and the bytes faulted in.
class OutputPrefault {
public:
    OutputPrefault(const SortOutput& output, const SortPlan& plan, unsigned workers, MergePhase* fault = nullptr) {
        if (!plan.device || workers == 0) return;
        // The output's map, or the maps of its columns, in blocks.
        constexpr std::uint64_t kBlock = std::uint64_t{64} << 20;
        for (const std::span<std::byte> map : output_maps(output))
            for (std::uint64_t at = 0; at < map.size(); at += kBlock)
                blocks_.push_back(map.subspan(at, std::min(kBlock, map.size() - at)));
        if (blocks_.empty()) return;
        start_ = std::chrono::steady_clock::now();
        fault_ = fault;
        for (unsigned w = 0; w < workers; ++w)
            group_.run([this] {
                for (std::size_t b = next_++; b < blocks_.size() && !stop_; b = next_++)
                    if (io::populate_for_writing(blocks_[b].data(), blocks_[b].size())) done_ += blocks_[b].size();
                const auto end = std::chrono::steady_clock::now();
                std::lock_guard lock(mutex_);
                end_ = std::max(end_, end);
            });
    }
    // Stops the workers after the block each is in; the seconds run until the last of them ended.
    ~OutputPrefault() {
        stop_ = true;
        group_.wait();
        if (fault_) fault_->add(std::chrono::duration<double>(end_ - start_).count(), done_);
    }
    OutputPrefault(const OutputPrefault&) = delete;
    OutputPrefault& operator=(const OutputPrefault&) = delete;

private:
    static std::vector<std::span<std::byte>> output_maps(const SortOutput& output) {
        if (const auto* map = std::get_if<MappedFile>(&output.destination())) return {{map->data, map->size}};
        if (const auto* columns = std::get_if<const ColumnFiles*>(&output.destination())) return (*columns)->maps();
        return {};
    }

    std::vector<std::span<std::byte>> blocks_;
    tbb::task_group group_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> done_{0};  // bytes faulted in
    std::mutex mutex_;
    std::chrono::steady_clock::time_point start_, end_;
    MergePhase* fault_ = nullptr;
};

// A sort up to its plan: the key, the budgets, the input (opened, not read yet), what the output
// is (not opened yet), where runs go and the chunk sorter; nothing is written or created.
struct PlannedSort {
    explicit PlannedSort(const PartSortOptions& options);

    std::optional<ColumnLayout> columns;  // keys with values or an index: joined records (column_input.hpp)
    KeySpec spec;              // the records' key (whole-record keys included)
    bool records = false;      // runs hold entries of key words and record, or bare records
    std::size_t width = 0;     // bytes per input record
    bool address_space_limited = false;  // under ulimit -v (set by budgets_of, so declared before budgets)
    Budgets budgets;
    SortInput input;
    OutputShape output;
    std::string tmp_dir;
    std::unique_ptr<ChunkSorter> sorter;
    std::string backend_reason;  // why this sorter: "--backend cpu", "no usable GPU: ..."
    // Runs of records merged on the device (not with --unique, whose duplicates the host's merge
    // drops) hold the bare records, keyed by this spec when read: the device needs no key words.
    std::optional<FixedKeySpec> bare_runs;
    SortPlan plan;

    const FixedKeySpec* record_keys() const { return bare_runs ? &*bare_runs : nullptr; }

private:
    // Records with a key spec, or whole-record keys that --unique or columns need to see as records.
    static bool sorts_records(const PartSortOptions& options) {
        return options.records || options.unique || sorts_columns(options);
    }
    static std::optional<ColumnLayout> columns_of(const PartSortOptions& options);
    static KeySpec key_of(const PartSortOptions& options, const std::optional<ColumnLayout>& columns);
    static Budgets budgets_of(const PartSortOptions& options, bool& address_space_limited);
    static OutputShape shape_of(const PartSortOptions& options);
    PlanInput plan_input(const PartSortOptions& options) const;
    void plan_input_output_io(const PartSortOptions& options, PlanInput& what) const;
};

// OUTPUT's shape, or a region's (checked): a regular file written at any offsets, in OUTPUT's folder.
OutputShape PlannedSort::shape_of(const PartSortOptions& options) {
    if (options.output_memory || options.memory_columns) return {false, "", Compression::none};  // memory
    if (sorts_columns(options)) return column_output_shape(options);
    if (!options.output_region && !options.shared_runs) return output_shape(options.output, options.output_compression);
    if (options.output_compression.value_or(Compression::none) != Compression::none)
        throw std::invalid_argument("an output region is written uncompressed");
    return {false, io::parent_folder(options.output), Compression::none};
}

std::optional<ColumnLayout> PlannedSort::columns_of(const PartSortOptions& options) {
    if (!sorts_columns(options)) return std::nullopt;
    if (options.output_region || options.shared_runs || options.input_memory.has_value() != options.memory_columns.has_value())
        throw std::invalid_argument("columns are sorted from files into files, or from memory into memory");
    if (options.verify && (options.output.empty() || options.memory_columns))
        throw std::invalid_argument("--verify checks the sorted keys of files: give OUTPUT");
    const std::size_t key_width = options.records ? options.records->record_size : gpusort::key_width(options.order.type);
    if (!options.memory_columns) return column_layout(options, key_width);
    std::vector<std::uint64_t> value_bytes;
    for (const std::span<const std::byte> values : options.memory_columns->values) value_bytes.push_back(values.size());
    return column_layout(options, key_width, options.input_memory->size(), value_bytes);
}

KeySpec PlannedSort::key_of(const PartSortOptions& options, const std::optional<ColumnLayout>& columns) {
    KeySpec spec = options.records.value_or(whole_record_key(options.order.type, options.order.descending));
    if (columns) spec.record_size = columns->record_size();  // the key record leads each joined record
    if (sorts_records(options)) spec.validate();
    return spec;
}

Budgets PlannedSort::budgets_of(const PartSortOptions& options, bool& address_space_limited) {
    Budgets budgets;
    budgets.memory_bytes = options.memory_bytes.value_or(default_memory_budget());
    budgets.threads = std::max(1u, options.threads.value_or(default_threads()));
    budgets.device_memory_bytes = options.device_memory_bytes;
    if (budgets.memory_bytes < kMinMemoryBudget) throw std::invalid_argument("the memory budget must be at least 1M");
    // A --memory beyond the memory there is now is said, not refused: the sort may still fit in it.
    if (options.memory_bytes && options.notice)
        if (const std::uint64_t available = available_memory(); available > 0 && budgets.memory_bytes > available) {
            const std::optional<std::uint64_t> cgroup_limit = cgroup_memory().limit;
            options.notice("--memory " + size_text(budgets.memory_bytes) + " is more than the " + size_text(available) +
                           " of memory available" +
                           (cgroup_limit ? " (within the cgroup's limit of " + size_text(*cgroup_limit) + ")" : "") +
                           ": the sort may swap or be killed; give a smaller --memory");
        }
    // Under a limit on tasks (ulimit -u, a container's) the sort runs on the threads it can start,
    // checked now: a thread that TBB cannot start later ends the program.
    int error = 0;
    const unsigned startable = startable_threads(threads_started_by(budgets.threads), &error);
    if (startable < threads_started_by(budgets.threads)) {
        if (startable == 0)
            throw SortError("cannot sort " + io::input_shown(options.input) + ": no thread can be started (" +
                            std::strerror(error) + "): the limit on processes (ulimit -u) or tasks is reached");
        unsigned fewer = 1;
        while (threads_started_by(fewer + 1) <= startable) ++fewer;
        if (fewer < budgets.threads && options.notice)
            options.notice("only " + std::to_string(startable) + " of the " +
                           std::to_string(threads_started_by(budgets.threads)) + " threads that --threads " +
                           std::to_string(budgets.threads) + " needs can be started (" + std::strerror(error) +
                           "): sorting with --threads " + std::to_string(fewer));
        budgets.threads = std::min(budgets.threads, fewer);
    }
    // Under a limit on the address space the budget and the threads' stacks must fit in what is left
    // of it, checked now: a thread that cannot be started later would end the program.
    const std::optional<std::uint64_t> address_space = address_space_room();
    address_space_limited = address_space.has_value();
    if (address_space) {
        const std::uint64_t overhead = address_space_overhead(budgets.threads);
        const std::uint64_t room = *address_space > overhead ? *address_space - overhead : 0;
        if (!options.memory_bytes) budgets.memory_bytes = std::max(kMinMemoryBudget, std::min(budgets.memory_bytes, room));
        if (budgets.memory_bytes + overhead > *address_space)
            throw SortError("cannot sort " + io::input_shown(options.input) + ": out of memory under the address-space limit (ulimit -v): " +
                            size_text(*address_space) + " are left, the --memory budget of " +
                            size_text(budgets.memory_bytes) + " and " + std::to_string(budgets.threads) +
                            " threads need " + size_text(budgets.memory_bytes + overhead) +
                            "; give a smaller --memory or --threads");
    }
    return budgets;
}

PlannedSort::PlannedSort(const PartSortOptions& options)
    : columns(columns_of(options)),
      spec(key_of(options, columns)),
      records(sorts_records(options)),
      width(records ? spec.record_size : key_width(options.order.type)),
      budgets(budgets_of(options, address_space_limited)),
      input({options.input, options.input_compression, width, options.verify && !options.unique, options.input_memory,
             columns, value_inputs(options),
             options.memory_columns ? options.memory_columns->values : std::vector<std::span<const std::byte>>{}}),
      output(shape_of(options)) {
    if (options.progress) options.progress->start_phase(ProgressPhase::starting, 0);
    tmp_dir = runs_folder(options.tmp_dir, output);
    if (options.output_region && options.output_region->offset % width != 0)
        throw std::invalid_argument("an output region starts at a whole record: byte " +
                                    std::to_string(options.output_region->offset) + " is not a multiple of " +
                                    std::to_string(width));
    if (options.shared_runs && (records || options.verify || input.streamed()))
        throw std::invalid_argument("shared runs are whole-record keys of an input of known size, without --unique or --verify");
    if (!input.streamed() && input.size() % width != 0)
        throw SortError("'" + input.name() + "' is " + std::to_string(input.size()) +
                        " bytes long, which is not a multiple of the record size " + std::to_string(width) +
                        (options.records ? "" : " (" + std::string(key_type_name(options.order.type)) + ")"));
    sorter = make_chunk_sorter({options.backend, options.device, budgets.threads, options.notice},
                               records ? ChunkKey(spec) : ChunkKey(options.order), &backend_reason);
    if (options.device_memory_bytes && !sorter->device() && options.notice)
        options.notice("--device-memory is not used: the sort runs on the CPU (" + backend_reason + ")");

    ChunkSorter& chunk_sorter = *sorter;
    const bool merges_on_device = chunk_sorter.device() && chunk_sorter.slice_sorter() != nullptr && !options.unique;
    if (records && merges_on_device) bare_runs = fixed_key_spec(spec);
    PlanInput what = plan_input(options);
    const ChunkCapacity capacity{
        [&chunk_sorter](std::size_t slots, const ChunkMemory& memory) { return chunk_sorter.capacity(slots, memory); },
        chunk_sorter.device(), merges_on_device};
    plan = plan_sort(what, budgets, capacity);
    // Where tmp_dir's file system has no direct I/O, runs are spilled through the page cache.
    if (options.spill_io == IoMode::automatic && plan.spill_direct && !io::direct_io_supported(tmp_dir)) {
        what.direct_io_possible = false;
        plan = plan_sort(what, budgets, capacity);
    }
    if (plan.input_direct) input.use_direct_io(static_cast<std::size_t>(plan.direct_io_piece));
    if (columns) {
        plan.key_bytes = columns->key_width;
        plan.value_bytes = columns->value_widths;
        plan.index_bytes = columns->index_width;
    }
}

// What is sorted, as the plan sees it.
PlanInput PlannedSort::plan_input(const PartSortOptions& options) const {
    PlanInput what;
    if (!input.streamed()) what.records = input.size() / width;
    what.record_size = width;
    what.entry_bytes = records && !bare_runs ? entry_bytes(spec) : width;
    what.entries_hold_records = records && !bare_runs;
    what.input_streamed = input.streamed();
    what.output_streamed = output.sequential;
    what.output_compression = output.compression;
    what.compression_level = options.compression_level;
    what.output_name = columns ? column_outputs(options).front() : options.output;
    if (columns)  // the keys' bytes are not written where OUTPUT is left out
        what.output_record_bytes = columns->record_size() - (options.output.empty() ? columns->key_width : 0);
    what.output_folder = output.folder;
    what.tmp_dir = tmp_dir;
    what.spill_io = options.spill_io;
    // Forced, direct I/O is checked now; chosen by the plan, once it is chosen (in the constructor).
    what.direct_io_possible = options.spill_io == IoMode::direct ? io::direct_io_supported(tmp_dir)
                                                                  : options.spill_io == IoMode::automatic;
    if (const std::uint64_t available = available_memory(); available > 0)
        what.page_cache_bytes = available > budgets.memory_bytes ? available - budgets.memory_bytes : 0;
    plan_input_output_io(options, what);
    what.runs_in_caller_memory = options.shared_runs.has_value();
    what.max_fan_in = options.max_fan_in;
    what.max_run_records = options.max_run_records;
    return what;
}

// What the plan needs to choose how INPUT is read and OUTPUT written: whether direct I/O can be used
// (a regular, uncompressed file on a file system that does it) and how much of INPUT is cached.
// Direct I/O asked for where it cannot be used falls back to the page cache, with a notice.
void PlannedSort::plan_input_output_io(const PartSortOptions& options, PlanInput& what) const {
    what.input_io = options.input_io;
    what.output_io = options.output_io;
    if (options.input_io != IoMode::buffered) what.input_direct_possible = input.direct_io_possible();
    if (options.input_io == IoMode::automatic && what.input_direct_possible) what.input_resident_bytes = input.resident_bytes();
    const bool output_file = !output.sequential && !output.folder.empty() && !options.output_region && !options.shared_runs &&
                             !columns;
    if (options.output_io != IoMode::buffered && output_file) what.output_direct_possible = io::direct_io_possible_in(output.folder);
    auto fall_back = [&](IoMode mode, bool possible, const std::string& which) {
        if (mode == IoMode::direct && !possible && options.notice)
            options.notice("--" + which + "-io direct: " + which +
                           " is not a regular, uncompressed file on a file system with direct I/O; it goes through the page cache");
    };
    fall_back(options.input_io, what.input_direct_possible || (!input.streamed() && input.size() == 0), "input");
    fall_back(options.output_io, what.output_direct_possible, "output");
}

// The stream reader's queue as planned (a streamed input; --verify of a compressed output).
io::StreamReaderQueue reader_queue(const SortPlan& plan) {
    return {static_cast<std::size_t>(plan.reader.block_bytes), plan.reader.queued_blocks};
}

// What the steps of one sort share: the planned sort, the output, the report, and the options
// they need as resolved.
struct SortJob {
    PlannedSort& planned;  // key, widths, input, sorter, plan, where runs go
    OutputTarget* target;  // none where the part goes into memory (shared runs)
    PartSortReport& report;
    KeyOrder order;        // of whole-record keys
    bool unique = false;   // --unique
    ProgressCounters* progress = nullptr;
    void phase(ProgressPhase p, std::uint64_t total,
               ProgressCounters::Counting counting = ProgressCounters::Counting::bytes) const {
        if (progress) progress->start_phase(p, total, counting);
    }
    void count(std::uint64_t bytes) const {
        if (progress) progress->add(bytes);
    }
    // A transfer of `bytes` is cut into pieces of this size: counted as they go, or at once.
    std::size_t piece_bytes(std::size_t bytes) const {
        return io::progress_piece_bytes(progress != nullptr, planned.plan.threads, bytes);
    }
};

// One chunk of `records` records, pulled through `read` (record index, bytes) and sorted, then
// written to the output in its raw form; or, with --unique, as entries through a RecordOutput.
// `source`, when given, holds the records in memory for a sorter on a device to copy straight
// (ChunkIo::source). The sorter reads the whole chunk before it sorts, and sorts it before it
// writes: its progress is reading (counted), sorting (timed only) and writing (counted), each
// transfer in pieces.
void sort_as_one_chunk(SortJob& job, std::uint64_t records, const std::function<void(std::uint64_t, std::span<std::byte>)>& read,
                       const SortOutput& output, const std::byte* source = nullptr) {
    PlannedSort& planned = job.planned;
    PartSortReport& report = job.report;
    report.runs = records > 0 ? 1 : 0;
    report.output_records = records;
    if (records == 0) return;
    OutputPrefault prefault(output, planned.plan, planned.plan.threads);
    std::optional<RecordOutput> unique;
    if (job.unique) unique.emplace(output, 8 * key_words(planned.spec), planned.spec.record_size, true, 1);
    const std::uint64_t total_bytes = records * planned.width;
    job.phase(ProgressPhase::reading, total_bytes);
    std::atomic<std::uint64_t> bytes_read{0};
    std::atomic<bool> writing{false};
    const std::size_t width = planned.width;
    auto count_read = [&](std::uint64_t bytes) {
        job.count(bytes);
        if (bytes_read += bytes; bytes_read == total_bytes && !writing)
            job.phase(ProgressPhase::sorting, total_bytes, ProgressCounters::Counting::time_only);
    };
    ChunkIo chunk_io;
    chunk_io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
        io::for_each_piece(bytes, width, job.piece_bytes(bytes.size()), [&](std::size_t offset, std::span<std::byte> piece) {
            read(first + offset / width, piece);
            count_read(piece.size());
        });
    };
    chunk_io.source = source;
    chunk_io.copied = [&](std::uint64_t, std::uint64_t count) { count_read(count * width); };
    // Raw records, or entries of key words and record (--unique), whose kept records are counted
    // as written: how many there will be is not known.
    const std::size_t unit = unique ? unique->entry_bytes() : width;
    chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
        if (!writing.exchange(true)) job.phase(ProgressPhase::writing, unique ? 0 : total_bytes);
        io::for_each_piece(bytes, unit, job.piece_bytes(bytes.size()), [&](std::size_t offset, std::span<const std::byte> piece) {
            if (unique)
                unique->put(0, first + offset / unit, piece);
            else
                output.write((first + offset / unit) * width, piece);
        });
    };
    planned.sorter->prepare(1, records, planned.plan.chunk_memory);
    ChunkSorter& sorter = *planned.sorter;
    report.times += unique ? sorter.sort_run(0, records, chunk_io) : sorter.sort_chunk(0, records, chunk_io);
    if (unique) report.output_records = unique->finish();
}

// The GPU merges by sorting exact slices of all runs, in one pass (not with --unique, whose
// duplicates are dropped by the host's merge).
template <class T>
void merge_on_device(SortJob& job, std::vector<SortedRun<T>>& runs, std::uint64_t records, const SortOutput& output) {
    PartSortReport& report = job.report;
    const SortPlan& plan = job.planned.plan;
    report.merge_passes = plan.merge_passes;
    report.output_records = records;
    job.phase(ProgressPhase::writing, records * job.planned.width);
    merge_by_sorting_slices<T>(runs, *job.planned.sorter->slice_sorter(), plan.run_records, plan.device_merge_slots,
                               [&](std::uint64_t first, std::span<const std::byte> bytes) {
                                   output.write(first * job.planned.width, bytes);
                               },
                               report.merge);
}

// Entries of key words and record merged on the host: the keys are stripped (and with --unique
// duplicates dropped) on the way out.
template <class T>
void merge_records_into_output(SortJob& job, std::vector<SortedRun<T>>& runs, std::uint64_t records,
                               const SortOutput& output) {
    const SortPlan& plan = job.planned.plan;
    RecordOutput out(output, sizeof(T), job.planned.spec.record_size, job.unique, merge_slices(plan, records));
    const BlockPut put = [&out](std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries) {
        out.put(slice, rank, entries);
    };
    merge_runs<T>(runs, {output.sequential() ? MergeInto(merge_into::Stream{put}) : merge_into::Blocks{put}}, plan);
    job.report.output_records = out.finish();
}

// Plain keys merged on the host go out as they are merged: mapped back to their raw form (unless
// that is the identity), straight into the output's map, at their offsets in the file, or in order.
template <class T>
void merge_keys_into_output(SortJob& job, std::vector<SortedRun<T>>& runs, std::uint64_t records, const SortOutput& output) {
    job.report.output_records = records;
    struct Into {
        const SortOutput& output;
        MergeInto operator()(const MappedFile& to) const { return merge_into::Memory{to.data, output.progress()}; }
        MergeInto operator()(const PositionalFile& to) const {
            return merge_into::File{to.file, to.base / sizeof(T), output.progress()};
        }
        MergeInto operator()(StreamOutput*) const {
            return merge_into::Stream{[&out = output](std::uint64_t, std::uint64_t rank, std::span<const std::byte> keys) {
                out.write(rank * sizeof(T), keys);
            }};
        }
        MergeInto operator()(const ColumnFiles*) const {
            return merge_into::Blocks{[&out = output](std::uint64_t, std::uint64_t rank, std::span<const std::byte> keys) {
                out.write(rank * sizeof(T), keys);
            }};
        }
    };
    MergeTarget<T> target{std::visit(Into{output}, output.destination())};
    const KeyOrder order = job.order;
    if (!normalization_is_identity(order)) target.restore = [order](std::span<T> keys) { denormalize_keys(keys, order); };
    merge_runs<T>(runs, target, job.planned.plan);
    if (std::holds_alternative<MappedFile>(output.destination())) output.written_in_place(0, records * sizeof(T));
}

// Merges the runs, of `records` records in all, into the output: on the device in one pass, or
// on the host in as many passes as the plan's fan-in needs.
template <class T>
void merge_into_output(SortJob& job, std::vector<SortedRun<T>>& runs, std::uint64_t records, const SortOutput& output) {
    PartSortReport& report = job.report;
    const SortPlan& plan = job.planned.plan;
    report.runs = runs.size();
    report.bytes_spilled = plan.runs_kept_in_memory ? 0 : records * plan.entry_bytes;
    ScopedPhase phase(report.times.merge);
    if (plan.merge_on_device) {
        merge_on_device<T>(job, runs, records, output);
        return;
    }
    // The chunk buffers of a CPU sorter are not used by a merge on the host: their memory goes back
    // first (a GPU sorter keeps its pinned staging, as planned, rather than pin it again later).
    if (!plan.device) job.planned.sorter->prepare(0, 0, plan.chunk_memory);
    ScopedPhase host_phase(report.merge.host.seconds);
    report.merge.host.bytes = records * plan.entry_bytes;
    report.merge_passes = merge_to_fan_in<T>(runs, plan, job.planned.tmp_dir, report.bytes_spilled, job.progress) + 1;
    report.merge.host.bytes *= report.merge_passes;
    // With --unique, how many records are kept is not known until the end.
    job.phase(ProgressPhase::writing, job.unique ? 0 : records * job.planned.width);
    if constexpr (!std::is_unsigned_v<T>)
        merge_records_into_output<T>(job, runs, records, output);
    else
        merge_keys_into_output<T>(job, runs, records, output);
}

// Calls f.template operator()<T>() with the run entry's key type: RecordKey<W> for records, the
// plain key type for whole-record keys.
template <class F>
void with_key_type(const SortJob& job, F&& f) {
    if (job.planned.records) {
        with_key_words(key_words(job.planned.spec), [&](auto words) { f.template operator()<RecordKey<decltype(words)::value>>(); });
    } else {
        with_key_width(job.planned.width, [&](auto key) { f.template operator()<decltype(key)>(); });
    }
}

// A merge on the device writes the output front to back faster than the fresh pages of a file map
// can be faulted in by the writes themselves: half the threads fault them in ahead of it. (On the
// GPU machine the merge's writes into fresh pages went at about 2 GB/s; with the pages faulted in
// ahead, from the start of run formation, the merge of 16 GiB took 1.7 s instead of 8.4.) The
// host's merge writes many slices at once and was not slowed down so: nothing is faulted in ahead
// of it (doing so slowed a sort of records down, and a CPU sort of 16 GiB of keys under --memory 4G
// from 21.2 to 25.3 s: run formation and the merge both took longer).
std::optional<OutputPrefault> prefault_for_merge(SortJob& job, const SortOutput& output) {
    const SortPlan& plan = job.planned.plan;
    if (!plan.merge_on_device) return std::nullopt;
    return std::optional<OutputPrefault>(std::in_place, output, plan, std::max(1u, plan.threads / 2), &job.report.merge.fault);
}

// Free space needed up front, as planned: the output (when its size is known) and the spilled runs.
void check_free_space(const SortPlan& plan) {
    const std::vector<DiskNeed>& needs = plan.disk;
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

// A file of known size, read at any offsets.
void sort_known_size(SortJob& job) {
    PlannedSort& planned = job.planned;
    PartSortReport& report = job.report;
    const SortPlan& plan = planned.plan;
    report.bytes = planned.input.size();
    report.records = plan.records;
    check_free_space(plan);
    const SortOutput& output = job.target->open(report.bytes);
    auto read = [&](std::uint64_t offset, std::span<std::byte> bytes) { planned.input.read_at(offset, bytes); };
    if (plan.one_chunk) {
        // The input mapped for a sorter on a device to copy straight, but under a limit on address
        // space (the map would take as much of it as the input). Run formation reads as before: on
        // the H200 pair, 32 GiB in runs of 1 GiB took 5.59 s copied straight against 5.06 s read
        // (docs/distributed.md, "Design notes").
        const std::byte* source = plan.device && !planned.address_space_limited ? planned.input.source() : nullptr;
        sort_as_one_chunk(job, plan.records, [&](std::uint64_t first, std::span<std::byte> bytes) { read(first * planned.width, bytes); },
                          output, source);
        return;
    }
    with_key_type(job, [&]<class T>() {
        // Fresh output pages are faulted in from the start of run formation, ahead of the merge.
        const std::optional<OutputPrefault> prefault = prefault_for_merge(job, output);
        // Reading, sorting and storing runs overlap: counted as the sorted runs are stored.
        job.phase(ProgressPhase::sorting, report.bytes);
        std::vector<SortedRun<T>> runs =
            form_runs<T>(read, planned.width, plan, *planned.sorter, planned.record_keys(), planned.tmp_dir, report.times,
                         job.progress);
        merge_into_output<T>(job, runs, plan.records, output);
    });
}

// Runs shared with other processes (PartSortOptions::shared_runs): this input's runs are formed into the
// caller's memory; then this sort's part of the merge of every process's runs is cut out of each
// run by exact selection (the same cuts on every process, so that the parts meet) and merged into
// the caller's memory for the part, as a sort's own runs are merged into OUTPUT.
void sort_shared_runs(SortJob& job, const SharedRuns& shared) {
    PlannedSort& planned = job.planned;
    PartSortReport& report = job.report;
    const SortPlan& plan = planned.plan;
    report.bytes = planned.input.size();
    report.records = plan.records;
    const std::uint64_t records = shared.part.size() / planned.width;
    if (shared.runs.size() != plan.records * plan.entry_bytes || shared.part.size() % planned.width != 0)
        throw std::logic_error("shared runs: the memory given does not fit the runs or whole records");
    with_key_width(planned.width, [&](auto key) {
        using T = decltype(key);
        const SortOutput output(MappedFile{shared.part.data(), shared.part.size()}, job.progress, shared.written);
        // The part's fresh pages are faulted in from the start of run formation, ahead of the merge.
        const std::optional<OutputPrefault> prefault = prefault_for_merge(job, output);
        job.phase(ProgressPhase::sorting, report.bytes);
        std::vector<std::uint64_t> sizes;
        if (shared.formed) {
            sizes = *shared.formed;
        } else {
            auto read = [&](std::uint64_t offset, std::span<std::byte> bytes) { planned.input.read_at(offset, bytes); };
            const std::vector<SortedRun<T>> own = form_runs<T>(read, planned.width, plan, *planned.sorter, nullptr,
                                                               planned.tmp_dir, report.times, job.progress, shared.runs);
            for (const SortedRun<T>& run : own) sizes.push_back(run.size);
        }
        const std::vector<std::span<const std::byte>> runs = shared.gather(sizes);
        std::vector<SpanSequence<T>> sequences;
        std::uint64_t all = 0;
        for (const std::span<const std::byte> run : runs) {
            if (run.size() % sizeof(T) != 0) throw std::logic_error("shared runs: a run is not a whole number of keys");
            sequences.emplace_back(std::span<const T>(reinterpret_cast<const T*>(run.data()), run.size() / sizeof(T)));
            all += run.size() / sizeof(T);
        }
        if (shared.first + records > all) throw std::logic_error("shared runs: a part beyond the runs' records");
        const std::vector<std::uint64_t> from = multiway_select<SpanSequence<T>>(sequences, shared.first);
        const std::vector<std::uint64_t> to = multiway_select<SpanSequence<T>>(sequences, shared.first + records);
        std::vector<SortedRun<T>> pieces;
        report.shared_run_records.clear();
        for (std::size_t i = 0; i < runs.size(); ++i) {
            report.shared_run_records.push_back(to[i] - from[i]);
            if (to[i] > from[i])
                pieces.push_back(sampled_run_in_memory<T>(runs[i].data() + from[i] * sizeof(T), to[i] - from[i], plan.sample_stride));
        }
        // A merge on the device sorts slices of up to a chunk in two slots, for which a sorter that
        // formed fewer than two runs (a range of one chunk or none), or none, was not prepared.
        if (plan.merge_on_device && (sizes.size() < 2 || shared.formed))
            planned.sorter->prepare(plan.device_merge_slots, plan.run_records, plan.chunk_memory);
        merge_into_output<T>(job, pieces, records, output);
        report.runs = sizes.size();  // formed here (the merge took pieces of every process's)
    });
    report.output_bytes = report.output_records * planned.width;
}

// Copies records [first, ...) of the two buffers of `chunks`, one after the other, into `bytes`.
void read_from_chunks(const StreamChunks& chunks, std::uint64_t first, std::span<std::byte> bytes) {
    const std::size_t width = chunks.input_width;
    std::byte* out = bytes.data();
    std::uint64_t n = bytes.size() / width;
    for (std::size_t b = 0; b < 2 && n > 0; ++b) {
        if (first >= chunks.records[b]) {
            first -= chunks.records[b];
            continue;
        }
        const std::uint64_t take = std::min(n, chunks.records[b] - first);
        io::copy_parallel(out, std::span<const std::byte>(chunks.buffers[b].data() + first * width, take * width));
        out += take * width;
        n -= take;
        first = 0;
    }
}

// A stream of unknown size (stdin, a pipe, a compressed file), read front to back. Chunks are
// read into the plan's two host buffers; when the stream ends within them and holds at most
// plan.one_chunk_records records, it is sorted as one chunk, otherwise each chunk becomes a run as
// it comes.
void sort_streamed(SortJob& job) {
    PlannedSort& planned = job.planned;
    PartSortReport& report = job.report;
    const SortPlan& plan = planned.plan;
    const std::uint64_t chunk = plan.run_records;
    planned.input.open_stream(reader_queue(plan));
    auto read_next = [&](std::span<std::byte> bytes) { return planned.input.read_next(bytes); };
    // The first two chunks are read (counted, in pieces) before it is known whether they are all.
    auto read_next_counted = [&](std::span<std::byte> bytes) {
        std::size_t n = 0;
        bool ended = false;
        io::for_each_piece(bytes, planned.width, job.piece_bytes(bytes.size()), [&](std::size_t, std::span<std::byte> piece) {
            if (ended) return;
            const std::size_t got = read_next(piece);
            n += got;
            job.count(got);
            ended = got < piece.size();
        });
        return n;
    };
    job.phase(ProgressPhase::reading, 0);
    StreamChunks chunks(planned.width, chunk);
    std::size_t pre_read = 0;
    {
        ScopedPhase phase(report.times.read);
        pre_read = chunks.fill(0, read_next_counted) == chunk ? 2 : 1;
        if (pre_read == 2) chunks.fill(1, read_next_counted);
    }
    const std::uint64_t first_two = chunks.records[0] + chunks.records[1];
    if (chunks.records[1] < chunk && first_two <= plan.one_chunk_records) {
        report.records = first_two;
        report.bytes = first_two * planned.width;
        const SortOutput& output = job.target->open(report.bytes);
        sort_as_one_chunk(
            job, first_two, [&](std::uint64_t first, std::span<std::byte> bytes) { read_from_chunks(chunks, first, bytes); },
            output);
        return;
    }
    // Runs, however few records the stream turns out to hold (two full chunks may be all).
    with_key_type(job, [&]<class T>() {
        // Reading, sorting and spilling runs overlap: counted as the sorted runs are stored.
        job.phase(ProgressPhase::sorting, 0);
        std::vector<SortedRun<T>> runs = form_runs_from_stream<T>(chunks, pre_read, read_next, plan, *planned.sorter,
                                                                  planned.record_keys(), planned.tmp_dir, report.times,
                                                                  job.progress);
        chunks = StreamChunks(planned.width, 0);  // their memory goes back before the merge
        std::uint64_t records = 0;
        for (const auto& run : runs) records += run.size;
        report.records = records;
        report.bytes = records * planned.width;
        const SortOutput& output = job.target->open(report.bytes);
        const std::optional<OutputPrefault> prefault = prefault_for_merge(job, output);
        merge_into_output<T>(job, runs, records, output);
    });
}

// The parts of the report known before anything is sorted: the record size, the plan and the sorter.
void report_planned(PartSortReport& report, const PlannedSort& planned) {
    report.record_size = planned.width;
    report.plan = planned.plan;
    report.backend = planned.sorter->name();
    report.backend_reason = planned.backend_reason;
    report.index_width = planned.columns ? planned.columns->index_width : 0;
    report.input_streamed = planned.input.streamed();
    report.output_streamed = planned.output.sequential;
}

// An OUTPUT is an INPUT itself (the same file, by any name; with columns, any output and any input):
// the sort replaces its input.
bool replaces_input(const PartSortOptions& options) {
    if (options.output_region || options.input_memory) return false;
    std::vector<std::string> inputs = value_inputs(options), outputs = column_outputs(options);
    inputs.push_back(options.input);
    if (!sorts_columns(options)) outputs = {options.output};
    for (const std::string& in : inputs)
        for (const std::string& out : outputs) {
            io::FileId input_id, output_id;
            if (in != "-" && out != "-" && io::file_id(in, input_id) && io::file_id(out, output_id) && input_id == output_id)
                return true;
        }
    return false;
}

// Where the columns go: their files, or (sort_memory()) their memory.
std::vector<OutputColumn> output_columns_of(const PartSortOptions& options, const std::optional<ColumnLayout>& layout) {
    std::vector<OutputColumn> columns = output_columns(options, layout);
    if (!layout || !options.memory_columns) return columns;
    const MemoryColumns& memory = *options.memory_columns;
    columns[0].memory = options.output_memory.value_or(std::span<std::byte>{});
    for (std::size_t i = 0; i < memory.value_outputs.size(); ++i) columns[1 + i].memory = memory.value_outputs[i];
    if (options.index_output) columns.back().memory = memory.index;
    return columns;
}

// OUTPUT written as planned: with direct I/O where the plan says so, without a map under a limit on
// the address space, and checked as written where --verify cannot read it back.
void set_up_target(OutputTarget& target, const PlannedSort& planned, const PartSortOptions& options) {
    if (planned.address_space_limited) target.write_without_map();  // a map would take address space as large as the output
    if (planned.plan.output_direct) target.write_direct(static_cast<std::size_t>(planned.plan.direct_io_piece));
    if (options.verify && target.in_place()) target.check_as_written(planned.spec, options.unique);
}

// The output finished (its last blocks compressed and written, its map flushed), the input checked
// unchanged, the output verified (--verify) and committed: renamed into place, flushed first where
// asked for or where it replaces the input.
void finish_output(OutputTarget& target, PlannedSort& planned, const PartSortOptions& options, bool replaces,
                   PartSortReport& report) {
    report.output_bytes = report.output_records * planned.width;
    // The output's last blocks compressed and written, its map flushed to the file: timed only.
    if (options.progress) options.progress->start_phase(ProgressPhase::flushing, report.output_bytes, ProgressCounters::Counting::time_only);
    target.finish(report.output_bytes);
    planned.input.check_unchanged();
    if (options.verify) {
        OutputExpectation expected{planned.spec, options.unique, report.output_records, std::nullopt};
        if (!options.unique) expected.checksum = planned.input.checksum();
        target.verify(expected);
        report.verified = true;
    }
    if (options.progress && (options.sync || replaces))
        options.progress->start_phase(ProgressPhase::flushing, report.output_bytes, ProgressCounters::Counting::time_only);
    if (options.progress) options.progress->stop_if_cancelled();  // the last moment it can stop
    target.commit(options.sync || replaces);
    report.output_stored_bytes = target.bytes_out();
}

}  // namespace

SortPlan plan_part(const PartSortOptions& options) { return PlannedSort(options).plan; }

PartSortReport sort_part(const PartSortOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    PartSortReport report;
    auto done = [&] {
        if (options.progress) options.progress->start_phase(ProgressPhase::done, 0);
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    PlannedSort planned(options);
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, planned.budgets.threads);
    report_planned(report, planned);
    // A --tmp-dir that cannot be used is an error even when this input would not need it.
    if (options.tmp_dir) io::create_temp_file(planned.tmp_dir);
    if (options.shared_runs) {
        SortJob job{planned, nullptr, report, options.order, false, options.progress};
        sort_shared_runs(job, *options.shared_runs);
        planned.input.check_unchanged();
        done();
        return report;
    }

    const bool replaces = replaces_input(options);  // looked at before OUTPUT is touched
    const SortPlan& plan = planned.plan;
    OutputTarget target({options.output, options.output_compression, options.compression_level,
                         plan.writer.compressing_threads, static_cast<std::size_t>(plan.writer.block_bytes),
                         plan.writer.blocks_in_flight, static_cast<std::size_t>(plan.verify_block_bytes), reader_queue(plan),
                         options.progress, options.output_region, output_columns_of(options, planned.columns),
                         planned.columns ? planned.columns->record_size() : 0,
                         planned.columns ? std::nullopt : options.output_memory});
    set_up_target(target, planned, options);
    SortJob job{planned, &target, report, options.order, options.unique, options.progress};
    if (planned.input.streamed())
        sort_streamed(job);
    else
        sort_known_size(job);
    if (options.verify) planned.sorter.reset();  // its memory goes back before the output is read back
    finish_output(target, planned, options, replaces, report);
    done();
    return report;
}

PartSortOptions part_options_of(const SortOptions& options) {
    PartSortOptions part;
    static_cast<SortOptions&>(part) = options;
    return part;
}

SortReport sort_file(const SortOptions& options) { return sort_part(part_options_of(options)); }

SortPlan plan_file(const SortOptions& options) { return plan_part(part_options_of(options)); }

}  // namespace gpusort
