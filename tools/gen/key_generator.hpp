// KeyGenerator: the keys of gpusort-gen and of the tests and benchmarks, keys of one type drawn
// from a distribution. Every key is a function of (seed, index) alone, so the same seed gives the
// same keys on any machine, with any number of threads, in any order of generation.
#pragma once

#include "gpusort/key_type.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpusort::gen {

// uniform: random bit patterns (floats: finite ones); sorted / reversed: spread evenly over the
// whole order of the type, rising / falling with the index; equal: one key; few_unique: five
// keys; nearly_sorted: sorted with one key in a hundred taken from up to 16 places away;
// zipf: ranks with weight about r^-1.5, each rank one key; normal: a bell around the middle of
// the order (floats: around 0, standard deviation 1000).
enum class Distribution { uniform, sorted, reversed, equal, few_unique, nearly_sorted, zipf, normal };

inline constexpr Distribution kAllDistributions[] = {
    Distribution::uniform,       Distribution::sorted, Distribution::reversed, Distribution::equal,
    Distribution::few_unique,    Distribution::nearly_sorted, Distribution::zipf, Distribution::normal};

// "uniform", "sorted", "reversed", "equal", "few-unique", "nearly-sorted", "zipf", "normal".
const char* distribution_name(Distribution distribution);
std::optional<Distribution> parse_distribution(std::string_view name);

struct KeyGenerator {
    KeyType type = KeyType::u64;
    Distribution distribution = Distribution::uniform;
    std::uint64_t seed = 1;
    std::uint64_t count = 0;  // keys in all: sorted and reversed keys spread over this many
    bool special = false;     // floats only: about one key in eight is NaN, -NaN, +-inf, +-0, a denormal or -1

    // The key at `index` (< count): its bits in the low key_width(type) bytes.
    std::uint64_t key(std::uint64_t index) const;

    // A random word of (seed, index, stream); streams keep the draws made for one index apart.
    std::uint64_t random(std::uint64_t index, std::uint64_t stream) const;
};

}  // namespace gpusort::gen
