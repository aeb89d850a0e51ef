// SortPlan: every buffer size and count of the sort, derived up front from the budgets
// (host memory, threads) and the input size. Nothing is sized anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace gpusort {

struct Budgets {
    std::uint64_t memory_bytes = 0;  // host memory the sort may use
    unsigned threads = 1;
};

// The smallest --memory accepted.
inline constexpr std::uint64_t kMinMemoryBudget = std::uint64_t{1} << 20;
// The most host threads a sort takes (--threads).
inline constexpr unsigned kMaxThreads = 1024;
// A merge reads each run through a buffer at least this large.
inline constexpr std::uint64_t kMinMergeBuffer = std::uint64_t{64} << 10;
// ... and at most this large: beyond it larger reads gain little, and every task has its own.
inline constexpr std::uint64_t kMaxMergeBuffer = std::uint64_t{4} << 20;
// Output bytes per merge task, at least (smaller merges use fewer tasks).
inline constexpr std::uint64_t kMinMergeSlice = std::uint64_t{4} << 20;

// How many keys the chunk sorter can take at once: alone, and in each of two slots.
struct ChunkCapacity {
    std::uint64_t one_slot = 0;
    std::uint64_t per_slot_of_two = 0;
    bool uses_host_memory = true;  // false: the chunks live elsewhere (the GPU's memory)
};

// Host memory the chunk sorter may use for its chunks: the budget less a sixteenth kept back for
// the sorter's own scratch space and bookkeeping.
inline std::uint64_t chunk_memory(std::uint64_t memory_bytes) { return memory_bytes - memory_bytes / 16; }

struct SortPlan {
    std::uint64_t records = 0;
    std::size_t record_size = 0;
    unsigned threads = 1;
    std::uint64_t memory_bytes = 0;
    // The whole input is sorted as one chunk: no run files, no merge.
    bool in_memory = true;
    // Records per sorted run (two chunks are sorted at once, to overlap I/O).
    std::uint64_t run_records = 0;
    // The sorted runs are kept in host memory rather than spilled to --tmp-dir (possible when
    // the chunks themselves take no host memory and the data fit in half the budget).
    bool runs_in_memory = false;
    // Every sample_stride-th record of each run is kept in memory to guide the merge's splitting.
    std::uint64_t sample_stride = 0;
    // Memory for the merge buffers of all concurrent merge tasks together.
    std::uint64_t merge_memory = 0;
    // The most runs one merge reads at once; more runs take several passes.
    std::size_t fan_in = 0;
    // Concurrent merge tasks.
    unsigned merge_tasks = 1;

    // Bytes of read buffer per run for a merge of `runs` runs (with the output buffer).
    std::uint64_t merge_buffer_bytes(std::size_t runs) const;
    // Number of output slices (parallel tasks) for a merge producing `records` records.
    std::uint64_t merge_slices(std::uint64_t records) const;
};

// Throws std::invalid_argument when the budget is below kMinMemoryBudget or the sorter can take no key.
SortPlan plan_sort(std::uint64_t records, std::size_t record_size, const Budgets& budgets, const ChunkCapacity& capacity);

// Defaults read off the machine.
std::uint64_t default_memory_budget();  // a safe share of the memory available now
unsigned default_threads();             // the CPUs this process may run on

// Address space this process may still map under a limit on it (RLIMIT_AS, ulimit -v): the limit
// less what is mapped now; nullopt when there is no limit.
std::optional<std::uint64_t> address_space_room();
// Address space a sort takes besides its memory budget and what is mapped already: a stack for each
// of its threads (two for each of `threads`: the pool's and the chunk sorter's), a second malloc
// arena and the buffers of streams.
std::uint64_t address_space_overhead(unsigned threads);

}  // namespace gpusort
