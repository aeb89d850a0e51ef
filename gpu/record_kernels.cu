// Kernels of the chunk engine's record mode (see record_keys.hpp): normalised key words extracted
// from fixed-size records, and the gather of records or key-prefixed entries through a permutation.
#include "gpu/gpu_error.hpp"
#include "gpu/key128.hpp"
#include "gpu/record_keys.hpp"

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

// The normalised key as a shift register of KW words: bytes enter at the least significant end of
// the last word and move towards the most significant end of word 0.
template <int KW>
struct KeyWords {
    std::uint64_t w[KW];

    __device__ __forceinline__ void clear() {
#pragma unroll
        for (int j = 0; j < KW; ++j) w[j] = 0;
    }
    // Appends the `len` (1 .. 8) low bytes of v, most significant first.
    __device__ __forceinline__ void push(std::uint64_t v, unsigned len) {
        const unsigned s = 8 * len;
        if (s == 64) {
#pragma unroll
            for (int j = 0; j < KW - 1; ++j) w[j] = w[j + 1];
            w[KW - 1] = v;
        } else {
#pragma unroll
            for (int j = 0; j < KW - 1; ++j) w[j] = (w[j] << s) | (w[j + 1] >> (64 - s));
            w[KW - 1] = (w[KW - 1] << s) | v;
        }
    }
    // Word J of the key, 0 past its end.
    template <int J>
    __device__ __forceinline__ std::uint64_t word() const {
        if constexpr (J < KW) return w[J];
        else return 0;
    }
};

// The normalised key of `record`, zero-padded by `pad` bytes to KW words.
template <int KW>
__device__ __forceinline__ void normalised_key(const unsigned char* __restrict__ record, const RecordKeyFormat& format,
                                               unsigned pad, KeyWords<KW>& key) {
    key.clear();
    for (std::uint32_t f = 0; f < format.field_count; ++f) {
        const RecordKeyField field = format.fields[f];
        const unsigned char* p = record + field.offset;
        if (field.kind == FieldKind::bytes) {
            const std::uint64_t flip = field.descending ? ~std::uint64_t{0} : 0;
            for (std::uint32_t b = 0; b < field.length;) {
                const unsigned len = field.length - b < 8 ? field.length - b : 8;
                std::uint64_t v = 0;
                for (unsigned i = 0; i < len; ++i) v = (v << 8) | p[b + i];
                const std::uint64_t mask = len == 8 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (8 * len)) - 1);
                key.push((v ^ flip) & mask, len);
                b += len;
            }
        } else {
            const unsigned len = field.length;
            std::uint64_t v = 0;
            for (unsigned i = 0; i < len; ++i) v = (v << 8) | p[field.big_endian ? i : len - 1 - i];
            const std::uint64_t mask = len == 8 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (8 * len)) - 1);
            const std::uint64_t sign = std::uint64_t{1} << (8 * len - 1);
            if (field.kind == FieldKind::signed_int) v ^= sign;
            else if (field.kind == FieldKind::floating) v = (v & sign) ? (~v & mask) : (v | sign);
            if (field.descending) v = ~v & mask;
            key.push(v, len);
        }
    }
    for (; pad >= 8; pad -= 8) key.push(0, 8);
    if (pad > 0) key.push(0, pad);
}

template <int KW>
__global__ void key_words_kernel(const unsigned char* __restrict__ records, std::size_t n,
                                 __grid_constant__ const RecordKeyFormat format, unsigned pad,
                                 std::uint64_t* __restrict__ words) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        KeyWords<KW> key;
        normalised_key<KW>(records + i * format.record_size, format, pad, key);
#pragma unroll
        for (int j = 0; j < KW; ++j) words[i * KW + j] = key.w[j];
    }
}

