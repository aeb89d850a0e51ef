// Thread level: merge path, where a diagonal of the merge grid of two sorted sequences crosses the
// merge path, found by one thread's binary search along the diagonal. The merge is stable: of equal
// keys, those of `a` (the earlier run) come first.
#pragma once

#include "gpu/thread/key_ops.cuh"

namespace gpusort::gpu::detail {

// How many of the first `diag` elements of the stable merge of a[0, a_len) and b[0, b_len) come
// from a (0 <= diag <= a_len + b_len).
template <class Key, class Index>
__device__ __forceinline__ Index merge_path_split(const Key* a, Index a_len, const Key* b, Index b_len, Index diag) {
    Index low = diag > b_len ? diag - b_len : Index{0};
    Index high = diag < a_len ? diag : a_len;
    while (low < high) {
        const Index mid = low + (high - low) / 2;
        // a[mid] is among the first diag elements unless b[diag-1-mid] comes before it.
        if (key_less(b[diag - 1 - mid], a[mid])) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    return low;
}

}  // namespace gpusort::gpu::detail
