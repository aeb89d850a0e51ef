// Normalised plain keys on the host: whole arrays of keys (the whole record being one key) mapped
// in place, in parallel (TBB), to and from their normalised form by the rule of key_rules.hpp,
// the one the device uses too. Sorters and the merge then compare plain unsigned integers; the
// output is mapped back. Host-only.
#pragma once

#include "gpusort/key_type.hpp"
#include "src/keys/key_rules.hpp"

#include <bit>
#include <cstddef>
#include <span>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort {

static_assert(std::endian::native == std::endian::little,
              "gpusort reads keys in the host's byte order, which must be little-endian");

namespace detail {
template <class U, class Map>
void map_keys(std::span<U> keys, Map map) {
    constexpr std::size_t kGrain = std::size_t{1} << 16;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, keys.size(), kGrain), [&](const auto& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) keys[i] = map(keys[i]);
    });
}
}  // namespace detail

// True when normalising changes nothing (ascending unsigned keys): the passes can be skipped.
inline bool normalization_is_identity(const KeyOrder& order) {
    return !order.descending && key_kind(order.type) == KeyKind::unsigned_int;
}

template <class U>
void normalize_keys(std::span<U> keys, const KeyOrder& order) {
    if (normalization_is_identity(order)) return;
    const FieldMasks<U> masks = field_masks<U>(key_kind(order.type), order.descending);
    detail::map_keys(keys, [=](U raw) { return normalize_field(raw, masks); });
}

template <class U>
void denormalize_keys(std::span<U> keys, const KeyOrder& order) {
    if (normalization_is_identity(order)) return;
    const FieldMasks<U> masks = field_masks<U>(key_kind(order.type), order.descending);
    detail::map_keys(keys, [=](U key) { return restore_field(key, masks); });
}

}  // namespace gpusort
