// Sort Benchmark style records of gpusort-gen --format gensort, and the same records as text
// lines (--format gensort-text) for sorters that take lines, such as GNU sort.
#pragma once

#include "tools/gen/key_generator.hpp"

#include <cstddef>
#include <cstdint>

namespace gpusort::gen {

inline constexpr std::size_t kGensortRecordSize = 100;

// The 100-byte record `index` of u64 keys `keys`. Bytes 0-9 are the key: the first 8 are the
// key of the index written big-endian (so memcmp order follows it), the last 2 random (zero for
// `equal` and `few-unique`, so that equal keys stay equal). Bytes 10-17 hold the index
// (little-endian) and 18-99 a printable pattern derived from it, so every record is unique and
// says where it came from.
void make_gensort_record(const KeyGenerator& keys, std::uint64_t index, std::byte* record);

// The record of the same index as a 100-byte text line. Characters 0-19 are the 10 key bytes as
// lowercase hex, so that the line order under LC_ALL=C is the memcmp order of the binary keys;
// then a space, the index as 20 decimal digits, a space, 57 letters derived from the index, and
// '\n' (99 printable characters and a newline).
void make_gensort_text_line(const KeyGenerator& keys, std::uint64_t index, std::byte* line);

}  // namespace gpusort::gen
