// The public API of the library: sort one file of fixed-size keys or records into another.
#pragma once

#include "gpusort/compression.hpp"
#include "gpusort/errors.hpp"
#include "gpusort/key_type.hpp"
#include "gpusort/key_spec.hpp"
#include "gpusort/phase_times.hpp"
#include "gpusort/progress.hpp"
#include "gpusort/sort_plan.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort {

enum class Backend { automatic, cpu, gpu };

// A part of a larger file that a sort writes its output into (as each rank of gpusort-mpi writes its
// part of one OUTPUT): the records take bytes [offset, offset + the input's size) of the open
// regular file `fd` (opened for reading and writing), which the sort neither creates, resizes,
// renames nor flushes: its owner does. With --unique the records kept come first (the report's
// output_records); the bytes after them, up to the input's size, are then unspecified.
struct OutputRegion {
    int fd = -1;
    std::uint64_t offset = 0;
};

// Sorted runs shared between processes (the ranks of gpusort-mpi on one host): the sort forms its
// runs into memory the caller gives (and shares with the other processes), then merges its part of
// the merge of every process's runs, records [first, first + part's records), into `part`, memory
// the caller gives too; it creates and writes no OUTPUT. Whole-record keys only (no key spec, no
// --unique, no --verify), and an input of known size.
struct SharedRuns {
    std::span<std::byte> runs;  // the input's size: the runs, one after the other, as normalised keys
    std::span<std::byte> part;  // the part, as records (raw keys)
    std::uint64_t first = 0;    // the part's first record in the merge of all processes' runs
    // Called once this process's runs are formed, with how many records each holds (in that order):
    // returns every process's runs, this one's included, in the order ties go (an earlier run's first).
    // The input is not read after it is called (its memory may go).
    std::function<std::vector<std::span<const std::byte>>(std::span<const std::uint64_t> run_records)> gather;
    // Set where the caller formed the runs in `runs` itself (their records, in order): the sort
    // then reads no input, and gathers and merges at once.
    std::optional<std::vector<std::uint64_t>> formed;
    // Optional: told of the bytes [offset, offset + size) of `part` merged, once each (where the
    // caller releases a map's written pages behind the merge): a merge on the device tells of each
    // slice as it is written, a merge on the host of the whole part when it ends.
    std::function<void(std::uint64_t offset, std::uint64_t size)> written;
};

struct SortOptions {
    std::string input;
    std::string output;
    // Sort these bytes, which must stay unchanged until the sort ends, instead of reading INPUT,
    // whose name then serves only in messages (gpusort-mpi's ranks sort the records they received so).
    std::optional<std::span<const std::byte>> input_memory;
    KeyOrder order;                             // the whole record is one key of this type ...
    std::optional<KeySpec> records;             // ... unless records with a key spec are given
    // Of each group of records with equal keys keep only the first (in input order). Sorts of
    // records are always stable (equal keys keep their input order); sorts of whole-record keys
    // are trivially so.
    bool unique = false;
    std::optional<std::uint64_t> memory_bytes;  // default: default_memory_budget()
    std::optional<unsigned> threads;            // default: default_threads()
    std::optional<std::string> tmp_dir;         // default: OUTPUT's folder
    IoMode spill_io = IoMode::automatic;        // how spilled runs are written and read
    IoMode input_io = IoMode::automatic;        // how INPUT is read (a regular, uncompressed file)
    IoMode output_io = IoMode::automatic;       // how OUTPUT is written (a regular, uncompressed file)
    Backend backend = Backend::automatic;       // automatic: the GPU when one is present
    int device = 0;                             // which GPU
    std::optional<std::uint64_t> device_memory_bytes;  // default: most of the GPU's free memory
    // Flush the output to disk before it is renamed into place. Always done when the
    // output replaces the input, so that a crash cannot lose the data.
    bool sync = false;
    // Testing aid: a fan-in smaller than the plan's, to force several merge passes.
    std::optional<std::size_t> max_fan_in;
    // Testing aid: chunks (and so runs) of at most this many records, to form many runs from a
    // small input.
    std::optional<std::uint64_t> max_run_records;
    // Compression of INPUT and OUTPUT, forced (for pipes); default: by the names' endings.
    std::optional<Compression> input_compression;
    std::optional<Compression> output_compression;
    int compression_level = -1;                 // -1: the format's default
    // Write into this part of an open file instead of creating OUTPUT, whose name then serves only in
    // messages; uncompressed.
    std::optional<OutputRegion> output_region;
    // Merge this sort's part of the runs of several processes into memory instead of sorting INPUT
    // into OUTPUT (see SharedRuns).
    std::optional<SharedRuns> shared_runs;
    // Re-read the output and check its order and that it holds the input's records.
    bool verify = false;
    // Counters for a progress display, updated while the sort runs (optional).
    ProgressCounters* progress = nullptr;
    // Takes one-line notices about the sort that are not errors (optional), such as "auto"
    // falling back to the CPU because the GPU present cannot be used.
    std::function<void(const std::string&)> notice;
};

struct SortReport {
    SortPlan plan;
    std::string backend;             // "cpu", or the GPU's name
    std::string backend_reason;      // why: "--backend cpu", "a GPU was found", "no usable GPU: ..."
    std::uint64_t bytes = 0;           // input bytes (decompressed)
    std::uint64_t output_bytes = 0;    // output bytes (before compression)
    std::uint64_t output_stored_bytes = 0;  // bytes that reached OUTPUT (after compression)
    bool input_streamed = false;       // read front to back (stdin, pipe, compressed)
    bool output_streamed = false;      // written front to back (stdout, pipe, device, compressed)
    bool verified = false;
    std::uint64_t records = 0;
    std::uint64_t output_records = 0;  // fewer than records with --unique
    std::size_t record_size = 0;
    std::uint64_t runs = 0;          // sorted runs formed (1 when sorted in memory)
    unsigned merge_passes = 0;       // passes over the data by the merge (0 when sorted in memory)
    std::uint64_t bytes_spilled = 0; // bytes written to temp files
    PhaseTimes times;
    MergeTimes merge;                // the merge's phases (times.merge is its wall clock)
    // Sorting shared runs: the records the part took from each run, in the order gather returned them.
    std::vector<std::uint64_t> shared_run_records;
    double seconds = 0;              // the whole sort, wall clock
};

// Sorts options.input into options.output. Throws a gpusort::Error (SortError, IoError,
// GpuError), std::invalid_argument or std::bad_alloc (gpusort/errors.hpp); on failure no file is
// left at OUTPUT that was not there, an existing OUTPUT is unchanged and no temp files remain.
SortReport sort_file(const SortOptions& options);

// The plan of that sort (every size it would use: runs, passes, memory, disk, device), made without
// sorting: INPUT is opened for reading (a stream is not read), OUTPUT is neither opened nor created,
// and nothing is written. Throws as sort_file() does for what it finds up to there.
SortPlan plan_file(const SortOptions& options);

}  // namespace gpusort
