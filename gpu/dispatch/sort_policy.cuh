// Dispatch level: the tuning of the sort kernels. One policy struct per kernel (threads per block,
// items per thread, and the tile size and shared memory that follow from them), which the kernel
// takes as a template parameter; and the tuned choice for each kernel and each key and payload type
// that DeviceSorter sorts, written out per type. gpusort-tune-kernels (tools/gpu-bench) times
// alternatives.
#pragma once

#include <cstdint>

#include "gpu/key128.hpp"
#include "gpu/no_payload.hpp"

namespace gpusort::gpu::detail {

// bitonic_tile_sort_kernel (kernels/bitonic_tile_sort.cuh): one tile per block. Shared memory holds
// the tile's keys and, for payload sorts, each key's 32-bit position in the tile.
template <class Key, class Payload, int kThreadsPerBlock, int kItems>
struct TileSortPolicy {
    static constexpr bool kWithPosition = kIsPayload<Payload>;
    static constexpr int kThreads = kThreadsPerBlock;
    static constexpr int kItemsPerThread = kItems;
    static constexpr int kTileSize = kThreads * kItemsPerThread;
    static constexpr int kSharedBytes = kTileSize * (static_cast<int>(sizeof(Key)) + (kWithPosition ? 4 : 0));
};

// merge_pass_kernel (kernels/merge_pass.cuh): each block writes tiles of the merged output, loading
// the next tile (two shared-memory stages) while it merges the current one.
template <class Key, class Payload, int kThreadsPerBlock, int kItems, int kMinBlocks>
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

// merge_split_kernel (kernels/merge_pass.cuh), which finds where each merge tile starts.
struct MergeSplitPolicy {
    static constexpr int kThreads = 256;
};

// The tuned shapes, per key and payload type; a type without an entry does not compile.
template <int kThreadsPerBlock, int kItems>
struct KernelShape {
    static constexpr int kThreads = kThreadsPerBlock;
    static constexpr int kItemsPerThread = kItems;
};
template <int kThreadsPerBlock, int kItems, int kMinBlocks>
struct MergeShape : KernelShape<kThreadsPerBlock, kItems> {
    static constexpr int kMinBlocksPerMultiprocessor = kMinBlocks;
};
template <class Key, class Payload>
struct TileSortTuning;
template <class Key, class Payload>
struct MergeTuning;

// Tile sort. The network stages across threads (warp shuffles, limited by shuffle throughput)
// depend on the thread count only, so fewer threads with more items each make a larger tile for
// about the same cost per key, and a larger tile saves whole merge passes; registers bound the items
// per thread. Measured on an H100 at 2^28 keys (gpusort-tune-kernels): 128 x 64 for 32-bit keys
// alone, 256 x 32 for 64-bit keys alone, 128 x 16 for payload sorts (three or more words per item).
//                  key            payload                    threads  items
template <> struct TileSortTuning<std::uint32_t, NoPayload>     : KernelShape<128, 64> {};
template <> struct TileSortTuning<std::uint32_t, std::uint32_t> : KernelShape<128, 16> {};
template <> struct TileSortTuning<std::uint32_t, std::uint64_t> : KernelShape<128, 16> {};
template <> struct TileSortTuning<std::uint64_t, NoPayload>     : KernelShape<256, 32> {};
template <> struct TileSortTuning<std::uint64_t, std::uint32_t> : KernelShape<128, 16> {};
template <> struct TileSortTuning<std::uint64_t, std::uint64_t> : KernelShape<128, 16> {};
template <> struct TileSortTuning<Key128, NoPayload>            : KernelShape<256, 16> {};
template <> struct TileSortTuning<Key128, std::uint32_t>        : KernelShape<256, 16> {};
template <> struct TileSortTuning<Key128, std::uint64_t>        : KernelShape<256, 16> {};

// Merge pass. Two resident blocks per multiprocessor measured best. Items per thread: 32 for 32-bit
// keys alone (their merge is bound by instructions per key, and a longer serial merge spreads the
// per-tile work); otherwise the largest of 16, 8, 4 whose tile keeps one stage of shared memory
// (keys and payloads) within 32 KiB, or 48 KiB for 8 and 4.
//                  key            payload                   threads  items  min blocks
template <> struct MergeTuning<std::uint32_t, NoPayload>     : MergeShape<256, 32, 2> {};
template <> struct MergeTuning<std::uint32_t, std::uint32_t> : MergeShape<256, 16, 2> {};
template <> struct MergeTuning<std::uint32_t, std::uint64_t> : MergeShape<256, 8, 2> {};
template <> struct MergeTuning<std::uint64_t, NoPayload>     : MergeShape<256, 16, 2> {};
template <> struct MergeTuning<std::uint64_t, std::uint32_t> : MergeShape<256, 8, 2> {};
template <> struct MergeTuning<std::uint64_t, std::uint64_t> : MergeShape<256, 8, 2> {};
template <> struct MergeTuning<Key128, NoPayload>            : MergeShape<256, 8, 2> {};
template <> struct MergeTuning<Key128, std::uint32_t>        : MergeShape<256, 8, 2> {};
template <> struct MergeTuning<Key128, std::uint64_t>        : MergeShape<256, 8, 2> {};

// The policies of a sort of Key with Payload (DeviceSorter's).
template <class Key, class Payload>
using TunedTileSortPolicy = TileSortPolicy<Key, Payload, TileSortTuning<Key, Payload>::kThreads,
                                           TileSortTuning<Key, Payload>::kItemsPerThread>;
template <class Key, class Payload>
using TunedMergePolicy =
    MergePolicy<Key, Payload, MergeTuning<Key, Payload>::kThreads, MergeTuning<Key, Payload>::kItemsPerThread,
                MergeTuning<Key, Payload>::kMinBlocksPerMultiprocessor>;

}  // namespace gpusort::gpu::detail
