// HostBuffer: mmap + MADV_HUGEPAGE; copy_parallel: blocked parallel memcpy.
#include "io/host_buffer.hpp"

#include "io/syscalls.hpp"

#include <cstring>
#include <new>
#include <sys/mman.h>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort::io {

HostBuffer::HostBuffer(std::size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    void* p = io::sys::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without it the buffer still works
    data_ = static_cast<std::byte*>(p);
}

HostBuffer::~HostBuffer() {
    if (data_) ::munmap(data_, size_);
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
        if (data_) ::munmap(data_, size_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void copy_parallel(std::byte* destination, std::span<const std::byte> source) {
    constexpr std::size_t kBlock = std::size_t{4} << 20;
    const std::size_t blocks = (source.size() + kBlock - 1) / kBlock;
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::size_t begin = b * kBlock, length = std::min(kBlock, source.size() - begin);
        std::memcpy(destination + begin, source.data() + begin, length);
    });
}

}  // namespace gpusort::io
