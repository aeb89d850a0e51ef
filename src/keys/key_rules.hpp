// The key rules: how every key becomes its normalised form, an unsigned integer (for records, up
// to four 64-bit words) whose unsigned order is the wanted order (DESIGN.md, "Normalised keys").
// Written once, here, and compiled for the host and the device: the CPU sorters
// (key_normalization.hpp, the record sorter), the GPU kernels (gpu/key_mapping.cu,
// gpu/record_kernels.cu) and the order checker all call these functions, so CPU and GPU give the
// same bytes by construction. Header-only, C++17 (the GPU layer's dialect), nothing host-only:
// with key_dispatch.hpp, the only files of src/ that gpu/ includes.
//
// Numbers. A field of `bits` bits, zero-extended, is XORed with two masks (FieldMasks):
//   flip      always: the sign bit of signed and floating fields, and all bits of descending ones;
//   negative  when the field's top bit is set: all bits but the sign of floating fields.
// So signed fields get the sign bit flipped; floats all bits when negative and the sign bit
// otherwise (IEEE 754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN);
// descending fields are inverted after that. Branch-free, and undone by restore_field.
//
// Records (FixedKeySpec, the fixed-size form of a KeySpec that kernels take by value). The fields,
// the first most significant, are cut into pieces of at most 8 bytes (add_key_field): a number is
// one piece; a byte string is pieces of 8 bytes and a shorter rest, each an unsigned big-endian
// number, so that it compares as memcmp. Each piece is read in its field's byte order and
// normalised as above; the pieces' bytes, most significant first, are concatenated and
// zero-padded to whole 64-bit words, each word the big-endian reading of its 8 bytes:
// RecordKey<W>. Comparing the words, word 0 first, is comparing the normalised bytes with memcmp.
#pragma once

#include "gpusort/key_type.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

// A function of the key rules: for the host and the device under nvcc, plain inline otherwise;
// its loops over key words are unrolled on the device.
#if defined(__CUDACC__)
#define GPUSORT_KEY_RULE __host__ __device__ __forceinline__
#else
#define GPUSORT_KEY_RULE inline
#endif
#if defined(__CUDA_ARCH__)
#define GPUSORT_KEY_RULE_UNROLL _Pragma("unroll")
#else
#define GPUSORT_KEY_RULE_UNROLL
#endif

