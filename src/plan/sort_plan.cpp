// plan_sort: every size of a sort from the budgets, the input and the sorter's capacity (the rules
// are written next to each share of the budget); machine defaults.
#include "gpusort/sort_plan.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/plan/merge_plan.hpp"

#include "io/file.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "src/plan/cgroup_memory.hpp"

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <fstream>
#include <limits>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gpusort {

namespace {

std::uint64_t round_up_pow2(std::uint64_t x) {
    std::uint64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

// Bytes from /proc/meminfo's MemAvailable, 0 when unknown.
std::uint64_t mem_available() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t value = 0;
    std::string unit;
    while (meminfo >> key >> value >> unit)
        if (key == "MemAvailable:") return value * 1024;
    return 0;
}

// The room left under the cgroup's memory limit (the process's group and its ancestors), max()
// when there is none.
std::uint64_t cgroup_room() { return cgroup_memory().room.value_or(std::numeric_limits<std::uint64_t>::max()); }

}  // namespace

std::uint64_t available_memory() {
    const std::uint64_t available = mem_available();
    return available == 0 ? 0 : std::min(available, cgroup_room());
}

std::uint64_t usable_memory(std::uint64_t budget) { return budget - budget / 16; }

std::uint64_t budget_for_usable(std::uint64_t bytes) {
    std::uint64_t budget = bytes + bytes / 15;
    while (usable_memory(budget) < bytes) ++budget;
    return budget;
}

std::uint64_t default_memory_budget() {
    std::uint64_t available = mem_available();
    if (available == 0) available = std::uint64_t{2} << 30;
    available = std::min(available, cgroup_room());
    // Half of what is free leaves room for the page cache of the files being sorted.
    return std::max<std::uint64_t>(available / 2, kMinMemoryBudget);
}

unsigned default_threads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return static_cast<unsigned>(count);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

unsigned threads_started_by(unsigned threads) { return 3 * std::max(1u, threads) + 2; }

unsigned startable_threads(unsigned wanted, int* error) {
    struct Gate {
        std::mutex mutex;
        std::condition_variable open;
        bool opened = false;
    } gate;
    auto wait_at_gate = [](void* arg) -> void* {
        auto& g = *static_cast<Gate*>(arg);
        std::unique_lock lock(g.mutex);
        g.open.wait(lock, [&] { return g.opened; });
        return nullptr;
    };
    pthread_attr_t attr;
    if (::pthread_attr_init(&attr) != 0) return wanted;
    ::pthread_attr_setstacksize(&attr, std::max<std::size_t>(PTHREAD_STACK_MIN, 64 << 10));
    std::vector<pthread_t> started;
    started.reserve(wanted);
    while (started.size() < wanted) {
        pthread_t thread;
        if (const int failed = ::pthread_create(&thread, &attr, wait_at_gate, &gate)) {
            if (error) *error = failed;
            break;
        }
        started.push_back(thread);
    }
    ::pthread_attr_destroy(&attr);
    {
        std::lock_guard lock(gate.mutex);
        gate.opened = true;
    }
    gate.open.notify_all();
    for (pthread_t thread : started) ::pthread_join(thread, nullptr);
    return static_cast<unsigned>(started.size());
}

std::optional<std::uint64_t> address_space_room() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
    std::ifstream statm("/proc/self/statm");  // the size of the address space in pages comes first
    std::uint64_t pages = 0;
    statm >> pages;
    const std::uint64_t mapped = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    return limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
}

std::uint64_t address_space_overhead(unsigned threads) {
    // A thread's stack is as large as RLIMIT_STACK (8 MiB unless set otherwise); 96 MiB for a
    // second malloc arena (64 MiB) and the state of the compression libraries.
    std::uint64_t stack = std::uint64_t{8} << 20;
    rlimit limit{};
    if (::getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) stack = limit.rlim_cur;
    return (std::uint64_t{96} << 20) + 2 * std::uint64_t{std::max(1u, threads)} * stack;
}

