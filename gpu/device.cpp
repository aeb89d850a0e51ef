// Device discovery: device_count, the reason none is usable and its kind, device properties and
// free memory.
#include "gpu/device.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

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

DeviceAbsence absence_of(cudaError_t code, int count) noexcept {
    switch (code) {
        case cudaSuccess: return count > 0 ? DeviceAbsence::none : DeviceAbsence::no_device;
        case cudaErrorNoDevice: return DeviceAbsence::no_device;
        case cudaErrorInsufficientDriver: return DeviceAbsence::no_driver;
        default: return DeviceAbsence::error;
    }
}

// Whether the NVIDIA driver's library can be loaded. Where it is missing (a machine without a GPU)
// the runtime answers cudaErrorInsufficientDriver, as it does for a driver too old for it.
bool driver_library_present() noexcept {
    void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver) ::dlclose(driver);
    return driver != nullptr;
}

// Why no GPU can be used, from the runtime's answer `code` to the count query (0 devices where it
// is cudaSuccess). A machine without a GPU, or without a driver for one, is told that no GPU was
// found; the advice to install or update the driver is only for a driver that is there but too
// old for this runtime.
std::string absence_reason(cudaError_t code) {
    switch (code) {
        case cudaSuccess: return "no GPU was found [the CUDA runtime counts 0]";
        case cudaErrorNoDevice: return "no GPU was found [cudaErrorNoDevice]";
        case cudaErrorInsufficientDriver:
            if (!driver_library_present()) return "no GPU was found, and no NVIDIA driver is installed";
            return describe_cuda_error(code);
        default: return describe_cuda_error(code);
    }
}

}  // namespace

int device_count() noexcept {
    int count = 0;
    (void)query_device_count(count);
    return count;
}

std::string device_unavailable_reason() {
    return count_devices().reason;
}

DeviceCount count_devices() {
    DeviceCount devices;
    const cudaError_t code = query_device_count(devices.count);
    devices.absence = absence_of(code, devices.count);
    if (code != cudaSuccess || devices.count == 0) devices.reason = absence_reason(code);
    return devices;
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
