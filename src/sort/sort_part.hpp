// sort_part(): sort_file() with what gpusort-mpi's ranks and the tests ask of a sort beyond the
// public SortOptions: the input in memory, the output into a part of an open file, runs shared
// between the processes of a host, and testing aids that force many runs and merge passes. Not
// installed: a library user sees gpusort/sort_file.hpp only.
#pragma once

#include "gpusort/sort_file.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace gpusort {

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

// sort_memory(): the arrays of columns in memory, in place of the files that SortOptions::values and
// index_output name (those names then serve only in messages): one input and one output per value.
struct MemoryColumns {
    std::vector<std::span<const std::byte>> values;
    std::vector<std::span<std::byte>> value_outputs;
    std::span<std::byte> index;
};

struct PartSortOptions : SortOptions {
    // Sort these bytes, which must stay unchanged until the sort ends, instead of reading INPUT,
    // whose name then serves only in messages (gpusort-mpi's ranks sort the records they received so).
    std::optional<std::span<const std::byte>> input_memory;
    // Write into this part of an open file instead of creating OUTPUT, whose name then serves only in
    // messages; uncompressed.
    std::optional<OutputRegion> output_region;
    // Write the sorted records (with columns: the sorted keys) into this memory instead of OUTPUT,
    // whose name then serves only in messages (sort_memory(); with input_memory). Its size: the
    // input's records (keys).
    std::optional<std::span<std::byte>> output_memory;
    // The columns' arrays in memory (with input_memory).
    std::optional<MemoryColumns> memory_columns;
    // Merge this sort's part of the runs of several processes into memory instead of sorting INPUT
    // into OUTPUT (see SharedRuns).
    std::optional<SharedRuns> shared_runs;
    // Testing aid: a fan-in smaller than the plan's, to force several merge passes.
    std::optional<std::size_t> max_fan_in;
    // Testing aid: chunks (and so runs) of at most this many records, to form many runs from a
    // small input.
    std::optional<std::uint64_t> max_run_records;
};

struct PartSortReport : SortReport {
    // Sorting shared runs: the records the part took from each run, in the order gather returned them.
    std::vector<std::uint64_t> shared_run_records;
};

// `options` with none of the above set.
PartSortOptions part_options_of(const SortOptions& options);

// As sort_file() and plan_file(), with the options above.
PartSortReport sort_part(const PartSortOptions& options);
SortPlan plan_part(const PartSortOptions& options);

}  // namespace gpusort