namespace gpusort {

// ---- Numbers ------------------------------------------------------------------------------------

template <class U>
struct FieldMasks {
    U flip = 0;      // XORed into every value
    U negative = 0;  // XORed in as well when the value's top bit is set
};

// The masks of a field of `kind` that is `bits` bits wide (8 to the width of U). Ascending
// unsigned fields get none: their normalised form is their value.
template <class U>
GPUSORT_KEY_RULE constexpr FieldMasks<U> field_masks(KeyKind kind, bool descending, unsigned bits = 8 * sizeof(U)) {
    static_assert(std::is_unsigned<U>::value, "normalised keys are unsigned");
    const U all = bits >= 8 * sizeof(U) ? U(~U(0)) : U((U(1) << bits) - 1);
    const U top = U(U(1) << (bits - 1));
    FieldMasks<U> masks;
    masks.flip = U((kind == KeyKind::unsigned_int ? U(0) : top) ^ (descending ? all : U(0)));
    masks.negative = kind == KeyKind::floating ? U(all ^ top) : U(0);
    return masks;
}

// The normalised form of `value`, a field of `bits` bits (zero-extended in U).
template <class U>
GPUSORT_KEY_RULE constexpr U normalize_field(U value, FieldMasks<U> masks, unsigned bits = 8 * sizeof(U)) {
    const U negative = U(U(0) - U(value >> (bits - 1)));  // all ones when the top bit is set
    return U(value ^ masks.flip ^ (negative & masks.negative));
}

// The value whose normalised form is `key`: normalize_field undone.
template <class U>
GPUSORT_KEY_RULE constexpr U restore_field(U key, FieldMasks<U> masks, unsigned bits = 8 * sizeof(U)) {
    const U unflipped = U(key ^ masks.flip);  // its top bit is the value's (`negative` leaves it alone)
    const U negative = U(U(0) - U(unflipped >> (bits - 1)));
    return U(unflipped ^ (negative & masks.negative));
}

// A whole key of U's width (plain keys: the whole record is one key).
template <class U>
GPUSORT_KEY_RULE constexpr U to_normalized(U raw, KeyKind kind, bool descending) {
    return normalize_field(raw, field_masks<U>(kind, descending));
}

template <class U>
GPUSORT_KEY_RULE constexpr U from_normalized(U key, KeyKind kind, bool descending) {
    return restore_field(key, field_masks<U>(kind, descending));
}

// ---- Records ------------------------------------------------------------------------------------

// The widest normalised key of a record in 64-bit words (KeySpec's kMaxNormalizedKeyBytes / 8),
// and so the most pieces a key can have (each at least one byte of it).
inline constexpr std::size_t kMaxKeyWords = 4;
inline constexpr std::size_t kMaxKeyPieces = 8 * kMaxKeyWords;

// A piece of a record's key: 1 to 8 bytes of the record, read as one unsigned number in its byte
// order and normalised with its masks. A number field is one piece; a byte string is pieces of 8
// bytes and a shorter rest, each an unsigned big-endian number, so that it compares as memcmp.
struct FixedKeyPiece {
    std::uint32_t offset = 0;  // of its first byte in the record
    std::uint32_t bytes = 0;   // 1 to 8
    bool big_endian = false;
    FieldMasks<std::uint64_t> masks;  // field_masks(kind, descending, 8 * bytes)
};

// A KeySpec in a form of fixed size that kernels take by value: the pieces of its key, most
// significant first. Made only by fixed_key_spec() (src/keys/record_layout.hpp), from a KeySpec
// that passed KeySpec::validate(), field by field with add_key_field.
struct FixedKeySpec {
    std::uint32_t record_size = 0;  // bytes per record
    std::uint32_t key_bytes = 0;    // of the normalised key: the sum of the field lengths, 1 to 32
    std::uint32_t piece_count = 0;
    FixedKeyPiece pieces[kMaxKeyPieces] = {};

    GPUSORT_KEY_RULE constexpr std::uint32_t key_words() const { return (key_bytes + 7) / 8; }
};

// Appends the field of `length` bytes at `offset` to the key of `spec` (less significant than the
// fields before it), as its pieces. Numbers are 1, 2, 4 or 8 bytes of any kind; byte strings are
// unsigned big-endian numbers of any length. The key must stay within 32 bytes.
inline void add_key_field(FixedKeySpec& spec, std::uint32_t offset, std::uint32_t length, KeyKind kind,
                          bool big_endian, bool descending) {
    for (std::uint32_t done = 0; done < length;) {
        FixedKeyPiece& piece = spec.pieces[spec.piece_count++];
        piece.offset = offset + done;
        piece.bytes = length - done < 8 ? length - done : 8;
        piece.big_endian = big_endian;
        piece.masks = field_masks<std::uint64_t>(kind, descending, 8 * piece.bytes);
        done += piece.bytes;
    }
    spec.key_bytes += length;
}

// The N bytes at p as an unsigned number in the given byte order, read one byte at a time
// (records may sit at any alignment) by loops of constant length, which the device unrolls into
// independent loads and the host compiler turns into one load (and a byte swap).
template <unsigned N>
GPUSORT_KEY_RULE std::uint64_t read_key_bytes(const unsigned char* p, bool big_endian) {
    std::uint64_t value = 0;
    if (big_endian) {
        for (unsigned i = 0; i < N; ++i) value = (value << 8) | p[i];
    } else {
        for (unsigned i = 0; i < N; ++i) value = (value << 8) | p[N - 1 - i];
    }
    return value;
}

// The `bytes` (1 to 8) bytes at p as an unsigned number in the given byte order: numbers of 1, 2,
// 4 or 8 bytes, or a piece of a byte string.
GPUSORT_KEY_RULE std::uint64_t read_key_piece(const unsigned char* p, unsigned bytes, bool big_endian) {
    switch (bytes) {
    case 8: return read_key_bytes<8>(p, big_endian);
    case 4: return read_key_bytes<4>(p, big_endian);
    case 2: return read_key_bytes<2>(p, big_endian);
    case 1: return p[0];
    default: {  // 3, 5, 6 or 7 bytes: the rest of a byte string
        std::uint64_t value = 0;
        for (unsigned i = 0; i < bytes; ++i) value = (value << 8) | p[big_endian ? i : bytes - 1 - i];
        return value;
    }
    }
}

// The normalised piece of `record`, in its low 8 * piece.bytes bits.
GPUSORT_KEY_RULE std::uint64_t normalized_piece(const unsigned char* record, const FixedKeyPiece& piece) {
    return normalize_field(read_key_piece(record + piece.offset, piece.bytes, piece.big_endian), piece.masks,
                           8 * piece.bytes);
}

// A record's normalised key as W 64-bit words, word 0 most significant (compared as unsigned
// integers on the host: the sorters' tags and the merge's entries).
template <std::size_t W>
struct RecordKey {
    static_assert(W >= 1 && W <= kMaxKeyWords, "keys of 1 to 4 words");
    std::uint64_t word[W];

