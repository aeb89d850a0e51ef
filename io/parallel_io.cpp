// read_parallel / write_parallel: one pread/pwrite per block, blocks in parallel.
#include "io/parallel_io.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort::io {

namespace {
template <class Transfer>
void for_each_block(std::size_t size, Transfer&& transfer) {
    const std::size_t blocks = (size + kParallelIoBlock - 1) / kParallelIoBlock;
    if (blocks <= 1) {
        if (size > 0) transfer(0, size);
        return;
    }
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const auto& range) {
        for (std::size_t b = range.begin(); b != range.end(); ++b) {
            const std::size_t begin = b * kParallelIoBlock;
            transfer(begin, std::min(size, begin + kParallelIoBlock) - begin);
        }
    });
}
}  // namespace

void read_parallel(const File& file, std::uint64_t offset, std::span<std::byte> data) {
    for_each_block(data.size(), [&](std::size_t begin, std::size_t length) {
        file.read_at(offset + begin, data.subspan(begin, length));
    });
}

void write_parallel(const File& file, std::uint64_t offset, std::span<const std::byte> data) {
    for_each_block(data.size(), [&](std::size_t begin, std::size_t length) {
        file.write_at(offset + begin, data.subspan(begin, length));
    });
}

}  // namespace gpusort::io
