// Elementwise kernels that map raw keys to normalised sort keys and back (see key_mapping.hpp).
#include "gpu/gpu_error.hpp"
#include "gpu/key_mapping.hpp"

#include <cstdint>

namespace gpusort::gpu {

namespace {

constexpr int kMapThreads = 256;
constexpr int kMapMaxBlocks = 4096;

template <class Raw>
__device__ Raw normalise(Raw raw, KeyClass kind, bool descending) {
    constexpr Raw sign = Raw(Raw(1) << (sizeof(Raw) * 8 - 1));
    Raw key = raw;
    if (kind == KeyClass::signed_int) key = Raw(key ^ sign);
    else if (kind == KeyClass::floating) key = (key & sign) ? Raw(~key) : Raw(key | sign);
    return descending ? Raw(~key) : key;
}

template <class Raw>
__device__ Raw restore_key(Raw key, KeyClass kind, bool descending) {
    constexpr Raw sign = Raw(Raw(1) << (sizeof(Raw) * 8 - 1));
    if (descending) key = Raw(~key);
    if (kind == KeyClass::signed_int) return Raw(key ^ sign);
    if (kind == KeyClass::floating) return (key & sign) ? Raw(key ^ sign) : Raw(~key);
    return key;
}

template <class Raw, class Key>
__global__ void to_sort_keys_kernel(const Raw* raw, Key* keys, std::size_t n, KeyMapping mapping) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        keys[i] = Key(normalise(raw[i], mapping.kind, mapping.descending));
}

template <class Raw, class Key>
__global__ void from_sort_keys_kernel(const Key* keys, Raw* raw, std::size_t n, KeyMapping mapping, bool restore) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const Raw key = Raw(keys[i]);
        raw[i] = restore ? restore_key(key, mapping.kind, mapping.descending) : key;
    }
}

unsigned blocks_for(std::size_t n) {
    const std::size_t blocks = (n + kMapThreads - 1) / kMapThreads;
    return static_cast<unsigned>(blocks < kMapMaxBlocks ? blocks : kMapMaxBlocks);
}

template <class Raw, class Key>
void launch_to(const void* raw, void* keys, std::size_t n, KeyMapping mapping, cudaStream_t stream) {
    to_sort_keys_kernel<Raw, Key><<<blocks_for(n), kMapThreads, 0, stream>>>(
        static_cast<const Raw*>(raw), static_cast<Key*>(keys), n, mapping);
    check_launch("to_sort_keys_kernel");
}

template <class Raw, class Key>
void launch_from(const void* keys, void* raw, std::size_t n, KeyMapping mapping, bool restore, cudaStream_t stream) {
    from_sort_keys_kernel<Raw, Key><<<blocks_for(n), kMapThreads, 0, stream>>>(
        static_cast<const Key*>(keys), static_cast<Raw*>(raw), n, mapping, restore);
    check_launch("from_sort_keys_kernel");
}

}  // namespace

void map_to_sort_keys(const void* raw, void* keys, std::size_t n, std::size_t width, KeyMapping mapping,
                      cudaStream_t stream) {
    if (n == 0) return;
    switch (width) {
    case 1: launch_to<std::uint8_t, std::uint32_t>(raw, keys, n, mapping, stream); break;
    case 2: launch_to<std::uint16_t, std::uint32_t>(raw, keys, n, mapping, stream); break;
    case 4: launch_to<std::uint32_t, std::uint32_t>(raw, keys, n, mapping, stream); break;
    case 8: launch_to<std::uint64_t, std::uint64_t>(raw, keys, n, mapping, stream); break;
    default: throw GpuError(cudaErrorInvalidValue, "unsupported key width " + std::to_string(width));
    }
}

void map_from_sort_keys(const void* keys, void* raw, std::size_t n, std::size_t width, KeyMapping mapping,
                        bool restore, cudaStream_t stream) {
    if (n == 0) return;
    switch (width) {
    case 1: launch_from<std::uint8_t, std::uint32_t>(keys, raw, n, mapping, restore, stream); break;
    case 2: launch_from<std::uint16_t, std::uint32_t>(keys, raw, n, mapping, restore, stream); break;
    case 4: launch_from<std::uint32_t, std::uint32_t>(keys, raw, n, mapping, restore, stream); break;
    case 8: launch_from<std::uint64_t, std::uint64_t>(keys, raw, n, mapping, restore, stream); break;
    default: throw GpuError(cudaErrorInvalidValue, "unsupported key width " + std::to_string(width));
    }
}

}  // namespace gpusort::gpu
