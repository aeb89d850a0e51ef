// DataSpec and generate(): test and benchmark data as gpusort-gen writes it, in memory: keys of
// one type (key_generator.hpp), or gensort records and text lines (gensort_records.hpp). The
// same spec gives the same bytes, however the data are cut into calls. Input only: what sorted
// data should look like is for the caller's own reference to say.
#pragma once

#include "tools/gen/gensort_records.hpp"
#include "tools/gen/key_generator.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace gpusort::gen {

// keys: each record is one key of keys.type (little-endian); gensort / gensort_text: 100-byte
// records or lines whose keys are u64 keys of keys.distribution.
enum class RecordFormat { keys, gensort, gensort_text };

// "gensort", "gensort-text" (the plain keys have no name: they are the default).
std::optional<RecordFormat> parse_record_format(std::string_view name);

struct DataSpec {
    RecordFormat format = RecordFormat::keys;
    KeyGenerator keys;  // keys.count records in all

    std::size_t record_size() const;
    // Throws std::invalid_argument when the spec cannot be made: special values of a type that
    // is not a float, gensort records of keys other than u64.
    void validate() const;
};

// Records [first, first + out.size() / record_size) of the data into `out` (whole records, all
// below keys.count), made by TBB threads. Throws std::invalid_argument as validate() does.
void generate(const DataSpec& spec, std::uint64_t first, std::span<std::byte> out);

// All keys.count records.
std::vector<std::byte> generate(const DataSpec& spec);

// `count` keys of `type` as values of T (whose size must be the type's width).
template <class T>
std::vector<T> generate_keys(KeyType type, Distribution distribution, std::uint64_t count, std::uint64_t seed,
                             bool special = false) {
    const DataSpec spec{RecordFormat::keys, KeyGenerator{type, distribution, seed, count, special}};
    if (spec.record_size() != sizeof(T)) throw std::invalid_argument("generate_keys: the key type's width is not sizeof(T)");
    std::vector<T> keys(count);
    generate(spec, 0, std::as_writable_bytes(std::span(keys)));
    return keys;
}

}  // namespace gpusort::gen
