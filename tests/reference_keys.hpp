// Test reference for normalised keys, written from the definition in DESIGN.md ("Normalised
// keys") independently of src/keys/key_rules.hpp: field by field, with branches, each number
// read byte by byte in its byte order, signed: sign bit flipped; floating: negative ones all bits
// flipped, the others the sign bit set; descending: all bits flipped after that; written
// big-endian; byte strings copied (inverted when descending). The CPU tests and the GPU tests
// check the key rules against it.
#pragma once

#include "gpusort/key_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpusort::testing {

// The normalised value of a number of `width` bytes whose bits are `raw`.
inline std::uint64_t reference_normalized_number(std::uint64_t raw, std::size_t width, KeyType type, bool descending) {
    const std::uint64_t all = width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
    const std::uint64_t sign = std::uint64_t{1} << (8 * width - 1);
    std::uint64_t value = raw;
    switch (type) {
    case KeyType::i8:
    case KeyType::i16:
    case KeyType::i32:
    case KeyType::i64: value ^= sign; break;
    case KeyType::f32:
    case KeyType::f64: value = (value & sign) ? (~value & all) : (value | sign); break;
    default: break;
    }
    return descending ? (~value & all) : value;
}

// The normalised key of `record` under `spec`: spec's normalised bytes, in memcmp order.
inline std::vector<std::uint8_t> reference_normalized_key(const std::byte* record, const KeySpec& spec) {
    std::vector<std::uint8_t> key;
    for (const KeyField& f : spec.fields) {
        const std::byte* field = record + f.offset;
        if (f.is_bytes) {
            for (std::size_t i = 0; i < f.length; ++i) {
                const auto byte = std::to_integer<std::uint8_t>(field[i]);
                key.push_back(f.descending ? static_cast<std::uint8_t>(~byte) : byte);
            }
            continue;
        }
        std::uint64_t raw = 0;
        for (std::size_t i = 0; i < f.length; ++i)
            raw |= std::to_integer<std::uint64_t>(field[i]) << (8 * (f.big_endian ? f.length - 1 - i : i));
        const std::uint64_t value = reference_normalized_number(raw, f.length, f.type, f.descending);
        for (std::size_t i = 0; i < f.length; ++i)
            key.push_back(static_cast<std::uint8_t>(value >> (8 * (f.length - 1 - i))));
    }
    return key;
}

// The normalised key as `words` 64-bit words: zero-padded to 8 * words bytes, word j the
// big-endian reading of bytes 8j .. 8j + 7.
inline std::vector<std::uint64_t> reference_key_words(const std::byte* record, const KeySpec& spec,
                                                      std::size_t words) {
    std::vector<std::uint8_t> key = reference_normalized_key(record, spec);
    key.resize(8 * words, 0);
    std::vector<std::uint64_t> out(words, 0);
    for (std::size_t i = 0; i < key.size(); ++i) out[i / 8] = (out[i / 8] << 8) | key[i];
    return out;
}

}  // namespace gpusort::testing
