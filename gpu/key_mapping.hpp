// Key mapping on the device: raw keys of 1, 2, 4 or 8 bytes become normalised sort keys (u32 for
// widths up to 4, u64 for 8) whose unsigned order is the wanted order, and back. The rules are
// those of the core's key normalisation (DESIGN.md, "Normalised keys"), bit for bit:
//   signed: sign bit flipped; float: negatives all bits flipped, others sign bit set;
//   descending: all bits flipped afterwards. Narrow keys are zero-extended after mapping.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpusort::gpu {

enum class KeyClass { unsigned_int, signed_int, floating };

struct KeyMapping {
    KeyClass kind = KeyClass::unsigned_int;
    bool descending = false;
};

// Bytes of the sort key for a raw key of `width` bytes (4 or 8).
inline std::size_t sort_key_width(std::size_t width) { return width <= 4 ? 4 : 8; }

// keys[i] = normalised raw[i]; raw and keys may be the same array when width == sort_key_width.
void map_to_sort_keys(const void* raw, void* keys, std::size_t n, std::size_t width, KeyMapping mapping,
                      cudaStream_t stream);
// raw[i] = keys[i] cut to `width` bytes, with the mapping undone when `restore` is set (otherwise
// the key stays normalised). Same aliasing rule.
void map_from_sort_keys(const void* keys, void* raw, std::size_t n, std::size_t width, KeyMapping mapping,
                        bool restore, cudaStream_t stream);

}  // namespace gpusort::gpu
