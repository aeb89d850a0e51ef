// Page-locked host memory allocation for PinnedBuffer, failures reported as GpuError.
#include "gpu/pinned_buffer.hpp"

#include <cuda_runtime_api.h>

#include "gpu/gpu_error.hpp"

namespace gpusort::gpu {

void* allocate_pinned_bytes(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    void* pointer = nullptr;
    const cudaError_t code = observe_cuda_result(cudaHostAlloc(&pointer, bytes, cudaHostAllocDefault), "cudaHostAlloc");
    if (code != cudaSuccess) {
        if (pointer != nullptr) (void)cudaFreeHost(pointer);  // an injected failure
        throw_cuda_error(code, "cudaHostAlloc of " + std::to_string(bytes) + " bytes of pinned host memory");
    }
    return pointer;
}

void free_pinned_bytes(void* pointer) noexcept {
    if (pointer != nullptr) (void)cudaFreeHost(pointer);
}

}  // namespace gpusort::gpu
