// What the sort reads off its plan while it runs, besides the plan's fields: the read buffers and
// output slices of a merge, the groups of runs an intermediate pass merges, and the piece the
// spilled runs are written in. Used by the stages and their tests; not installed (the plan itself
// is public: gpusort/sort_plan.hpp).
#pragma once

#include "gpusort/sort_plan.hpp"
#include "src/plan/plan_sort.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpusort {

// Bytes of read buffer per run for a merge of `runs` runs (with the output buffer): a task's share
// of the merge memory split evenly, within kMinMergeBuffer and kMaxMergeBuffer, in whole entries.
inline std::uint64_t merge_buffer_bytes(const SortPlan& plan, std::size_t runs) {
    std::uint64_t per_buffer = plan.merge_memory / plan.merge_tasks / (runs + 1 + plan.extra_buffers);
    per_buffer = std::clamp(per_buffer, kMinMergeBuffer, kMaxMergeBuffer);
    return std::max<std::uint64_t>(per_buffer / plan.entry_bytes, 1) * plan.entry_bytes;
}

// Number of output slices (parallel tasks) for a merge producing `records` records: one per
// kMinMergeSlice of output, at most four per merge task.
inline std::uint64_t merge_slices(const SortPlan& plan, std::uint64_t records) {
    const std::uint64_t bytes = records * plan.entry_bytes;
    const std::uint64_t by_size = std::max<std::uint64_t>(1, bytes / kMinMergeSlice);
    return std::max<std::uint64_t>(1, std::min<std::uint64_t>(by_size, std::uint64_t{4} * plan.merge_tasks));
}

// The merges of one intermediate pass over `runs` runs: (first run, count) of each group of
// consecutive runs merged into one, fewest keys rewritten, so that at most plan.fan_in runs are left.
inline std::vector<std::pair<std::size_t, std::size_t>> merge_groups(const SortPlan& plan, std::size_t runs) {
    std::vector<std::pair<std::size_t, std::size_t>> groups;
    if (runs <= plan.fan_in) return groups;
    // Each merge of g runs removes g - 1 of them; stop once the rest fit in one merge.
    std::size_t excess = runs - plan.fan_in;
    for (std::size_t i = 0; excess > 0 && i < runs;) {
        const std::size_t g = std::min({plan.fan_in, excess + 1, runs - i});
        if (g >= 2) groups.emplace_back(i, g);
        excess -= g - 1;
        i += g;
    }
    return groups;
}

// The piece an io::SpillFile of the runs is given (by run formation, and by a merge pass that
// writes new runs): 0 for the page cache.
inline std::uint64_t spill_piece(const SortPlan& plan) { return plan.spill_direct ? plan.direct_io_piece : 0; }

}  // namespace gpusort
