// Kernels behind device_fill.hpp: counter-based pseudo-random keys and index sequences.
#include "tests/gpu/support/device_fill.hpp"

#include "gpu/gpu_error.hpp"
#include "tests/gpu/support/mix64.cuh"

namespace gpusort::gpu {

namespace {

constexpr unsigned kFillThreads = 256;
constexpr unsigned kFillBlocks = 132 * 16;
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

__device__ __forceinline__ std::uint64_t random_word(std::uint64_t seed, std::uint64_t counter) {
    return detail::mix64(seed + (counter + 1) * kGolden);
}

__device__ __forceinline__ void make_random_key(std::uint32_t& key, std::uint64_t seed, std::uint64_t i) {
    key = static_cast<std::uint32_t>(random_word(seed, i) >> 32);
}
__device__ __forceinline__ void make_random_key(std::uint64_t& key, std::uint64_t seed, std::uint64_t i) {
    key = random_word(seed, i);
}
__device__ __forceinline__ void make_random_key(Key128& key, std::uint64_t seed, std::uint64_t i) {
    key.hi = random_word(seed, 2 * i);
    key.lo = random_word(seed, 2 * i + 1);
}

template <class Key>
__global__ void fill_random_keys_kernel(Key* keys, std::uint64_t n, std::uint64_t seed) {
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
        make_random_key(keys[i], seed, i);
    }
}

template <class Index>
__global__ void fill_index_sequence_kernel(Index* values, std::uint64_t n) {
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
        values[i] = static_cast<Index>(i);
    }
}

}  // namespace

template <class Key>
void fill_random_keys(Key* keys, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
    if (n == 0) return;
    fill_random_keys_kernel<Key><<<kFillBlocks, kFillThreads, 0, stream>>>(keys, n, seed);
    check_launch("fill_random_keys_kernel");
}

template <class Index>
void fill_index_sequence(Index* values, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    fill_index_sequence_kernel<Index><<<kFillBlocks, kFillThreads, 0, stream>>>(values, n);
    check_launch("fill_index_sequence_kernel");
}

template void fill_random_keys<std::uint32_t>(std::uint32_t*, std::size_t, std::uint64_t, cudaStream_t);
template void fill_random_keys<std::uint64_t>(std::uint64_t*, std::size_t, std::uint64_t, cudaStream_t);
template void fill_random_keys<Key128>(Key128*, std::size_t, std::uint64_t, cudaStream_t);
template void fill_index_sequence<std::uint32_t>(std::uint32_t*, std::size_t, cudaStream_t);
template void fill_index_sequence<std::uint64_t>(std::uint64_t*, std::size_t, cudaStream_t);

}  // namespace gpusort::gpu
