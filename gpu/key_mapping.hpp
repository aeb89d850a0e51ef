// Key mapping on the device: raw keys of 1, 2, 4 or 8 bytes (the whole record being one key of
// a KeyOrder's type) become normalised sort keys (u32 for widths up to 4, u64 for 8) whose
// unsigned order is the wanted order, and back, by the key rules of src/keys/key_rules.hpp, the
// ones the host uses. Narrow keys are zero-extended after mapping.
#pragma once

#include "src/keys/key_dispatch.hpp"
#include "src/keys/key_rules.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpusort::gpu {

// The sort key of a raw key of type Raw: u32 for keys of up to 4 bytes, u64 for 8.
template <class Raw>
using SortKeyOf = std::conditional_t<sizeof(Raw) <= 4, std::uint32_t, std::uint64_t>;

// Bytes of the sort key for a raw key of `width` bytes (4 or 8).
inline std::size_t sort_key_width(std::size_t width) {
    return with_key_width(width, [](auto key) { return sizeof(SortKeyOf<decltype(key)>); });
}

// keys[i] = raw[i] normalised for `order`, or only widened when `normalize` is false (keys that
// come in normalised); raw and keys may be the same array when key_width(order.type) ==
// sort_key_width.
void map_to_sort_keys(const void* raw, void* keys, std::size_t n, const KeyOrder& order, bool normalize,
                      cudaStream_t stream);
// raw[i] = keys[i] cut to key_width(order.type) bytes, with the normalisation undone when
// `restore` is set (otherwise the key stays normalised). Same aliasing rule.
void map_from_sort_keys(const void* keys, void* raw, std::size_t n, const KeyOrder& order, bool restore,
                        cudaStream_t stream);

}  // namespace gpusort::gpu
