// Block level: BitonicTileSortAgent, the work of one block of bitonic_tile_sort_kernel. The block
// sorts one tile, keys[tile*kTileSize, (tile+1)*kTileSize) (the last tile may be short), and writes
// it, with payloads, to the output arrays (which may be the input arrays): it loads the tile striped
// (BlockLoad), sorts it in registers and shared memory (block_bitonic_sort) and stores it through
// shared memory (BlockTransposedStore).
//
// The network sorts by (key, position in tile) for payload sorts: every item differs, so the result
// is the stable order whatever order the network's inputs came in. Positions past the end of a
// short tile hold the largest key and sort after every real key.
#pragma once

#include <cstdint>

#include "gpu/block/block_bitonic_sort.cuh"
#include "gpu/block/block_load.cuh"
#include "gpu/block/block_store.cuh"
#include "gpu/block/tile_arrangement.cuh"
#include "gpu/thread/key_ops.cuh"
#include "gpu/thread/sort_item.cuh"

namespace gpusort::gpu::detail {

template <class Key, class Payload, class Policy>
class BitonicTileSortAgent {
public:
    static constexpr int kThreads = Policy::kThreads;
    static constexpr int kItems = Policy::kItemsPerThread;
    static constexpr int kTile = Policy::kTileSize;
    static constexpr bool kWithPosition = Policy::kWithPosition;

    // shared_memory: Policy::kSharedBytes, for the tile's keys and then its positions.
    __device__ __forceinline__ explicit BitonicTileSortAgent(unsigned char* shared_memory)
        : shared_keys_(reinterpret_cast<Key*>(shared_memory)),
          shared_positions_(reinterpret_cast<Position*>(shared_memory + sizeof(Key) * kTile)) {}

    // Sorts tile `tile` of keys_in[0, n) into keys_out, and its payloads into payload_out.
    __device__ __forceinline__ void sort_tile(std::int64_t tile, const Key* keys_in, const Payload* payload_in,
                                              Key* keys_out, Payload* payload_out, std::int64_t n) const {
        const std::int64_t tile_begin = tile * kTile;
        const int count = static_cast<int>(n - tile_begin < kTile ? n - tile_begin : kTile);

        Item items[kItems];
        Load::load_striped(keys_in, tile_begin, count, largest_key<Key>(), keys_of(items));
        if constexpr (kWithPosition) {
#pragma unroll
            for (int r = 0; r < kItems; ++r) {
                items[r].position = static_cast<std::uint32_t>(Arrangement::striped_rank(r));
            }
        }

        block_bitonic_sort<kThreads>(items, shared_keys_, shared_positions_);

        // Thread t now holds sorted ranks t*kItems .. t*kItems+kItems-1: turn them around in shared
        // memory so that the stores are coalesced.
        const Store store(shared_keys_, shared_positions_);
        __syncthreads();
        store.write_blocked(keys_of(items), positions_of(items));
        __syncthreads();
        if constexpr (!kWithPosition) {
            store.store_striped(keys_out, tile_begin, count, [](int, int, const Position&) {});
        } else {
            // Keys go out at once (all were read at the start); payloads are gathered from the input
            // by position, and every payload of the tile is read before any is overwritten (in-place
            // sorts).
            Payload sorted_payload[kItems];
            store.store_striped(keys_out, tile_begin, count, [&](int r, int, std::uint32_t position) {
                sorted_payload[r] = payload_in[tile_begin + position];
            });
            __syncthreads();
            BlockStore<kThreads, kItems>::store_striped(payload_out, tile_begin, count, sorted_payload);
        }
    }

private:
    using Item = SortItem<Key, kWithPosition>;
    using Position = ItemPosition<kWithPosition>;
    using Arrangement = TileArrangement<kThreads, kItems>;
    using Load = BlockLoad<kThreads, kItems>;
    using Store = BlockTransposedStore<kThreads, kItems, Key, Position>;

    Key* shared_keys_;
    Position* shared_positions_;
};

}  // namespace gpusort::gpu::detail
