// Block level: BlockLoad, a block's loads of a tile from device memory, striped so that they are
// coalesced: into registers, or asynchronously into shared memory element by element or in whole
// 16-byte pieces.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "gpu/block/async_copy.cuh"
#include "gpu/block/tile_arrangement.cuh"
#include "gpu/no_payload.hpp"

namespace gpusort::gpu::detail {

template <int kThreads, int kItems>
struct BlockLoad {
    using Arrangement = TileArrangement<kThreads, kItems>;

    // values[r] = in[begin + rank] for this thread's striped ranks below count, `fill` past it.
    // values: an array of kItems, or anything indexed like one.
    template <class T, class Values>
    __device__ __forceinline__ static void load_striped(const T* in, std::int64_t begin, int count, T fill,
                                                        Values&& values) {
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int rank = Arrangement::striped_rank(r);
            values[r] = rank < count ? in[begin + rank] : fill;
        }
    }

    // Starts copying two pieces of `in`, a_count elements from a_offset then count - a_count from
    // b_offset, one after the other to shared[0, count), striped; and, unless Companion is NoPayload,
    // the companions at the same offsets of companions_in to shared_companions.
    template <class T, class Companion>
    __device__ __forceinline__ static void start_striped_copy(const T* in, const Companion* companions_in,
                                                              std::int64_t a_offset, std::int64_t b_offset,
                                                              int a_count, int count, T* shared,
                                                              Companion* shared_companions) {
        const T* const a = in + a_offset;
        const T* const b = in + b_offset - a_count;
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const int i = Arrangement::striped_rank(r);
            if (i < count) {
                start_async_copy(shared + i, (i < a_count ? a : b) + i);
                if constexpr (kIsPayload<Companion>) {
                    const std::int64_t source = i < a_count ? a_offset + i : b_offset + (i - a_count);
                    start_async_copy(shared_companions + i, companions_in + source);
                }
            }
        }
    }

    // Starts copying in[0, count) to shared[0, count), with shared at the same position within 16
    // bytes as in: whole 16-byte pieces, single elements at the two ends.
    template <class T>
    __device__ __forceinline__ static void start_aligned_copy(const T* in, int count, T* shared) {
        constexpr int kPerVector = 16 / static_cast<int>(sizeof(T));
        const int t = static_cast<int>(threadIdx.x);
        const int head = min((kPerVector - position_in_16_bytes(in)) & (kPerVector - 1), count);
        const int vectors = (count - head) / kPerVector;
        const int tail_begin = head + vectors * kPerVector;
        for (int v = t; v < vectors; v += kThreads) {
            __pipeline_memcpy_async(shared + head + v * kPerVector, in + head + v * kPerVector, 16);
        }
        if (t < head) start_async_copy(shared + t, in + t);
        if (t < count - tail_begin) start_async_copy(shared + tail_begin + t, in + tail_begin + t);
    }
};

}  // namespace gpusort::gpu::detail
