// Which GPUs are there: count (never throws, 0 without a device or driver), why none is usable,
// and a device's name and memory.
#pragma once

#include <cstddef>
#include <string>

namespace gpusort::gpu {

// Number of usable CUDA devices. Returns 0, never throws, when the runtime finds no device,
// no driver or a driver too old for it (or fails in any other way).
int device_count() noexcept;

// Empty when device_count() > 0; otherwise one line saying why no GPU can be used.
std::string device_unavailable_reason();

struct DeviceInfo {
    int index = 0;
    std::string name;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    int multiprocessors = 0;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
};

// Name, memory and compute capability of `device`; throws GpuError.
DeviceInfo device_info(int device);

// The device current for this host thread; throws GpuError.
int current_device();

}  // namespace gpusort::gpu
