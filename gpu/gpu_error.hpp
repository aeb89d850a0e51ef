// GpuError: the one exception type of the GPU layer (a public gpusort::GpuError that keeps the
// CUDA error code), and the checks that turn a failed CUDA call or kernel launch into it. Messages
// are one line and say what to do where possible.
#pragma once

#include "gpusort/errors.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpusort::gpu {

class GpuError : public gpusort::GpuError {
public:
    GpuError(cudaError_t code, const std::string& message);
    cudaError_t code() const noexcept { return code_; }

private:
    cudaError_t code_;
};

// One line describing a CUDA error code, with advice for the common ones
// (no device, driver missing or too old, out of memory).
std::string describe_cuda_error(cudaError_t code);

// Throws GpuError for `code`; `operation` names what failed ("cudaMemcpyAsync of sort input").
[[noreturn]] void throw_cuda_error(cudaError_t code, const std::string& operation);

// Throws GpuError("out of device memory ...") naming the size asked for and the device's free memory.
[[noreturn]] void throw_device_out_of_memory(cudaError_t code, std::size_t bytes_asked);

// Every CUDA result the GPU layer checks passes through here first, with what it checked. It
// returns `code`; in the test-only build of gpu/cuda_result.cpp it can turn one chosen result
// into a failure, and log what each result checked.
cudaError_t observe_cuda_result(cudaError_t code, const char* operation) noexcept;

inline void check_cuda(cudaError_t code, const char* operation) {
    code = observe_cuda_result(code, operation);
    if (code != cudaSuccess) throw_cuda_error(code, operation);
}

// Call right after a kernel launch: reports a bad launch configuration (and earlier
// asynchronous faults) as a GpuError naming the kernel.
void check_launch(const char* kernel_name);

}  // namespace gpusort::gpu
