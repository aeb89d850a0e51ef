// Bitonic sort of tiles: block b sorts keys[b*kTileSize, (b+1)*kTileSize) (the last tile may be
// short) and writes the sorted tile, with payloads, to the output arrays (which may be the input
// arrays). Each thread owns kItemsPerThread items in registers. The network index of item s of
// thread t is t*kItemsPerThread + s, so the network stages whose partners sit in the same thread
// run in registers with no barrier, those whose partner is in the same warp use warp shuffles, and
// only the rest go through shared memory with a block barrier.
//
// The network sorts by (key, position in tile) for payload sorts: every item differs, so the result
// is the stable order whatever order the network's inputs came in. Positions past the end of a
// short tile hold the largest key and sort after every real key.
#pragma once

#include <cstdint>

#include "kernels/async_copy.cuh"
#include "kernels/key_ops.cuh"
#include "kernels/shared_swizzle.cuh"
#include "kernels/sort_item.cuh"

namespace gpusort::gpu::detail {

__host__ __device__ constexpr int log2_of_power_of_two(int v) {
    int log = 0;
    while ((1 << log) < v) ++log;
    return log;
}

// Sorts each thread's items (network sizes 2 .. kItems), all in registers.
template <int kItems, class Item>
__device__ __forceinline__ void sort_items_in_thread(Item (&items)[kItems]) {
#pragma unroll
    for (int level = 1; (1 << level) <= kItems; ++level) {
        const int size = 1 << level;
        // First stage of a merge of two sorted halves: item s against its mirror in the block.
#pragma unroll
        for (int s = 0; s < kItems; ++s) {
            if ((s & (size / 2)) == 0) order_pair(items[s], items[s ^ (size - 1)]);
        }
#pragma unroll
        for (int stride_log = level - 2; stride_log >= 0; --stride_log) {
            const int stride = 1 << stride_log;
#pragma unroll
            for (int s = 0; s < kItems; ++s) {
                if ((s & stride) == 0) order_pair(items[s], items[s | stride]);
            }
        }
    }
}

// The last stages of a merge, whose strides (kItems/2 .. 1) stay inside a thread.
template <int kItems, class Item>
__device__ __forceinline__ void finish_merge_in_thread(Item (&items)[kItems]) {
    constexpr int kItemsLog = log2_of_power_of_two(kItems);
#pragma unroll
    for (int stride_log = kItemsLog - 1; stride_log >= 0; --stride_log) {
        const int stride = 1 << stride_log;
#pragma unroll
        for (int s = 0; s < kItems; ++s) {
            if ((s & stride) == 0) order_pair(items[s], items[s | stride]);
        }
    }
}

// One network stage whose partners are in another thread: thread t pairs with t ^ thread_mask.
// mirror: the first stage of a merge, where item s pairs with the partner's item kItems-1-s
// (thread_mask is then 2^q - 1); otherwise item s pairs with the partner's item s.
template <int kThreads, int kItems, class Key, bool kWithPosition>
__device__ __forceinline__ void exchange_stage(SortItem<Key, kWithPosition> (&items)[kItems], Key* shared_keys,
                                               std::uint32_t* shared_positions, int thread_mask, bool mirror) {
    using Item = SortItem<Key, kWithPosition>;
    const int t = static_cast<int>(threadIdx.x);
    const int top_bit = mirror ? (thread_mask + 1) / 2 : thread_mask;
    const bool keep_smaller = (t & top_bit) == 0;

    if (thread_mask < 32) {  // partner in the same warp
        if (mirror) {
#pragma unroll
            for (int s = 0; s < kItems / 2; ++s) {
                const Item from_high = shuffle_item(items[kItems - 1 - s], thread_mask);
                const Item from_low = shuffle_item(items[s], thread_mask);
                items[s] = keep_one(items[s], from_high, keep_smaller);
                items[kItems - 1 - s] = keep_one(items[kItems - 1 - s], from_low, keep_smaller);
            }
        } else {
#pragma unroll
            for (int s = 0; s < kItems; ++s) {
                items[s] = keep_one(items[s], shuffle_item(items[s], thread_mask), keep_smaller);
            }
        }
        return;
    }

    // Partner in another warp: through shared memory, laid out [slot][thread] (no bank conflicts).
#pragma unroll
    for (int s = 0; s < kItems; ++s) {
        shared_keys[s * kThreads + t] = items[s].key;
        if constexpr (kWithPosition) shared_positions[s * kThreads + t] = items[s].position;
    }
    __syncthreads();
    const int partner = t ^ thread_mask;
#pragma unroll
    for (int s = 0; s < kItems; ++s) {
        const int slot = mirror ? kItems - 1 - s : s;
        Item other;
        other.key = shared_keys[slot * kThreads + partner];
        if constexpr (kWithPosition) other.position = shared_positions[slot * kThreads + partner];
        items[s] = keep_one(items[s], other, keep_smaller);
    }
    __syncthreads();
}

template <class Key, class Payload, class Policy>
__global__ void __launch_bounds__(Policy::kThreads)
    bitonic_tile_sort_kernel(const Key* keys_in, const Payload* payload_in, Key* keys_out, Payload* payload_out,
                             std::int64_t n) {
    constexpr int kThreads = Policy::kThreads;
    constexpr int kItems = Policy::kItemsPerThread;
    constexpr int kTile = Policy::kTileSize;
    constexpr bool kWithPosition = Policy::kWithPosition;
    static_assert(kItems >= 2 && (kItems & (kItems - 1)) == 0, "items per thread: a power of two");
    static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "threads: a power of two");
    using Item = SortItem<Key, kWithPosition>;

