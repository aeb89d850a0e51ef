// plan_sort(): the plan of a sort from what is sorted (PlanInput), the budgets and the chunk
// sorter's capacity; the limits it plans within, and what it reads off the machine besides the
// public defaults (gpusort/sort_plan.hpp). Used by the sort and its tests; not installed.
#pragma once

#include "gpusort/sort_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gpusort {

struct Budgets {
    std::uint64_t memory_bytes = 0;  // host memory the sort may use
    unsigned threads = 1;
    // --device-memory; default (and at most): the device's free memory less a reserve.
    std::optional<std::uint64_t> device_memory_bytes;
};

// A merge reads each run through a buffer at least this large.
inline constexpr std::uint64_t kMinMergeBuffer = std::uint64_t{64} << 10;
// ... and at most this large: beyond it larger reads gain little, and every task has its own.
inline constexpr std::uint64_t kMaxMergeBuffer = std::uint64_t{4} << 20;
// Output bytes per merge task, at least (smaller merges use fewer tasks).
inline constexpr std::uint64_t kMinMergeSlice = std::uint64_t{4} << 20;
// Temp files that spilled runs are laid over at most (the stripes of an io::SpillFile): on the GPU
// machine 16 threads wrote 16 GiB into one file at 3.2-4 GB/s, into 16 files at 45 GB/s, into 64 at 50.
inline constexpr std::size_t kMaxSpillFiles = 16;
// Bytes of output per slice, at most, of a merge into a sequential output (each slice is merged
// into a buffer of its own, several at once, and handed on in order).
inline constexpr std::uint64_t kMaxInOrderSlice = std::uint64_t{16} << 20;
// Bytes --verify reads back at once, at most.
inline constexpr std::uint64_t kMaxVerifyBlock = std::uint64_t{64} << 20;

// The device a chunk sorter keeps its chunks on, as it reports itself before planning.
struct DeviceCapacity {
    std::string name;
    std::uint64_t free_bytes = 0;               // free device memory now
    std::uint64_t preferred_staging_bytes = 0;  // the staging buffer its transfers are fastest with
};

// What the chunk sorter can take: asked by plan_sort.
struct ChunkCapacity {
    // Records per chunk when `slots` chunks are held at once in `memory`.
    std::function<std::uint64_t(std::size_t slots, const ChunkMemory& memory)> records;
    // The device the chunks live on; nullopt: they live in host memory (the budget bounds them).
    std::optional<DeviceCapacity> device;
    // The sorter merges runs by sorting slices of them on its device (it has a SliceSorter).
    bool sorts_slices = false;
};

// What is sorted, as the plan sees it.
struct PlanInput {
    std::optional<std::uint64_t> records;  // the input's records; nullopt: a stream of unknown size
    std::size_t record_size = 1;           // bytes per input (and output) record
    // Bytes per entry of a run: the normalised key (keys), or key words followed by the record.
    std::size_t entry_bytes = 1;
    bool entries_hold_records = false;     // records: a merge strips the key words on the way out
    bool input_streamed = false;           // read front to back (stdin, pipes, devices, compressed)
    bool output_streamed = false;          // written in order (stdout, pipes, devices, compressed)
    Compression output_compression = Compression::none;
    int compression_level = -1;            // -1: the format's default
    std::string output_name;               // OUTPUT, for the disk needs' messages
    std::size_t output_record_bytes = 0;  // bytes written per record, where not record_size (columns)
    std::string output_folder;             // a regular OUTPUT's folder; empty for a stream
    std::string tmp_dir;                   // where runs are spilled
    IoMode spill_io = IoMode::automatic;
    bool direct_io_possible = false;       // tmp_dir's file system does direct I/O
    IoMode input_io = IoMode::automatic;
    IoMode output_io = IoMode::automatic;
    bool input_direct_possible = false;    // INPUT is a regular, uncompressed file on a file system with direct I/O
    bool output_direct_possible = false;   // OUTPUT is a regular, uncompressed file on a file system with direct I/O
    // Bytes of INPUT that lie in the page cache now; nullopt when unknown.
    std::optional<std::uint64_t> input_resident_bytes;
    std::optional<std::uint64_t> page_cache_bytes;  // memory the page cache may take besides the budget
    // The runs go into memory the caller gives (PartSortOptions::shared_runs), not the budget's, and are
    // always formed and merged, even where the input would fit one chunk.
    bool runs_in_caller_memory = false;
    // Testing aids: a smaller fan-in (several merge passes) and smaller chunks (many runs).
    std::optional<std::size_t> max_fan_in;
    std::optional<std::uint64_t> max_run_records;
};

// Throws std::invalid_argument when the budget is below kMinMemoryBudget or too small for the sort
// (the sorter can take no record, or no merge of two runs fits).
SortPlan plan_sort(const PlanInput& input, const Budgets& budgets, const ChunkCapacity& capacity);

// The stream reader's queue within a share of the `usable` memory: io's default blocks, smaller
// when they would take more. Planned for every sort: a compressed output is read back by --verify.
ReaderPlan plan_reader(std::uint64_t usable);
// The stream writer's queue (a compressed output: input.output_compression, compression_level):
// the format's blocks, two in flight per compressing thread (at most `threads`), and each thread's
// encoder; within a share of `usable` by fewer threads first, smaller blocks only when one thread
// does not fit. An encoder larger than the share (xz's at high levels under a small budget) is
// taken as it is, beside blocks that fill the share.
WriterPlan plan_writer(const PlanInput& input, unsigned threads, std::uint64_t usable);

// What a budget leaves for the sort's buffers: a sixteenth of it is kept back for the sorter's
// scratch space and bookkeeping. budget_for_usable() is the least budget that leaves `bytes`.
std::uint64_t usable_memory(std::uint64_t budget);
std::uint64_t budget_for_usable(std::uint64_t bytes);

// The device memory a sort may take of `free_bytes` free: all of it less a reserve left to the
// driver and other programs (the default --device-memory).
std::uint64_t device_memory_available(std::uint64_t free_bytes);

// Threads a sort on `threads` threads may start at once: TBB's workers, the sort's pool, a stream's
// compressors and its output thread, a stream's reader and the progress line.
unsigned threads_started_by(unsigned threads);
// How many of `wanted` threads the system lets this process start now (under ulimit -u or a
// container's limit on tasks): it starts them with small stacks, counts them and ends them. Where
// one cannot start, *error (optional) gets the reason (an errno).
unsigned startable_threads(unsigned wanted, int* error = nullptr);

// Address space this process may still map under a limit on it (RLIMIT_AS, ulimit -v): the limit
// less what is mapped now; nullopt when there is no limit.
std::optional<std::uint64_t> address_space_room();
// Address space a sort takes besides its memory budget and what is mapped already: a stack for each
// of its threads (two for each of `threads`: the pool's and the chunk sorter's), a second malloc
// arena and the state of the compression libraries.
std::uint64_t address_space_overhead(unsigned threads);

}  // namespace gpusort
