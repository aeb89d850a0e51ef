// Test references written independently of the code under test: the C++ type of each key
// type, an IEEE 754 totalOrder comparison built from std::signbit/std::isnan, the special values
// of each type. (The tests' random keys come from the data generator: generated_keys.hpp.)
#pragma once

#include "gpusort/key_type.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

}  // namespace gpusort::testing
