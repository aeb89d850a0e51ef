// The one place where a key's size known only at run time becomes a compile-time one, for the
// host and the device code alike (header-only, C++17, nothing of the device). f is called with a
// tag that carries the size in its type:
//   with_key_width(bytes, f): f(U{}) with U the unsigned integer of `bytes` bytes (1, 2, 4;
//     anything else: 8), the type of a whole-record key of that width;
//   with_key_words(words, f): f(KeyWords<W>{}) with W the 64-bit words of a record key (1, 2, 3;
//     anything else: kMaxKeyWords, 4).
// For example: with_key_width(4, [&](auto key) { using U = decltype(key); ... }).
#pragma once

#include "src/keys/key_rules.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpusort {

template <std::size_t W>
using KeyWords = std::integral_constant<std::size_t, W>;

template <class F>
decltype(auto) with_key_width(std::size_t bytes, F&& f) {
    switch (bytes) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    default: return f(std::uint64_t{});
    }
}

template <class F>
decltype(auto) with_key_words(std::size_t words, F&& f) {
    switch (words) {
    case 1: return f(KeyWords<1>{});
    case 2: return f(KeyWords<2>{});
    case 3: return f(KeyWords<3>{});
    default: return f(KeyWords<kMaxKeyWords>{});
    }
}

}  // namespace gpusort
