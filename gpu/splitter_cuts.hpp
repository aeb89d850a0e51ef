// Where splitters cut a sorted chunk on the device (gpu/peer_exchange.cpp): for the exchange
// through the GPUs, each splitter a normalised sort key with a count of the keys equal to it that
// go before it (counted in the chunk before it is sorted, while its keys are in input order).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpusort::gpu {

// cuts[j] = the keys of sorted[0, n) that go before splitter j: those below keys[j], and of those
// equal to it, equal_before[j] at most. All arrays on the device; asynchronous on `stream`.
void cut_at_splitters(const std::uint32_t* sorted, std::uint64_t n, const std::uint32_t* keys, const std::uint64_t* equal_before,
                      int splitters, std::uint64_t* cuts, cudaStream_t stream);
void cut_at_splitters(const std::uint64_t* sorted, std::uint64_t n, const std::uint64_t* keys, const std::uint64_t* equal_before,
                      int splitters, std::uint64_t* cuts, cudaStream_t stream);

// *count += the keys of keys[0, n) equal to *key. All on the device; asynchronous on `stream`.
void count_equal(const std::uint32_t* keys, std::uint64_t n, const std::uint32_t* key, std::uint64_t* count, cudaStream_t stream);
void count_equal(const std::uint64_t* keys, std::uint64_t n, const std::uint64_t* key, std::uint64_t* count, cudaStream_t stream);

}  // namespace gpusort::gpu
