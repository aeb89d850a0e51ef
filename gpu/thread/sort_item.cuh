// Thread level: SortItem, a key as the bitonic network sees it, with, for stable sorts, the key's
// position in its tile as the last tie-breaker; and the compare-exchange steps of the network, within
// a thread (order_pair) and between two threads (keep_one, shuffle_item).
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpu/no_payload.hpp"
#include "gpu/thread/key_ops.cuh"

namespace gpusort::gpu::detail {

template <class Key, bool kWithPosition>
struct SortItem;

template <class Key>
struct SortItem<Key, false> {
    Key key;
};

template <class Key>
struct SortItem<Key, true> {
    Key key;
    std::uint32_t position;
};

// The type of an item's position in its tile: std::uint32_t, or NoPayload for items without one.
template <bool kWithPosition>
using ItemPosition = std::conditional_t<kWithPosition, std::uint32_t, NoPayload>;

// The keys, or the positions, of an array of items, indexed like an array of their own: for the
// block pieces that load and store arrays (block/block_load.cuh, block/block_store.cuh).
template <class Item, int kItems>
struct ItemKeys {
    Item (&items)[kItems];
    __device__ __forceinline__ auto& operator[](int s) const { return items[s].key; }
};
template <class Item, int kItems>
struct ItemPositions {
    Item (&items)[kItems];
    __device__ __forceinline__ auto& operator[](int s) const { return items[s].position; }
};
template <class Item, int kItems>
__device__ __forceinline__ ItemKeys<Item, kItems> keys_of(Item (&items)[kItems]) {
    return {items};
}
template <class Item, int kItems>
__device__ __forceinline__ ItemPositions<Item, kItems> positions_of(Item (&items)[kItems]) {
    return {items};
}

template <class Key>
__device__ __forceinline__ bool item_less(const SortItem<Key, false>& a, const SortItem<Key, false>& b) {
    return key_less(a.key, b.key);
}

template <class Key>
__device__ __forceinline__ bool item_less(const SortItem<Key, true>& a, const SortItem<Key, true>& b) {
    return key_less(a.key, b.key) || (!key_less(b.key, a.key) && a.position < b.position);
}

// Wider keys with position: (key, position) compared as one 96- or 160-bit number, by the borrow of
// a multi-word subtraction a - b (a < b exactly when it borrows).
__device__ __forceinline__ bool item_less(const SortItem<std::uint64_t, true>& a,
                                          const SortItem<std::uint64_t, true>& b) {
    unsigned borrow;
    asm("{\n\t.reg .u32 d;\n\t"
        "sub.cc.u32 d, %1, %2;\n\t"
        "subc.cc.u32 d, %3, %4;\n\t"
        "subc.cc.u32 d, %5, %6;\n\t"
        "subc.u32 %0, 0, 0;\n\t}"
        : "=r"(borrow)
        : "r"(a.position), "r"(b.position), "r"(static_cast<unsigned>(a.key)), "r"(static_cast<unsigned>(b.key)),
          "r"(static_cast<unsigned>(a.key >> 32)), "r"(static_cast<unsigned>(b.key >> 32)));
    return borrow != 0;
}

__device__ __forceinline__ bool item_less(const SortItem<Key128, true>& a, const SortItem<Key128, true>& b) {
    unsigned borrow;
    asm("{\n\t.reg .u32 d;\n\t"
        "sub.cc.u32 d, %1, %2;\n\t"
        "subc.cc.u32 d, %3, %4;\n\t"
        "subc.cc.u32 d, %5, %6;\n\t"
        "subc.cc.u32 d, %7, %8;\n\t"
        "subc.cc.u32 d, %9, %10;\n\t"
        "subc.u32 %0, 0, 0;\n\t}"
        : "=r"(borrow)
        : "r"(a.position), "r"(b.position), "r"(static_cast<unsigned>(a.key.lo)),
          "r"(static_cast<unsigned>(b.key.lo)), "r"(static_cast<unsigned>(a.key.lo >> 32)),
          "r"(static_cast<unsigned>(b.key.lo >> 32)), "r"(static_cast<unsigned>(a.key.hi)),
          "r"(static_cast<unsigned>(b.key.hi)), "r"(static_cast<unsigned>(a.key.hi >> 32)),
          "r"(static_cast<unsigned>(b.key.hi >> 32)));
    return borrow != 0;
}

// 32-bit key and position compared as one 64-bit number.
__device__ __forceinline__ bool item_less(const SortItem<std::uint32_t, true>& a,
                                          const SortItem<std::uint32_t, true>& b) {
    const std::uint64_t wide_a = (static_cast<std::uint64_t>(a.key) << 32) | a.position;
    const std::uint64_t wide_b = (static_cast<std::uint64_t>(b.key) << 32) | b.position;
    return wide_a < wide_b;
}

template <class Key, bool kWithPosition>
__device__ __forceinline__ SortItem<Key, kWithPosition> shuffle_item(const SortItem<Key, kWithPosition>& item,
                                                                     int lane_mask) {
    SortItem<Key, kWithPosition> result;
    result.key = shuffle_xor(item.key, lane_mask);
    if constexpr (kWithPosition) result.position = shuffle_xor(item.position, lane_mask);
    return result;
}

// Puts the smaller of the two into `low` and the larger into `high`.
template <class Item>
__device__ __forceinline__ void order_pair(Item& low, Item& high) {
    const bool swap = item_less(high, low);
    const Item a = low;
    const Item b = high;
    low = swap ? b : a;
    high = swap ? a : b;
}

// Keys alone of 32 or 64 bits: plain min and max.
template <class Key>
__device__ __forceinline__ void order_pair_by_min_max(SortItem<Key, false>& low, SortItem<Key, false>& high) {
    const Key a = low.key;
    const Key b = high.key;
    low.key = b < a ? b : a;
    high.key = b < a ? a : b;
}
__device__ __forceinline__ void order_pair(SortItem<std::uint32_t, false>& low, SortItem<std::uint32_t, false>& high) {
    order_pair_by_min_max(low, high);
}
__device__ __forceinline__ void order_pair(SortItem<std::uint64_t, false>& low, SortItem<std::uint64_t, false>& high) {
    order_pair_by_min_max(low, high);
}

// The smaller (keep_smaller) or the larger of `mine` and `other`. Two threads that call this on the
// same pair with opposite keep_smaller end up with one item each.
template <class Item>
__device__ __forceinline__ Item keep_one(const Item& mine, const Item& other, bool keep_smaller) {
    const bool other_is_smaller = item_less(other, mine);
    return (other_is_smaller == keep_smaller) ? other : mine;
}
__device__ __forceinline__ SortItem<std::uint32_t, false> keep_one(const SortItem<std::uint32_t, false>& mine,
                                                                   const SortItem<std::uint32_t, false>& other,
                                                                   bool keep_smaller) {
    const std::uint32_t smaller = min(mine.key, other.key);
    const std::uint32_t larger = max(mine.key, other.key);
    return {keep_smaller ? smaller : larger};
}

}  // namespace gpusort::gpu::detail
