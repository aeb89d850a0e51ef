// Block level: how the items of a tile of kThreads * kItems are spread over a block's threads, and
// where they sit in shared memory. "Striped": thread t holds ranks t, t + kThreads, t + 2*kThreads,
// ... (a block's loads and stores of device memory are then coalesced). "Blocked": thread t holds
// ranks t*kItems .. t*kItems + kItems-1 (as a sort or a merge leaves them). In shared memory each
// 128-byte row is permuted by XOR with its row number (swizzled_index), so that neither pattern puts
// two lanes of one memory transaction on the same bank.
#pragma once

namespace gpusort::gpu::detail {

template <int kThreads, int kItems>
struct TileArrangement {
    // Rank in the tile of item r of this thread, striped.
    __device__ __forceinline__ static int striped_rank(int r) { return r * kThreads + static_cast<int>(threadIdx.x); }
    // Rank in the tile of item s of this thread, blocked.
    __device__ __forceinline__ static int blocked_rank(int s) { return static_cast<int>(threadIdx.x) * kItems + s; }
};

// Where element i of an array of kElementBytes-byte elements is stored. The array's length must be
// a multiple of 128 / kElementBytes; the index stays in its 128-byte row.
template <int kElementBytes>
__device__ __forceinline__ int swizzled_index(int i) {
    static_assert(kElementBytes == 4 || kElementBytes == 8 || kElementBytes == 16, "4-, 8- or 16-byte elements");
    constexpr int kRowElements = 128 / kElementBytes;
    return i ^ ((i / kRowElements) & (kRowElements - 1));
}

}  // namespace gpusort::gpu::detail
