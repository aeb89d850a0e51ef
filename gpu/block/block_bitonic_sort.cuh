// Block level: the bitonic network over a tile of kThreads * kItems items held blocked in registers
// (the network index of item s of thread t is t*kItems + s). Stages whose partners sit in the same
// thread run in registers with no barrier (thread/bitonic_stages.cuh), those whose partner is in the
// same warp use warp shuffles, and only the rest go through shared memory with a block barrier.
#pragma once

#include "gpu/thread/bitonic_stages.cuh"
#include "gpu/thread/sort_item.cuh"

namespace gpusort::gpu::detail {

// One network stage whose partners are in another thread: thread t pairs with t ^ thread_mask.
// mirror: the first stage of a merge, where item s pairs with the partner's item kItems-1-s
// (thread_mask is then 2^q - 1); otherwise item s pairs with the partner's item s.
template <int kThreads, int kItems, class Key, bool kWithPosition>
__device__ __forceinline__ void exchange_stage(SortItem<Key, kWithPosition> (&items)[kItems], Key* shared_keys,
                                               ItemPosition<kWithPosition>* shared_positions, int thread_mask,
                                               bool mirror) {
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

// Sorts the tile: afterwards thread t holds ranks t*kItems .. t*kItems + kItems-1 in order.
// shared_keys and shared_positions have room for the tile.
template <int kThreads, int kItems, class Key, bool kWithPosition>
__device__ __forceinline__ void block_bitonic_sort(SortItem<Key, kWithPosition> (&items)[kItems], Key* shared_keys,
                                                   ItemPosition<kWithPosition>* shared_positions) {
    static_assert(kItems >= 2 && (kItems & (kItems - 1)) == 0, "items per thread: a power of two");
    static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "threads: a power of two");
    constexpr int kTile = kThreads * kItems;
    sort_items_in_thread(items);
    for (int size = 2 * kItems; size <= kTile; size *= 2) {
        exchange_stage<kThreads>(items, shared_keys, shared_positions, size / kItems - 1, true);
        for (int stride = size / 4; stride >= kItems; stride /= 2) {
            exchange_stage<kThreads>(items, shared_keys, shared_positions, stride / kItems, false);
        }
        finish_merge_in_thread(items);
    }
}

}  // namespace gpusort::gpu::detail
