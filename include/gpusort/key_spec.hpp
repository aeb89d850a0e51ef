// KeySpec: which bytes of a fixed-size record form its sort key (the --key options of CLI.md),
// and the normalised key of a record: the fields, most significant first, each mapped to bytes
// whose memcmp order is the field's wanted order (numbers normalised by the key rules of
// src/keys/key_rules.hpp and stored big-endian; byte strings as they are; descending fields
// inverted). Records then compare by memcmp of their normalised keys, which the sorters and the
// merge see as plain unsigned words.
#pragma once

#include "gpusort/key_type.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort {

// The widest normalised key accepted (bytes).
inline constexpr std::size_t kMaxNormalizedKeyBytes = 32;
// The widest record accepted (bytes).
inline constexpr std::size_t kMaxRecordSize = std::size_t{1} << 20;

struct KeyField {
    std::size_t offset = 0;
    bool is_bytes = false;    // a byte string compared with memcmp ...
    std::size_t length = 0;   // ... of this many bytes; for numbers the type's width
    KeyType type = KeyType::u64;
    bool big_endian = false;  // numbers only
    bool descending = false;

    bool operator==(const KeyField&) const = default;
};

struct KeySpec {
    std::size_t record_size = 0;
    std::vector<KeyField> fields;  // the first is the most significant

    std::size_t normalized_bytes() const;
    // The one check of a key spec, on the host and (through fixed_key_spec) for the device.
    // Throws std::invalid_argument naming the field when a field lies outside the record or a
    // number's length is not its type's width, the record size is 0 or too large, there is no
    // field, or the key is wider than 32 bytes.
    void validate() const;
};

// Parses OFFSET:TYPE[:be|le][:desc] or OFFSET:bytes:LEN[:desc]; throws std::invalid_argument
// with a one-line message that quotes the spec.
KeyField parse_key_field(std::string_view spec);

// The key of every record being one key of `type` (--type), in either direction.
KeySpec whole_record_key(KeyType type, bool descending);
// Sort Benchmark records: 100 bytes ordered by the 10-byte key at offset 0 (--format gensort).
KeySpec gensort_key();

// Writes the normalised key of `record` (spec.normalized_bytes() bytes) to `out`. Throws
// std::invalid_argument when the spec is not valid.
void normalize_record_key(const KeySpec& spec, const std::byte* record, std::byte* out);

}  // namespace gpusort
