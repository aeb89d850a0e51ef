// Thread level: the stages of the bitonic network whose pairs both sit in one thread's items, run in
// registers with no barrier: a whole sort of the thread's items, and the last stages of each merge.
#pragma once

#include "gpu/thread/sort_item.cuh"

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

}  // namespace gpusort::gpu::detail
