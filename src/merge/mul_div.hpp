// mul_div: a * b / c for 64-bit values without overflow of the product (b <= c gives a result <= a).
#pragma once

#include <cstdint>

namespace gpusort {

inline std::uint64_t mul_div(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    __extension__ typedef unsigned __int128 u128;
    return static_cast<std::uint64_t>(static_cast<u128>(a) * b / c);
}

}  // namespace gpusort
