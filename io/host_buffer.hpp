// HostBuffer: a large block of host memory mapped directly from the kernel, with transparent huge
// pages asked for: touching fresh memory in 2 MiB pages costs far less than in 4 KiB pages.
// copy_parallel() fills it from several threads, so first-touch page faults are spread too.
#pragma once

#include <cstddef>
#include <span>

namespace gpusort::io {

// The memory of a HostBuffer without the object (for an allocator): `bytes` mapped with huge
// pages asked for (throws std::bad_alloc), and given back.
std::byte* map_memory(std::size_t bytes);
void unmap_memory(std::byte* data, std::size_t bytes) noexcept;

class HostBuffer {
public:
    HostBuffer() = default;
    explicit HostBuffer(std::size_t bytes);  // throws std::bad_alloc
    ~HostBuffer();
    HostBuffer(HostBuffer&& other) noexcept;
    HostBuffer& operator=(HostBuffer&& other) noexcept;
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;

    std::byte* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

// Copies of this many bytes or more bypass the caches (non-temporal stores): far larger than the
// caches, they would only evict what is there, and their destinations (an output map, a pinned buffer
// the GPU reads, a part merged later) are not read again soon.
inline constexpr std::size_t kStreamCopyBytes = std::size_t{32} << 20;

// A copy cut into blocks copied by TBB threads; streamed past the caches from kStreamCopyBytes.
void copy_parallel(std::byte* destination, std::span<const std::byte> source);

}  // namespace gpusort::io
