// Record keys on the device: the kernels of the chunk engine's record mode, which extract the
// normalised key words of fixed-size records (a FixedKeySpec, by the key rules of
// src/keys/key_rules.hpp: the same words the host computes) and gather records (or key-prefixed
// entries) through a permutation. The spec comes from fixed_key_spec(), so it is valid.
#pragma once

#include "src/keys/key_rules.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpusort::gpu {

// words[i * kw + j] = word j of the normalised key of record i (kw = spec.key_words()), for the
// n records at `records` (record_size bytes each, packed). Asynchronous on `stream`.
void extract_record_key_words(const std::byte* records, std::size_t n, const FixedKeySpec& spec,
                              std::uint64_t* words, cudaStream_t stream);

// The sort keys of the record mode, for records perm[i] (records i when perm is null), i < n:
// keys[i] = 2 words of the normalised key starting at `first_word` (0 or 2; a word past the key
// reads 0), as a Key128 {hi, lo} (`keys` points to n Key128) or, with `narrow`, word first_word
// alone as a std::uint64_t. When `index` is not null, index[i] = i. Asynchronous on `stream`.
void extract_record_sort_keys(const std::byte* records, std::size_t n, const FixedKeySpec& spec,
                              const std::uint64_t* perm, unsigned first_word, bool narrow, void* keys,
                              std::uint64_t* index, cudaStream_t stream);

// out element i (i < count) = record perm[i] when `entries` is false (record_size bytes), else the
// entry of record perm[i]: its key words (native-endian std::uint64_t, word 0 first) followed by
// the record's bytes, 8 * key_words + record_size bytes, packed. `records` and `out` must be
// aligned to 8 bytes. Asynchronous on `stream`.
void gather_records(const std::byte* records, const std::uint64_t* perm, std::size_t count,
                    const FixedKeySpec& spec, bool entries, std::byte* out, cudaStream_t stream);

}  // namespace gpusort::gpu
