// Test inputs for the GPU sort tests: keys of each width in several distributions, made on the
// host from a fixed seed, and the host reference (std::stable_sort) they are checked against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/key128.hpp"

namespace gpusort::gpu::testing {

enum class Distribution { kUniform, kSorted, kReversed, kAllEqual, kFewDistinct, kNearMaximum };

inline const char* distribution_name(Distribution d) {
    switch (d) {
        case Distribution::kUniform: return "uniform";
        case Distribution::kSorted: return "sorted";
        case Distribution::kReversed: return "reversed";
        case Distribution::kAllEqual: return "all-equal";
        case Distribution::kFewDistinct: return "few-distinct";
        case Distribution::kNearMaximum: return "near-maximum";
    }
    return "?";
}

inline constexpr Distribution kAllDistributions[] = {Distribution::kUniform,  Distribution::kSorted,
                                                     Distribution::kReversed, Distribution::kAllEqual,
                                                     Distribution::kFewDistinct, Distribution::kNearMaximum};

// A key of the given width made from two random words.
template <class Key>
Key key_from_words(std::uint64_t a, std::uint64_t b);
template <>
inline std::uint32_t key_from_words<std::uint32_t>(std::uint64_t a, std::uint64_t) {
    return static_cast<std::uint32_t>(a >> 32);
}
template <>
inline std::uint64_t key_from_words<std::uint64_t>(std::uint64_t a, std::uint64_t) {
    return a;
}
template <>
inline Key128 key_from_words<Key128>(std::uint64_t a, std::uint64_t b) {
    return Key128{a, b};
}

// All bits set except a few low ones, from a random word.
template <class Key>
Key key_near_maximum(std::uint64_t r) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    return key_from_words<Key>(kMax - ((r & 7) << 32) - (r >> 61), kMax - ((r >> 8) & 3));
}

template <class Key>
std::vector<Key> make_keys(std::size_t n, Distribution distribution, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<Key> keys(n);
    switch (distribution) {
        case Distribution::kUniform:
        case Distribution::kSorted:
        case Distribution::kReversed:
            for (auto& key : keys) {
                const std::uint64_t a = random();
                key = key_from_words<Key>(a, random());
            }
            if (distribution == Distribution::kSorted) std::sort(keys.begin(), keys.end());
            if (distribution == Distribution::kReversed) {
                std::sort(keys.begin(), keys.end());
                std::reverse(keys.begin(), keys.end());
            }
            break;
        case Distribution::kAllEqual: {
            const std::uint64_t a = random();
            std::fill(keys.begin(), keys.end(), key_from_words<Key>(a, random()));
            break;
        }
        case Distribution::kFewDistinct: {
            Key values[3];
            for (auto& value : values) {
                const std::uint64_t a = random();
                value = key_from_words<Key>(a, random());
            }
            for (auto& key : keys) key = values[random() % 3];
            break;
        }
        case Distribution::kNearMaximum:
            for (auto& key : keys) key = key_near_maximum<Key>(random());
            break;
    }
    return keys;
}

// The input index of each key, as the payload of a stable-sort test.
template <class Payload>
std::vector<Payload> input_indices(std::size_t n) {
    std::vector<Payload> indices(n);
    std::iota(indices.begin(), indices.end(), Payload{0});
    return indices;
}

// Host reference: stable sort of (key, payload) pairs by key.
template <class Key, class Payload>
void reference_stable_sort(std::vector<Key>& keys, std::vector<Payload>& payload) {
    struct Entry {
        Key key;
        Payload payload;
    };
    std::vector<Entry> entries(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) entries[i] = Entry{keys[i], payload[i]};
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
    for (std::size_t i = 0; i < keys.size(); ++i) {
        keys[i] = entries[i].key;
        payload[i] = entries[i].payload;
    }
}

// Host reference for keys alone.
template <class Key>
void reference_stable_sort(std::vector<Key>& keys) {
    std::stable_sort(keys.begin(), keys.end());
}

// Index of the first element where a and b differ, or a.size() when none (sizes must match).
template <class T>
std::size_t first_difference(const std::vector<T>& a, const std::vector<T>& b) {
    const auto where = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    return static_cast<std::size_t>(where.first - a.begin());
}

}  // namespace gpusort::gpu::testing
