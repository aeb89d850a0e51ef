// Large positional reads and writes cut into blocks and spread over TBB threads: reading a
// file from the page cache scales with threads, and so does a big write to a lesser degree; a
// file with direct I/O keeps that many requests in flight. Blocks are cut at multiples of their
// size in the file, so that only the ends of a transfer may be partial blocks.
#pragma once

#include "io/file.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace gpusort::io {

// Bytes per block of one parallel transfer (the file's direct piece with direct I/O).
inline constexpr std::size_t kParallelIoBlock = std::size_t{8} << 20;

void read_parallel(const File& file, std::uint64_t offset, std::span<std::byte> data);
void write_parallel(const File& file, std::uint64_t offset, std::span<const std::byte> data);

}  // namespace gpusort::io
