// Kernels behind order_check.hpp: each thread counts or hashes a grid-stride share of the array,
// warps add their sums with shuffles, and one atomic per warp adds them to a device counter.
#include "tests/gpu/support/order_check.hpp"

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/thread/key_ops.cuh"
#include "tests/gpu/support/mix64.cuh"

namespace gpusort::gpu {

namespace {

constexpr unsigned kCheckThreads = 256;
constexpr unsigned kCheckBlocks = 132 * 8;

__device__ __forceinline__ void add_to_total(std::uint64_t value, unsigned long long* total) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, static_cast<unsigned long long>(value));
}

__device__ __forceinline__ std::uint64_t key_hash(std::uint32_t key) { return detail::mix64(key); }
__device__ __forceinline__ std::uint64_t key_hash(std::uint64_t key) { return detail::mix64(key); }
__device__ __forceinline__ std::uint64_t key_hash(const Key128& key) {
    return detail::mix64(key.hi ^ detail::mix64(key.lo + 0x632be59bd9b4e019ull));
}

__device__ __forceinline__ bool keys_equal(const Key128& a, const Key128& b) { return a.hi == b.hi && a.lo == b.lo; }
template <class Key>
__device__ __forceinline__ bool keys_equal(Key a, Key b) {
    return a == b;
}

// The loops run over every i in [0, n) for every thread count: the kernels are launched with a
// fixed grid and stride through the array.
template <class Key>
__global__ void count_descents_kernel(const Key* keys, std::uint64_t n, unsigned long long* total) {
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    std::uint64_t count = 0;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i + 1 < n;
         i += step) {
        if (detail::key_less(keys[i + 1], keys[i])) ++count;
    }
    add_to_total(count, total);
}

template <class Key>
__global__ void key_multiset_hash_kernel(const Key* keys, std::uint64_t n, unsigned long long* total) {
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    std::uint64_t sum = 0;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
        sum += key_hash(keys[i]);
    }
    add_to_total(sum, total);
}

template <class Key, class Index>
__global__ void count_stable_index_errors_kernel(const Key* sorted_keys, const Index* sorted_index,
                                                 const Key* original_keys, std::uint64_t n,
                                                 unsigned long long* total) {
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    std::uint64_t count = 0;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
        const std::uint64_t index = sorted_index[i];
        bool wrong = index >= n || !keys_equal(original_keys[index], sorted_keys[i]);
        if (i + 1 < n && keys_equal(sorted_keys[i], sorted_keys[i + 1]) &&
            index >= static_cast<std::uint64_t>(sorted_index[i + 1])) {
            wrong = true;
        }
        if (wrong) ++count;
    }
    add_to_total(count, total);
}

// Runs `launch(counter)` on a zeroed device counter and returns the counter's final value.
template <class Launch>
std::uint64_t run_counter(cudaStream_t stream, const char* kernel_name, Launch launch) {
    DeviceBuffer<unsigned long long> total(1);
    check_cuda(cudaMemsetAsync(total.data(), 0, sizeof(unsigned long long), stream), "cudaMemsetAsync");
    launch(total.data());
    check_launch(kernel_name);
    unsigned long long result = 0;
    check_cuda(cudaMemcpyAsync(&result, total.data(), sizeof result, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync of a check result");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return result;
}

}  // namespace

template <class Key>
std::uint64_t count_descents(const Key* keys, std::size_t n, cudaStream_t stream) {
    if (n < 2) return 0;
    return run_counter(stream, "count_descents_kernel", [&](unsigned long long* total) {
        count_descents_kernel<Key><<<kCheckBlocks, kCheckThreads, 0, stream>>>(keys, n, total);
    });
}

template <class Key>
std::uint64_t key_multiset_hash(const Key* keys, std::size_t n, cudaStream_t stream) {
    if (n == 0) return 0;
    return run_counter(stream, "key_multiset_hash_kernel", [&](unsigned long long* total) {
        key_multiset_hash_kernel<Key><<<kCheckBlocks, kCheckThreads, 0, stream>>>(keys, n, total);
    });
}

template <class Key, class Index>
std::uint64_t count_stable_index_errors(const Key* sorted_keys, const Index* sorted_index, const Key* original_keys,
                                        std::size_t n, cudaStream_t stream) {
    if (n == 0) return 0;
    return run_counter(stream, "count_stable_index_errors_kernel", [&](unsigned long long* total) {
        count_stable_index_errors_kernel<Key, Index>
            <<<kCheckBlocks, kCheckThreads, 0, stream>>>(sorted_keys, sorted_index, original_keys, n, total);
    });
}

template std::uint64_t count_descents<std::uint32_t>(const std::uint32_t*, std::size_t, cudaStream_t);
template std::uint64_t count_descents<std::uint64_t>(const std::uint64_t*, std::size_t, cudaStream_t);
template std::uint64_t count_descents<Key128>(const Key128*, std::size_t, cudaStream_t);
template std::uint64_t key_multiset_hash<std::uint32_t>(const std::uint32_t*, std::size_t, cudaStream_t);
template std::uint64_t key_multiset_hash<std::uint64_t>(const std::uint64_t*, std::size_t, cudaStream_t);
template std::uint64_t key_multiset_hash<Key128>(const Key128*, std::size_t, cudaStream_t);
template std::uint64_t count_stable_index_errors<std::uint32_t, std::uint32_t>(
    const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, std::size_t, cudaStream_t);
template std::uint64_t count_stable_index_errors<std::uint64_t, std::uint32_t>(
    const std::uint64_t*, const std::uint32_t*, const std::uint64_t*, std::size_t, cudaStream_t);
template std::uint64_t count_stable_index_errors<std::uint64_t, std::uint64_t>(
    const std::uint64_t*, const std::uint64_t*, const std::uint64_t*, std::size_t, cudaStream_t);
template std::uint64_t count_stable_index_errors<Key128, std::uint32_t>(
    const Key128*, const std::uint32_t*, const Key128*, std::size_t, cudaStream_t);

}  // namespace gpusort::gpu
