// Builds the one-line messages of GpuError from CUDA error codes.
#include "gpu/gpu_error.hpp"

#include <cstdio>

namespace gpusort::gpu {

GpuError::GpuError(cudaError_t code, const std::string& message)
    : gpusort::GpuError(message), code_(code) {}

namespace {

std::string runtime_version_text() {
    const int v = CUDART_VERSION;
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string gib_text(std::size_t bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return text;
}

}  // namespace

std::string describe_cuda_error(cudaError_t code) {
    std::string text;
    switch (code) {
        case cudaErrorNoDevice:
            text = "no CUDA-capable GPU found";
            break;
        case cudaErrorInsufficientDriver:
            text = "the NVIDIA driver is missing or older than the CUDA runtime " + runtime_version_text() +
                   " this program was built with; install or update the driver";
            break;
        case cudaErrorMemoryAllocation:
            text = "out of device memory";
            break;
        default:
            text = cudaGetErrorString(code);
            break;
    }
    return text + " [" + cudaGetErrorName(code) + "]";
}

void throw_cuda_error(cudaError_t code, const std::string& operation) {
    // Clear the runtime's record of a non-sticky error so that later checks do not report it again.
    (void)cudaGetLastError();
    throw GpuError(code, "GPU error in " + operation + ": " + describe_cuda_error(code));
}

void throw_device_out_of_memory(cudaError_t code, std::size_t bytes_asked) {
    (void)cudaGetLastError();
    std::string where;
    int device = -1;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaGetDevice(&device) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        where = " on GPU " + std::to_string(device) + " (free " + std::to_string(free_bytes) + " of " +
                std::to_string(total_bytes) + " bytes); lower the device-memory budget";
    }
    (void)cudaGetLastError();
    throw GpuError(code, "out of device memory: could not allocate " + std::to_string(bytes_asked) +
                             " bytes (" + gib_text(bytes_asked) + ")" + where + " [" + cudaGetErrorName(code) + "]");
}

void check_launch(const char* kernel_name) {
    const cudaError_t code = observe_cuda_result(cudaGetLastError(), kernel_name);
    if (code != cudaSuccess) throw_cuda_error(code, std::string("launch of kernel ") + kernel_name);
}

}  // namespace gpusort::gpu
