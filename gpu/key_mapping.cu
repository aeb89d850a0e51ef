// Elementwise kernels that map raw keys to normalised sort keys and back (see key_mapping.hpp):
// the masks of the key rule are computed once on the host; each key is then a few XORs.
#include "gpu/gpu_error.hpp"
#include "gpu/key_mapping.hpp"

#include <cstdint>

namespace gpusort::gpu {

namespace {

constexpr int kMapThreads = 256;
constexpr int kMapMaxBlocks = 4096;

template <class Raw, class Key>
__global__ void to_sort_keys_kernel(const Raw* raw, Key* keys, std::size_t n, FieldMasks<Raw> masks) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        keys[i] = Key(normalize_field(raw[i], masks));
}

template <class Raw, class Key>
__global__ void from_sort_keys_kernel(const Key* keys, Raw* raw, std::size_t n, FieldMasks<Raw> masks) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        raw[i] = restore_field(Raw(keys[i]), masks);
}

unsigned blocks_for(std::size_t n) {
    const std::size_t blocks = (n + kMapThreads - 1) / kMapThreads;
    return static_cast<unsigned>(blocks < kMapMaxBlocks ? blocks : kMapMaxBlocks);
}

// The masks of `order` for keys of type Raw; none (the identity) when `apply` is false.
template <class Raw>
FieldMasks<Raw> masks_of(const KeyOrder& order, bool apply) {
    return apply ? field_masks<Raw>(key_kind(order.type), order.descending) : FieldMasks<Raw>{};
}

template <class Raw, class Key>
void launch_to(const void* raw, void* keys, std::size_t n, const KeyOrder& order, bool normalize, cudaStream_t stream) {
    to_sort_keys_kernel<Raw, Key><<<blocks_for(n), kMapThreads, 0, stream>>>(
        static_cast<const Raw*>(raw), static_cast<Key*>(keys), n, masks_of<Raw>(order, normalize));
    check_launch("to_sort_keys_kernel");
}

template <class Raw, class Key>
void launch_from(const void* keys, void* raw, std::size_t n, const KeyOrder& order, bool restore, cudaStream_t stream) {
    from_sort_keys_kernel<Raw, Key><<<blocks_for(n), kMapThreads, 0, stream>>>(
        static_cast<const Key*>(keys), static_cast<Raw*>(raw), n, masks_of<Raw>(order, restore));
    check_launch("from_sort_keys_kernel");
}

}  // namespace

void map_to_sort_keys(const void* raw, void* keys, std::size_t n, const KeyOrder& order, bool normalize,
                      cudaStream_t stream) {
    if (n == 0) return;
    with_key_width(key_width(order.type), [&](auto key) {
        using Raw = decltype(key);
        launch_to<Raw, SortKeyOf<Raw>>(raw, keys, n, order, normalize, stream);
    });
}

void map_from_sort_keys(const void* keys, void* raw, std::size_t n, const KeyOrder& order, bool restore,
                        cudaStream_t stream) {
    if (n == 0) return;
    with_key_width(key_width(order.type), [&](auto key) {
        using Raw = decltype(key);
        launch_from<Raw, SortKeyOf<Raw>>(keys, raw, n, order, restore, stream);
    });
}

}  // namespace gpusort::gpu
