// SortPlan: every size the sort uses, decided once, up front, from what is sorted
// (the input's size, or a stream of unknown size; the record layout; where the output goes), the
// budgets and the chunk sorter's capacity: chunks and runs (streamed ones too), samples, merge
// buffers, tasks and in-order slices, the stream reader's and writer's queues, the verify block,
// the device's budget and staging, and the disk space per folder. Nothing patches a plan after it
// is made, and nothing is sized anywhere else. The plan is printed by --plan and --stats.
#pragma once

#include "gpusort/compression.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusort {

// The smallest --memory accepted.
inline constexpr std::uint64_t kMinMemoryBudget = std::uint64_t{1} << 20;
// The most host threads a sort takes (--threads).
inline constexpr unsigned kMaxThreads = 1024;

// The memory a chunk sorter holds its chunks in.
struct ChunkMemory {
    std::uint64_t host_bytes = 0;     // host memory for its slots (a sorter whose chunks live on the host)
    std::uint64_t device_bytes = 0;   // device memory for its slots (the GPU)
    std::uint64_t staging_bytes = 0;  // each of a device slot's two pinned host staging buffers
};

// How a file is read or written (--input-io, --output-io, --spill-io): through the page cache, or
// with direct I/O that bypasses it, in large requests, many in flight; automatic: the plan chooses
// (see SortPlan::input_direct, output_direct and spill_direct).
enum class IoMode { automatic, buffered, direct };

// Sizes of the stream reader's queue: blocks of decompressed data read ahead.
struct ReaderPlan {
    std::uint64_t block_bytes = 0;
    std::size_t queued_blocks = 0;  // filled blocks waiting; two more are held (one filling, one read)
    std::uint64_t memory() const { return block_bytes * (queued_blocks + 2); }
};

// Sizes of the stream writer's queue: blocks compressed at once (compressed output only).
struct WriterPlan {
    std::uint64_t block_bytes = 0;        // uncompressed bytes per independently compressed block
    unsigned compressing_threads = 0;
    std::size_t blocks_in_flight = 0;     // compressed or being written; one more is filled
    std::uint64_t encoder_bytes = 0;      // the state of each compressing thread's encoder
    // Each block held takes its input and about as much again for its compressed output.
    std::uint64_t memory() const {
        return (blocks_in_flight + 1) * 2 * block_bytes + compressing_threads * encoder_bytes;
    }
};

// The device's share (chunks on a GPU).
struct DevicePlan {
    std::string name;
    std::uint64_t free_bytes = 0;
    std::uint64_t reserve_bytes = 0;   // left to the driver and other programs
    std::uint64_t budget_bytes = 0;    // what the sort may use: --device-memory, at most free less reserve
    std::uint64_t staging_bytes = 0;   // each pinned host staging buffer, two per slot
    std::size_t slots = 0;             // chunks held on the device at once
    std::uint64_t staging_memory() const { return 2 * slots * staging_bytes; }
};

// Disk space the sort takes in one folder.
struct DiskNeed {
    std::string folder;
    std::uint64_t bytes = 0;
    std::string what;  // "the output", "sorted runs"
};

// Host memory of the sort by what takes it, at its peak: while runs are formed (or the one chunk is
// sorted) and while they are merged; the larger of the two is at most the budget.
struct HostMemoryPlan {
    std::uint64_t sorter = 0;          // a CPU chunk sorter's slots (freed before a merge on the host)
    std::uint64_t staging = 0;         // a GPU chunk sorter's pinned staging (held to the end)
    std::uint64_t stream_chunks = 0;   // the two chunk buffers of a streamed input
    std::uint64_t reader = 0;          // the stream reader's queue
    std::uint64_t writer = 0;          // the stream writer's queue
    std::uint64_t samples = 0;         // the runs' samples, at most
    std::uint64_t runs = 0;            // runs kept in host memory
    std::uint64_t merge_buffers = 0;   // read and output buffers of all merge tasks on the host
    std::uint64_t in_order_slices = 0; // slices held by a merge into a sequential output
    // Direct I/O's bounce buffers, one per thread (where any file is read or written so): out of the
    // sixteenth of the budget kept back, not among the shares below.
    std::uint64_t direct_io = 0;
    std::uint64_t forming() const { return sorter + staging + stream_chunks + reader + writer + samples + runs; }
    std::uint64_t merging() const { return staging + reader + writer + samples + runs + merge_buffers + in_order_slices; }
    std::uint64_t peak() const { return forming() > merging() ? forming() : merging(); }
};

