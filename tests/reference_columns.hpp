// Test references for the columns of a sort (values carried along with the keys, the permutation),
// independent of the code under test: the record numbers of the keys in their stable order (by the
// tests' own comparisons: reference_less for whole-record keys, reference_compare for key specs),
// with --unique the first record of each key; a column's records gathered in that order; and the
// permutation's bytes as it is written (one native-endian u32 or u64 per output record).
#pragma once

#include "reference_order.hpp"
#include "reference_records.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace gpusort::testing {

// The record numbers of `keys` stably sorted by the reference order of their values, descending
// or not; with `unique` only the first (in input order) of each group of equal keys.
template <class T>
std::vector<std::uint64_t> reference_key_index(const std::vector<T>& keys, bool descending, bool unique) {
    const auto before = [&](std::uint64_t a, std::uint64_t b) {
        return descending ? reference_less(keys[b], keys[a]) : reference_less(keys[a], keys[b]);
    };
    std::vector<std::uint64_t> index(keys.size());
    std::iota(index.begin(), index.end(), std::uint64_t{0});
    std::stable_sort(index.begin(), index.end(), before);
    if (unique)
        index.erase(std::unique(index.begin(), index.end(),
                                [&](std::uint64_t a, std::uint64_t b) { return !before(a, b) && !before(b, a); }),
                    index.end());
    return index;
}

// The same for records under a key spec (field by field, reference_compare).
inline std::vector<std::uint64_t> reference_record_index(const std::vector<std::byte>& records, const KeySpec& spec,
                                                         bool unique) {
    const std::size_t r = spec.record_size;
    const auto compare = [&](std::uint64_t a, std::uint64_t b) {
        return reference_compare(&records[a * r], &records[b * r], spec);
    };
    std::vector<std::uint64_t> index(records.size() / r);
    std::iota(index.begin(), index.end(), std::uint64_t{0});
    std::stable_sort(index.begin(), index.end(), [&](std::uint64_t a, std::uint64_t b) { return compare(a, b) < 0; });
    if (unique)
        index.erase(std::unique(index.begin(), index.end(),
                                [&](std::uint64_t a, std::uint64_t b) { return compare(a, b) == 0; }),
                    index.end());
    return index;
}

// The records of `data` (`width` bytes each) in the order of `index`: what a column's output holds.
inline std::vector<std::byte> reference_gather(const std::vector<std::byte>& data, std::size_t width,
                                               const std::vector<std::uint64_t>& index) {
    std::vector<std::byte> out(index.size() * width);
    for (std::size_t i = 0; i < index.size(); ++i)
        if (width > 0) std::memcpy(&out[i * width], &data[index[i] * width], width);
    return out;
}

// A permutation's bytes with entries of `width` bytes (4 or 8), native-endian.
inline std::vector<std::byte> index_bytes(const std::vector<std::uint64_t>& index, std::size_t width) {
    std::vector<std::byte> out(index.size() * width);
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (width == 4) {
            const auto entry = static_cast<std::uint32_t>(index[i]);
            std::memcpy(&out[i * 4], &entry, 4);
        } else {
            std::memcpy(&out[i * 8], &index[i], 8);
        }
    }
    return out;
}

// `n` records of `width` random bytes: a column of values. Each record differs from the others
// with high probability, so that a record out of place shows.
inline std::vector<std::byte> random_column(std::size_t n, std::size_t width, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::byte> data(n * width);
    for (auto& b : data) b = std::byte(random());
    return data;
}

// The bytes of a vector of numbers, as a file holds them (the host is little-endian).
template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
    std::vector<std::byte> out(values.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
}

}  // namespace gpusort::testing
