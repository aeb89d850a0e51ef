// Placement of array elements in shared memory that avoids bank conflicts when a block moves
// data between a "blocked" pattern (thread t touches elements t*k .. t*k+k-1) and a "striped"
// one (thread t touches t, t+T, t+2T, ...): each 128-byte row is permuted by XOR with its row
// number, so neither pattern puts two lanes of one memory transaction on the same bank.
#pragma once

namespace gpusort::gpu::detail {

// Where element i of an array of kElementBytes-byte elements is stored. The array's length must be
// a multiple of 128 / kElementBytes; the index stays in its 128-byte row.
template <int kElementBytes>
__device__ __forceinline__ int swizzled_index(int i) {
    static_assert(kElementBytes == 4 || kElementBytes == 8 || kElementBytes == 16, "4-, 8- or 16-byte elements");
    constexpr int kRowElements = 128 / kElementBytes;
    return i ^ ((i / kRowElements) & (kRowElements - 1));
}

}  // namespace gpusort::gpu::detail
