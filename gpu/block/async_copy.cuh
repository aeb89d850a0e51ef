// Block level: the block's dynamic shared memory, and asynchronous copies from device memory into it
// (cp.async, sm_80 and later), so that a block can load its next tile while it works on the current
// one.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

namespace gpusort::gpu::detail {

// The block's dynamic shared memory, 16-byte aligned.
__device__ __forceinline__ unsigned char* dynamic_shared_memory() {
    extern __shared__ __align__(16) unsigned char dynamic_shared_bytes[];
    return dynamic_shared_bytes;
}

// Starts copying one element (4, 8 or 16 bytes; 16-byte elements as two 8-byte halves, so that
// 8-byte alignment suffices) from device memory into shared memory.
template <class T>
__device__ __forceinline__ void start_async_copy(T* shared_destination, const T* source) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "4-, 8- or 16-byte elements");
    if constexpr (sizeof(T) == 16) {
        __pipeline_memcpy_async(shared_destination, source, 8);
        __pipeline_memcpy_async(reinterpret_cast<unsigned char*>(shared_destination) + 8,
                                reinterpret_cast<const unsigned char*>(source) + 8, 8);
    } else {
        __pipeline_memcpy_async(shared_destination, source, sizeof(T));
    }
}

// Where `pointer` lies within its 16-byte piece of memory, in elements.
template <class T>
__device__ __forceinline__ int position_in_16_bytes(const T* pointer) {
    return static_cast<int>((reinterpret_cast<std::uintptr_t>(pointer) & 15) / sizeof(T));
}

// Closes the group of copies this thread has started since the last call.
__device__ __forceinline__ void commit_async_copies() { __pipeline_commit(); }

// Waits until at most kPending of this thread's most recent groups are still in flight. Other
// threads' copies are visible after a following __syncthreads().
template <int kPending>
__device__ __forceinline__ void wait_async_copies() {
    __pipeline_wait_prior(kPending);
}

}  // namespace gpusort::gpu::detail
