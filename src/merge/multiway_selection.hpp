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

namespace detail {

// The windows that hold each sequence's split: lo[i] <= split of sequence i <= hi[i]. Every round
// narrows them; once all are closed (lo == hi), lo holds the splits.
struct SplitWindows {
    std::vector<std::uint64_t> lo, hi;
};

// The middle element of an open window, a candidate for the round's pivot, weighted by the
// window's size.
template <class T>
struct PivotCandidate {
    T key;
    std::size_t seq;
    std::uint64_t pos;
    std::uint64_t weight;
};

// The windows before the first round: sequence i gives at most min(n_i, rank) elements to the
// first `rank`, and at least as many as the other sequences together cannot give.
template <class Seq>
SplitWindows initial_windows(std::span<const Seq> seqs, std::uint64_t rank) {
    std::uint64_t total = 0;
    for (const auto& seq : seqs) total += seq.size();
    if (rank > total) throw std::out_of_range("multiway_select: rank beyond the total size");
    SplitWindows windows{std::vector<std::uint64_t>(seqs.size()), std::vector<std::uint64_t>(seqs.size())};
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        const std::uint64_t n = seqs[i].size();
        windows.hi[i] = std::min(n, rank);
        const std::uint64_t others = total - n;
        windows.lo[i] = rank > others ? rank - others : 0;
    }
    return windows;
}

// The middle element of every open window, into `candidates` (empty once all windows are closed);
// returns the open windows' space in all.
template <class Seq>
std::uint64_t window_middles(std::span<const Seq> seqs, const SplitWindows& windows,
                             std::vector<PivotCandidate<typename Seq::value_type>>& candidates) {
    candidates.clear();
    std::uint64_t open = 0;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        const std::uint64_t lo = windows.lo[i], hi = windows.hi[i];
        if (lo >= hi) continue;
        const std::uint64_t mid = lo + (hi - lo) / 2;
        candidates.push_back({seqs[i].at(mid), i, mid, hi - lo});
        open += hi - lo;
    }
    return open;
}

// The pivot: the weighted median of the candidates in merge order (key, then sequence), the first
// whose weight and that of those before it reach half the open space. Sorts `candidates`.
template <class T>
PivotCandidate<T> weighted_median(std::vector<PivotCandidate<T>>& candidates, std::uint64_t open) {
    std::sort(candidates.begin(), candidates.end(), [](const PivotCandidate<T>& a, const PivotCandidate<T>& b) {
        if (a.key < b.key) return true;
        if (b.key < a.key) return false;
        return a.seq < b.seq;
    });
    std::size_t median = 0;
    for (std::uint64_t seen = 0; median < candidates.size(); ++median) {
        seen += candidates[median].weight;
        if (2 * seen >= open) break;
    }
    return candidates[median];
}

// The elements before the pivot in each window, into `before`; returns their sum, the pivot's rank
// as far as the windows tell. Equal keys of earlier sequences come before the pivot, of later ones after.
template <class Seq>
std::uint64_t count_before_pivot(std::span<const Seq> seqs, const SplitWindows& windows,
                                 const PivotCandidate<typename Seq::value_type>& pivot,
                                 std::vector<std::uint64_t>& before) {
    using T = typename Seq::value_type;
    std::uint64_t pivot_rank = 0;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        const std::uint64_t lo = windows.lo[i], hi = windows.hi[i];
        if (i == pivot.seq) {
            before[i] = pivot.pos;
        } else if (i < pivot.seq) {
            before[i] = seqs[i].first_true(lo, hi, [&](const T& x) { return pivot.key < x; });
        } else {
            before[i] = seqs[i].first_true(lo, hi, [&](const T& x) { return !(x < pivot.key); });
        }
        pivot_rank += before[i];
    }
    return pivot_rank;
}

// Closes the windows from below (the pivot comes before the split: it and all before it are in)
// or from above (it does not: it and all after it are out).
template <class T>
void narrow_windows(SplitWindows& windows, const std::vector<std::uint64_t>& before,
                    const PivotCandidate<T>& pivot, bool pivot_before_split) {
    if (pivot_before_split) {
        windows.lo = before;
        windows.lo[pivot.seq] = pivot.pos + 1;
    } else {
        windows.hi = before;
        windows.hi[pivot.seq] = pivot.pos;
    }
}

}  // namespace detail

// Seq: size(), at(pos), first_true(lo, hi, pred), as RunSequence (src/runs/sorted_run.hpp); value_type has operator<.
template <class Seq>
std::vector<std::uint64_t> multiway_select(std::span<const Seq> seqs, std::uint64_t rank) {
    detail::SplitWindows windows = detail::initial_windows(seqs, rank);
    std::vector<detail::PivotCandidate<typename Seq::value_type>> candidates;
    candidates.reserve(seqs.size());
    std::vector<std::uint64_t> before(seqs.size());
    for (;;) {
        const std::uint64_t open = detail::window_middles(seqs, windows, candidates);
        if (candidates.empty()) break;
        const auto pivot = detail::weighted_median(candidates, open);
        // Counting only inside the windows keeps the comparison with the rank exact: the
        // windows hold the true split, so clamped counts fall on the same side of it.
        const std::uint64_t pivot_rank = detail::count_before_pivot(seqs, windows, pivot, before);
        detail::narrow_windows(windows, before, pivot, pivot_rank < rank);
    }
    return windows.lo;
}

}  // namespace gpusort
