// The one copy of a column's fields between its packed form (a file's or an array's bytes) and
// joined records (src/input/column_input.hpp), both ways, and the blocks of rows that the reads and
// writes of columns share out among threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <tbb/parallel_for.h>

namespace gpusort {

namespace detail {

template <std::size_t W>
void copy_fixed_fields(const std::byte* from, std::size_t from_stride, std::byte* to, std::size_t to_stride,
                       std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i) std::memcpy(to + i * to_stride, from + i * from_stride, W);
}

}  // namespace detail

// Copies `count` fields of `width` bytes, every `from_stride` bytes from `from`, to every
// `to_stride` bytes at `to` (a stride of `width`: packed); the widths most columns have are copied
// with a width known when compiled.
inline void copy_fields(const std::byte* from, std::size_t from_stride, std::byte* to, std::size_t to_stride,
                        std::size_t width, std::uint64_t count) {
    switch (width) {
        case 1: return detail::copy_fixed_fields<1>(from, from_stride, to, to_stride, count);
        case 2: return detail::copy_fixed_fields<2>(from, from_stride, to, to_stride, count);
        case 4: return detail::copy_fixed_fields<4>(from, from_stride, to, to_stride, count);
        case 8: return detail::copy_fixed_fields<8>(from, from_stride, to, to_stride, count);
        case 16: return detail::copy_fixed_fields<16>(from, from_stride, to, to_stride, count);
        default:
            for (std::uint64_t i = 0; i < count; ++i) std::memcpy(to + i * to_stride, from + i * from_stride, width);
    }
}

// Rows per task of a read or write of columns.
inline constexpr std::uint64_t kColumnRowsPerBlock = 32768;

// f(first, count) for the blocks of `rows` rows, on several threads.
template <class F>
void for_row_blocks(std::uint64_t rows, F&& f) {
    const std::uint64_t blocks = (rows + kColumnRowsPerBlock - 1) / kColumnRowsPerBlock;
    tbb::parallel_for(std::uint64_t{0}, blocks, [&](std::uint64_t b) {
        const std::uint64_t first = b * kColumnRowsPerBlock;
        f(first, std::min(kColumnRowsPerBlock, rows - first));
    });
}

}  // namespace gpusort
