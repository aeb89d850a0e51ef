// Test support: mix64, a 64-bit bijective mixing function (the finaliser of SplitMix64), used to
// make reproducible pseudo-random keys (device_fill.cu) and order-independent hashes
// (order_check.cu) on the device.
#pragma once

#include <cstdint>

namespace gpusort::gpu::detail {

__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

}  // namespace gpusort::gpu::detail
