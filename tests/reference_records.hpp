// Test references for records with key specs, independent of the code under test: a record
// comparison field by field (numbers decoded in their byte order and compared in the reference
// order, byte strings with memcmp), std::stable_sort by it, and --unique as "first of each group".
#pragma once

#include "reference_order.hpp"
#include "gpusort/key_spec.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
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
