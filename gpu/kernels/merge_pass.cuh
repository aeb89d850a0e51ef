// One merge pass: sorted runs of run_length keys are merged in pairs (run 2p with run 2p+1) into
// runs of 2*run_length. The output is cut into tiles of MergePolicy::kTileSize keys, one block
// each; since every tile lies inside one merged pair, a block merges the pieces of two runs that
// make up its tile. merge_split_kernel first finds, by merge-path search along each tile's start
// diagonal, how many keys of the tile's first run come before the tile; so every block gets an
// equal share of every merge whatever the data. Blocks read and write device memory coalesced and
// merge in shared memory, each thread producing kItemsPerThread consecutive outputs. Blocks stay
// resident and take tile after tile, loading the next while merging the current one.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/async_copy.cuh"
#include "kernels/key_ops.cuh"
#include "kernels/merge_path.cuh"
#include "kernels/shared_swizzle.cuh"
#include "kernels/sort_policy.cuh"

namespace gpusort::gpu::detail {

// The pair of runs that output position `position` belongs to: a = [begin, begin+a_len),
// b = [begin+a_len, begin+a_len+b_len); b is empty for an unpaired last run.
struct MergePair {
    std::int64_t begin;
    std::int64_t a_len;
    std::int64_t b_len;
};

__device__ __forceinline__ MergePair merge_pair_of(std::int64_t position, std::int64_t n, std::int64_t run_length) {
    const std::int64_t pair_length = 2 * run_length;
    MergePair pair;
    pair.begin = position / pair_length * pair_length;
    const std::int64_t rest = n - pair.begin;
    pair.a_len = rest < run_length ? rest : run_length;
    const std::int64_t rest_b = rest - pair.a_len;
    pair.b_len = rest_b < run_length ? rest_b : run_length;
    return pair;
}

// splits[tile] = how many keys of run a of the tile's pair come before the tile's first output.
template <class Key>
__global__ void __launch_bounds__(MergeSplitPolicy::kThreads)
    merge_split_kernel(const Key* keys, std::int64_t n, std::int64_t run_length, std::int64_t tile_size,
                       std::int64_t tile_count, std::int64_t* splits) {
    const std::int64_t tile = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (tile >= tile_count) return;
    const std::int64_t out_begin = tile * tile_size;
    const MergePair pair = merge_pair_of(out_begin, n, run_length);
    splits[tile] = merge_path_split(keys + pair.begin, pair.a_len, keys + pair.begin + pair.a_len, pair.b_len,
                                    out_begin - pair.begin);
}

// Where one output tile's inputs are: a_count keys of run a from a_offset, then b_count keys of
// run b from b_offset (offsets into the whole array).
struct MergeTile {
    std::int64_t out_begin;
    std::int64_t a_offset;
    std::int64_t b_offset;
    int a_count;
    int b_count;
};

// The splits a tile needs: its own, and the next tile's (unless it is the last tile).
struct TileSplits {
    std::int64_t begin;
    std::int64_t end;
};

__device__ __forceinline__ TileSplits load_tile_splits(const std::int64_t* splits, std::int64_t tile,
                                                       std::int64_t tile_count) {
    TileSplits result;
    result.begin = splits[tile];
    result.end = tile + 1 < tile_count ? splits[tile + 1] : 0;
    return result;
}

template <int kTile>
__device__ __forceinline__ MergeTile locate_merge_tile(std::int64_t tile, const TileSplits& tile_splits,
                                                       std::int64_t n, std::int64_t run_length) {
    const std::int64_t out_begin = tile * kTile;
    const std::int64_t out_end = out_begin + kTile < n ? out_begin + kTile : n;
    const MergePair pair = merge_pair_of(out_begin, n, run_length);
    const std::int64_t diag_begin = out_begin - pair.begin;
    const std::int64_t diag_end = out_end - pair.begin;
    // A tile that ends its pair (the last tile always does) takes the rest of run a.
    const std::int64_t a_begin = tile_splits.begin;
    const std::int64_t a_end = diag_end == pair.a_len + pair.b_len ? pair.a_len : tile_splits.end;
    const std::int64_t b_begin = diag_begin - a_begin;
    const std::int64_t b_end = diag_end - a_end;
    MergeTile result;
    result.out_begin = out_begin;
    result.a_offset = pair.begin + a_begin;
    result.b_offset = pair.begin + pair.a_len + b_begin;
    result.a_count = static_cast<int>(a_end - a_begin);
    result.b_count = static_cast<int>(b_end - b_begin);
    return result;
}

// Keys alone of 4 or 8 bytes move between device and shared memory in 16-byte pieces.
template <class Key, class Payload>
inline constexpr bool kVectorMerge = !kIsPayload<Payload> && (sizeof(Key) == 4 || sizeof(Key) == 8);

// Where a tile's piece of run a and piece of run b start in a shared-memory stage. With 16-byte
// copies each piece sits at the same position within 16 bytes as in device memory.
struct StagePlacement {
    int a_begin;
    int b_begin;
};

template <class Key>
__device__ __forceinline__ int position_in_16_bytes(const Key* pointer) {
    return static_cast<int>((reinterpret_cast<std::uintptr_t>(pointer) & 15) / sizeof(Key));
}

template <bool kVector, class Key>
__device__ __forceinline__ StagePlacement place_tile(const MergeTile& tile, const Key* keys_in) {
    StagePlacement placement;
    if constexpr (kVector) {
        constexpr int kPerVector = 16 / static_cast<int>(sizeof(Key));
        placement.a_begin = position_in_16_bytes(keys_in + tile.a_offset);
        const int a_end = placement.a_begin + tile.a_count;
        placement.b_begin = a_end + ((position_in_16_bytes(keys_in + tile.b_offset) - a_end) & (kPerVector - 1));
    } else {
        placement.a_begin = 0;
        placement.b_begin = tile.a_count;
    }
    return placement;
}

// Starts copying source[0, count) to destination[0, count) in shared memory, destination at the
// same position within 16 bytes as source: whole 16-byte pieces, single keys at the two ends.
template <int kThreads, class Key>
__device__ __forceinline__ void start_vector_copy(Key* destination, const Key* source, int count) {
    constexpr int kPerVector = 16 / static_cast<int>(sizeof(Key));
    const int t = static_cast<int>(threadIdx.x);
    const int head = min((kPerVector - position_in_16_bytes(source)) & (kPerVector - 1), count);
    const int vectors = (count - head) / kPerVector;
    const int tail_begin = head + vectors * kPerVector;
    for (int v = t; v < vectors; v += kThreads) {
        __pipeline_memcpy_async(destination + head + v * kPerVector, source + head + v * kPerVector, 16);
    }
    if (t < head) start_async_copy(destination + t, source + t);
    if (t < count - tail_begin) start_async_copy(destination + tail_begin + t, source + tail_begin + t);
}

// Starts the asynchronous, coalesced copy of a tile's inputs into one shared-memory stage.
template <int kThreads, int kItems, bool kVector, bool kWithPayload, class Key, class PayloadStorage>
__device__ __forceinline__ void start_tile_load(const MergeTile& tile, const StagePlacement& placement,
                                                const Key* keys_in, const PayloadStorage* payload_in,
                                                Key* stage_keys, PayloadStorage* stage_payload) {
    if constexpr (kVector) {
        start_vector_copy<kThreads>(stage_keys + placement.a_begin, keys_in + tile.a_offset, tile.a_count);
        start_vector_copy<kThreads>(stage_keys + placement.b_begin, keys_in + tile.b_offset, tile.b_count);
    } else {
        const int t = static_cast<int>(threadIdx.x);
        const int count = tile.a_count + tile.b_count;
        const Key* const a_keys = keys_in + tile.a_offset;
        const Key* const b_keys = keys_in + tile.b_offset - tile.a_count;
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int i = r * kThreads + t;
            if (i < count) {
                start_async_copy(stage_keys + i, (i < tile.a_count ? a_keys : b_keys) + i);
                if constexpr (kWithPayload) {
                    const std::int64_t source = i < tile.a_count ? tile.a_offset + i : tile.b_offset + (i - tile.a_count);
                    start_async_copy(stage_payload + i, payload_in + source);
                }
            }
        }
    }
}

