// Kernels of the chunk engine's record mode (see record_keys.hpp): normalised key words extracted
// from fixed-size records by the key rules (record_key of src/keys/key_rules.hpp), and the gather
// of records or key-prefixed entries through a permutation.
#include "gpu/gpu_error.hpp"
#include "gpu/key128.hpp"
#include "gpu/record_keys.hpp"
#include "src/keys/key_dispatch.hpp"

#include <cstdint>
#include <string>

namespace gpusort::gpu {

namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 8192;

unsigned blocks_for(std::size_t work) {
    const std::size_t blocks = (work + kThreads - 1) / kThreads;
    return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

// Word J of a key of KW words, 0 past its end.
template <std::size_t J, std::size_t KW>
__device__ __forceinline__ std::uint64_t word_or_zero(const RecordKey<KW>& key) {
    if constexpr (J < KW) return key.word[J];
    else return 0;
}

template <std::size_t KW>
__global__ void key_words_kernel(const unsigned char* __restrict__ records, std::size_t n,
                                 __grid_constant__ const FixedKeySpec spec, std::uint64_t* __restrict__ words) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const RecordKey<KW> key = record_key<KW>(records + i * spec.record_size, spec);
#pragma unroll
        for (std::size_t j = 0; j < KW; ++j) words[i * KW + j] = key.word[j];
    }
}

template <std::size_t KW, std::size_t First>
__global__ void sort_keys_kernel(const unsigned char* __restrict__ records, std::size_t n,
                                 __grid_constant__ const FixedKeySpec spec, const std::uint64_t* __restrict__ perm,
                                 bool narrow, void* __restrict__ keys, std::uint64_t* __restrict__ index) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const std::size_t r = perm ? perm[i] : i;
        const RecordKey<KW> key = record_key<KW>(records + r * spec.record_size, spec);
        if (narrow) static_cast<std::uint64_t*>(keys)[i] = word_or_zero<First>(key);
        else static_cast<Key128*>(keys)[i] = Key128{word_or_zero<First>(key), word_or_zero<First + 1>(key)};
        if (index) index[i] = i;
    }
}

// out element e: record perm[e], `skip` units into it; everything counted in units of T.
template <class T, class I>
__global__ void gather_kernel(const T* __restrict__ records, const std::uint64_t* __restrict__ perm,
                              T* __restrict__ out, I total, I record_units, I out_units, I skip) {
    const I stride = I(gridDim.x) * blockDim.x;
    for (I j = I(blockIdx.x) * blockDim.x + threadIdx.x; j < total; j += stride) {
        const I e = j / record_units, k = j - e * record_units;
        out[e * out_units + skip + k] = records[perm[e] * record_units + k];
    }
}

// The key words of record perm[e] at the start of out element e, native-endian, in units of T.
template <std::size_t KW, class T>
__global__ void entry_keys_kernel(const unsigned char* __restrict__ records, const std::uint64_t* __restrict__ perm,
                                  std::size_t count, __grid_constant__ const FixedKeySpec spec, T* __restrict__ out,
                                  std::size_t out_units) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const RecordKey<KW> key = record_key<KW>(records + perm[i] * spec.record_size, spec);
        T* entry = out + i * out_units;
#pragma unroll
        for (std::size_t q = 0; q < KW * 8 / sizeof(T); ++q)
            entry[q] = T(key.word[q * sizeof(T) / 8] >> (8 * (q * sizeof(T) % 8)));
    }
}

template <std::size_t KW, std::size_t First>
void launch_sort_keys(const unsigned char* records, std::size_t n, const FixedKeySpec& spec,
                      const std::uint64_t* perm, bool narrow, void* keys, std::uint64_t* index, cudaStream_t stream) {
    sort_keys_kernel<KW, First><<<blocks_for(n), kThreads, 0, stream>>>(records, n, spec, perm, narrow, keys, index);
    check_launch("sort_keys_kernel");
}

template <std::size_t KW>
void launch_sort_keys(const unsigned char* records, std::size_t n, const FixedKeySpec& spec,
                      const std::uint64_t* perm, unsigned first_word, bool narrow, void* keys, std::uint64_t* index,
                      cudaStream_t stream) {
    if (first_word == 0) return launch_sort_keys<KW, 0>(records, n, spec, perm, narrow, keys, index, stream);
    if constexpr (KW > 2) {
        if (first_word == 2) return launch_sort_keys<KW, 2>(records, n, spec, perm, narrow, keys, index, stream);
    }
    throw GpuError(cudaErrorInvalidValue, "record sort keys start at word 0, or at word 2 of keys of 3 or 4 words");
}

