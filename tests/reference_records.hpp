// Test references for records with key specs, independent of the code under test: a record
// comparison field by field (numbers decoded in their byte order and compared in the reference
// order, byte strings with memcmp), std::stable_sort by it, and --unique as "first of each group";
// the key options of the programs read into a KeySpec by a parser of the tests' own.
#pragma once

#include "reference_order.hpp"
#include "gpusort/key_spec.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpusort::testing {

// The value of a numeric field read byte by byte in its byte order.
template <class T>
T read_field(const std::byte* field, bool big_endian) {
    std::byte bytes[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i) bytes[i] = field[big_endian ? sizeof(T) - 1 - i : i];
    T value;
    std::memcpy(&value, bytes, sizeof(T));  // the host is little-endian
    return value;
}

// -1, 0 or 1 as record a sorts before, with or after b under one field.
template <class T>
int compare_field(const std::byte* a, const std::byte* b, const KeyField& f) {
    const T x = read_field<T>(a + f.offset, f.big_endian), y = read_field<T>(b + f.offset, f.big_endian);
    int c = reference_less(x, y) ? -1 : reference_less(y, x) ? 1 : 0;
    return f.descending ? -c : c;
}

inline int reference_compare(const std::byte* a, const std::byte* b, const KeySpec& spec) {
    for (const auto& f : spec.fields) {
        int c = 0;
        if (f.is_bytes) {
            c = std::memcmp(a + f.offset, b + f.offset, f.length);
            c = c < 0 ? -1 : c > 0 ? 1 : 0;
            if (f.descending) c = -c;
        } else {
            switch (f.type) {
            case KeyType::u8: c = compare_field<std::uint8_t>(a, b, f); break;
            case KeyType::u16: c = compare_field<std::uint16_t>(a, b, f); break;
            case KeyType::u32: c = compare_field<std::uint32_t>(a, b, f); break;
            case KeyType::u64: c = compare_field<std::uint64_t>(a, b, f); break;
            case KeyType::i8: c = compare_field<std::int8_t>(a, b, f); break;
            case KeyType::i16: c = compare_field<std::int16_t>(a, b, f); break;
            case KeyType::i32: c = compare_field<std::int32_t>(a, b, f); break;
            case KeyType::i64: c = compare_field<std::int64_t>(a, b, f); break;
            case KeyType::f32: c = compare_field<float>(a, b, f); break;
            case KeyType::f64: c = compare_field<double>(a, b, f); break;
            }
        }
        if (c != 0) return c;
    }
    return 0;
}

// The records of `data` (spec.record_size bytes each) stably sorted by the spec; with `unique`
// only the first record of each group of equal keys.
inline std::vector<std::byte> reference_record_sort(const std::vector<std::byte>& data, const KeySpec& spec,
                                                    bool unique) {
    const std::size_t r = spec.record_size, n = data.size() / r;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return reference_compare(&data[a * r], &data[b * r], spec) < 0;
    });
    std::vector<std::byte> out;
    out.reserve(data.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (unique && i > 0 && reference_compare(&data[order[i - 1] * r], &data[order[i] * r], spec) == 0) continue;
        out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(order[i] * r),
                   data.begin() + static_cast<std::ptrdiff_t>((order[i] + 1) * r));
    }
    return out;
}

// The whole-record keys of `data` (one T, little-endian, per record) stably sorted in the
// reference order, as bytes; with `unique` only the first of each group of equal keys.
template <class T>
std::string reference_whole_key_sort(const std::string& data, bool descending, bool unique) {
    std::vector<T> keys(data.size() / sizeof(T));
    if (!keys.empty()) std::memcpy(keys.data(), data.data(), keys.size() * sizeof(T));  // the host is little-endian
    const auto before = [descending](T a, T b) { return descending ? reference_less(b, a) : reference_less(a, b); };
    std::stable_sort(keys.begin(), keys.end(), before);
    if (unique)
        keys.erase(std::unique(keys.begin(), keys.end(), [&](T a, T b) { return !before(a, b) && !before(b, a); }),
                   keys.end());
    std::string out(keys.size() * sizeof(T), '\0');
    if (!keys.empty()) std::memcpy(out.data(), keys.data(), out.size());
    return out;
}

