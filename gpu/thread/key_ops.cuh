// Thread level: device-side operations on the three key types: order, largest value, and the
// exchange of a key between two lanes of a warp.
#pragma once

#include <cstdint>

#include "gpu/key128.hpp"

namespace gpusort::gpu::detail {

__device__ __forceinline__ bool key_less(std::uint32_t a, std::uint32_t b) { return a < b; }
__device__ __forceinline__ bool key_less(std::uint64_t a, std::uint64_t b) { return a < b; }
__device__ __forceinline__ bool key_less(const Key128& a, const Key128& b) {
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

template <class Key>
__device__ __forceinline__ Key largest_key();
template <>
__device__ __forceinline__ std::uint32_t largest_key<std::uint32_t>() { return 0xffffffffu; }
template <>
__device__ __forceinline__ std::uint64_t largest_key<std::uint64_t>() { return ~std::uint64_t{0}; }
template <>
__device__ __forceinline__ Key128 largest_key<Key128>() { return Key128{~std::uint64_t{0}, ~std::uint64_t{0}}; }

// The value held by lane (lane ^ lane_mask) of the warp; every lane of the warp must take part.
__device__ __forceinline__ std::uint32_t shuffle_xor(std::uint32_t v, int lane_mask) {
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
__device__ __forceinline__ std::uint64_t shuffle_xor(std::uint64_t v, int lane_mask) {
    const std::uint32_t lo = __shfl_xor_sync(0xffffffffu, static_cast<std::uint32_t>(v), lane_mask);
    const std::uint32_t hi = __shfl_xor_sync(0xffffffffu, static_cast<std::uint32_t>(v >> 32), lane_mask);
    return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
__device__ __forceinline__ Key128 shuffle_xor(const Key128& v, int lane_mask) {
    return Key128{shuffle_xor(v.hi, lane_mask), shuffle_xor(v.lo, lane_mask)};
}

}  // namespace gpusort::gpu::detail
