// What gpusort-sort does with a command line read by parse_sort_args(): check the order of an
// input (-c, -C), merge sorted inputs (-m), or sort the inputs: chunks of lines sorted in memory
// (line_chunk.hpp), written straight to the output when all of them fit one chunk, else spilled
// as runs and merged (line_merge.hpp).
#pragma once

#include "src/text/sort_args.hpp"

namespace gpusort {

// Does the command (not --help or --version). Returns the exit status: 0, or 1 when -c or -C
// finds a line out of order (-c says which on stderr, prefixed with "gpusort-sort: "). Throws
// gpusort::Error (or std::bad_alloc) on failure, with GNU sort's message where it has one; an
// output file is then left as it was.
int run_sort_command(const SortCommand& command);

}  // namespace gpusort
