// Test support (not in the production library): fills device arrays for tests and benchmarks with
// reproducible pseudo-random keys (uniform over all bits, a fixed function of seed and index) and
// index sequences. Asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/key128.hpp"

namespace gpusort::gpu {

// keys[i] = a 64-bit mix of (seed, i), cut to the key's width (Key128: two mixes).
template <class Key>
void fill_random_keys(Key* keys, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// values[i] = i.
template <class Index>
void fill_index_sequence(Index* values, std::size_t n, cudaStream_t stream);

extern template void fill_random_keys<std::uint32_t>(std::uint32_t*, std::size_t, std::uint64_t, cudaStream_t);
extern template void fill_random_keys<std::uint64_t>(std::uint64_t*, std::size_t, std::uint64_t, cudaStream_t);
extern template void fill_random_keys<Key128>(Key128*, std::size_t, std::uint64_t, cudaStream_t);
extern template void fill_index_sequence<std::uint32_t>(std::uint32_t*, std::size_t, cudaStream_t);
extern template void fill_index_sequence<std::uint64_t>(std::uint64_t*, std::size_t, cudaStream_t);

}  // namespace gpusort::gpu
