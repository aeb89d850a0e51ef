// read_parallel / write_parallel: one pread/pwrite per block, blocks in parallel.
#include "io/parallel_io.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

namespace gpusort::io {

namespace {

// Cuts [offset, offset + size) at the multiples of `block` in the file (so that the blocks of
// direct I/O stay whole) and transfers the pieces in parallel: transfer(begin, length), begin
// counted from the start of the transfer.
template <class Transfer>
void for_each_block(std::uint64_t offset, std::size_t size, std::size_t block, Transfer&& transfer) {
    std::vector<std::size_t> cuts = {0};
    for (std::uint64_t at = (offset / block + 1) * block; at < offset + size; at += block)
        cuts.push_back(static_cast<std::size_t>(at - offset));
    cuts.push_back(size);
    if (cuts.size() == 2) {
        if (size > 0) transfer(0, size);
        return;
    }
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, cuts.size() - 1, 1), [&](const auto& range) {
        for (std::size_t b = range.begin(); b != range.end(); ++b) transfer(cuts[b], cuts[b + 1] - cuts[b]);
    });
}

// Direct transfers wait for the disk, a piece at a time: smaller blocks keep more of them in flight.
std::size_t block_of(const File& file) { return file.direct() ? file.direct_piece() : kParallelIoBlock; }

}  // namespace

void read_parallel(const File& file, std::uint64_t offset, std::span<std::byte> data) {
    for_each_block(offset, data.size(), block_of(file), [&](std::size_t begin, std::size_t length) {
        file.read_at(offset + begin, data.subspan(begin, length));
    });
}

void write_parallel(const File& file, std::uint64_t offset, std::span<const std::byte> data) {
    for_each_block(offset, data.size(), block_of(file), [&](std::size_t begin, std::size_t length) {
        file.write_at(offset + begin, data.subspan(begin, length));
    });
}

}  // namespace gpusort::io
