// Parsing and checking of key specs, their fixed-size form (FixedKeySpec), and the normalised
// key of a record by the key rules (key_rules.hpp).
#include "gpusort/key_spec.hpp"

#include "src/keys/key_rules.hpp"
#include "src/keys/record_layout.hpp"

#include <charconv>
#include <stdexcept>

namespace gpusort {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

bool parse_number(std::string_view text, std::size_t& value) {
    if (text.empty()) return false;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size();
}

[[noreturn]] void refuse(std::string_view spec, const std::string& why) {
    throw std::invalid_argument("--key '" + std::string(spec) + "': " + why +
                                " (expected OFFSET:TYPE[:be|le][:desc] or OFFSET:bytes:LEN[:desc])");
}

}  // namespace

std::size_t KeySpec::normalized_bytes() const {
    std::size_t bytes = 0;
    for (const auto& f : fields) bytes += f.length;
    return bytes;
}

void KeySpec::validate() const {
    if (record_size == 0) throw std::invalid_argument("the record size must be at least 1 byte");
    if (record_size > kMaxRecordSize)
        throw std::invalid_argument("records of more than " + std::to_string(kMaxRecordSize) + " bytes are not supported");
    if (fields.empty()) throw std::invalid_argument("no key field given");
    for (const auto& f : fields) {
        if (f.length == 0) throw std::invalid_argument("a key field has length 0");
        if (!f.is_bytes && f.length != key_width(f.type))
            throw std::invalid_argument("the key field at offset " + std::to_string(f.offset) + " is a " +
                                        std::string(key_type_name(f.type)) + " of " + std::to_string(f.length) +
                                        " bytes, not " + std::to_string(key_width(f.type)));
        if (f.offset >= record_size || f.length > record_size - f.offset)
            throw std::invalid_argument("the key field at offset " + std::to_string(f.offset) + " with " +
                                        std::to_string(f.length) + " bytes lies beyond the " +
                                        std::to_string(record_size) + "-byte record");
    }
    if (normalized_bytes() > kMaxNormalizedKeyBytes)
        throw std::invalid_argument("the key fields add up to " + std::to_string(normalized_bytes()) +
                                    " bytes; at most " + std::to_string(kMaxNormalizedKeyBytes) + " are supported");
}

KeyField parse_key_field(std::string_view spec) {
    const auto parts = split(spec, ':');
    if (parts.size() < 2) refuse(spec, "too few parts");
    KeyField field;
    if (!parse_number(parts[0], field.offset)) refuse(spec, "the offset '" + std::string(parts[0]) + "' is not a number");
    std::size_t next = 2;
    if (parts[1] == "bytes") {
        if (parts.size() < 3 || !parse_number(parts[2], field.length)) refuse(spec, "bytes needs a length");
        if (field.length == 0) refuse(spec, "the length must be at least 1");
        field.is_bytes = true;
        next = 3;
    } else {
        const auto type = parse_key_type(parts[1]);
        if (!type) refuse(spec, "unknown type '" + std::string(parts[1]) + "' (one of: " + key_type_list() + ", bytes)");
        field.type = *type;
        field.length = key_width(*type);
    }
    bool endian_given = false;
    for (; next < parts.size(); ++next) {
        const std::string_view option = parts[next];
        if ((option == "be" || option == "le") && !field.is_bytes && !endian_given && !field.descending) {
            field.big_endian = option == "be";
            endian_given = true;
        } else if (option == "desc" && !field.descending) {
            field.descending = true;
        } else {
            refuse(spec, "unexpected '" + std::string(option) + "'");
        }
    }
    return field;
}

KeySpec whole_record_key(KeyType type, bool descending) {
    KeySpec spec;
    spec.record_size = key_width(type);
    KeyField field;
    field.type = type;
    field.length = key_width(type);
    field.descending = descending;
    spec.fields.push_back(field);
    return spec;
}

KeySpec gensort_key() {
    KeySpec spec;
    spec.record_size = 100;
    KeyField field;
    field.is_bytes = true;
    field.length = 10;
    spec.fields.push_back(field);
    return spec;
}

FixedKeySpec fixed_key_spec(const KeySpec& spec) {
    spec.validate();  // at most 32 key bytes, so at most kMaxKeyPieces pieces
    FixedKeySpec fixed;
    fixed.record_size = static_cast<std::uint32_t>(spec.record_size);
    for (const KeyField& field : spec.fields) {
        // A byte string compares as memcmp: as unsigned big-endian numbers, 8 bytes at a time.
        add_key_field(fixed, static_cast<std::uint32_t>(field.offset), static_cast<std::uint32_t>(field.length),
                      field.is_bytes ? KeyKind::unsigned_int : key_kind(field.type), field.is_bytes || field.big_endian,
                      field.descending);
    }
    return fixed;
}

void normalize_record_key(const KeySpec& spec, const std::byte* record, std::byte* out) {
    const FixedKeySpec fixed = fixed_key_spec(spec);
    for (std::uint32_t p = 0; p < fixed.piece_count; ++p) {
        const FixedKeyPiece& piece = fixed.pieces[p];
        const std::uint64_t key = normalized_piece(reinterpret_cast<const unsigned char*>(record), piece);
        for (std::uint32_t i = 0; i < piece.bytes; ++i) *out++ = std::byte((key >> (8 * (piece.bytes - 1 - i))) & 0xff);
    }
}

}  // namespace gpusort
