// MultisetChecksum: an order-independent fingerprint of a sequence of records (count and two
// sums of 64-bit hashes), so that two files can be compared as multisets in one pass each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace gpusort::tools {

struct MultisetChecksum {
    std::uint64_t count = 0;
    std::uint64_t sum_a = 0;
    std::uint64_t sum_b = 0;

    void add(std::span<const std::byte> record);
    bool operator==(const MultisetChecksum&) const = default;
};

}  // namespace gpusort::tools
