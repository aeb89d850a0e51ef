#include "gpu/gpu_error.hpp"
#include "gpu/splitter_cuts.hpp"

#include <algorithm>

namespace gpusort::gpu {

namespace {

// One thread per splitter: two binary searches.
template <class T>
__global__ void cut_kernel(const T* sorted, std::uint64_t n, const T* keys, const std::uint64_t* equal_before, int splitters,
                           std::uint64_t* cuts) {
    const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= splitters) return;
    const T key = keys[j];
    std::uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    const std::uint64_t lower = lo;
    hi = n;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] <= key) lo = mid + 1;
        else hi = mid;
    }
    const std::uint64_t equal = lo - lower;
    cuts[j] = lower + (equal < equal_before[j] ? equal : equal_before[j]);
}

// Grid-stride: each warp's count added once.
template <class T>
__global__ void count_kernel(const T* keys, std::uint64_t n, const T* key, std::uint64_t* count) {
    const T wanted = *key;
    unsigned long long mine = 0;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n; i += std::uint64_t{gridDim.x} * blockDim.x)
        mine += keys[i] == wanted;
    for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffu, mine, offset);
    if (threadIdx.x % 32 == 0 && mine != 0) atomicAdd(reinterpret_cast<unsigned long long*>(count), mine);
}

template <class T>
void launch_count(const T* keys, std::uint64_t n, const T* key, std::uint64_t* count, cudaStream_t stream) {
    if (n == 0) return;
    constexpr std::uint64_t kThreads = 256, kMostBlocks = 4096;
    const std::uint64_t blocks = std::min(kMostBlocks, (n + kThreads - 1) / kThreads);
    count_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(keys, n, key, count);
    check_launch("count_kernel (keys equal to a splitter)");
}

template <class T>
void launch(const T* sorted, std::uint64_t n, const T* keys, const std::uint64_t* equal_before, int splitters, std::uint64_t* cuts,
            cudaStream_t stream) {
    if (splitters <= 0) return;
    cut_kernel<T><<<(splitters + 255) / 256, 256, 0, stream>>>(sorted, n, keys, equal_before, splitters, cuts);
    check_launch("cut_kernel (splitters' cuts)");
}

}  // namespace

void count_equal(const std::uint32_t* keys, std::uint64_t n, const std::uint32_t* key, std::uint64_t* total, cudaStream_t stream) {
    launch_count(keys, n, key, total, stream);
}

void count_equal(const std::uint64_t* keys, std::uint64_t n, const std::uint64_t* key, std::uint64_t* total, cudaStream_t stream) {
    launch_count(keys, n, key, total, stream);
}

void cut_at_splitters(const std::uint32_t* sorted, std::uint64_t n, const std::uint32_t* keys, const std::uint64_t* equal_before,
                      int splitters, std::uint64_t* cuts, cudaStream_t stream) {
    launch(sorted, n, keys, equal_before, splitters, cuts, stream);
}

void cut_at_splitters(const std::uint64_t* sorted, std::uint64_t n, const std::uint64_t* keys, const std::uint64_t* equal_before,
                      int splitters, std::uint64_t* cuts, cudaStream_t stream) {
    launch(sorted, n, keys, equal_before, splitters, cuts, stream);
}

}  // namespace gpusort::gpu
