// The last merge of a sort's spilled runs on all threads: the runs are cut at the same lines (the
// splitters, chosen by bytes from samples of every run) into parts, each merged on its own by the
// loser tree and written at its place in the output, which the sizes of the parts give. The cuts
// follow the merge's own order (the line, then its run, then its place in the run), so the result
// is byte for byte that of one merge of all the runs.
#pragma once

#include "gpusort/progress.hpp"
#include "src/text/line_merge.hpp"
#include "src/text/text_budget.hpp"
#include "src/text/text_keys.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpusort {

// Merges `runs` (sorted, in the order of input; not for -u, which drops lines), which hold `bytes`
// bytes, as parts on TBB's `threads` threads: each part's bytes go to put(offset, piece) through a
// buffer of its own, a piece at a time. Each reader of a run and each part's buffer take an even
// share of the budget's chunk (a reader at least the longest line). `longest_line` is the runs'
// longest line. Adds each part's bytes to `progress`.
void merge_in_parts(const std::vector<SpilledRun>& runs, const TextKeys& keys, const TextBudget& budget, unsigned threads,
                    std::size_t longest_line, std::uint64_t bytes, const LineWriter::PutAt& put, ProgressCounters* progress);

}  // namespace gpusort
