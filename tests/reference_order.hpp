// Test references written independently of the code under test: the C++ type of each key
// type, an IEEE 754 totalOrder comparison built from std::signbit/std::isnan, and random data
// in the distributions the tests use.
#pragma once

#include "gpusort/key_type.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace gpusort::testing {

template <KeyType Type> struct KeyTraits;
#define GPUSORT_KEY_TRAITS(TYPE, CPP)             \
    template <> struct KeyTraits<KeyType::TYPE> { \
        using type = CPP;                         \
        static constexpr KeyType key = KeyType::TYPE; \
    };
GPUSORT_KEY_TRAITS(u8, std::uint8_t)
GPUSORT_KEY_TRAITS(u16, std::uint16_t)
GPUSORT_KEY_TRAITS(u32, std::uint32_t)
GPUSORT_KEY_TRAITS(u64, std::uint64_t)
GPUSORT_KEY_TRAITS(i8, std::int8_t)
GPUSORT_KEY_TRAITS(i16, std::int16_t)
GPUSORT_KEY_TRAITS(i32, std::int32_t)
GPUSORT_KEY_TRAITS(i64, std::int64_t)
GPUSORT_KEY_TRAITS(f32, float)
GPUSORT_KEY_TRAITS(f64, double)
#undef GPUSORT_KEY_TRAITS

// The ten key types, for typed tests.
using AllKeyTypes = ::testing::Types<KeyTraits<KeyType::u8>, KeyTraits<KeyType::u16>, KeyTraits<KeyType::u32>,
                                     KeyTraits<KeyType::u64>, KeyTraits<KeyType::i8>, KeyTraits<KeyType::i16>,
                                     KeyTraits<KeyType::i32>, KeyTraits<KeyType::i64>, KeyTraits<KeyType::f32>,
                                     KeyTraits<KeyType::f64>>;

template <class F>
auto magnitude_bits(F x) {
    using Bits = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
    Bits bits;
    std::memcpy(&bits, &x, sizeof x);
    return Bits(bits & (std::numeric_limits<Bits>::max() >> 1));
}

// IEEE 754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (NaNs by payload).
template <class T>
bool reference_less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        const bool neg_a = std::signbit(a), neg_b = std::signbit(b);
        if (neg_a != neg_b) return neg_a;
        if (!neg_a) {
            if (std::isnan(a)) return std::isnan(b) && magnitude_bits(a) < magnitude_bits(b);
            if (std::isnan(b)) return true;
            return a < b;
        }
        if (std::isnan(b)) return std::isnan(a) && magnitude_bits(a) > magnitude_bits(b);
        if (std::isnan(a)) return true;
        return a < b;
    } else {
        return a < b;
    }
}

template <class T>
std::vector<T> reference_sort(std::vector<T> keys, bool descending) {
    if (descending)
        std::sort(keys.begin(), keys.end(), [](T a, T b) { return reference_less(b, a); });
    else
        std::sort(keys.begin(), keys.end(), [](T a, T b) { return reference_less(a, b); });
    return keys;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
T from_bits(std::uint64_t bits) {
    T value;
    std::memcpy(&value, &bits, sizeof(T));  // little-endian: the low bytes
    return value;
}

template <class T>
std::vector<T> special_values() {
    std::vector<T> values = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), T(0), T(1)};
    if constexpr (std::is_signed_v<T>) values.push_back(T(-1));
    if constexpr (std::is_floating_point_v<T>) {
        const T inf = std::numeric_limits<T>::infinity();
        const T nan = std::numeric_limits<T>::quiet_NaN();
        values.insert(values.end(), {inf, -inf, nan, -nan, T(-0.0), std::numeric_limits<T>::denorm_min(),
                                     -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min()});
        // A signalling-style NaN with another payload, both signs.
        using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
        Bits bits;
        std::memcpy(&bits, &nan, sizeof bits);
        bits ^= 1;
        T other;
        std::memcpy(&other, &bits, sizeof bits);
        values.push_back(other);
        values.push_back(-other);
    }
    return values;
}

enum class Dist { uniform, sorted, reversed, equal, few_distinct, specials };
inline const char* dist_name(Dist d) {
    switch (d) {
    case Dist::uniform: return "uniform";
    case Dist::sorted: return "sorted";
    case Dist::reversed: return "reversed";
    case Dist::equal: return "equal";
    case Dist::few_distinct: return "few_distinct";
    case Dist::specials: return "specials";
    }
    return "?";
}

// `count` keys: uniform random bit patterns (NaNs included for floats), then shaped.
template <class T>
std::vector<T> make_keys(std::size_t count, Dist dist, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<T> keys(count);
    for (auto& key : keys) key = from_bits<T>(rng());
    switch (dist) {
    case Dist::uniform: break;
    case Dist::sorted: keys = reference_sort(keys, false); break;
    case Dist::reversed: keys = reference_sort(keys, true); break;
    case Dist::equal: std::fill(keys.begin(), keys.end(), from_bits<T>(0x1234567890abcdefULL)); break;
    case Dist::few_distinct:
        for (auto& key : keys) key = from_bits<T>(0x0101010101010101ULL * (rng() % 3 + 1));
        break;
    case Dist::specials: {
        const auto specials = special_values<T>();
        for (auto& key : keys)
            if (rng() % 2) key = specials[rng() % specials.size()];
        break;
    }
    }
    return keys;
}

}  // namespace gpusort::testing