// reference_record_sort of records held in a string (a file's bytes, as read_text gives them).
// Where the whole record is one little-endian number, its values are sorted directly (the same
// order, faster for the millions of keys of the program tests).
inline std::string reference_record_sort_text(const std::string& data, const KeySpec& spec, bool unique) {
    if (spec.fields.size() == 1 && !spec.fields[0].is_bytes && !spec.fields[0].big_endian &&
        spec.fields[0].offset == 0 && spec.fields[0].length == spec.record_size) {
        const bool descending = spec.fields[0].descending;
        switch (spec.fields[0].type) {
        case KeyType::u8: return reference_whole_key_sort<std::uint8_t>(data, descending, unique);
        case KeyType::u16: return reference_whole_key_sort<std::uint16_t>(data, descending, unique);
        case KeyType::u32: return reference_whole_key_sort<std::uint32_t>(data, descending, unique);
        case KeyType::u64: return reference_whole_key_sort<std::uint64_t>(data, descending, unique);
        case KeyType::i8: return reference_whole_key_sort<std::int8_t>(data, descending, unique);
        case KeyType::i16: return reference_whole_key_sort<std::int16_t>(data, descending, unique);
        case KeyType::i32: return reference_whole_key_sort<std::int32_t>(data, descending, unique);
        case KeyType::i64: return reference_whole_key_sort<std::int64_t>(data, descending, unique);
        case KeyType::f32: return reference_whole_key_sort<float>(data, descending, unique);
        case KeyType::f64: return reference_whole_key_sort<double>(data, descending, unique);
        }
    }
    std::vector<std::byte> records(data.size());
    if (!records.empty()) std::memcpy(records.data(), data.data(), data.size());
    const std::vector<std::byte> sorted = reference_record_sort(records, spec, unique);
    return std::string(reinterpret_cast<const char*>(sorted.data()), sorted.size());
}

// `sorted` with every run of neighbouring records whose keys are equal put in the byte order of
// the whole records: for sorters that do not promise stability, their output and the stable
// reference are equal after this exactly when the output is in order and holds the same records.
inline std::string with_ties_in_byte_order(const std::string& sorted, const KeySpec& spec) {
    const std::size_t r = spec.record_size, n = sorted.size() / r;
    // Where the key covers the whole record, equal keys are equal records (totalOrder tells every
    // float bit pattern apart): nothing to reorder.
    std::vector<bool> in_key(r, false);
    for (const KeyField& f : spec.fields)
        for (std::size_t b = 0; b < f.length; ++b) in_key[f.offset + b] = true;
    if (std::find(in_key.begin(), in_key.end(), false) == in_key.end()) return sorted;
    const auto* bytes = reinterpret_cast<const std::byte*>(sorted.data());
    std::string out;
    out.reserve(sorted.size());
    for (std::size_t first = 0; first < n;) {
        std::size_t end = first + 1;
        while (end < n && reference_compare(bytes + (end - 1) * r, bytes + end * r, spec) == 0) ++end;
        std::vector<std::string> group;
        for (std::size_t i = first; i < end; ++i) group.push_back(sorted.substr(i * r, r));
        std::sort(group.begin(), group.end());
        for (const auto& record : group) out += record;
        first = end;
    }
    return out;
}

// The key of the programs' key options and --unique, as read by the rules of docs/cli.md (not by
// the programs' parser): --type T (default u64: the whole record one little-endian T, or a T at
// offset 0 of larger --record-size records), --key OFFSET:TYPE[:be|le][:desc] or
// OFFSET:bytes:LEN[:desc] (repeatable, the first most significant; records as large as the
// fields' end unless --record-size says), --format gensort (100-byte records, the 10-byte key at
// offset 0), --descending (every field reversed), --stable (no change). Anything else is refused.
struct ReferenceKey {
    KeySpec spec;
    bool unique = false;
};

inline KeyType reference_key_type(const std::string& name) {
    static const std::pair<const char*, KeyType> kTypes[] = {
        {"u8", KeyType::u8},   {"u16", KeyType::u16}, {"u32", KeyType::u32}, {"u64", KeyType::u64},
        {"i8", KeyType::i8},   {"i16", KeyType::i16}, {"i32", KeyType::i32}, {"i64", KeyType::i64},
        {"f32", KeyType::f32}, {"f64", KeyType::f64}};
    for (const auto& [type_name, type] : kTypes)
        if (name == type_name) return type;
    throw std::invalid_argument("reference: unknown key type '" + name + "'");
}

inline std::size_t reference_key_width(KeyType type) {
    switch (type) {
    case KeyType::u8:
    case KeyType::i8: return 1;
    case KeyType::u16:
    case KeyType::i16: return 2;
    case KeyType::u32:
    case KeyType::i32:
    case KeyType::f32: return 4;
    default: return 8;
    }
}

