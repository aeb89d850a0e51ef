// Test inputs of keys, made by the data generator (tools/gen/) for the typed tests: the kinds of
// key data each type is sorted in, and the keys of a kind as values of the C++ type. Inputs only:
// the expected outputs come from the references (reference_order.hpp).
#pragma once

#include "gpusort/key_type.hpp"
#include "tools/gen/data_generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace gpusort::testing {

// A kind of key data: a distribution of the generator, and for floats whether NaNs, infinities,
// zeros and denormals are mixed in.
struct KeyData {
    gen::Distribution distribution = gen::Distribution::uniform;
    bool special = false;
};

inline std::string key_data_name(const KeyData& data) {
    return std::string(gen::distribution_name(data.distribution)) + (data.special ? " with special values" : "");
}

// What the typed sort tests sort keys of type T in: uniform, sorted, reversed, all equal and few
// distinct keys, and for floats uniform keys with special values.
template <class T>
std::vector<KeyData> key_data_for() {
    using gen::Distribution;
    std::vector<KeyData> kinds = {{Distribution::uniform}, {Distribution::sorted}, {Distribution::reversed},
                                  {Distribution::equal}, {Distribution::few_unique}};
    if (std::is_floating_point_v<T>) kinds.push_back({Distribution::uniform, true});
    return kinds;
}

// Uniform keys, with special values for floats: the widest mix of one type.
template <class T>
KeyData mixed_key_data() {
    return {gen::Distribution::uniform, std::is_floating_point_v<T>};
}

template <class T>
std::vector<T> make_keys(std::size_t count, const KeyData& data, std::uint64_t seed) {
    return gen::generate_keys<T>(key_type_of<T>(), data.distribution, count, seed, data.special);
}

// What a list of keys holds, told by the C++ type's own tests of a value (std::isnan,
// std::signbit, std::isinf) and by bit patterns, not by the key rules: the special values of
// floats and the keys that repeat an earlier one.
struct KeyCensus {
    std::size_t keys = 0;
    std::size_t nan = 0;                // NaNs of either sign
    std::size_t negative_nan = 0;       // NaNs with the sign bit set
    std::size_t nan_patterns = 0;       // distinct bit patterns among the NaNs (payloads and signs)
    std::size_t negative_zero = 0;
    std::size_t positive_zero = 0;
    std::size_t positive_infinity = 0;
    std::size_t negative_infinity = 0;
    std::size_t duplicates = 0;         // keys whose bit pattern an earlier key has
};

template <class T>
KeyCensus census_of(const std::vector<T>& keys) {
    using Bits = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
    KeyCensus census;
    census.keys = keys.size();
    std::vector<Bits> patterns(keys.size()), nans;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const T key = keys[i];
        std::memcpy(&patterns[i], &key, sizeof key);
        if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(key)) {
                ++census.nan;
                census.negative_nan += std::signbit(key) ? 1 : 0;
                nans.push_back(patterns[i]);
            } else if (key == T(0)) {
                ++(std::signbit(key) ? census.negative_zero : census.positive_zero);
            } else if (std::isinf(key)) {
                ++(key > T(0) ? census.positive_infinity : census.negative_infinity);
            }
        }
    }
    std::sort(patterns.begin(), patterns.end());
    census.duplicates = static_cast<std::size_t>(patterns.end() - std::unique(patterns.begin(), patterns.end()));
    std::sort(nans.begin(), nans.end());
    census.nan_patterns = static_cast<std::size_t>(std::unique(nans.begin(), nans.end()) - nans.begin());
    return census;
}

}  // namespace gpusort::testing
