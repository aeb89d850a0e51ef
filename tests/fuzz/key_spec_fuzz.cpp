// Fuzz target: parse_key_field, KeySpec::validate and normalize_record_key. The input is text: a
// first line with the record size (anything else: the smallest record holding the fields, as the
// CLI takes it), then one key spec per line, then optionally a line "=" followed by the raw bytes
// of two records. Each spec is checked against a grammar written here (accepted exactly when it
// matches, into the same field, and again from its canonical text); validate() against the rules
// of key_spec.hpp; and the normalised keys of the two records against the field-by-field
// reference comparison.
#include "fuzz_targets.hpp"

#include "../reference_records.hpp"
#include "gpusort/key_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort::fuzz {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    for (;;) {
        const std::size_t end = text.find(separator);
        parts.push_back(text.substr(0, end));
        if (end == std::string_view::npos) return parts;
        text.remove_prefix(end + 1);
    }
}

// A decimal number of digits only that fits a size_t.
std::optional<std::size_t> decimal(std::string_view text) {
    if (text.empty()) return std::nullopt;
    std::size_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const std::size_t digit = static_cast<std::size_t>(c - '0');
        if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

// The field a spec stands for under the documented grammar OFFSET:TYPE[:be|le][:desc] or
// OFFSET:bytes:LEN[:desc] (LEN at least 1); nullopt when it does not match.
std::optional<KeyField> expected_field(std::string_view spec) {
    const auto parts = split(spec, ':');
    if (parts.size() < 2) return std::nullopt;
    KeyField field;
    const auto offset = decimal(parts[0]);
    if (!offset) return std::nullopt;
    field.offset = *offset;
    std::size_t next = 2;
    if (parts[1] == "bytes") {
        if (parts.size() < 3) return std::nullopt;
        const auto length = decimal(parts[2]);
        if (!length || *length == 0) return std::nullopt;
        field.is_bytes = true;
        field.length = *length;
        next = 3;
    } else {
        static constexpr std::pair<std::string_view, std::size_t> kTypes[] = {
            {"u8", 1}, {"u16", 2}, {"u32", 4}, {"u64", 8}, {"i8", 1},
            {"i16", 2}, {"i32", 4}, {"i64", 8}, {"f32", 4}, {"f64", 8}};
        const auto* type =
            std::find_if(std::begin(kTypes), std::end(kTypes), [&](const auto& t) { return t.first == parts[1]; });
        if (type == std::end(kTypes)) return std::nullopt;
        field.type = kAllKeyTypes[type - std::begin(kTypes)];
        field.length = type->second;
        if (next < parts.size() && (parts[next] == "be" || parts[next] == "le")) {
            field.big_endian = parts[next] == "be";
            ++next;
        }
    }
    if (next < parts.size() && parts[next] == "desc") {
        field.descending = true;
        ++next;
    }
    if (next != parts.size()) return std::nullopt;
    return field;
}

std::string canonical_text(const KeyField& f) {
    std::string text = std::to_string(f.offset) + ":";
    if (f.is_bytes)
        text += "bytes:" + std::to_string(f.length);
    else
        text += std::string(key_type_name(f.type)) + (f.big_endian ? ":be" : "");
    return text + (f.descending ? ":desc" : "");
}

// The record of `size` bytes that `bytes` fill over and over (zeros when there are none).
std::vector<std::byte> record_from(std::string_view bytes, std::size_t size) {
    std::vector<std::byte> record(size);
    for (std::size_t i = 0; i < size && !bytes.empty(); ++i) record[i] = std::byte(bytes[i % bytes.size()]);
    return record;
}

int sign(int x) { return (x > 0) - (x < 0); }

}  // namespace

void key_spec_target(Input data) {
    std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
    std::string_view records_text;
    if (const std::size_t mark = text.find("\n=\n"); mark != std::string_view::npos) {
        records_text = text.substr(mark + 3);
        text = text.substr(0, mark);
    }
    const auto lines = split(text, '\n');

    KeySpec spec;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        const std::optional<KeyField> expected = expected_field(line);
        try {
            const KeyField field = parse_key_field(line);
            check(expected.has_value(), "parse_key_field accepted '" + std::string(line) + "', outside the grammar");
            check(field == *expected, "parse_key_field('" + std::string(line) + "') gave another field");
            const std::string canonical = canonical_text(field);
            check(parse_key_field(canonical) == field, "'" + canonical + "' parses into another field");
            spec.fields.push_back(field);
        } catch (const std::invalid_argument& e) {
            check(!expected, "parse_key_field refused '" + std::string(line) + "' of the grammar: " + e.what());
            const std::string message = e.what();
            check(message.rfind("--key '", 0) == 0 && message.find('\n') == std::string::npos,
                  "the message for '" + std::string(line) + "' is not one line quoting the spec: " + message);
        }
    }

    if (const auto size = decimal(lines[0])) {
        spec.record_size = *size;
    } else {
        for (const auto& f : spec.fields) {
            const std::size_t end = f.offset > std::numeric_limits<std::size_t>::max() - f.length
                                        ? std::numeric_limits<std::size_t>::max()
                                        : f.offset + f.length;
            spec.record_size = std::max(spec.record_size, end);
        }
    }
    // The rules of key_spec.hpp, from the fields one by one.
    bool valid = spec.record_size >= 1 && spec.record_size <= kMaxRecordSize && !spec.fields.empty();
    std::size_t key_bytes = 0;
    for (const auto& f : spec.fields) {
        valid = valid && f.length >= 1 && f.offset < spec.record_size && f.length <= spec.record_size - f.offset;
        key_bytes = std::min(key_bytes + std::min(f.length, kMaxNormalizedKeyBytes + 1), kMaxNormalizedKeyBytes + 1);
    }
    valid = valid && key_bytes <= kMaxNormalizedKeyBytes;
    try {
        spec.validate();
        check(valid, "validate() accepted a spec that breaks the rules");
    } catch (const std::invalid_argument& e) {
        check(!valid, std::string("validate() refused a valid spec: ") + e.what());
        return;
    }
    check(spec.normalized_bytes() == key_bytes, "normalized_bytes() is not the sum of the field lengths");

    // Records compare by memcmp of their normalised keys as the reference compares them.
    const std::size_t r = spec.record_size;
    const auto a = record_from(records_text, r);
    const auto b = record_from(records_text.substr(std::min(records_text.size(), r)), r);
    std::vector<std::byte> key_a(key_bytes), key_b(key_bytes);
    normalize_record_key(spec, a.data(), key_a.data());
    normalize_record_key(spec, b.data(), key_b.data());
    const int by_keys = sign(std::memcmp(key_a.data(), key_b.data(), key_bytes));
    check(by_keys == testing::reference_compare(a.data(), b.data(), spec),
          "the normalised keys order two records otherwise than the reference comparison");
    check(testing::reference_compare(b.data(), a.data(), spec) == -by_keys,
          "the reference comparison is not antisymmetric");
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::key_spec_target)
