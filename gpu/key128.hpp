// Key128: a 128-bit unsigned sort key, ordered by `hi` and then by `lo`.
#pragma once

#include <cstdint>

namespace gpusort::gpu {

struct Key128 {
    std::uint64_t hi;
    std::uint64_t lo;

    friend constexpr bool operator==(const Key128& a, const Key128& b) { return a.hi == b.hi && a.lo == b.lo; }
    friend constexpr bool operator!=(const Key128& a, const Key128& b) { return !(a == b); }
    friend constexpr bool operator<(const Key128& a, const Key128& b) {
        return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
    }
};

static_assert(sizeof(Key128) == 16, "Key128 must be two packed 64-bit words");

}  // namespace gpusort::gpu
