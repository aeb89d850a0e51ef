// Record keys on the device: the layout of a fixed-size record's composite sort key
// (RecordKeyFormat), and the kernels of the chunk engine's record mode that extract normalised
// key words from records and gather records (or key-prefixed entries) through a permutation.
//
// The normalised key of a record is the concatenation, field by field (the first field most
// significant), of each field's bytes mapped so that memcmp order is the wanted order:
//   numbers (1, 2, 4 or 8 bytes) are read little- or big-endian, mapped (signed: sign bit flipped;
//   floating: negatives all bits flipped, others sign bit set; descending: all bits flipped
//   afterwards) and written big-endian; byte strings are copied (inverted when descending).
// It is zero-padded to key_words() * 8 bytes and read as key_words() 64-bit words, word 0 most
// significant, each word the big-endian reading of its 8 bytes: comparing the word arrays as
// unsigned integers, word 0 first, is memcmp of the normalised bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpusort::gpu {

enum class FieldKind : std::uint8_t { unsigned_int, signed_int, floating, bytes };

struct RecordKeyField {
    std::uint32_t offset;  // first byte of the field within the record
    std::uint32_t length;  // bytes: 1, 2, 4 or 8 for numbers; any length for byte strings
    FieldKind kind;
    bool big_endian;       // numbers only
    bool descending;
};

inline constexpr std::size_t kMaxRecordKeyFields = 32;
inline constexpr std::size_t kMaxRecordKeyWords = 4;  // normalised keys of up to 32 bytes
inline constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 20;

struct RecordKeyFormat {
    std::uint32_t record_size = 0;  // bytes per record, 1 .. 1 MiB
    std::uint32_t field_count = 0;  // the first field is the most significant
    RecordKeyField fields[kMaxRecordKeyFields]{};

    // Sum of the field lengths (at most 32 in a valid format).
    std::uint32_t key_bytes() const {
        std::uint64_t bytes = 0;
        for (std::uint32_t f = 0; f < field_count && f < kMaxRecordKeyFields; ++f) bytes += fields[f].length;
        return bytes > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(bytes);
    }
    // 64-bit words of the normalised key: (key_bytes + 7) / 8.
    std::uint32_t key_words() const { return static_cast<std::uint32_t>((std::uint64_t{key_bytes()} + 7) / 8); }
};

// Throws GpuError (cudaErrorInvalidValue) with a one-line message when `format` is not usable:
// record size 0 or over 1 MiB, no key or more than 32 key bytes, more than 32 fields, a number
// field not 1, 2, 4 or 8 bytes long, a field outside the record.
void validate_record_key_format(const RecordKeyFormat& format);

// words[i * kw + j] = word j of the normalised key of record i (kw = format.key_words()), for the
// n records at `records` (record_size bytes each, packed). Asynchronous on `stream`.
void extract_record_key_words(const std::byte* records, std::size_t n, const RecordKeyFormat& format,
                              std::uint64_t* words, cudaStream_t stream);

// The two functions below expect a format that passed validate_record_key_format.
//
// The sort keys of the record mode, for records perm[i] (records i when perm is null), i < n:
// keys[i] = 2 words of the normalised key starting at `first_word` (0 or 2; a word past the key
// reads 0), as a Key128 {hi, lo} (`keys` points to n Key128) or, with `narrow`, word first_word
// alone as a std::uint64_t. When `index` is not null, index[i] = i. Asynchronous on `stream`.
void extract_record_sort_keys(const std::byte* records, std::size_t n, const RecordKeyFormat& format,
                              const std::uint64_t* perm, unsigned first_word, bool narrow, void* keys,
                              std::uint64_t* index, cudaStream_t stream);

// out element i (i < count) = record perm[i] when `entries` is false (record_size bytes), else the
// entry of record perm[i]: its key words (native-endian std::uint64_t, word 0 first) followed by
// the record's bytes, 8 * key_words + record_size bytes, packed. `records` and `out` must be
// aligned to 8 bytes. Asynchronous on `stream`.
void gather_records(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                    const RecordKeyFormat& format, bool entries, std::byte* out, cudaStream_t stream);

}  // namespace gpusort::gpu
