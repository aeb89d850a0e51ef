// Block level: a block merges, stably, two sorted pieces that lie in shared memory, each thread
// producing kItems consecutive outputs (blocked): thread t finds where its outputs start by
// merge-path search (thread/merge_path.cuh), then merges serially.
#pragma once

#include "gpu/no_payload.hpp"
#include "gpu/thread/key_ops.cuh"
#include "gpu/thread/merge_path.cuh"

namespace gpusort::gpu::detail {

// merged_keys[s] = the output of rank t*kItems + s of the merge of a_keys[0, a_count) and
// b_keys[0, b_count) (of equal keys, a's first); unless Payload is NoPayload, merged_payload[s] = its
// payload, for ranks below a_count + b_count, from stage_payload, which holds a's payloads and then
// b's. Reads may go one key past the end of a piece, never further.
template <int kItems, class Key, class Payload>
__device__ __forceinline__ void block_merge(const Key* a_keys, int a_count, const Key* b_keys, int b_count,
                                            const Payload* stage_payload, Key (&merged_keys)[kItems],
                                            Payload (&merged_payload)[kItems]) {
    constexpr bool kWithPayload = kIsPayload<Payload>;
    const int t = static_cast<int>(threadIdx.x);
    const int count = a_count + b_count;
    const int first_rank = t * kItems < count ? t * kItems : count;
    int a_next = merge_path_split(a_keys, a_count, b_keys, b_count, first_rank);
    int b_next = first_rank - a_next;
    Key a_key = a_keys[a_next];
    Key b_key = b_keys[b_next];
    int merged_from[kItems];
#pragma unroll
    for (int s = 0; s < kItems; ++s) {
        const bool take_a = a_next < a_count && (b_next >= b_count || !key_less(b_key, a_key));
        merged_keys[s] = take_a ? a_key : b_key;
        if constexpr (kWithPayload) merged_from[s] = take_a ? a_next : a_count + b_next;
        if (take_a) {
            a_next = min(a_next + 1, a_count);
            a_key = a_keys[a_next];
        } else {
            b_next = min(b_next + 1, b_count);
            b_key = b_keys[b_next];
        }
    }
    if constexpr (kWithPayload) {
#pragma unroll
        for (int s = 0; s < kItems; ++s) {
            if (first_rank + s < count) merged_payload[s] = stage_payload[merged_from[s]];
        }
    }
}

}  // namespace gpusort::gpu::detail