struct SortPlan {
    // What was planned for.
    std::uint64_t memory_bytes = 0;      // the host budget
    unsigned threads = 1;
    bool size_known = true;              // false: a stream, whose size is known only at its end
    std::uint64_t records = 0;           // the input's records (0 when the size is not known)
    std::size_t record_size = 0;         // bytes per input record
    std::size_t entry_bytes = 0;         // bytes per run entry (key, or key words and record)
    // Columns (SortOptions::values, index_output): a record joins the key's bytes, each value's and
    // the index's (0 where there is none); empty value_bytes and no index: no columns.
    std::size_t key_bytes = 0;
    std::vector<std::size_t> value_bytes;
    std::size_t index_bytes = 0;
    bool output_streamed = false;

    // Chunks and runs.
    // The whole input is sorted as one chunk: no runs, no merge (a stream: when it holds at most
    // one_chunk_records records, which only its end tells).
    bool one_chunk = true;
    std::uint64_t one_chunk_records = 0;  // the largest input sorted as one chunk
    std::uint64_t run_records = 0;        // records per chunk, and so per run (two are sorted at once)
    std::uint64_t runs = 0;               // runs formed (0 when the size is not known)
    ChunkMemory chunk_memory;             // what the chunk sorter holds its chunks in
    std::uint64_t stream_chunk_bytes = 0; // each of the two buffers a streamed input is read into
    // The runs are kept in host memory rather than spilled to --tmp-dir (possible when the chunks
    // themselves take no host memory and the data fit in half the budget).
    bool runs_kept_in_memory = false;
    // Every sample_stride-th record of each run is kept in memory to guide the merge's splitting;
    // the samples of all runs take at most sample_memory (a stream's runs double their stride when
    // more would).
    std::uint64_t sample_stride = 0;
    std::uint64_t sample_memory = 0;
    // Transfers with direct I/O take direct_io_piece bytes at most (0: none is made). Automatic
    // choices: INPUT is read so when less than half of it lies in the page cache, or when it is
    // larger than the memory the page cache may take; OUTPUT is written so when it is larger than
    // that memory; spilled runs when they and the output together are.
    std::uint64_t direct_io_piece = 0;
    bool input_direct = false;
    bool output_direct = false;
    bool spill_direct = false;
    // Spilled runs, and the runs of intermediate merge passes, are laid over this many temp files
    // (io::SpillFile), one per thread up to kMaxSpillFiles, so that the threads write them side by
    // side; 0 for one chunk, which spills nothing.
    std::size_t spill_files = 0;

    // Merge.
    bool merge_on_device = false;         // the runs are merged by sorting exact slices on the GPU
    std::size_t device_merge_slots = 0;   // ... with this many slices at once
    std::uint64_t merge_memory = 0;       // merge buffers of all concurrent merge tasks together
    std::size_t fan_in = 0;               // the most runs one merge reads at once; more take several passes
    unsigned merge_tasks = 1;             // concurrent merge tasks
    std::size_t extra_buffers = 0;        // buffers per task besides one per run and the output's
    // A merge into a sequential output merges slices of at most in_order_slice_bytes into buffers
    // of their own, in_order_slice_buffers at once (two per task: one merged while one is handed
    // on); records take one more slice of memory to strip the key words.
    std::uint64_t in_order_slice_bytes = 0;
    std::size_t in_order_slice_buffers = 0;
    unsigned merge_passes = 0;            // passes over the data by the merge (0 when unknown or none)

    // Streams and verification.
    ReaderPlan reader;                    // a streamed input, and --verify reading a compressed output back
    WriterPlan writer;                    // a compressed output
    std::uint64_t verify_block_bytes = 0; // --verify reads a file output back in blocks of this size

    std::optional<DevicePlan> device;     // chunks on a GPU
    HostMemoryPlan host;
    std::vector<DiskNeed> disk;           // known sizes only
};

// Defaults read off the machine.
// MemAvailable, at most the room left under the memory limit of this process's cgroup and its
// ancestors (cgroup v2 or v1); 0 when MemAvailable is unknown.
std::uint64_t available_memory();
// Half the memory available now, as available_memory() but 2 GiB where MemAvailable is unknown;
// at least kMinMemoryBudget.
std::uint64_t default_memory_budget();
unsigned default_threads();             // the CPUs this process may run on

}  // namespace gpusort
