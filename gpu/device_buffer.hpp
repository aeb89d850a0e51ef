// DeviceBuffer<T>: owns an array of T in device memory (cudaMalloc / cudaFree), move-only.
// Allocation failures throw GpuError naming the size asked for.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace gpusort::gpu {

// Untyped allocation used by DeviceBuffer; bytes == 0 gives nullptr.
void* allocate_device_bytes(std::size_t bytes);
void free_device_bytes(void* pointer) noexcept;

template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count)
        : data_(static_cast<T*>(allocate_device_bytes(count * sizeof(T)))), size_(count) {}
    ~DeviceBuffer() { free_device_bytes(data_); }

    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            free_device_bytes(data_);
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace gpusort::gpu