    // Dynamic shared memory (Policy::kSharedBytes): the tile's keys, then its positions.
    Key* const shared_keys = reinterpret_cast<Key*>(dynamic_shared_memory());
    std::uint32_t* const shared_positions =
        reinterpret_cast<std::uint32_t*>(dynamic_shared_memory() + sizeof(Key) * kTile);

    const int t = static_cast<int>(threadIdx.x);
    const std::int64_t tile_begin = static_cast<std::int64_t>(blockIdx.x) * kTile;
    const int count = static_cast<int>(n - tile_begin < kTile ? n - tile_begin : kTile);

    // Coalesced loads: thread t takes tile positions t, t+kThreads, ...
    Item items[kItems];
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
        const int position = r * kThreads + t;
        items[r].key = position < count ? keys_in[tile_begin + position] : largest_key<Key>();
        if constexpr (kWithPosition) items[r].position = static_cast<std::uint32_t>(position);
    }

    sort_items_in_thread(items);
    for (int size = 2 * kItems; size <= kTile; size *= 2) {
        exchange_stage<kThreads>(items, shared_keys, shared_positions, size / kItems - 1, true);
        for (int stride = size / 4; stride >= kItems; stride /= 2) {
            exchange_stage<kThreads>(items, shared_keys, shared_positions, stride / kItems, false);
        }
        finish_merge_in_thread(items);
    }

    // Thread t now holds sorted ranks t*kItems .. t*kItems+kItems-1: turn them around in shared
    // memory so that the stores are coalesced.
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kItems; ++s) {
        const int rank = t * kItems + s;
        shared_keys[swizzled_index<sizeof(Key)>(rank)] = items[s].key;
        if constexpr (kWithPosition) shared_positions[swizzled_index<4>(rank)] = items[s].position;
    }
    __syncthreads();

    if constexpr (!kWithPosition) {
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int rank = r * kThreads + t;
            if (rank < count) keys_out[tile_begin + rank] = shared_keys[swizzled_index<sizeof(Key)>(rank)];
        }
    } else {
        // Keys go out at once (all were read at the start); payloads are gathered from the input
        // by position, and every payload of the tile is read before any is overwritten (in-place
        // sorts).
        Payload sorted_payload[kItems];
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int rank = r * kThreads + t;
            if (rank < count) {
                keys_out[tile_begin + rank] = shared_keys[swizzled_index<sizeof(Key)>(rank)];
                sorted_payload[r] = payload_in[tile_begin + shared_positions[swizzled_index<4>(rank)]];
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int rank = r * kThreads + t;
            if (rank < count) payload_out[tile_begin + rank] = sorted_payload[r];
        }
    }
}

}  // namespace gpusort::gpu::detail
