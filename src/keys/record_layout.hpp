// Records with a key (--record-size, --key, --format gensort, --unique): how a record's
// normalised key is held while it is sorted and merged.
//
// The normalised key of KeySpec (memcmp-ordered bytes, at most 32) is zero-padded to whole
// 64-bit words and read big-endian, word 0 most significant: RecordKey<W>. Comparing the words
// as unsigned integers is comparing the normalised bytes with memcmp, so the sorters and the
// merge compare plain integers. A sorted run holds entries: the key words (native byte order)
// followed by the record's bytes, entry_bytes() in all, packed. Ties between equal keys are
// broken by input position everywhere (chunk sorts are stable, the merge prefers earlier runs),
// so every sort of records is stable.
#pragma once

#include "gpusort/key_spec.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gpusort {

template <std::size_t W>
struct RecordKey {
    static_assert(W >= 1 && W <= 4);
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

// Bytes of key words for `spec`: its normalised key rounded up to whole words.
inline std::size_t key_words(const KeySpec& spec) { return (spec.normalized_bytes() + 7) / 8; }
// Bytes of one run entry: key words, then the record.
inline std::size_t entry_bytes(const KeySpec& spec) { return 8 * key_words(spec) + spec.record_size; }

// The key words of `record` (key_words(spec) of them).
inline void record_key_words(const KeySpec& spec, const std::byte* record, std::uint64_t* words) {
    std::byte normalized[kMaxNormalizedKeyBytes] = {};
    normalize_record_key(spec, record, normalized);
    const std::size_t w = key_words(spec);
    for (std::size_t i = 0; i < w; ++i) {
        std::uint64_t big;
        std::memcpy(&big, normalized + 8 * i, 8);
        words[i] = std::endian::native == std::endian::little ? __builtin_bswap64(big) : big;
    }
}

}  // namespace gpusort

// The largest key is the merge's sentinel (LoserTree).
template <std::size_t W>
struct std::numeric_limits<gpusort::RecordKey<W>> {
    static constexpr bool is_specialized = true;
    static gpusort::RecordKey<W> max() noexcept {
        gpusort::RecordKey<W> key;
        for (auto& w : key.word) w = std::numeric_limits<std::uint64_t>::max();
        return key;
    }
};