    friend bool operator==(const RecordKey& a, const RecordKey& b) {
        for (std::size_t i = 0; i < W; ++i)
            if (a.word[i] != b.word[i]) return false;
        return true;
    }
    friend bool operator<(const RecordKey& a, const RecordKey& b) {
        for (std::size_t i = 0; i + 1 < W; ++i)
            if (a.word[i] != b.word[i]) return a.word[i] < b.word[i];
        return a.word[W - 1] < b.word[W - 1];
    }
};

// Appends the `bytes` (1 to 8) low bytes of v to the key, most significant first: the words are
// a shift register whose bytes enter at the least significant end of the last word.
template <std::size_t W>
GPUSORT_KEY_RULE void push_key_bytes(RecordKey<W>& key, std::uint64_t v, unsigned bytes) {
    const unsigned shift = 8 * bytes;
    if (shift == 64) {
        GPUSORT_KEY_RULE_UNROLL
        for (std::size_t j = 0; j + 1 < W; ++j) key.word[j] = key.word[j + 1];
        key.word[W - 1] = v;
    } else {
        GPUSORT_KEY_RULE_UNROLL
        for (std::size_t j = 0; j + 1 < W; ++j) key.word[j] = (key.word[j] << shift) | (key.word[j + 1] >> (64 - shift));
        key.word[W - 1] = (key.word[W - 1] << shift) | v;
    }
}

// The normalised key of `record` under `spec`, zero-padded to W words (W >= spec.key_words()).
template <std::size_t W>
GPUSORT_KEY_RULE RecordKey<W> record_key(const unsigned char* __restrict__ record, const FixedKeySpec& spec) {
    RecordKey<W> key;
    GPUSORT_KEY_RULE_UNROLL
    for (std::size_t j = 0; j < W; ++j) key.word[j] = 0;
    for (std::uint32_t p = 0; p < spec.piece_count; ++p) {
        const FixedKeyPiece piece = spec.pieces[p];
        push_key_bytes(key, normalized_piece(record, piece), piece.bytes);
    }
    unsigned pad = static_cast<unsigned>(8 * W) - spec.key_bytes;
    for (; pad >= 8; pad -= 8) push_key_bytes(key, 0, 8);
    if (pad > 0) push_key_bytes(key, 0, pad);
    return key;
}

// record_key<1> where the key is one piece of N bytes (1, 2, 4 or 8: every whole-record number),
// with N known when compiled: the piece's normalised bytes at the top of the word, then zeros.
template <unsigned N>
GPUSORT_KEY_RULE RecordKey<1> one_piece_key(const unsigned char* __restrict__ record, const FixedKeyPiece& piece) {
    static_assert(N == 1 || N == 2 || N == 4 || N == 8, "a number of 1, 2, 4 or 8 bytes");
    const std::uint64_t value = normalize_field(read_key_bytes<N>(record + piece.offset, piece.big_endian), piece.masks, 8 * N);
    RecordKey<1> key;
    key.word[0] = N == 8 ? value : value << (64 - 8 * N);
    return key;
}

}  // namespace gpusort
