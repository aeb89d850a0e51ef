// Loads of record bytes at any alignment, shared by the order checker and the record checksum:
// 8 bytes as one word, and records shorter than 8 bytes from two overlapping loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpusort {

inline std::uint64_t load_word(const std::byte* p) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    return word;
}

// The n < 8 bytes at p, zero-extended.
inline std::uint64_t load_short(const std::byte* p, std::size_t n) {
    if (n >= 4) {
        std::uint32_t first, last;
        std::memcpy(&first, p, 4);
        std::memcpy(&last, p + n - 4, 4);
        return first | (std::uint64_t{last} << (8 * (n - 4)));
    }
    if (n >= 2) {
        std::uint16_t first, last;
        std::memcpy(&first, p, 2);
        std::memcpy(&last, p + n - 2, 2);
        return first | (std::uint64_t{last} << (8 * (n - 2)));
    }
    return n == 1 ? std::to_integer<std::uint64_t>(p[0]) : 0;
}

}  // namespace gpusort
