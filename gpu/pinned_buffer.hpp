// PinnedBuffer<T>: owns an array of T in page-locked host memory (cudaHostAlloc / cudaFreeHost),
// move-only. Pinned memory is slow to allocate: make these once and reuse them.
#pragma once

#include <cstddef>
#include <utility>

namespace gpusort::gpu {

// Untyped allocation used by PinnedBuffer; bytes == 0 gives nullptr.
void* allocate_pinned_bytes(std::size_t bytes);
void free_pinned_bytes(void* pointer) noexcept;

template <class T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t count)
        : data_(static_cast<T*>(allocate_pinned_bytes(count * sizeof(T)))), size_(count) {}
    ~PinnedBuffer() { free_pinned_bytes(data_); }

    PinnedBuffer(PinnedBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        if (this != &other) {
            free_pinned_bytes(data_);
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    const T& operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace gpusort::gpu
