// Device memory allocation for DeviceBuffer, with out-of-memory reported as GpuError.
#include "gpu/device_buffer.hpp"

#include "gpu/gpu_error.hpp"

namespace gpusort::gpu {

void* allocate_device_bytes(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    void* pointer = nullptr;
    const cudaError_t code = observe_cuda_result(cudaMalloc(&pointer, bytes), "cudaMalloc");
    if (code != cudaSuccess && pointer != nullptr) (void)cudaFree(pointer);  // an injected failure
    if (code == cudaErrorMemoryAllocation) throw_device_out_of_memory(code, bytes);
    if (code != cudaSuccess) throw_cuda_error(code, "cudaMalloc of " + std::to_string(bytes) + " bytes");
    return pointer;
}

void free_device_bytes(void* pointer) noexcept {
    if (pointer != nullptr) (void)cudaFree(pointer);
}

}  // namespace gpusort::gpu
