// read_parallel / write_parallel: one pread/pwrite per block (of a file or a spill), blocks in parallel.
#include "io/parallel_io.hpp"

#include "io/spill_file.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpusort::io {

namespace {

// Cuts [offset, offset + size) at the multiples of `block` in the file (so that the blocks of
// direct I/O stay whole) and transfers the pieces in parallel: transfer(begin, length), begin
// counted from the start of the transfer.
template <class Transfer>
void for_each_block(std::uint64_t offset, std::size_t size, std::size_t block, Transfer&& transfer) {
    // The first block ends at the first multiple of `block` in the file, the others are whole.
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(size, block - offset % block));
    const std::size_t blocks = 1 + (size - first + block - 1) / block;
    if (blocks == 1) {
        if (size > 0) transfer(0, size);
        return;
    }
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const auto& range) {
        for (std::size_t b = range.begin(); b != range.end(); ++b) {
            const std::size_t begin = b == 0 ? 0 : first + (b - 1) * block;
            transfer(begin, std::min(size, first + b * block) - begin);
        }
    });
}

// Direct transfers wait for the disk, a piece at a time: smaller blocks keep more of them in flight.
template <class AnyFile>
std::size_t block_of(const AnyFile& file) {
    return file.direct() ? file.direct_piece() : kParallelIoBlock;
}

template <class AnyFile>
void read_blocks(const AnyFile& file, std::uint64_t offset, std::span<std::byte> data) {
    for_each_block(offset, data.size(), block_of(file), [&](std::size_t begin, std::size_t length) {
        file.read_at(offset + begin, data.subspan(begin, length));
    });
}

template <class AnyFile>
void write_blocks(const AnyFile& file, std::uint64_t offset, std::span<const std::byte> data) {
    for_each_block(offset, data.size(), block_of(file), [&](std::size_t begin, std::size_t length) {
        file.write_at(offset + begin, data.subspan(begin, length));
    });
}

}  // namespace

void read_parallel(const File& file, std::uint64_t offset, std::span<std::byte> data) { read_blocks(file, offset, data); }
void write_parallel(const File& file, std::uint64_t offset, std::span<const std::byte> data) {
    write_blocks(file, offset, data);
}
void read_parallel(const SpillFile& file, std::uint64_t offset, std::span<std::byte> data) { read_blocks(file, offset, data); }
void write_parallel(const SpillFile& file, std::uint64_t offset, std::span<const std::byte> data) {
    write_blocks(file, offset, data);
}

}  // namespace gpusort::io
