// Exact multi-way selection: given k sorted sequences and a rank r, finds how many elements
// of each sequence come before the r-th element of their merge. Ties are broken by sequence
// index (an element of an earlier sequence comes first), so the split is unique and a merge
// cut at such splits is stable. Cutting the merged output into equal slices this way gives
// every merge task the same amount of work however the runs' values are spread.
//
// Method: every sequence keeps a window [lo, hi] known to contain its split. Each round
// takes the middle element of every open window, picks the weighted median of those
// (weights = window sizes) as the pivot, counts the elements before the pivot in every window
// and closes the windows from below or above. At least a quarter of all open window space goes
// each round, so there are O(log n) rounds of k searches each.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

namespace gpusort {

// Seq: size(), at(pos), first_true(lo, hi, pred) -> see SortedRun.hpp; value_type has operator<.
template <class Seq>
std::vector<std::uint64_t> multiway_select(std::span<const Seq> seqs, std::uint64_t rank) {
    using T = typename Seq::value_type;
    const std::size_t k = seqs.size();
    std::uint64_t total = 0;
    for (const auto& seq : seqs) total += seq.size();
    if (rank > total) throw std::out_of_range("multiway_select: rank beyond the total size");

    std::vector<std::uint64_t> lo(k), hi(k);
    for (std::size_t i = 0; i < k; ++i) {
        const std::uint64_t n = seqs[i].size();
        hi[i] = std::min(n, rank);
        const std::uint64_t others = total - n;
        lo[i] = rank > others ? rank - others : 0;
    }

    struct Candidate {
        T key;
        std::size_t seq;
        std::uint64_t pos;
        std::uint64_t weight;
    };
    std::vector<Candidate> candidates;
    candidates.reserve(k);
    std::vector<std::uint64_t> before(k);

    for (;;) {
        candidates.clear();
        std::uint64_t open = 0;
        for (std::size_t i = 0; i < k; ++i) {
            if (lo[i] >= hi[i]) continue;
            const std::uint64_t mid = lo[i] + (hi[i] - lo[i]) / 2;
            candidates.push_back({seqs[i].at(mid), i, mid, hi[i] - lo[i]});
            open += hi[i] - lo[i];
        }
        if (candidates.empty()) break;

        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            if (a.key < b.key) return true;
            if (b.key < a.key) return false;
            return a.seq < b.seq;
        });
        std::size_t median = 0;
        for (std::uint64_t seen = 0; median < candidates.size(); ++median) {
            seen += candidates[median].weight;
            if (2 * seen >= open) break;
        }
        const Candidate pivot = candidates[median];

        // Elements before the pivot in each window: equal keys of earlier sequences come first.
        std::uint64_t pivot_rank = 0;
        for (std::size_t i = 0; i < k; ++i) {
            if (i == pivot.seq) {
                before[i] = pivot.pos;
            } else if (i < pivot.seq) {
                before[i] = seqs[i].first_true(lo[i], hi[i], [&](const T& x) { return pivot.key < x; });
            } else {
                before[i] = seqs[i].first_true(lo[i], hi[i], [&](const T& x) { return !(x < pivot.key); });
            }
            pivot_rank += before[i];
        }
        // Counting only inside the windows keeps the comparison with the rank exact: the
        // windows hold the true split, so clamped counts fall on the same side of it.
        if (pivot_rank < rank) {
            lo = before;
            lo[pivot.seq] = pivot.pos + 1;
        } else {
            hi = before;
            hi[pivot.seq] = pivot.pos;
        }
    }
    return lo;
}

}  // namespace gpusort
