// Tuning constants of the sort kernels, one policy struct per kernel: threads per block, items
// per thread, tile size, shared memory. The kernels take the policy as a template parameter.
#pragma once

#include <cstddef>
#include <type_traits>

#include "gpu/device_sorter.hpp"

namespace gpusort::gpu::detail {

template <class Payload>
inline constexpr bool kIsPayload = !std::is_same_v<Payload, NoPayload>;

template <class Payload>
inline constexpr int kPayloadBytes = kIsPayload<Payload> ? static_cast<int>(sizeof(Payload)) : 0;

// Bitonic sort of one tile per block (bitonic_tile_sort.cuh). Shared memory holds the tile's
// keys and, for payload sorts, each key's 32-bit position in the tile. The network stages across
// threads (warp shuffles, limited by shuffle throughput) depend on the thread count only, so fewer
// threads with more items each make a larger tile for about the same cost per key, and a larger
// tile saves whole merge passes; registers bound the items per thread. Measured on an H100 at 2^28
// keys (gpusort-tune-kernels): 128 x 64 for 32-bit keys alone, 256 x 32 for 64-bit keys alone,
// 128 x 16 for payload sorts (three or more words per item).
template <class Key, class Payload>
inline constexpr int kTileSortThreads = (!kIsPayload<Payload> && sizeof(Key) == 8) || sizeof(Key) > 8 ? 256 : 128;

template <class Key, class Payload>
inline constexpr int kTileSortItemsPerThread = kIsPayload<Payload> || sizeof(Key) > 8 ? 16
                                               : sizeof(Key) == 4                    ? 64
                                                                                     : 32;

template <class Key, class Payload, int kThreadsPerBlock = kTileSortThreads<Key, Payload>,
          int kItems = kTileSortItemsPerThread<Key, Payload>>
struct TileSortPolicy {
    static constexpr bool kWithPosition = kIsPayload<Payload>;
    static constexpr int kThreads = kThreadsPerBlock;
    static constexpr int kItemsPerThread = kItems;
    static constexpr int kTileSize = kThreads * kItemsPerThread;
    static constexpr int kSharedBytes = kTileSize * (static_cast<int>(sizeof(Key)) + (kWithPosition ? 4 : 0));
};

// Items per thread of a merge: 32 for 32-bit keys alone (their merge is bound by instructions per
// key, and a longer serial merge spreads the per-tile work); otherwise the largest of 16, 8, 4 whose
// tile keeps one stage of shared memory (keys and payloads) within 32 KiB, or 48 KiB for 8 and 4.
template <int kThreads, class Key, class Payload>
inline constexpr int kMergeItemsPerThread =
    !kIsPayload<Payload> && sizeof(Key) == 4 ? 32
    : (kThreads * 16 * (static_cast<int>(sizeof(Key)) + kPayloadBytes<Payload>) <= 32 * 1024) ? 16
    : (kThreads * 8 * (static_cast<int>(sizeof(Key)) + kPayloadBytes<Payload>) <= 48 * 1024)  ? 8
                                                                                                : 4;

// One merge pass (merge_pass.cuh): each block writes tiles of the merged output, loading the next
// tile (two shared-memory stages) while it merges the current one. Two resident blocks per
// multiprocessor measured best.
template <class Key, class Payload, int kThreadsPerBlock = 256,
          int kItems = kMergeItemsPerThread<kThreadsPerBlock, Key, Payload>, int kMinBlocks = 2>
struct MergePolicy {
    static constexpr int kThreads = kThreadsPerBlock;
    static constexpr int kItemsPerThread = kItems;
    static constexpr int kTileSize = kThreads * kItemsPerThread;
    static constexpr int kStages = 2;
    // A stage holds a tile plus slack: pieces placed at their 16-byte position, and one key read
    // past the end of a piece.
    static constexpr int kStageElements = kTileSize + 8;
    static constexpr int kSharedBytes =
        kStages * kStageElements * (static_cast<int>(sizeof(Key)) + kPayloadBytes<Payload>);
    // Blocks per multiprocessor the compiler must leave registers for (__launch_bounds__).
    static constexpr int kMinBlocksPerMultiprocessor = kMinBlocks;
};

// The partition kernel that finds where each merge tile starts (merge_pass.cuh).
struct MergeSplitPolicy {
    static constexpr int kThreads = 256;
};

}  // namespace gpusort::gpu::detail
