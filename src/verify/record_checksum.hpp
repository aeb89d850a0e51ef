// MultisetChecksum: an order-independent fingerprint of a sequence of records, so that a sorted
// file can be compared with its input as a multiset in one pass over each (gpusort-file --verify,
// gpusort-check --input). It is the record count and two sums (mod 2^64) of two independent
// 64-bit hashes of each record: the sums do not depend on the records' order, and two different
// multisets give the same checksum only when both hash sums collide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gpusort {

struct MultisetChecksum {
    std::uint64_t count = 0;
    std::uint64_t sum_a = 0;
    std::uint64_t sum_b = 0;

    // Adds one record (any length).
    void add(std::span<const std::byte> record);
    // Adds the consecutive records of `records` (record_size bytes each; throws
    // std::invalid_argument when it is not a whole number of records); hashes large spans in
    // parallel. The same as add() on each record.
    void add_records(std::span<const std::byte> records, std::size_t record_size);

    // Adds the records counted in `other`: checksums of parts (computed by different threads,
    // say) combine, in any order, into the checksum of the whole.
    MultisetChecksum& operator+=(const MultisetChecksum& other);

    bool operator==(const MultisetChecksum&) const = default;
};

}  // namespace gpusort
