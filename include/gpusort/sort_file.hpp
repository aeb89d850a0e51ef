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

// How a permutation's entries are written (SortOptions::index_output, gather_file): automatic is u32
// when the input's record numbers all fit in 32 bits (at most 2^32 records), else u64.
enum class IndexType { automatic, u32, u64 };

// A column of values carried along with the keys: `input` holds as many records as the keys'
// input, `width` bytes each (default: its size divided by the keys' count, which must divide it);
// `output` receives them in the order of the sorted keys. `output` may be `input` (in place).
struct ValueColumn {
    std::string input;
    std::string output;
    std::optional<std::size_t> width;
};

struct SortOptions {
    std::string input;
    std::string output;                         // may be empty where index_output or values are set: the
                                                // sorted keys are then not written
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
    // Compression of INPUT and OUTPUT, forced (for pipes); default: by the names' endings.
    std::optional<Compression> input_compression;
    std::optional<Compression> output_compression;
    int compression_level = -1;                 // -1: the format's default
    // Re-read the output and check its order and that it holds the input's records.
    bool verify = false;
    // Columns: value files carried along with the keys, and the permutation (for each output record,
    // the number of its input record, from 0). All outputs appear together or none does. INPUT and
    // every column must be regular, uncompressed files; the outputs too.
    std::vector<ValueColumn> values;
    std::optional<std::string> index_output;
    IndexType index_type = IndexType::automatic;
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
    std::size_t record_size = 0;     // bytes per record (with columns: the key's, the values' and the index's together)
    std::size_t index_width = 0;     // bytes per entry of index_output (4 or 8; 0 without one)
    std::uint64_t runs = 0;          // sorted runs formed (1 when sorted in memory)
    unsigned merge_passes = 0;       // passes over the data by the merge (0 when sorted in memory)
    std::uint64_t bytes_spilled = 0; // bytes written to temp files
    PhaseTimes times;
    MergeTimes merge;                // the merge's phases (times.merge is its wall clock)
    double seconds = 0;              // the whole sort, wall clock
};

// Sorts options.input into options.output. Throws a gpusort::Error (SortError, IoError,
// GpuError), std::invalid_argument or std::bad_alloc (gpusort/errors.hpp); on failure no file is
// left at OUTPUT that was not there, an existing OUTPUT is unchanged and no temp files remain.
SortReport sort_file(const SortOptions& options);

// Applies a permutation that index_output wrote to another column: OUTPUT's record i is INPUT's
// record index[i], for the entries of the file `index` (options.index_type: how they are stored;
// automatic reads u32 unless that would make more than 2^32 entries). INPUT's record width is its
// size divided by the number of entries. The index must be a permutation of INPUT's record numbers
// (else SortError, and no OUTPUT). Runs in memory where INPUT fits in the budget, else sorts out of
// core. Of options, the key, unique, values and index_output are not used. Throws as sort_file().
SortReport gather_file(const std::string& index, const SortOptions& options);

// The plan of that sort (every size it would use: runs, passes, memory, disk, device), made without
// sorting: INPUT is opened for reading (a stream is not read), OUTPUT is neither opened nor created,
// and nothing is written. Throws as sort_file() does for what it finds up to there.
SortPlan plan_file(const SortOptions& options);

}  // namespace gpusort
