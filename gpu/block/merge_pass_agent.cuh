// Block level: MergePassAgent, the work of one block of merge_pass_kernel. The block stays resident
// and merges output tiles blockIdx.x, blockIdx.x + gridDim.x, ... of one merge pass (merge_tile.cuh
// says where each tile's two pieces lie): it starts the copy of the next tile into one of two
// shared-memory stages (BlockLoad), then merges the current tile from the other (block_merge), each
// thread producing kItemsPerThread consecutive outputs, and stores them through shared memory
// (BlockTransposedStore). Device memory is read and written coalesced; the copy of the next tile,
// and the read of its split, are under way while the current tile is merged.
#pragma once

#include <cstdint>

#include "gpu/block/async_copy.cuh"
#include "gpu/block/block_load.cuh"
#include "gpu/block/block_merge.cuh"
#include "gpu/block/block_store.cuh"
#include "gpu/block/merge_tile.cuh"
#include "gpu/no_payload.hpp"

namespace gpusort::gpu::detail {

template <class Key, class Payload, class Policy>
class MergePassAgent {
public:
    static constexpr int kThreads = Policy::kThreads;
    static constexpr int kItems = Policy::kItemsPerThread;
    static constexpr int kTile = Policy::kTileSize;
    static constexpr int kStageElements = Policy::kStageElements;
    // Keys alone of 4 or 8 bytes move between device and shared memory in 16-byte pieces.
    static constexpr bool kVector = !kIsPayload<Payload> && (sizeof(Key) == 4 || sizeof(Key) == 8);
    static_assert(Policy::kStages == 2, "two shared-memory stages");

    // shared_memory: Policy::kSharedBytes, for the keys of stage 0 and 1, then the payloads of 0 and 1.
    __device__ __forceinline__ MergePassAgent(unsigned char* shared_memory, const Key* keys_in,
                                              const Payload* payload_in, Key* keys_out, Payload* payload_out,
                                              std::int64_t n, std::int64_t run_length)
        : shared_keys_(reinterpret_cast<Key*>(shared_memory)),
          shared_payload_(reinterpret_cast<Payload*>(shared_memory + 2 * sizeof(Key) * kStageElements)),
          keys_in_(keys_in),
          payload_in_(payload_in),
          keys_out_(keys_out),
          payload_out_(payload_out),
          n_(n),
          run_length_(run_length) {}

    // Merges tiles blockIdx.x, blockIdx.x + gridDim.x, ... of tile_count; splits: merge_split_kernel's.
    __device__ __forceinline__ void merge_tiles(const std::int64_t* splits, std::int64_t tile_count) const {
        std::int64_t tile = blockIdx.x;
        if (tile >= tile_count) return;

        MergeTile current = locate_merge_tile<kTile>(tile, load_tile_splits(splits, tile, tile_count), n_, run_length_);
        StagePlacement placement = place_tile<kVector>(current, keys_in_);
        start_tile_load(current, placement, shared_keys_, shared_payload_);
        commit_async_copies();
        // The splits of the next tile are read one tile ahead, so that their latency is hidden too.
        TileSplits next_splits{};
        if (tile + gridDim.x < tile_count) next_splits = load_tile_splits(splits, tile + gridDim.x, tile_count);

        for (int stage = 0; tile < tile_count; tile += gridDim.x, stage ^= 1) {
            Key* const keys = shared_keys_ + stage * kStageElements;
            Payload* const payload = shared_payload_ + stage * kStageElements;

            // Start loading the next tile into the other stage, then wait for this one.
            const std::int64_t next_tile = tile + gridDim.x;
            MergeTile next{};
            StagePlacement next_placement{};
            if (next_tile < tile_count) {
                next = locate_merge_tile<kTile>(next_tile, next_splits, n_, run_length_);
                next_placement = place_tile<kVector>(next, keys_in_);
                start_tile_load(next, next_placement, shared_keys_ + (stage ^ 1) * kStageElements,
                                shared_payload_ + (stage ^ 1) * kStageElements);
                if (next_tile + gridDim.x < tile_count) {
                    next_splits = load_tile_splits(splits, next_tile + gridDim.x, tile_count);
                }
            }
            commit_async_copies();
            wait_async_copies<1>();
            __syncthreads();

            merge_and_store_tile(current, placement, keys, payload);
            // Everyone has read this stage before the next iteration starts loading into it.
            __syncthreads();
            current = next;
            placement = next_placement;
        }
    }

private:
    using Load = BlockLoad<kThreads, kItems>;
    using Store = BlockTransposedStore<kThreads, kItems, Key, Payload, kVector>;

    // Starts the asynchronous, coalesced copy of a tile's inputs into the stage of stage_keys and
    // stage_payload.
    __device__ __forceinline__ void start_tile_load(const MergeTile& tile, const StagePlacement& placement,
                                                    Key* stage_keys, Payload* stage_payload) const {
        if constexpr (kVector) {
            Load::start_aligned_copy(keys_in_ + tile.a_offset, tile.a_count, stage_keys + placement.a_begin);
            Load::start_aligned_copy(keys_in_ + tile.b_offset, tile.b_count, stage_keys + placement.b_begin);
        } else {
            Load::start_striped_copy(keys_in_, payload_in_, tile.a_offset, tile.b_offset, tile.a_count,
                                     tile.a_count + tile.b_count, stage_keys, stage_payload);
        }
    }

    // Merges the tile loaded into the stage of `keys` and `payload` and writes it out. Reads may go one
    // key past the end of a piece (into the stage's slack), never further.
    __device__ __forceinline__ void merge_and_store_tile(const MergeTile& tile, const StagePlacement& placement,
                                                         Key* keys, Payload* payload) const {
        const int count = tile.a_count + tile.b_count;
        Key merged_keys[kItems];
        Payload merged_payload[kItems];
        block_merge(keys + placement.a_begin, tile.a_count, keys + placement.b_begin, tile.b_count, payload,
                    merged_keys, merged_payload);
        __syncthreads();

        // Turn the outputs around in this stage so that the stores are coalesced.
        const Store store(keys, payload);
        store.write_blocked(merged_keys, merged_payload, count);
        __syncthreads();
        store.store_striped(keys_out_, payload_out_, tile.out_begin, count);
    }

    Key* shared_keys_;
    Payload* shared_payload_;
    const Key* keys_in_;
    const Payload* payload_in_;
    Key* keys_out_;
    Payload* payload_out_;
    std::int64_t n_;
    std::int64_t run_length_;
};

}  // namespace gpusort::gpu::detail
