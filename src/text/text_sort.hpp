// What gpusort-sort does with a command line read by parse_sort_args(): check the order of an
// input (-c, -C), merge sorted inputs (-m), or sort the inputs: chunks of lines sorted in memory
// (line_chunk.hpp), written straight to the output when all of them fit one chunk, else spilled
// as runs and merged (line_merge.hpp). sort_lines() is that sort alone, the engine that
// gpusort-file --lines runs too, with what it did and hooks to follow it.
#pragma once

#include "gpusort/progress.hpp"
#include "src/text/line_chunk.hpp"
#include "src/text/line_output.hpp"
#include "src/text/sort_args.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpusort {

// Does the command (not --help or --version). Returns the exit status: 0, or 1 when -c or -C
// finds a line out of order (-c says which on stderr, prefixed with "gpusort-sort: "). Throws
// gpusort::Error (or std::bad_alloc) on failure, with GNU sort's message where it has one; an
// output file is then left as it was.
int run_sort_command(const SortCommand& command);

// Threads for a sort that asks for `wanted` (none: all): at most the CPUs this process may use,
// as GNU sort runs.
unsigned line_sort_threads(std::optional<std::size_t> wanted);

// Seconds of a sort of lines by step; the steps do not overlap.
struct LineSortTimes {
    double read = 0;   // the inputs read into chunks
    double prefixes = 0;  // the chunks' entries made: the prefixes of their lines' sort codes
    double sort = 0;   // the entries sorted by their prefixes
    double ties = 0;   // the groups of equal prefixes settled
    double runs = 0;   // sorted chunks written as runs
    double merge = 0;  // the merge of the runs, all passes, the output written through it
    double write = 0;  // the one chunk written to the output
};

// What a sort of lines did.
struct LineSortReport {
    std::uint64_t lines = 0;          // lines read
    std::uint64_t line_bytes = 0;     // their bytes, each with its terminator
    std::uint64_t runs = 0;           // chunks sorted: 1 when all lines fit one
    unsigned merge_passes = 0;        // 0 for one chunk
    std::uint64_t bytes_spilled = 0;  // runs, and the runs of merge passes before the last
    LineSortTimes times;
};

// What a caller may follow as the sort goes: each chunk as it is read (before its sort), and the
// phases of the sort after reading (sorting one chunk, writing it, merging) in `progress`, whose
// reading phase, and the bytes of each phase, are the caller's to count.
struct LineSortHooks {
    std::function<void(const LineChunk&)> chunk_read;
    ProgressCounters* progress = nullptr;
};

// Sorts the lines of `inputs`, read in turn, into `out` within `budget` on `threads` threads (TBB's
// limit is the caller's to set); runs spill into nameless temp files in `folders`, taken in turn.
LineSortReport sort_lines(std::vector<ByteSource*> inputs, const TextKeys& keys, const TextBudget& budget, unsigned threads,
                          const std::vector<std::string>& folders, UniqueLines& out, const LineSortHooks& hooks = {});

}  // namespace gpusort
