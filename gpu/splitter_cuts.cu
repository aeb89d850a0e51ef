#include "gpu/gpu_error.hpp"
#include "gpu/splitter_cuts.hpp"

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

template <class T>
void launch(const T* sorted, std::uint64_t n, const T* keys, const std::uint64_t* equal_before, int splitters, std::uint64_t* cuts,
            cudaStream_t stream) {
    if (splitters <= 0) return;
    cut_kernel<T><<<(splitters + 255) / 256, 256, 0, stream>>>(sorted, n, keys, equal_before, splitters, cuts);
    check_launch("cut_kernel (splitters' cuts)");
}

}  // namespace

void cut_at_splitters(const std::uint32_t* sorted, std::uint64_t n, const std::uint32_t* keys, const std::uint64_t* equal_before,
                      int splitters, std::uint64_t* cuts, cudaStream_t stream) {
    launch(sorted, n, keys, equal_before, splitters, cuts, stream);
}

void cut_at_splitters(const std::uint64_t* sorted, std::uint64_t n, const std::uint64_t* keys, const std::uint64_t* equal_before,
                      int splitters, std::uint64_t* cuts, cudaStream_t stream) {
    launch(sorted, n, keys, equal_before, splitters, cuts, stream);
}

}  // namespace gpusort::gpu
