// Dispatch level: the launch sequence of a device sort, for given kernel policies (sort_policy.cuh):
// how many blocks and how many passes. One bitonic tile-sort launch, then merge passes that double
// the sorted run length each time, ping-ponging between the caller's arrays and the scratch so that
// the last pass lands in the caller's arrays. Host code; everything is queued on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpu/gpu_error.hpp"
#include "gpu/dispatch/sort_policy.cuh"
#include "gpu/kernels/bitonic_tile_sort.cuh"
#include "gpu/kernels/merge_pass.cuh"

namespace gpusort::gpu::detail {

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Lets `kernel` use `shared_bytes` of dynamic shared memory (beyond the default 48 KiB).
template <class Kernel>
void allow_dynamic_shared_memory(Kernel kernel, int shared_bytes) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes),
               "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
}

// Number of merge splits a sort of up to max_keys keys needs with merge tiles of merge_tile keys.
inline std::size_t merge_split_count(std::size_t max_keys, std::size_t merge_tile) {
    return max_keys == 0 ? 0 : ceil_div(max_keys, merge_tile) + 1;
}

template <class Key, class Payload, class TilePolicy, class MergePolicy>
void launch_sort(Key* keys, Payload* payload, Key* key_scratch, Payload* payload_scratch, std::int64_t* splits,
                 std::int64_t n, cudaStream_t stream) {
    static_assert(MergePolicy::kTileSize <= 2 * TilePolicy::kTileSize,
                  "every merge tile must lie inside one merged pair of runs");
    static_assert((MergePolicy::kTileSize & (MergePolicy::kTileSize - 1)) == 0 &&
                      (TilePolicy::kTileSize & (TilePolicy::kTileSize - 1)) == 0,
                  "tile sizes: powers of two");
    if (n <= 0) return;

    int merge_passes = 0;
    for (std::int64_t run = TilePolicy::kTileSize; run < n; run *= 2) ++merge_passes;

    Key* key_buffers[2] = {keys, key_scratch};
    Payload* payload_buffers[2] = {payload, payload_scratch};
    // The tile sort writes where, after an even or odd number of passes, the result is in buffer 0.
    int current = merge_passes % 2;

    const auto tile_sort = bitonic_tile_sort_kernel<Key, Payload, TilePolicy>;
    allow_dynamic_shared_memory(tile_sort, TilePolicy::kSharedBytes);
    const auto sort_tiles = static_cast<unsigned>(ceil_div(static_cast<std::size_t>(n), TilePolicy::kTileSize));
    tile_sort<<<sort_tiles, TilePolicy::kThreads, TilePolicy::kSharedBytes, stream>>>(
        keys, payload, key_buffers[current], payload_buffers[current], n);
    check_launch("bitonic_tile_sort_kernel");
    if (merge_passes == 0) return;

    const auto merge = merge_pass_kernel<Key, Payload, MergePolicy>;
    allow_dynamic_shared_memory(merge, MergePolicy::kSharedBytes);
    int device = 0;
    int multiprocessors = 0;
    int blocks_per_multiprocessor = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(MultiProcessorCount)");
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_multiprocessor, merge, MergePolicy::kThreads,
                                                             MergePolicy::kSharedBytes),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    const std::int64_t merge_tiles =
        static_cast<std::int64_t>(ceil_div(static_cast<std::size_t>(n), MergePolicy::kTileSize));
    const auto merge_blocks = static_cast<unsigned>(std::min<std::int64_t>(
        merge_tiles, static_cast<std::int64_t>(std::max(1, blocks_per_multiprocessor)) * multiprocessors));
    const auto split_blocks =
        static_cast<unsigned>(ceil_div(static_cast<std::size_t>(merge_tiles), MergeSplitPolicy::kThreads));

    for (std::int64_t run = TilePolicy::kTileSize; run < n; run *= 2) {
        merge_split_kernel<Key, MergeSplitPolicy><<<split_blocks, MergeSplitPolicy::kThreads, 0, stream>>>(
            key_buffers[current], n, run, MergePolicy::kTileSize, merge_tiles, splits);
        check_launch("merge_split_kernel");
        merge<<<merge_blocks, MergePolicy::kThreads, MergePolicy::kSharedBytes, stream>>>(
            key_buffers[current], payload_buffers[current], key_buffers[1 - current], payload_buffers[1 - current], n,
            run, splits, merge_tiles);
        check_launch("merge_pass_kernel");
        current = 1 - current;
    }
}

}  // namespace gpusort::gpu::detail