template <int KW, int First>
__global__ void sort_keys_kernel(const unsigned char* __restrict__ records, std::size_t n,
                                 __grid_constant__ const RecordKeyFormat format, unsigned pad,
                                 const std::uint64_t* __restrict__ perm, bool narrow, void* __restrict__ keys,
                                 std::uint64_t* __restrict__ index) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const std::size_t r = perm ? perm[i] : i;
        KeyWords<KW> key;
        normalised_key<KW>(records + r * format.record_size, format, pad, key);
        if (narrow) static_cast<std::uint64_t*>(keys)[i] = key.template word<First>();
        else static_cast<Key128*>(keys)[i] = Key128{key.template word<First>(), key.template word<First + 1>()};
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
template <int KW, class T>
__global__ void entry_keys_kernel(const unsigned char* __restrict__ records, const std::uint64_t* __restrict__ perm,
                                  std::size_t count, __grid_constant__ const RecordKeyFormat format, unsigned pad,
                                  T* __restrict__ out, std::size_t out_units) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        KeyWords<KW> key;
        normalised_key<KW>(records + perm[i] * format.record_size, format, pad, key);
        T* entry = out + i * out_units;
#pragma unroll
        for (int q = 0; q < int(KW * 8 / sizeof(T)); ++q)
            entry[q] = T(key.w[q * sizeof(T) / 8] >> (8 * (q * sizeof(T) % 8)));
    }
}

[[noreturn]] void refuse(const std::string& why) {
    throw GpuError(cudaErrorInvalidValue, "record key format: " + why);
}

unsigned key_pad(const RecordKeyFormat& format) { return format.key_words() * 8 - format.key_bytes(); }

template <int KW, int First>
void launch_sort_keys(const unsigned char* records, std::size_t n, const RecordKeyFormat& format,
                      const std::uint64_t* perm, bool narrow, void* keys, std::uint64_t* index, cudaStream_t stream) {
    sort_keys_kernel<KW, First><<<blocks_for(n), kThreads, 0, stream>>>(records, n, format, key_pad(format), perm,
                                                                         narrow, keys, index);
    check_launch("sort_keys_kernel");
}

template <int KW>
void launch_sort_keys(const unsigned char* records, std::size_t n, const RecordKeyFormat& format,
                      const std::uint64_t* perm, unsigned first_word, bool narrow, void* keys, std::uint64_t* index,
                      cudaStream_t stream) {
    if (first_word == 0) return launch_sort_keys<KW, 0>(records, n, format, perm, narrow, keys, index, stream);
    if constexpr (KW > 2) {
        if (first_word == 2) return launch_sort_keys<KW, 2>(records, n, format, perm, narrow, keys, index, stream);
    }
    refuse("sort keys start at word 0, or at word 2 of keys of 3 or 4 words");
}

template <int KW>
void launch_key_words(const unsigned char* records, std::size_t n, const RecordKeyFormat& format,
                      std::uint64_t* words, cudaStream_t stream) {
    key_words_kernel<KW><<<blocks_for(n), kThreads, 0, stream>>>(records, n, format, key_pad(format), words);
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

template <int KW, class T>
void launch_entry_keys(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                       const RecordKeyFormat& format, std::size_t out_width, std::byte* out, cudaStream_t stream) {
    entry_keys_kernel<KW, T><<<blocks_for(count), kThreads, 0, stream>>>(
        reinterpret_cast<const unsigned char*>(records), perm, count, format, key_pad(format),
        reinterpret_cast<T*>(out), out_width / sizeof(T));
    check_launch("entry_keys_kernel");
}

template <class T>
void launch_entry_keys(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                       const RecordKeyFormat& format, std::size_t out_width, std::byte* out, cudaStream_t stream) {
    switch (format.key_words()) {
    case 1: launch_entry_keys<1, T>(records, perm, count, format, out_width, out, stream); break;
    case 2: launch_entry_keys<2, T>(records, perm, count, format, out_width, out, stream); break;
    case 3: launch_entry_keys<3, T>(records, perm, count, format, out_width, out, stream); break;
    default: launch_entry_keys<4, T>(records, perm, count, format, out_width, out, stream); break;
    }
}

template <class T>
void gather_in_units(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                     const RecordKeyFormat& format, bool entries, std::byte* out, cudaStream_t stream) {
    const std::size_t key_part = entries ? std::size_t{8} * format.key_words() : 0;
    const std::size_t out_width = key_part + format.record_size;
    launch_gather<T>(records, perm, count, format.record_size, out_width, key_part, out, stream);
    if (entries) launch_entry_keys<T>(records, perm, count, format, out_width, out, stream);
}

}  // namespace

