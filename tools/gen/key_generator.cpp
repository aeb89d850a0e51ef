// KeyGenerator: each distribution as a function of (seed, index). Ordered distributions work in
// the normalised key order (key_normalization.hpp), where every type's order is unsigned order.
#include "tools/gen/key_generator.hpp"

#include "src/keys/key_dispatch.hpp"
#include "src/keys/key_normalization.hpp"
#include "src/merge/mul_div.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace gpusort::gen {

namespace {

constexpr std::pair<const char*, Distribution> kNames[] = {
    {"uniform", Distribution::uniform},       {"sorted", Distribution::sorted},
    {"reversed", Distribution::reversed},     {"equal", Distribution::equal},
    {"few-unique", Distribution::few_unique}, {"nearly-sorted", Distribution::nearly_sorted},
    {"zipf", Distribution::zipf},             {"normal", Distribution::normal}};

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Uniform in [0, 1).
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// The keys of one generator: its type's width and order, and the distributions.
class Keys {
public:
    explicit Keys(const KeyGenerator& generator) : g_(generator) {}

    std::uint64_t value(std::uint64_t index) const {
        if (g_.special && (g_.random(index, 7) & 7) == 0) return special_value(g_.random(index, 8));
        switch (g_.distribution) {
        case Distribution::uniform: return uniform(index);
        case Distribution::sorted: return spread(index);
        case Distribution::reversed: return spread(g_.count - 1 - index);
        case Distribution::equal: return uniform(~0ULL);
        case Distribution::few_unique: return uniform(~0ULL - 1 - g_.random(index, 2) % 5);
        case Distribution::nearly_sorted: {
            if (g_.random(index, 3) % 100 != 0) return spread(index);
            const std::uint64_t shift = g_.random(index, 4) % 33;
            const std::uint64_t other = index + shift >= 16 ? index + shift - 16 : 0;
            return spread(std::min(other, g_.count - 1));
        }
        case Distribution::zipf: {
            // Pareto-distributed ranks (exponent 1.5): rank r is drawn with weight about r^-1.5.
            const double u = 1.0 - unit(g_.random(index, 5));
            const double rank = std::floor(std::pow(u, -2.0));
            return uniform(~0ULL - 16 - static_cast<std::uint64_t>(std::min(rank, 1e15)));
        }
        case Distribution::normal: {
            const double u1 = 1.0 - unit(g_.random(index, 5)), u2 = unit(g_.random(index, 6));
            const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
            if (key_kind(g_.type) == KeyKind::floating) return raw_float(z * 1000.0);
            // Centred in the middle of the order (zero for signed types), spread 1/16 of the range.
            const double middle = std::ldexp(1.0, static_cast<int>(bits()) - 1);
            const double x = std::clamp(middle + z * middle / 8, 0.0, std::ldexp(1.0, static_cast<int>(bits())) - 1);
            return raw_of_normalized(std::min(static_cast<std::uint64_t>(x), mask()));
        }
        }
        return 0;
    }

private:
    unsigned bits() const { return static_cast<unsigned>(key_width(g_.type) * 8); }
    std::uint64_t mask() const { return bits() == 64 ? ~0ULL : (1ULL << bits()) - 1; }

    // The normalised key range that holds no NaN (floats) and everything else (integers).
    std::uint64_t lowest_normalized() const {
        return key_kind(g_.type) == KeyKind::floating ? normalized_of_raw(raw_float(-INFINITY)) : 0;
    }
    std::uint64_t highest_normalized() const {
        return key_kind(g_.type) == KeyKind::floating ? normalized_of_raw(raw_float(INFINITY)) : mask();
    }
    std::uint64_t raw_float(double value) const {
        if (g_.type == KeyType::f32) {
            float f = static_cast<float>(value);
            std::uint32_t raw;
            std::memcpy(&raw, &f, 4);
            return raw;
        }
        std::uint64_t raw;
        std::memcpy(&raw, &value, 8);
        return raw;
    }
    std::uint64_t normalized_of_raw(std::uint64_t raw) const {
        return with_key_width(key_width(g_.type), [&](auto key) -> std::uint64_t {
            using U = decltype(key);
            return to_normalized<U>(U(raw), key_kind(g_.type), false);
        });
    }
    std::uint64_t raw_of_normalized(std::uint64_t key) const {
        return with_key_width(key_width(g_.type), [&](auto key_type) -> std::uint64_t {
            using U = decltype(key_type);
            return from_normalized<U>(U(key), key_kind(g_.type), false);
        });
    }
    // Evenly spread over the whole order, rising with position.
    std::uint64_t spread(std::uint64_t position) const {
        const std::uint64_t lo = lowest_normalized(), hi = highest_normalized();
        if (g_.count <= 1) return raw_of_normalized(lo);
        return raw_of_normalized(lo + mul_div(hi - lo, position, g_.count - 1));
    }

    std::uint64_t uniform(std::uint64_t index) const {
        std::uint64_t raw = g_.random(index, 1) & mask();
        if (g_.type == KeyType::f32 && ((raw >> 23) & 0xff) == 0xff) raw &= ~(1ULL << 30);
        if (g_.type == KeyType::f64 && ((raw >> 52) & 0x7ff) == 0x7ff) raw &= ~(1ULL << 62);
        return raw;
    }

    std::uint64_t special_value(std::uint64_t pick) const {
        const double values[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0,
                                 std::numeric_limits<double>::denorm_min(), -1.0};
        std::uint64_t raw = raw_float(values[pick % 8]);
        // NaNs with other payloads too.
        if (pick % 8 < 2 && (pick / 8) % 2) raw ^= 1;
        return raw;
    }

    const KeyGenerator& g_;
};

}  // namespace

const char* distribution_name(Distribution distribution) {
    for (auto [name, d] : kNames)
        if (d == distribution) return name;
    return "?";
}

std::optional<Distribution> parse_distribution(std::string_view name) {
    for (auto [n, d] : kNames)
        if (name == n) return d;
    return std::nullopt;
}

std::uint64_t KeyGenerator::random(std::uint64_t index, std::uint64_t stream) const {
    return mix(mix(seed * 0x2545f4914f6cdd1dULL + stream) ^ index);
}

std::uint64_t KeyGenerator::key(std::uint64_t index) const { return Keys(*this).value(index); }

}  // namespace gpusort::gen
