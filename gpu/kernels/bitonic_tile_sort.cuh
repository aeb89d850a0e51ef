// Kernel entry point: bitonic_tile_sort_kernel, the first step of a device sort. Block b sorts tile
// b of keys[0, n), payloads alongside, with BitonicTileSortAgent (block/tile_sort_agent.cuh).
// Launched by dispatch/sort_launch.cuh, one block per tile, with Policy::kSharedBytes of dynamic
// shared memory.
#pragma once

#include <cstdint>

#include "gpu/block/async_copy.cuh"
#include "gpu/block/tile_sort_agent.cuh"

namespace gpusort::gpu::detail {

template <class Key, class Payload, class Policy>
__global__ void __launch_bounds__(Policy::kThreads)
    bitonic_tile_sort_kernel(const Key* keys_in, const Payload* payload_in, Key* keys_out, Payload* payload_out,
                             std::int64_t n) {
    const BitonicTileSortAgent<Key, Payload, Policy> agent(dynamic_shared_memory());
    agent.sort_tile(blockIdx.x, keys_in, payload_in, keys_out, payload_out, n);
}

}  // namespace gpusort::gpu::detail
