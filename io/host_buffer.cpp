// HostBuffer: mmap + MADV_HUGEPAGE; copy_parallel: a blocked parallel copy, streamed past the caches
// when it is large.
#include "io/host_buffer.hpp"

#include "io/syscalls.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <sys/mman.h>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpusort::io {

namespace {

// Copies one block with non-temporal stores: the destination's cache lines are written whole, not
// read first, so a copy moves two bytes through memory per byte, not three. memcpy does the same
// only past a size threshold of its own, well above copy_parallel's blocks.
void stream_block(std::byte* destination, const std::byte* source, std::size_t length) {
#if defined(__SSE2__)
    const std::size_t head = std::min(length, (16 - reinterpret_cast<std::uintptr_t>(destination) % 16) % 16);
    std::memcpy(destination, source, head);
    std::size_t i = head;
    for (; i + 64 <= length; i += 64)
        for (std::size_t lane = 0; lane < 64; lane += 16)
            _mm_stream_si128(reinterpret_cast<__m128i*>(destination + i + lane),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + lane)));
    std::memcpy(destination + i, source + i, length - i);
    _mm_sfence();  // the streamed stores are visible before the task ends
#else
    std::memcpy(destination, source, length);
#endif
}

}  // namespace

std::byte* map_memory(std::size_t bytes) {
    void* p = io::sys::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without it the memory still works
    return static_cast<std::byte*>(p);
}

void unmap_memory(std::byte* data, std::size_t bytes) noexcept { ::munmap(data, bytes); }

HostBuffer::HostBuffer(std::size_t bytes) : size_(bytes) {
    if (bytes > 0) data_ = map_memory(bytes);
}

HostBuffer::~HostBuffer() {
    if (data_) unmap_memory(data_, size_);
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
        if (data_) unmap_memory(data_, size_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void copy_parallel(std::byte* destination, std::span<const std::byte> source) {
    constexpr std::size_t kBlock = std::size_t{4} << 20;
    const bool stream = source.size() >= kStreamCopyBytes;
    const std::size_t blocks = (source.size() + kBlock - 1) / kBlock;
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::size_t begin = b * kBlock, length = std::min(kBlock, source.size() - begin);
        if (stream)
            stream_block(destination + begin, source.data() + begin, length);
        else
            std::memcpy(destination + begin, source.data() + begin, length);
    });
}

}  // namespace gpusort::io
