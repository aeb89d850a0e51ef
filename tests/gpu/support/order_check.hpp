// Test support (not in the production library): device-side checks of sorted output, for tests and
// benchmarks on arrays too large to copy back: order, an order-independent hash of the keys (same
// multiset before and after), and, for sorts whose payload was the input index, that every output
// is the input key it points to and that equal keys keep their input order. Each call waits for
// `stream` and returns a count or hash.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/key128.hpp"

namespace gpusort::gpu {

// Number of i with keys[i+1] < keys[i]; 0 means ascending.
template <class Key>
std::uint64_t count_descents(const Key* keys, std::size_t n, cudaStream_t stream);

// Sum over all keys of a 64-bit mix of the key: equal for any two orders of one multiset.
template <class Key>
std::uint64_t key_multiset_hash(const Key* keys, std::size_t n, cudaStream_t stream);

// Number of outputs i that are wrong for a stable sort of original_keys whose payload was the input
// index: sorted_index[i] out of range, original_keys[sorted_index[i]] != sorted_keys[i], or
// sorted_keys[i] == sorted_keys[i+1] with sorted_index[i] >= sorted_index[i+1]. Together with
// count_descents == 0, a result of 0 proves the output is the stable sort of the input.
template <class Key, class Index>
std::uint64_t count_stable_index_errors(const Key* sorted_keys, const Index* sorted_index, const Key* original_keys,
                                        std::size_t n, cudaStream_t stream);

extern template std::uint64_t count_descents<std::uint32_t>(const std::uint32_t*, std::size_t, cudaStream_t);
extern template std::uint64_t count_descents<std::uint64_t>(const std::uint64_t*, std::size_t, cudaStream_t);
extern template std::uint64_t count_descents<Key128>(const Key128*, std::size_t, cudaStream_t);
extern template std::uint64_t key_multiset_hash<std::uint32_t>(const std::uint32_t*, std::size_t, cudaStream_t);
extern template std::uint64_t key_multiset_hash<std::uint64_t>(const std::uint64_t*, std::size_t, cudaStream_t);
extern template std::uint64_t key_multiset_hash<Key128>(const Key128*, std::size_t, cudaStream_t);
extern template std::uint64_t count_stable_index_errors<std::uint32_t, std::uint32_t>(
    const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, std::size_t, cudaStream_t);
extern template std::uint64_t count_stable_index_errors<std::uint64_t, std::uint32_t>(
    const std::uint64_t*, const std::uint32_t*, const std::uint64_t*, std::size_t, cudaStream_t);
extern template std::uint64_t count_stable_index_errors<std::uint64_t, std::uint64_t>(
    const std::uint64_t*, const std::uint64_t*, const std::uint64_t*, std::size_t, cudaStream_t);
extern template std::uint64_t count_stable_index_errors<Key128, std::uint32_t>(
    const Key128*, const std::uint32_t*, const Key128*, std::size_t, cudaStream_t);

}  // namespace gpusort::gpu