// Device memory left to the driver and other programs: a twentieth of the free memory, at least 256 MiB.
std::uint64_t device_memory_available(std::uint64_t free_bytes) {
    constexpr std::uint64_t kMinDeviceReserve = std::uint64_t{256} << 20;
    const std::uint64_t reserve = std::max(free_bytes / 20, kMinDeviceReserve);
    return free_bytes > reserve ? free_bytes - reserve : 0;
}

namespace {

// A stream's queue (reader or writer) shrunk for a small budget takes blocks of a multiple of this.
constexpr std::uint64_t kStreamBlockUnit = std::uint64_t{4} << 10;
// A stream's sample stride and merge tasks are planned as for this many chunks (its size is not known).
constexpr std::uint64_t kPlannedStreamChunks = 64;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// The most of the usable memory that the stream reader's and the stream writer's queues take.
std::uint64_t reader_share(std::uint64_t usable) { return usable / 8; }
std::uint64_t writer_share(std::uint64_t usable) { return usable / 4; }

}  // namespace

ReaderPlan plan_reader(std::uint64_t usable) {
    const io::StreamReaderQueue defaults;
    ReaderPlan reader{defaults.block_bytes, defaults.queued_blocks};
    const std::uint64_t share = reader_share(usable);
    if (reader.memory() > share)
        reader.block_bytes = std::max(kStreamBlockUnit, share / (reader.queued_blocks + 2) / kStreamBlockUnit * kStreamBlockUnit);
    return reader;
}

WriterPlan plan_writer(const PlanInput& input, unsigned threads, std::uint64_t usable) {
    if (input.output_compression == Compression::none) return {};
    const Compression format = input.output_compression;
    WriterPlan writer;
    writer.block_bytes = io::StreamWriter::default_block_size(format, input.compression_level);
    writer.compressing_threads = std::min(threads, io::StreamWriter::max_compressing_threads(format, input.compression_level));
    writer.blocks_in_flight = 2 * std::size_t{writer.compressing_threads};
    writer.encoder_bytes = io::StreamWriter::encoder_bytes(format, input.compression_level);
    const std::uint64_t share = writer_share(usable);
    while (writer.memory() > share && writer.compressing_threads > 1) {
        --writer.compressing_threads;
        writer.blocks_in_flight = 2 * std::size_t{writer.compressing_threads};
    }
    if (writer.memory() > share) {
        const std::uint64_t for_blocks = share > writer.encoder_bytes ? share - writer.encoder_bytes : share;
        writer.block_bytes =
            std::max(kStreamBlockUnit, for_blocks / ((writer.blocks_in_flight + 1) * 2) / kStreamBlockUnit * kStreamBlockUnit);
    }
    return writer;
}

