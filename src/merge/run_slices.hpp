// RunSlices: the output of a merge of sorted runs cut into `slices` equal slices by exact
// multi-way selection: slice s holds output ranks [rank[s], rank[s+1]) and, of run i, the keys
// [split[s][i], split[s+1][i]). Both merges (loser trees on the host, slice sorts on the GPU)
// work slice by slice from these bounds. The selections run in parallel on TBB threads.
#pragma once

#include "src/merge/mul_div.hpp"
#include "src/merge/multiway_selection.hpp"
#include "src/runs/sorted_run.hpp"

#include <cstdint>
#include <span>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace gpusort {

struct RunSlices {
    std::vector<std::uint64_t> rank;                // slices + 1 output ranks
    std::vector<std::vector<std::uint64_t>> split;  // slices + 1 positions in every run
    std::uint64_t keys(std::uint64_t s) const { return rank[s + 1] - rank[s]; }
};

template <class T>
RunSlices cut_into_slices(std::span<const SortedRun<T>> runs, std::uint64_t slices) {
    std::uint64_t total = 0;
    std::vector<RunSequence<T>> seqs;
    seqs.reserve(runs.size());
    for (const auto& run : runs) {
        total += run.size;
        seqs.emplace_back(run);
    }
    RunSlices cut;
    cut.rank.resize(slices + 1);
    cut.split.resize(slices + 1);
    for (std::uint64_t s = 0; s <= slices; ++s) cut.rank[s] = mul_div(total, s, slices);
    // Isolated: a selection reads windows of a run into scratch buffers of its thread, with parallel
    // reads; a thread that waits for one of them must not start another selection, which would take
    // the same buffers from under it (wrong splits; heap corruption when a buffer grows).
    tbb::parallel_for(std::uint64_t{0}, slices + 1, [&](std::uint64_t s) {
        tbb::this_task_arena::isolate([&] { cut.split[s] = multiway_select<RunSequence<T>>(seqs, cut.rank[s]); });
    });
    return cut;
}

}  // namespace gpusort
