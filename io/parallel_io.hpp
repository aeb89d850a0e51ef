// Large positional reads and writes cut into blocks and spread over TBB threads: reading a
// file from the page cache scales with threads, and so does a big write to a lesser degree; a
// file with direct I/O keeps that many requests in flight. Blocks are cut at multiples of their
// size in the file, so that only the ends of a transfer may be partial blocks.
#pragma once

#include "io/file.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace gpusort::io {

// Bytes per block of one parallel transfer (the file's direct piece with direct I/O).
inline constexpr std::size_t kParallelIoBlock = std::size_t{8} << 20;

// The pieces of a large transfer of `whole` bytes on `threads` threads: while progress is counted,
// 64 MiB or more between two counts (each piece is itself parallel: four blocks per thread keep
// them all busy), so that a progress line moves as the pieces go; else the whole transfer at once.
inline std::size_t progress_piece_bytes(bool counting, unsigned threads, std::size_t whole) {
    if (!counting) return whole;
    return std::max<std::size_t>(std::size_t{64} << 20, std::size_t{4} * threads * kParallelIoBlock);
}

// Calls f(offset, piece) for the consecutive pieces of `data`, in order: `piece_bytes` at most
// (rounded down to whole `unit`s, a record or an entry, but at least one), so each piece is whole
// units when `data` is.
template <class Byte, class F>
void for_each_piece(std::span<Byte> data, std::size_t unit, std::size_t piece_bytes, F&& f) {
    const std::size_t piece = std::max<std::size_t>(1, piece_bytes / unit) * unit;
    for (std::size_t at = 0; at < data.size(); at += piece) f(at, data.subspan(at, std::min(piece, data.size() - at)));
}

class SpillFile;

void read_parallel(const File& file, std::uint64_t offset, std::span<std::byte> data);
void write_parallel(const File& file, std::uint64_t offset, std::span<const std::byte> data);
// The same over a spill's stripes: a block lies in one stripe (kSpillStripe is a multiple of kParallelIoBlock).
void read_parallel(const SpillFile& file, std::uint64_t offset, std::span<std::byte> data);
void write_parallel(const SpillFile& file, std::uint64_t offset, std::span<const std::byte> data);

}  // namespace gpusort::io
