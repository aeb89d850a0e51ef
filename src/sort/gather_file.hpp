// The steps of gather_file() that read a permutation (src/sort/gather_file.cpp): its entries, the
// check that it is a permutation of the records' numbers, and the gather of a block of records by
// it. Not installed.
#pragma once

#include "gpusort/errors.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tbb/parallel_for.h>

namespace gpusort::gather {

// Entry i of a permutation stored as entries of type E (u32 or u64), in the byte order of the
// machine, as the sort writes them (little endian on the machines it runs on).
template <class E>
std::uint64_t entry_at(const std::byte* entries, std::uint64_t i) {
    E entry;
    std::memcpy(&entry, entries + i * sizeof(E), sizeof(E));
    return entry;
}

// Calls f.template operator()<E>() with the entry type of `entry_width` (4 or 8 bytes).
template <class F>
void with_entry_type(std::size_t entry_width, F&& f) {
    if (entry_width == 4)
        f.template operator()<std::uint32_t>();
    else
        f.template operator()<std::uint64_t>();
}

// Entries are checked and gathered in parallel, this many at a time.
inline constexpr std::uint64_t kBlockEntries = std::uint64_t{1} << 18;

// What a permutation's check found: the first position (in the index's order) whose entry is no
// record number, or repeats an earlier entry.
struct NotAPermutation {
    std::uint64_t position = 0;
    std::uint64_t value = 0;
    std::optional<std::uint64_t> earlier;  // where the value was first, for a repeat
};

// Checks one range of values, [low, high), of the n entries: each value in it may appear once (a
// bit per value, set atomically by the blocks in parallel); with `low` 0 also that every entry is
// below n. Returns whether the range is clean. Its bitmap takes (high - low) / 8 bytes.
template <class E>
bool range_is_clean(const std::byte* entries, std::uint64_t n, std::uint64_t low, std::uint64_t high) {
    std::vector<std::uint64_t> seen((high - low + 63) / 64);
    std::atomic<bool> clean{true};
    tbb::parallel_for(std::uint64_t{0}, (n + kBlockEntries - 1) / kBlockEntries, [&](std::uint64_t block) {
        const std::uint64_t end = std::min(n, (block + 1) * kBlockEntries);
        for (std::uint64_t i = block * kBlockEntries; i < end && clean.load(std::memory_order_relaxed); ++i) {
            const std::uint64_t value = entry_at<E>(entries, i);
            if (value >= n && low == 0) clean = false;  // beyond the records: told by the first range only
            if (value < low || value >= high) continue;
            const std::uint64_t bit = std::uint64_t{1} << ((value - low) % 64);
            if (std::atomic_ref<std::uint64_t>(seen[(value - low) / 64]).fetch_or(bit, std::memory_order_relaxed) & bit)
                clean = false;
        }
    });
    return clean;
}

// The first bad entry of a range that was found not clean, by a pass in order (an error's path).
template <class E>
NotAPermutation first_bad_entry(const std::byte* entries, std::uint64_t n, std::uint64_t low, std::uint64_t high) {
    std::vector<bool> seen(high - low);
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t value = entry_at<E>(entries, i);
        if (value >= n && low == 0) return {i, value, std::nullopt};
        if (value < low || value >= high) continue;
        if (!seen[value - low]) {
            seen[value - low] = true;
            continue;
        }
        std::uint64_t earlier = 0;
        while (entry_at<E>(entries, earlier) != value) ++earlier;
        return {i, value, earlier};
    }
    return {n, 0, std::nullopt};
}

// Checks that the n entries are a permutation of [0, n), in ranges of values of `range_bits` each
// (one pass over the entries per range: a bitmap of a range's bits is all the memory it takes).
// Throws SortError naming `index_name`, the first bad entry's position and value, and `of` (INPUT).
template <class E>
void check_permutation(std::span<const std::byte> index, std::uint64_t n, std::uint64_t range_bits,
                       const std::string& index_name, const std::string& of) {
    std::optional<NotAPermutation> first;
    for (std::uint64_t low = 0; low < n; low += range_bits) {
        const std::uint64_t high = std::min(n, low + range_bits);
        if (range_is_clean<E>(index.data(), n, low, high)) continue;
        const NotAPermutation bad = first_bad_entry<E>(index.data(), n, low, high);
        if (!first || bad.position < first->position) first = bad;
    }
    if (!first) return;
    std::string what = "'" + index_name + "' is not a permutation of the " + std::to_string(n) + " records of '" + of +
                       "': entry " + std::to_string(first->position) + " is " + std::to_string(first->value);
    what += first->earlier ? ", as entry " + std::to_string(*first->earlier) + " is"
                           : ", beyond the last record number " + std::to_string(n - 1);
    throw SortError(what);
}

// Writes records [first, first + count) of the output into `out`: record i is record index[i] of
// `values`, `width` bytes each. Widths of a machine word or two are copied as such.
template <class E>
void gather_block(const std::byte* values, std::size_t width, const std::byte* index, std::uint64_t first,
                  std::uint64_t count, std::byte* out) {
    auto copy = [&]<std::size_t W>(std::integral_constant<std::size_t, W>) {
        const std::size_t w = W ? W : width;
        for (std::uint64_t i = 0; i < count; ++i) std::memcpy(out + i * w, values + entry_at<E>(index, first + i) * w, w);
    };
    switch (width) {
        case 1: return copy(std::integral_constant<std::size_t, 1>{});
        case 2: return copy(std::integral_constant<std::size_t, 2>{});
        case 4: return copy(std::integral_constant<std::size_t, 4>{});
        case 8: return copy(std::integral_constant<std::size_t, 8>{});
        case 16: return copy(std::integral_constant<std::size_t, 16>{});
        default: return copy(std::integral_constant<std::size_t, 0>{});
    }
}

}  // namespace gpusort::gather