inline KeyField reference_key_field(const std::string& text) {
    std::vector<std::string> parts;
    for (std::size_t at = 0;;) {
        const std::size_t colon = text.find(':', at);
        parts.push_back(text.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
        if (colon == std::string::npos) break;
        at = colon + 1;
    }
    if (parts.size() < 2) throw std::invalid_argument("reference: not a key field: '" + text + "'");
    KeyField field;
    field.offset = std::stoul(parts[0]);
    std::size_t next = 2;
    if (parts[1] == "bytes") {
        if (parts.size() < 3) throw std::invalid_argument("reference: a byte string without length: '" + text + "'");
        field.is_bytes = true;
        field.length = std::stoul(parts[2]);
        next = 3;
    } else {
        field.type = reference_key_type(parts[1]);
        field.length = reference_key_width(field.type);
    }
    for (; next < parts.size(); ++next) {
        if (parts[next] == "be" && !field.is_bytes)
            field.big_endian = true;
        else if (parts[next] == "le" && !field.is_bytes)
            field.big_endian = false;
        else if (parts[next] == "desc")
            field.descending = true;
        else
            throw std::invalid_argument("reference: not a key field: '" + text + "'");
    }
    return field;
}

inline ReferenceKey reference_key_of_options(const std::vector<std::string>& options) {
    ReferenceKey key;
    KeyType type = KeyType::u64;
    bool descending = false, gensort = false;
    std::optional<std::size_t> record_size;
    std::vector<KeyField> fields;
    for (std::size_t i = 0; i < options.size(); ++i) {
        std::string name = options[i], value;
        const bool has_value = name == "--type" || name == "--record-size" || name == "--key" || name == "--format";
        if (const std::size_t equals = name.find('='); equals != std::string::npos) {
            value = name.substr(equals + 1);
            name.resize(equals);
        } else if (has_value) {
            if (i + 1 == options.size()) throw std::invalid_argument("reference: " + name + " without its value");
            value = options[++i];
        }
        if (name == "--type")
            type = reference_key_type(value);
        else if (name == "--record-size")
            record_size = std::stoul(value);
        else if (name == "--key")
            fields.push_back(reference_key_field(value));
        else if (name == "--format" && value == "gensort")
            gensort = true;
        else if (name == "--descending")
            descending = true;
        else if (name == "--unique")
            key.unique = true;
        else if (name != "--stable")
            throw std::invalid_argument("reference: not a key option: '" + options[i] + "'");
    }
    if (gensort) {
        KeyField field;
        field.is_bytes = true;
        field.length = 10;
        key.spec.record_size = 100;
        key.spec.fields = {field};
    } else if (!fields.empty()) {
        std::size_t end = 0;
        for (const KeyField& f : fields) end = std::max(end, f.offset + f.length);
        key.spec.record_size = record_size.value_or(end);
        key.spec.fields = fields;
    } else {
        KeyField field;
        field.type = type;
        field.length = reference_key_width(type);
        key.spec.record_size = record_size.value_or(field.length);
        key.spec.fields = {field};
    }
    if (descending)
        for (KeyField& f : key.spec.fields) f.descending = !f.descending;
    return key;
}


// n records of random bytes whose key fields take few distinct values (so that ties are common:
// `distinct` values per key byte); f64 and f32 fields hold special values now and then.
inline std::vector<std::byte> make_records(std::size_t n, const KeySpec& spec, std::uint64_t seed,
                                           unsigned distinct = 3) {
    std::mt19937_64 rng(seed);
    const std::size_t r = spec.record_size;
    std::vector<std::byte> data(n * r);
    for (auto& b : data) b = std::byte(rng());
    const auto specials64 = special_values<double>();
    const auto specials32 = special_values<float>();
    for (std::size_t i = 0; i < n; ++i) {
        std::byte* record = &data[i * r];
        for (const auto& f : spec.fields) {
            for (std::size_t j = 0; j < f.length; ++j)
                record[f.offset + j] = std::byte(rng() % 5 == 0 ? rng() : rng() % distinct);
            if (!f.is_bytes && (f.type == KeyType::f64 || f.type == KeyType::f32) && rng() % 4 == 0) {
                std::byte bytes[8];
                if (f.type == KeyType::f64) {
                    const double v = specials64[rng() % specials64.size()];
                    std::memcpy(bytes, &v, 8);
                } else {
                    const float v = specials32[rng() % specials32.size()];
                    std::memcpy(bytes, &v, 4);
                }
                for (std::size_t b = 0; b < f.length; ++b)
                    record[f.offset + (f.big_endian ? f.length - 1 - b : b)] = bytes[b];
            }
        }
    }
    return data;
}

// The spec in words for failure messages, e.g. "24-byte records, key 4:u32 20:u16:be:desc".
inline std::string describe(const KeySpec& spec) {
    std::string text = std::to_string(spec.record_size) + "-byte records, key";
    for (const auto& f : spec.fields)
        text += " " + std::to_string(f.offset) + ":" +
                (f.is_bytes ? "bytes:" + std::to_string(f.length) : std::string(key_type_name(f.type))) +
                (f.big_endian ? ":be" : "") + (f.descending ? ":desc" : "");
    return text;
}

}  // namespace gpusort::testing