// Persistent blocks: block b merges tiles b, b + gridDim.x, ... While it merges one tile, the copy
// of its next tile into the other shared-memory stage is under way.
template <class Key, class Payload, class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerMultiprocessor)
    merge_pass_kernel(const Key* keys_in, const Payload* payload_in, Key* keys_out, Payload* payload_out,
                      std::int64_t n, std::int64_t run_length, const std::int64_t* splits, std::int64_t tile_count) {
    constexpr int kThreads = Policy::kThreads;
    constexpr int kItems = Policy::kItemsPerThread;
    constexpr int kTile = Policy::kTileSize;
    constexpr int kStageElements = Policy::kStageElements;
    constexpr bool kWithPayload = kIsPayload<Payload>;
    constexpr bool kVector = kVectorMerge<Key, Payload>;
    constexpr int kPerVector = 16 / static_cast<int>(sizeof(Key));
    static_assert(Policy::kStages == 2, "two shared-memory stages");
    static_assert(!kVector || (kItems % kPerVector == 0 && kTile / kPerVector % kThreads == 0),
                  "whole 16-byte pieces per thread");
    using PayloadStorage = std::conditional_t<kWithPayload, Payload, std::uint32_t>;
    using Vector = uint4;

    // Dynamic shared memory (Policy::kSharedBytes): keys of stage 0 and 1, then payloads of 0 and 1.
    Key* const shared_keys = reinterpret_cast<Key*>(dynamic_shared_memory());
    PayloadStorage* const shared_payload =
        reinterpret_cast<PayloadStorage*>(dynamic_shared_memory() + 2 * sizeof(Key) * kStageElements);
    const PayloadStorage* const payload_source = reinterpret_cast<const PayloadStorage*>(payload_in);
    PayloadStorage* const payload_destination = reinterpret_cast<PayloadStorage*>(payload_out);

    const int t = static_cast<int>(threadIdx.x);
    std::int64_t tile = blockIdx.x;
    if (tile >= tile_count) return;

    MergeTile current = locate_merge_tile<kTile>(tile, load_tile_splits(splits, tile, tile_count), n, run_length);
    StagePlacement placement = place_tile<kVector>(current, keys_in);
    start_tile_load<kThreads, kItems, kVector, kWithPayload>(current, placement, keys_in, payload_source,
                                                             shared_keys, shared_payload);
    commit_async_copies();
    // The splits of the next tile are read one tile ahead, so that their latency is hidden too.
    TileSplits next_splits{};
    if (tile + gridDim.x < tile_count) next_splits = load_tile_splits(splits, tile + gridDim.x, tile_count);

    for (int stage = 0; tile < tile_count; tile += gridDim.x, stage ^= 1) {
        Key* const keys = shared_keys + stage * kStageElements;
        PayloadStorage* const payload = shared_payload + stage * kStageElements;

        // Start loading the next tile into the other stage, then wait for this one.
        const std::int64_t next_tile = tile + gridDim.x;
        MergeTile next{};
        StagePlacement next_placement{};
        if (next_tile < tile_count) {
            next = locate_merge_tile<kTile>(next_tile, next_splits, n, run_length);
            next_placement = place_tile<kVector>(next, keys_in);
            start_tile_load<kThreads, kItems, kVector, kWithPayload>(
                next, next_placement, keys_in, payload_source, shared_keys + (stage ^ 1) * kStageElements,
                shared_payload + (stage ^ 1) * kStageElements);
            if (next_tile + gridDim.x < tile_count) {
                next_splits = load_tile_splits(splits, next_tile + gridDim.x, tile_count);
            }
        }
        commit_async_copies();
        wait_async_copies<1>();
        __syncthreads();

        // This thread's outputs: ranks first_rank .. first_rank+kItems-1 of the tile. Reads may go
        // one key past the end of a piece (into the stage's slack), never further.
        const int a_count = current.a_count;
        const int b_count = current.b_count;
        const int count = a_count + b_count;
        const Key* const a_keys = keys + placement.a_begin;
        const Key* const b_keys = keys + placement.b_begin;
        const int first_rank = t * kItems < count ? t * kItems : count;
        int a_next = merge_path_split(a_keys, a_count, b_keys, b_count, first_rank);
        int b_next = first_rank - a_next;
        Key a_key = a_keys[a_next];
        Key b_key = b_keys[b_next];
        Key merged_keys[kItems];
        int merged_from[kItems];
#pragma unroll
        for (int s = 0; s < kItems; ++s) {
            const bool take_a = a_next < a_count && (b_next >= b_count || !key_less(b_key, a_key));
            merged_keys[s] = take_a ? a_key : b_key;
            if constexpr (kWithPayload) merged_from[s] = take_a ? a_next : a_count + b_next;
            if (take_a) {
                a_next = min(a_next + 1, a_count);
                a_key = a_keys[a_next];
            } else {
                b_next = min(b_next + 1, b_count);
                b_key = b_keys[b_next];
            }
        }
        PayloadStorage merged_payload[kItems];
        if constexpr (kWithPayload) {
#pragma unroll
            for (int s = 0; s < kItems; ++s) {
                if (first_rank + s < count) merged_payload[s] = payload[merged_from[s]];
            }
        }
        __syncthreads();

        // Turn the outputs around in this stage so that the stores are coalesced.
        if constexpr (kVector) {
            Vector* const vectors = reinterpret_cast<Vector*>(keys);
#pragma unroll
            for (int j = 0; j < kItems / kPerVector; ++j) {
                union {
                    Key keys[kPerVector];
                    Vector vector;
                } packed;
#pragma unroll
                for (int e = 0; e < kPerVector; ++e) packed.keys[e] = merged_keys[j * kPerVector + e];
                vectors[swizzled_index<16>(t * (kItems / kPerVector) + j)] = packed.vector;
            }
            __syncthreads();
            Key* const out = keys_out + current.out_begin;
            if (count == kTile && (reinterpret_cast<std::uintptr_t>(out) & 15) == 0) {
#pragma unroll
                for (int r = 0; r < kTile / kPerVector / kThreads; ++r) {
                    const int v = r * kThreads + t;
                    *reinterpret_cast<Vector*>(out + v * kPerVector) = vectors[swizzled_index<16>(v)];
                }
            } else {
#pragma unroll
                for (int r = 0; r < kItems; ++r) {
                    const int rank = r * kThreads + t;
                    if (rank < count) {
                        out[rank] = keys[swizzled_index<16>(rank / kPerVector) * kPerVector + rank % kPerVector];
                    }
                }
            }
        } else {
#pragma unroll
            for (int s = 0; s < kItems; ++s) {
                const int rank = t * kItems + s;
                if (rank < count) {
                    keys[swizzled_index<sizeof(Key)>(rank)] = merged_keys[s];
                    if constexpr (kWithPayload) payload[swizzled_index<sizeof(Payload)>(rank)] = merged_payload[s];
                }
            }
            __syncthreads();
#pragma unroll
            for (int r = 0; r < kItems; ++r) {
                const int rank = r * kThreads + t;
                if (rank < count) {
                    keys_out[current.out_begin + rank] = keys[swizzled_index<sizeof(Key)>(rank)];
                    if constexpr (kWithPayload) {
                        payload_destination[current.out_begin + rank] =
                            payload[swizzled_index<sizeof(Payload)>(rank)];
                    }
                }
            }
        }
        // Everyone has read this stage before the next iteration starts loading into it.
        __syncthreads();
        current = next;
        placement = next_placement;
    }
}

}  // namespace gpusort::gpu::detail