template <std::size_t KW>
void launch_key_words(const unsigned char* records, std::size_t n, const FixedKeySpec& spec, std::uint64_t* words,
                      cudaStream_t stream) {
    key_words_kernel<KW><<<blocks_for(n), kThreads, 0, stream>>>(records, n, spec, words);
    check_launch("key_words_kernel");
}

template <class T, class I>
void launch_gather(const std::byte* records, const std::uint64_t* perm, std::size_t count, std::size_t record_size,
                   std::size_t out_width, std::size_t skip_bytes, std::byte* out, cudaStream_t stream) {
    const std::size_t total = count * (record_size / sizeof(T));
    gather_kernel<T, I><<<blocks_for(total), kThreads, 0, stream>>>(
        reinterpret_cast<const T*>(records), perm, reinterpret_cast<T*>(out), I(total), I(record_size / sizeof(T)),
        I(out_width / sizeof(T)), I(skip_bytes / sizeof(T)));
    check_launch("gather_kernel");
}

template <class T>
void launch_gather(const std::byte* records, const std::uint64_t* perm, std::size_t count, std::size_t record_size,
                   std::size_t out_width, std::size_t skip_bytes, std::byte* out, cudaStream_t stream) {
    // 32-bit unit indices when every index (and index + grid stride) fits.
    if (count * (out_width / sizeof(T)) < (std::size_t{1} << 31))
        launch_gather<T, std::uint32_t>(records, perm, count, record_size, out_width, skip_bytes, out, stream);
    else
        launch_gather<T, std::uint64_t>(records, perm, count, record_size, out_width, skip_bytes, out, stream);
}

template <std::size_t KW, class T>
void launch_entry_keys(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                       const FixedKeySpec& spec, std::size_t out_width, std::byte* out, cudaStream_t stream) {
    entry_keys_kernel<KW, T><<<blocks_for(count), kThreads, 0, stream>>>(
        reinterpret_cast<const unsigned char*>(records), perm, count, spec, reinterpret_cast<T*>(out),
        out_width / sizeof(T));
    check_launch("entry_keys_kernel");
}

template <class T>
void launch_entry_keys(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                       const FixedKeySpec& spec, std::size_t out_width, std::byte* out, cudaStream_t stream) {
    with_key_words(spec.key_words(), [&](auto words) {
        launch_entry_keys<decltype(words)::value, T>(records, perm, count, spec, out_width, out, stream);
    });
}

template <class T>
void gather_in_units(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                     const FixedKeySpec& spec, bool entries, std::byte* out, cudaStream_t stream) {
    const std::size_t key_part = entries ? std::size_t{8} * spec.key_words() : 0;
    const std::size_t out_width = key_part + spec.record_size;
    launch_gather<T>(records, perm, count, spec.record_size, out_width, key_part, out, stream);
    if (entries) launch_entry_keys<T>(records, perm, count, spec, out_width, out, stream);
}

}  // namespace

void extract_record_key_words(const std::byte* records, std::size_t n, const FixedKeySpec& spec,
                              std::uint64_t* words, cudaStream_t stream) {
    if (n == 0) return;
    const auto* bytes = reinterpret_cast<const unsigned char*>(records);
    with_key_words(spec.key_words(), [&](auto key_words) {
        launch_key_words<decltype(key_words)::value>(bytes, n, spec, words, stream);
    });
}

void extract_record_sort_keys(const std::byte* records, std::size_t n, const FixedKeySpec& spec,
                              const std::uint64_t* perm, unsigned first_word, bool narrow, void* keys,
                              std::uint64_t* index, cudaStream_t stream) {
    if (n == 0) return;
    const auto* bytes = reinterpret_cast<const unsigned char*>(records);
    with_key_words(spec.key_words(), [&](auto words) {
        launch_sort_keys<decltype(words)::value>(bytes, n, spec, perm, first_word, narrow, keys, index, stream);
    });
}

void gather_records(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                    const FixedKeySpec& spec, bool entries, std::byte* out, cudaStream_t stream) {
    if (count == 0) return;
    // The widest unit that keeps every record and entry aligned (entries differ by 8 * key_words).
    switch (spec.record_size % 8) {
    case 0: gather_in_units<std::uint64_t>(records, perm, count, spec, entries, out, stream); break;
    case 4: gather_in_units<std::uint32_t>(records, perm, count, spec, entries, out, stream); break;
    case 2:
    case 6: gather_in_units<std::uint16_t>(records, perm, count, spec, entries, out, stream); break;
    default: gather_in_units<std::uint8_t>(records, perm, count, spec, entries, out, stream); break;
    }
}

}  // namespace gpusort::gpu
