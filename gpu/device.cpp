// Device discovery: device_count, the reason none is usable, device properties and free memory.
#include "gpu/device.hpp"

#include <cuda_runtime_api.h>

#include "gpu/gpu_error.hpp"

namespace gpusort::gpu {

namespace {

// cudaGetDeviceCount, with the runtime's error record cleared on failure.
cudaError_t query_device_count(int& count) noexcept {
    count = 0;
    const cudaError_t code = cudaGetDeviceCount(&count);
    if (code != cudaSuccess) {
        (void)cudaGetLastError();
        count = 0;
    }
    return code;
}

}  // namespace

int device_count() noexcept {
    int count = 0;
    (void)query_device_count(count);
    return count;
}

std::string device_unavailable_reason() {
    int count = 0;
    const cudaError_t code = query_device_count(count);
    if (code != cudaSuccess) return describe_cuda_error(code);
    if (count == 0) return "the CUDA runtime reports 0 devices";
    return {};
}

int current_device() {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    return device;
}

DeviceInfo device_info(int device) {
    DeviceInfo info;
    info.index = device;
    cudaDeviceProp props{};
    check_cuda(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
    info.name = props.name;
    info.total_bytes = props.totalGlobalMem;
    info.multiprocessors = props.multiProcessorCount;
    info.compute_capability_major = props.major;
    info.compute_capability_minor = props.minor;

    const int previous = current_device();
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    const cudaError_t code = cudaMemGetInfo(&free_bytes, &total_bytes);
    check_cuda(cudaSetDevice(previous), "cudaSetDevice");
    check_cuda(code, "cudaMemGetInfo");
    info.free_bytes = free_bytes;
    info.total_bytes = total_bytes;
    return info;
}

}  // namespace gpusort::gpu
