// Records with a key (--record-size, --key, --format gensort, --unique): how a record's
// normalised key is held while it is sorted and merged, and the fixed-size form of a KeySpec
// that the key rules (key_rules.hpp) and the GPU kernels take.
//
// The normalised key (memcmp-ordered bytes, at most 32) is zero-padded to whole 64-bit words and
// read big-endian, word 0 most significant: RecordKey<W> (key_rules.hpp). Comparing the words as
// unsigned integers is comparing the normalised bytes with memcmp, so the sorters and the merge
// compare plain integers. A sorted run holds entries: the key words (native byte order) followed
// by the record's bytes, entry_bytes() in all, packed. Ties between equal keys are broken by
// input position everywhere (chunk sorts are stable, the merge prefers earlier runs), so every
// sort of records is stable.
#pragma once

#include "gpusort/key_spec.hpp"
#include "src/keys/key_rules.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace gpusort {

static_assert(8 * kMaxKeyWords == kMaxNormalizedKeyBytes, "key words hold the widest normalised key");

// The fixed-size form of `spec`: the one place where it is derived. Throws std::invalid_argument
// when the spec is not valid (KeySpec::validate).
FixedKeySpec fixed_key_spec(const KeySpec& spec);

// 64-bit words of the normalised key of `spec`.
inline std::size_t key_words(const KeySpec& spec) { return (spec.normalized_bytes() + 7) / 8; }
// Bytes of one run entry: key words, then the record.
inline std::size_t entry_bytes(const KeySpec& spec) { return 8 * key_words(spec) + spec.record_size; }

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
