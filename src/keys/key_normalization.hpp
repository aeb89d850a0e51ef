// Normalised keys: every key type is mapped, in place and bijectively, to an unsigned integer
// of the same width whose unsigned order is the wanted order (DESIGN.md, "Normalised keys").
//   unsigned: unchanged            signed: sign bit flipped
//   float:    negatives: all bits flipped, others: sign bit set (IEEE 754 totalOrder)
//   descending: all bits flipped after the above
// Sorters and the merge then compare plain unsigned integers; the output is mapped back.
#pragma once

#include "gpusort/key_type.hpp"

#include <bit>
#include <climits>
#include <cstdint>
#include <span>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort {

static_assert(std::endian::native == std::endian::little,
              "gpusort reads keys in the host's byte order, which must be little-endian");

template <class U>
constexpr U to_normalized(U raw, KeyKind kind, bool descending) {
    static_assert(std::is_unsigned_v<U>);
    constexpr U sign = U(U(1) << (sizeof(U) * CHAR_BIT - 1));
    U key = raw;
    if (kind == KeyKind::signed_int) key = U(key ^ sign);
    else if (kind == KeyKind::floating) key = (key & sign) ? U(~key) : U(key | sign);
    return descending ? U(~key) : key;
}

template <class U>
constexpr U from_normalized(U key, KeyKind kind, bool descending) {
    static_assert(std::is_unsigned_v<U>);
    constexpr U sign = U(U(1) << (sizeof(U) * CHAR_BIT - 1));
    if (descending) key = U(~key);
    if (kind == KeyKind::signed_int) return U(key ^ sign);
    if (kind == KeyKind::floating) return (key & sign) ? U(key ^ sign) : U(~key);
    return key;
}

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
    const KeyKind kind = key_kind(order.type);
    const bool descending = order.descending;
    detail::map_keys(keys, [=](U raw) { return to_normalized(raw, kind, descending); });
}

template <class U>
void denormalize_keys(std::span<U> keys, const KeyOrder& order) {
    if (normalization_is_identity(order)) return;
    const KeyKind kind = key_kind(order.type);
    const bool descending = order.descending;
    detail::map_keys(keys, [=](U key) { return from_normalized(key, kind, descending); });
}

}  // namespace gpusort