namespace {

// The device's budget and staging: a reserve is left to the driver and other programs; pinned
// staging takes the device's preferred size, at most a sixteenth of the host memory left
// (`host`), at least one entry.
DevicePlan plan_device(const DeviceCapacity& device, const Budgets& budgets, std::uint64_t host, std::size_t entry) {
    DevicePlan plan;
    plan.name = device.name;
    plan.free_bytes = device.free_bytes;
    const std::uint64_t available = device_memory_available(device.free_bytes);
    plan.reserve_bytes = device.free_bytes - available;
    // A budget is an upper bound: one larger than what can be had shrinks to it (and so do the chunks).
    plan.budget_bytes = std::min(budgets.device_memory_bytes.value_or(available), available);
    plan.staging_bytes = std::max<std::uint64_t>(entry, std::min(device.preferred_staging_bytes, host / 16));
    plan.slots = 2;
    return plan;
}

// The host merge of about `runs` runs: tasks, in-order slices, buffers and fan-in from `available`
// bytes. As many tasks as threads fit; into a sequential output, whose slices share the memory
// with the read buffers, fewer where that lets one pass merge all runs.
void plan_host_merge(SortPlan& plan, const PlanInput& input, std::uint64_t available, std::uint64_t runs) {
    const std::size_t entry = input.entry_bytes;
    // Records merged into a file that is not mapped are copied out of each output buffer into one
    // more of the same size (RecordOutput); into a stream, out of each slice into one more slice.
    plan.extra_buffers = input.entries_hold_records && !input.output_streamed ? 1 : 0;
    // Each task holds one buffer per run (two at least), one for its output and the extra ones.
    const std::uint64_t least_buffers = 3 + plan.extra_buffers;
    auto slice_buffers = [&](unsigned tasks) -> std::size_t { return input.output_streamed ? 2 * std::size_t{tasks} : 0; };
    auto slices_held = [&](unsigned tasks) -> std::size_t {
        return slice_buffers(tasks) + (input.output_streamed && input.entries_hold_records ? 1 : 0);
    };
    // The 2 * tasks slices held at once take about half of the memory, less where the least read
    // buffers would not fit beside them.
    auto slice_bytes = [&](unsigned tasks) -> std::uint64_t {
        if (!input.output_streamed) return 0;
        const std::uint64_t smallest = std::max<std::uint64_t>(entry, kMinMergeBuffer);
        const std::uint64_t wanted =
            std::clamp<std::uint64_t>(available / (4 * std::uint64_t{tasks}), smallest, std::max(smallest, kMaxInOrderSlice));
        const std::uint64_t reads = std::uint64_t{tasks} * least_buffers * kMinMergeBuffer;
        return std::min(wanted, available > reads ? (available - reads) / slices_held(tasks) : 0);
    };
    auto merge_memory = [&](unsigned tasks) -> std::uint64_t {
        const std::uint64_t slices = slices_held(tasks) * slice_bytes(tasks);
        return available > slices ? available - slices : 0;
    };
    auto fits = [&](unsigned tasks) {
        return merge_memory(tasks) / tasks / kMinMergeBuffer >= least_buffers &&
               (!input.output_streamed || slice_bytes(tasks) >= entry);
    };
    auto one_pass = [&](unsigned tasks) {
        return input.output_streamed && fits(tasks) &&
               merge_memory(tasks) / tasks / kMinMergeBuffer >= runs + 1 + plan.extra_buffers;
    };
    plan.merge_tasks = plan.threads;
    while (plan.merge_tasks > 1 && !one_pass(plan.merge_tasks)) --plan.merge_tasks;
    if (!one_pass(plan.merge_tasks)) {
        plan.merge_tasks = plan.threads;
        while (plan.merge_tasks > 1 && !fits(plan.merge_tasks)) --plan.merge_tasks;
    }
    if (!fits(plan.merge_tasks)) throw std::invalid_argument("the memory budget is too small to merge");
    plan.merge_memory = merge_memory(plan.merge_tasks);
    plan.in_order_slice_bytes = slice_bytes(plan.merge_tasks);
    plan.in_order_slice_buffers = slice_buffers(plan.merge_tasks);
    plan.host.merge_buffers = plan.merge_memory;
    plan.host.in_order_slices = slices_held(plan.merge_tasks) * plan.in_order_slice_bytes;
    plan.fan_in = static_cast<std::size_t>(plan.merge_memory / plan.merge_tasks / kMinMergeBuffer - 1 - plan.extra_buffers);
    if (input.max_fan_in) plan.fan_in = std::max<std::size_t>(2, std::min(plan.fan_in, *input.max_fan_in));
}

// Passes over the data of a host merge of `runs` runs: the intermediate ones, then the last.
unsigned host_merge_passes(const SortPlan& plan, std::uint64_t runs) {
    unsigned passes = 1;
    for (std::size_t left = static_cast<std::size_t>(runs); left > plan.fan_in; ++passes)
        for (auto [first, count] : merge_groups(plan, left)) left -= count - 1;
    return passes;
}


// Which files are read and written with direct I/O, and in what pieces (see SortPlan::direct_io_piece).
void plan_direct_io(SortPlan& plan, const PlanInput& input, const Budgets& budgets) {
    if (input.spill_io == IoMode::direct && !input.direct_io_possible)
        throw std::invalid_argument("--spill-io direct: the file system of '" + input.tmp_dir +
                                    "' (--tmp-dir) does not do direct I/O");
    const std::uint64_t input_bytes = plan.records * input.record_size;
    // What the page cache would have to hold; it holds anything where its size is not known.
    auto too_large = [&](std::uint64_t bytes) { return plan.size_known && input.page_cache_bytes && bytes > *input.page_cache_bytes; };
    auto choose = [](IoMode mode, bool possible, bool automatic) {
        return possible && (mode == IoMode::direct || (mode == IoMode::automatic && automatic));
    };
    // INPUT: cold (less than half of it in the page cache), or larger than the cache may hold.
    const bool cold = input.input_resident_bytes && *input.input_resident_bytes < input_bytes / 2;
    plan.input_direct = input_bytes > 0 && choose(input.input_io, input.input_direct_possible, cold || too_large(input_bytes));
    // OUTPUT: larger than the page cache may hold, so that its writeback would hold the sort back.
    plan.output_direct = (input_bytes > 0 || !plan.size_known) && !input.output_streamed &&
                         choose(input.output_io, input.output_direct_possible, too_large(input_bytes));
    // Spilled runs: when they, with the output where it goes through the cache, would not fit
    // there: they would push each other (and the input) out of it.
    const bool spills = !plan.one_chunk && !plan.runs_kept_in_memory;
    const std::uint64_t spilled = plan.records * plan.entry_bytes * (plan.merge_passes > 1 ? 2 : 1);
    const std::uint64_t cached = spilled + (input.output_streamed || plan.output_direct ? 0 : input_bytes);
    plan.spill_direct = spills && choose(input.spill_io, input.direct_io_possible, too_large(cached));
    // Each thread's bounce buffer takes one piece: together at most half of the sixteenth of the
    // budget kept back (and one block each at least).
    if (plan.input_direct || plan.output_direct || plan.spill_direct) {
        const std::uint64_t share = budgets.memory_bytes / 32 / plan.threads;
        plan.direct_io_piece = std::clamp<std::uint64_t>(share / io::kDirectIoAlignment * io::kDirectIoAlignment,
                                                         io::kDirectIoAlignment, io::kMaxDirectIoPiece);
        plan.host.direct_io = std::uint64_t{plan.threads} * plan.direct_io_piece;
    }
}

// Records per chunk, fewer where a testing aid asks for smaller chunks (PlanInput::max_run_records).
std::uint64_t limited(const PlanInput& input, std::uint64_t records) {
    return input.max_run_records ? std::min(records, std::max<std::uint64_t>(1, *input.max_run_records)) : records;
}

// What the plan is made for: the budgets and the input as the plan states them.
SortPlan plan_for(const PlanInput& input, const Budgets& budgets) {
    SortPlan plan;
    plan.memory_bytes = budgets.memory_bytes;
    plan.threads = std::max(1u, budgets.threads);
    plan.size_known = input.records.has_value();
    plan.records = input.records.value_or(0);
    plan.record_size = input.record_size;
    plan.entry_bytes = input.entry_bytes;
    plan.output_streamed = input.output_streamed;
    return plan;
}

// The stream queues come first out of the usable memory. Returns the memory left for the chunks,
// runs and merge.
std::uint64_t plan_streams(SortPlan& plan, const PlanInput& input, const Budgets& budgets) {
    const std::uint64_t usable = usable_memory(budgets.memory_bytes);
    plan.reader = plan_reader(usable);
    plan.writer = plan_writer(input, plan.threads, usable);
    plan.host.reader = input.input_streamed ? plan.reader.memory() : 0;
    plan.host.writer = plan.writer.memory();
    // --verify runs once all else is freed: a block of the file, and the reader of a compressed one.
    plan.verify_block_bytes =
        std::max<std::uint64_t>(1, std::min(kMaxVerifyBlock, usable / 2) / input.record_size) * input.record_size;
    // An encoder larger than the writer's share (xz's at high levels) is taken beyond the budget.
    return usable - plan.host.reader - std::min(plan.host.writer, writer_share(usable));
}

// The chunk sorter's memory out of `rest`: the host's (a CPU sorter; half of it when a stream's two
// chunk buffers take the other half), or the device's with pinned staging on the host. Returns the
// host memory besides a sorter's on a device (all of `rest` for a CPU sorter, which frees its slots
// before a merge on the host).
std::uint64_t plan_chunk_memory(SortPlan& plan, const Budgets& budgets, const ChunkCapacity& capacity, std::uint64_t rest) {
    if (!capacity.device) {
        plan.chunk_memory.host_bytes = plan.size_known ? rest : rest / 2;
        plan.host.sorter = plan.chunk_memory.host_bytes;
        return rest;
    }
    plan.device = plan_device(*capacity.device, budgets, rest, plan.entry_bytes);
    plan.chunk_memory.device_bytes = plan.device->budget_bytes;
    plan.chunk_memory.staging_bytes = plan.device->staging_bytes;
    plan.host.staging = plan.device->staging_memory();
    return rest - std::min(rest, plan.device->staging_memory());
}

// The least host memory in which the sorter holds `slots` chunks of `records` records each, at most
// `most` (which is known to hold them): what a CPU sorter allocates for them.
std::uint64_t least_host_memory(const ChunkCapacity& capacity, ChunkMemory memory, std::size_t slots,
                                std::uint64_t records, std::uint64_t most) {
    std::uint64_t lo = 0, hi = most;
    while (lo < hi) {
        memory.host_bytes = lo + (hi - lo) / 2;
        if (capacity.records(slots, memory) >= records)
            hi = memory.host_bytes;
        else
            lo = memory.host_bytes + 1;
    }
    return hi;
}

// A CPU sorter's slots are sized for the chunks there are, not for the whole of its share, where the
// input is smaller: one slot for the one chunk (or the one run), else two for runs of run_records.
// This is what it allocates (the sorter allocates no more than the plan gives it).
void fit_sorter_to_chunks(SortPlan& plan, const ChunkCapacity& capacity) {
    const std::size_t slots = plan.runs > 1 ? 2 : 1;
    const std::uint64_t records = std::min(plan.run_records, plan.records);
    plan.chunk_memory.host_bytes =
        least_host_memory(capacity, plan.chunk_memory, slots, records, plan.chunk_memory.host_bytes);
    plan.host.sorter = plan.chunk_memory.host_bytes;
}

// An input of known size: one chunk, or runs of two chunks at once (one is read while the other is
// sorted and written), with samples of them; `host` is the memory besides a sorter on a device.
void plan_chunks(SortPlan& plan, const PlanInput& input, const ChunkCapacity& capacity, std::uint64_t host,
                 std::uint64_t sample_budget) {
    const std::size_t entry = input.entry_bytes;
    plan.one_chunk_records = limited(input, capacity.records(1, plan.chunk_memory));
    plan.one_chunk = plan.records <= plan.one_chunk_records && !input.runs_in_caller_memory;
    if (plan.one_chunk) {
        plan.run_records = plan.records;
        plan.runs = plan.records > 0 ? 1 : 0;
        if (plan.device) plan.device->slots = 1;
    } else {
        plan.run_records = limited(input, capacity.records(2, plan.chunk_memory));
        if (plan.run_records == 0)
            throw std::invalid_argument(
                "the memory budget of the chunk sorter (--memory, or --device-memory on the GPU) holds no key");
        plan.runs = ceil_div(plan.records, plan.run_records);
        plan.runs_kept_in_memory = input.runs_in_caller_memory || (plan.device && plan.records * entry <= host / 2);
        // Samples of all runs take at most their budget (and one record in 1024 at most).
        plan.sample_stride = round_up_pow2(std::max<std::uint64_t>(1024, ceil_div(plan.records * entry, sample_budget)));
        plan.sample_memory = (plan.records / plan.sample_stride + 1) * entry;
    }
    if (plan.device)
        plan.host.staging = plan.device->staging_memory();  // one slot for one chunk
    else
        fit_sorter_to_chunks(plan, capacity);
}

// A stream is read into two chunk buffers (the host memory besides the sorter's), one while the
// other is sorted. Ending within the first two, it is sorted as one chunk. Its size is not known, so
// the sorter keeps its whole share.
void plan_stream_chunks(SortPlan& plan, const PlanInput& input, const ChunkCapacity& capacity, std::uint64_t rest,
                        std::uint64_t host, std::uint64_t sample_budget) {
    const std::uint64_t buffers = plan.device ? host : rest - plan.chunk_memory.host_bytes;
    const std::uint64_t chunk =
        limited(input, std::min(capacity.records(2, plan.chunk_memory), buffers / 2 / input.record_size));
    if (chunk == 0) throw std::invalid_argument("the memory budget holds no record of a streamed input; give more --memory");
    plan.one_chunk = false;
    plan.one_chunk_records = std::min(capacity.records(1, plan.chunk_memory), 2 * chunk);
    plan.run_records = chunk;
    plan.stream_chunk_bytes = chunk * input.record_size;
    plan.host.stream_chunks = 2 * plan.stream_chunk_bytes;
    // Its samples are planned as for kPlannedStreamChunks chunks; a longer stream's runs thin
    // theirs out to stay within the same share.
    plan.sample_stride =
        round_up_pow2(std::max<std::uint64_t>(1024, ceil_div(kPlannedStreamChunks * chunk * input.entry_bytes, sample_budget)));
    plan.sample_memory = sample_budget;
}

// The merge of the runs (none for one chunk) in `host` bytes, and the temp files they spill to.
void plan_merge(SortPlan& plan, const PlanInput& input, const ChunkCapacity& capacity, std::uint64_t host) {
    if (plan.one_chunk) return;
    plan.merge_on_device = plan.device && capacity.sorts_slices;
    if (plan.merge_on_device) {
        // The GPU merges by sorting exact slices of all runs, in one pass (in order, one slice
        // at a time, for a stream).
        plan.device_merge_slots = input.output_streamed ? 1 : 2;
        plan.merge_passes = 1;
    } else {
        plan_host_merge(plan, input, host - std::min(host / 2, plan.sample_memory + plan.host.runs),
                        plan.size_known ? plan.runs : kPlannedStreamChunks);
        if (plan.size_known) plan.merge_passes = host_merge_passes(plan, plan.runs);
    }
    // Runs kept in memory still spill what an intermediate merge pass writes.
    plan.spill_files = std::min<std::size_t>(plan.threads, kMaxSpillFiles);
}

// Disk: the output (a file of known size), and the spilled runs, with a second copy of them while an
// intermediate merge pass runs.
void plan_disk(SortPlan& plan, const PlanInput& input) {
    if (!plan.size_known) return;
    if (!input.output_streamed && !input.output_folder.empty())
        plan.disk.push_back({input.output_folder, plan.records * (input.output_record_bytes ? input.output_record_bytes : input.record_size),
                             "the output '" + input.output_name + "'"});
    if (!plan.one_chunk && !plan.runs_kept_in_memory)
        plan.disk.push_back({input.tmp_dir, plan.records * input.entry_bytes * (plan.merge_passes > 1 ? 2 : 1), "sorted runs"});
}

}  // namespace

SortPlan plan_sort(const PlanInput& input, const Budgets& budgets, const ChunkCapacity& capacity) {
    if (budgets.memory_bytes < kMinMemoryBudget)
        throw std::invalid_argument("the memory budget must be at least 1M");
    SortPlan plan = plan_for(input, budgets);
    const std::uint64_t rest = plan_streams(plan, input, budgets);
    const std::uint64_t host = plan_chunk_memory(plan, budgets, capacity, rest);
    // Samples of all runs take at most 1/32 of the host memory besides a sorter on a device.
    const std::uint64_t sample_budget = std::max<std::uint64_t>(host / 32, input.entry_bytes);
    if (plan.size_known)
        plan_chunks(plan, input, capacity, host, sample_budget);
    else
        plan_stream_chunks(plan, input, capacity, rest, host, sample_budget);
    plan.host.samples = plan.sample_memory;
    plan.host.runs = plan.runs_kept_in_memory && !input.runs_in_caller_memory ? plan.records * input.entry_bytes : 0;
    plan_merge(plan, input, capacity, host);
    plan_direct_io(plan, input, budgets);
    plan_disk(plan, input);
    return plan;
}

}  // namespace gpusort
