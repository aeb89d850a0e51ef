// Block level: where the inputs of one output tile of a merge pass lie. Sorted runs of run_length
// keys are merged in pairs (run 2p with run 2p+1); the output is cut into tiles, and every tile lies
// inside one merged pair, so a tile is made of a piece of the pair's first run (a) and a piece of its
// second (b). splits[tile], found by merge_split_kernel, says how many keys of run a come before the
// tile; from it and the next tile's split follow the two pieces (MergeTile), and where a block puts
// them in a shared-memory stage (StagePlacement).
#pragma once

#include <cstdint>

#include "gpu/block/async_copy.cuh"

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

// Where a tile's piece of run a and piece of run b start in a shared-memory stage. With 16-byte
// copies (kVector) each piece sits at the same position within 16 bytes as in device memory.
struct StagePlacement {
    int a_begin;
    int b_begin;
};

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

}  // namespace gpusort::gpu::detail
