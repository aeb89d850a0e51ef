// Which GPUs are there: count (never throws, 0 without a device or driver), why none is usable
// and whether that is a machine without a GPU or a failing setup, and a device's name and memory.
#pragma once

#include <cstddef>
#include <string>

namespace gpusort::gpu {

// Number of usable CUDA devices. Returns 0, never throws, when the runtime finds no device,
// no driver or a driver too old for it (or fails in any other way).
int device_count() noexcept;

// Empty when device_count() > 0; otherwise one line saying why no GPU can be used.
std::string device_unavailable_reason();

// Why the count is 0, as the runtime answered: a machine without a GPU (no device, no driver or
// one too old for this runtime) or any other error (a GPU setup that fails).
enum class DeviceAbsence { none, no_device, no_driver, error };

// The runtime's answer to the count query: device_count(), device_unavailable_reason() and which
// kind of absence it is (none exactly when count > 0).
struct DeviceCount {
    int count = 0;
    DeviceAbsence absence = DeviceAbsence::none;
    std::string reason;
};

// Asks the runtime once; throws no GpuError.
DeviceCount count_devices();

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