void validate_record_key_format(const RecordKeyFormat& format) {
    if (format.record_size == 0) refuse("the record size must be at least 1 byte");
    if (format.record_size > kMaxRecordBytes)
        refuse("record size " + std::to_string(format.record_size) + " is over the limit of 1 MiB");
    if (format.field_count == 0) refuse("no key field");
    if (format.field_count > kMaxRecordKeyFields)
        refuse(std::to_string(format.field_count) + " key fields, more than the 32 allowed");
    for (std::uint32_t f = 0; f < format.field_count; ++f) {
        const RecordKeyField& field = format.fields[f];
        const std::string name = "key field " + std::to_string(f + 1);
        if (field.kind != FieldKind::unsigned_int && field.kind != FieldKind::signed_int &&
            field.kind != FieldKind::floating && field.kind != FieldKind::bytes)
            refuse(name + " has an unknown kind");
        if (field.kind != FieldKind::bytes && field.length != 1 && field.length != 2 && field.length != 4 &&
            field.length != 8)
            refuse(name + " is a number of " + std::to_string(field.length) + " bytes (1, 2, 4 or 8 expected)");
        if (std::uint64_t{field.offset} + field.length > format.record_size)
            refuse(name + " (bytes " + std::to_string(field.offset) + " .. " +
                   std::to_string(std::uint64_t{field.offset} + field.length) + ") lies outside the record of " +
                   std::to_string(format.record_size) + " bytes");
    }
    const std::uint32_t words = format.key_words();
    if (words == 0) refuse("the key is empty");
    if (words > kMaxRecordKeyWords)
        refuse("the key is " + std::to_string(format.key_bytes()) + " bytes, wider than the 32 allowed");
}

void extract_record_key_words(const std::byte* records, std::size_t n, const RecordKeyFormat& format,
                              std::uint64_t* words, cudaStream_t stream) {
    validate_record_key_format(format);
    if (n == 0) return;
    const auto* bytes = reinterpret_cast<const unsigned char*>(records);
    switch (format.key_words()) {
    case 1: launch_key_words<1>(bytes, n, format, words, stream); break;
    case 2: launch_key_words<2>(bytes, n, format, words, stream); break;
    case 3: launch_key_words<3>(bytes, n, format, words, stream); break;
    default: launch_key_words<4>(bytes, n, format, words, stream); break;
    }
}

void extract_record_sort_keys(const std::byte* records, std::size_t n, const RecordKeyFormat& format,
                              const std::uint64_t* perm, unsigned first_word, bool narrow, void* keys,
                              std::uint64_t* index, cudaStream_t stream) {
    if (n == 0) return;
    const auto* bytes = reinterpret_cast<const unsigned char*>(records);
    switch (format.key_words()) {
    case 1: launch_sort_keys<1>(bytes, n, format, perm, first_word, narrow, keys, index, stream); break;
    case 2: launch_sort_keys<2>(bytes, n, format, perm, first_word, narrow, keys, index, stream); break;
    case 3: launch_sort_keys<3>(bytes, n, format, perm, first_word, narrow, keys, index, stream); break;
    case 4: launch_sort_keys<4>(bytes, n, format, perm, first_word, narrow, keys, index, stream); break;
    default: refuse("the key must be 1 to 32 bytes");
    }
}

void gather_records(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                    const RecordKeyFormat& format, bool entries, std::byte* out, cudaStream_t stream) {
    if (count == 0) return;
    // The widest unit that keeps every record and entry aligned (entries differ by 8 * key_words).
    switch (format.record_size % 8) {
    case 0: gather_in_units<std::uint64_t>(records, perm, count, format, entries, out, stream); break;
    case 4: gather_in_units<std::uint32_t>(records, perm, count, format, entries, out, stream); break;
    case 2:
    case 6: gather_in_units<std::uint16_t>(records, perm, count, format, entries, out, stream); break;
    default: gather_in_units<std::uint8_t>(records, perm, count, format, entries, out, stream); break;
    }
}

}  // namespace gpusort::gpu
