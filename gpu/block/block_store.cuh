// Block level: a block's stores of a tile to device memory, striped so that they are coalesced.
// BlockStore stores items a thread already holds striped. BlockTransposedStore stores items held
// blocked (as a sort or a merge leaves them): it turns them around through shared memory first, and
// is the one place where a tile goes blocked -> shared memory -> striped.
#pragma once

#include <cstdint>

#include "gpu/block/tile_arrangement.cuh"
#include "gpu/no_payload.hpp"

namespace gpusort::gpu::detail {

template <int kThreads, int kItems>
struct BlockStore {
    // out[begin + rank] = values[r] for this thread's striped ranks below count.
    template <class T>
    __device__ __forceinline__ static void store_striped(T* out, std::int64_t begin, int count,
                                                         const T (&values)[kItems]) {
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int rank = TileArrangement<kThreads, kItems>::striped_rank(r);
            if (rank < count) out[begin + rank] = values[r];
        }
    }
};

// The transposed store of a tile of keys, each with a companion (a payload, or the key's position in
// its tile; NoPayload for none), through shared arrays with room for the whole tile (swizzled, see
// tile_arrangement.cuh): write_blocked, a block barrier, store_striped. With kVectors (keys alone of
// 4 or 8 bytes) the keys go through shared memory in 16-byte pieces, and out to device memory so too
// when the tile is whole and its output 16-byte aligned.
template <int kThreads, int kItems, class Key, class Companion = NoPayload, bool kVectors = false>
class BlockTransposedStore {
public:
    static constexpr bool kWithCompanion = kIsPayload<Companion>;
    static constexpr int kPerVector = 16 / static_cast<int>(sizeof(Key));
    static constexpr int kTile = kThreads * kItems;
    static_assert(!kVectors || (!kWithCompanion && (sizeof(Key) == 4 || sizeof(Key) == 8)),
                  "16-byte pieces: keys alone of 4 or 8 bytes");
    static_assert(!kVectors || (kItems % kPerVector == 0 && kTile / kPerVector % kThreads == 0),
                  "whole 16-byte pieces per thread");

    __device__ __forceinline__ BlockTransposedStore(Key* shared_keys, Companion* shared_companions)
        : shared_keys_(shared_keys), shared_companions_(shared_companions) {}

    // Writes all of this thread's blocked keys and companions into shared memory. keys, companions:
    // arrays of kItems, or anything indexed like one.
    template <class Keys, class Companions>
    __device__ __forceinline__ void write_blocked(const Keys& keys, const Companions& companions) const {
        write<false>(keys, companions, 0);
    }
    // The same for ranks below count only (the items past it may be undefined); with kVectors, whole
    // 16-byte pieces.
    template <class Keys, class Companions>
    __device__ __forceinline__ void write_blocked(const Keys& keys, const Companions& companions, int count) const {
        write<true>(keys, companions, count);
    }

    // After a barrier that follows write_blocked: for this thread's striped ranks below count,
    // keys_out[out_begin + rank] = the key of that rank, and take_companion(r, rank, its companion).
    template <class TakeCompanion>
    __device__ __forceinline__ void store_striped(Key* keys_out, std::int64_t out_begin, int count,
                                                  TakeCompanion take_companion) const {
        if constexpr (kVectors) {
            store_striped_vectors(keys_out + out_begin, count);
        } else {
#pragma unroll
            for (int r = 0; r < kItems; ++r) {
                const int rank = Arrangement::striped_rank(r);
                if (rank < count) {
                    keys_out[out_begin + rank] = shared_keys_[swizzled_index<sizeof(Key)>(rank)];
                    if constexpr (kWithCompanion) {
                        take_companion(r, rank, shared_companions_[swizzled_index<sizeof(Companion)>(rank)]);
                    }
                }
            }
        }
    }
    // The same storing the companions to companions_out[out_begin + rank].
    __device__ __forceinline__ void store_striped(Key* keys_out, Companion* companions_out, std::int64_t out_begin,
                                                  int count) const {
        store_striped(keys_out, out_begin, count, [=](int, int rank, const Companion& companion) {
            companions_out[out_begin + rank] = companion;
        });
    }

private:
    using Arrangement = TileArrangement<kThreads, kItems>;
    using Vector = uint4;

    template <bool kBelowCountOnly, class Keys, class Companions>
    __device__ __forceinline__ void write(const Keys& keys, const Companions& companions, int count) const {
        if constexpr (kVectors) {
            Vector* const vectors = reinterpret_cast<Vector*>(shared_keys_);
#pragma unroll
            for (int j = 0; j < kItems / kPerVector; ++j) {
                union {
                    Key keys[kPerVector];
                    Vector vector;
                } packed;
#pragma unroll
                for (int e = 0; e < kPerVector; ++e) packed.keys[e] = keys[j * kPerVector + e];
                vectors[swizzled_index<16>(static_cast<int>(threadIdx.x) * (kItems / kPerVector) + j)] = packed.vector;
            }
        } else {
#pragma unroll
            for (int s = 0; s < kItems; ++s) {
                const int rank = Arrangement::blocked_rank(s);
                if (!kBelowCountOnly || rank < count) {
                    shared_keys_[swizzled_index<sizeof(Key)>(rank)] = keys[s];
                    if constexpr (kWithCompanion) {
                        shared_companions_[swizzled_index<sizeof(Companion)>(rank)] = companions[s];
                    }
                }
            }
        }
    }

    __device__ __forceinline__ void store_striped_vectors(Key* keys_out, int count) const {
        const Vector* const vectors = reinterpret_cast<const Vector*>(shared_keys_);
        if (count == kTile && (reinterpret_cast<std::uintptr_t>(keys_out) & 15) == 0) {
#pragma unroll
            for (int r = 0; r < kTile / kPerVector / kThreads; ++r) {
                const int v = r * kThreads + static_cast<int>(threadIdx.x);
                *reinterpret_cast<Vector*>(keys_out + v * kPerVector) = vectors[swizzled_index<16>(v)];
            }
        } else {
#pragma unroll
            for (int r = 0; r < kItems; ++r) {
                const int rank = Arrangement::striped_rank(r);
                if (rank < count) {
                    const int vector = swizzled_index<16>(rank / kPerVector);
                    keys_out[rank] = shared_keys_[vector * kPerVector + rank % kPerVector];
                }
            }
        }
    }

    Key* shared_keys_;
    Companion* shared_companions_;
};

}  // namespace gpusort::gpu::detail
