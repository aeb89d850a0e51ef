// Kernel entry points of one merge pass, in which sorted runs of run_length keys are merged in pairs
// into runs of 2*run_length, the output cut into tiles (block/merge_tile.cuh). merge_split_kernel
// first finds, one thread per tile, by merge-path search along the tile's start diagonal, how many
// keys of the tile's first run come before the tile; so every block gets an equal share of every
// merge whatever the data. merge_pass_kernel then merges the tiles with resident blocks, each taking
// tile after tile (MergePassAgent, block/merge_pass_agent.cuh). Launched by dispatch/sort_launch.cuh.
#pragma once

#include <cstdint>

#include "gpu/block/async_copy.cuh"
#include "gpu/block/merge_pass_agent.cuh"
#include "gpu/block/merge_tile.cuh"
#include "gpu/thread/merge_path.cuh"

namespace gpusort::gpu::detail {

// splits[tile] = how many keys of run a of the tile's pair come before the tile's first output.
template <class Key, class Policy>
__global__ void __launch_bounds__(Policy::kThreads)
    merge_split_kernel(const Key* keys, std::int64_t n, std::int64_t run_length, std::int64_t tile_size,
                       std::int64_t tile_count, std::int64_t* splits) {
    const std::int64_t tile = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (tile >= tile_count) return;
    const std::int64_t out_begin = tile * tile_size;
    const MergePair pair = merge_pair_of(out_begin, n, run_length);
    splits[tile] = merge_path_split(keys + pair.begin, pair.a_len, keys + pair.begin + pair.a_len, pair.b_len,
                                    out_begin - pair.begin);
}

template <class Key, class Payload, class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerMultiprocessor)
    merge_pass_kernel(const Key* keys_in, const Payload* payload_in, Key* keys_out, Payload* payload_out,
                      std::int64_t n, std::int64_t run_length, const std::int64_t* splits, std::int64_t tile_count) {
    const MergePassAgent<Key, Payload, Policy> agent(dynamic_shared_memory(), keys_in, payload_in, keys_out,
                                                     payload_out, n, run_length);
    agent.merge_tiles(splits, tile_count);
}

}  // namespace gpusort::gpu::detail
