// Device discovery and error reporting. These tests need no GPU: on a machine without a GPU or
// driver, device_count() must be 0 without throwing, and using the GPU must throw a one-line
// GpuError saying why.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <string>

#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/gpu_error.hpp"

namespace gpusort::gpu {
namespace {

// device_count() agrees with the CUDA runtime asked directly: 0 when it answers "no device" or
// "driver missing or too old" (the case on machines without a GPU), never an exception.
TEST(DevicePresence, DeviceCountAgreesWithTheRuntimeAndNeverThrows) {
    static_assert(noexcept(device_count()));
    const int count = device_count();
    int runtime_count = 0;
    const cudaError_t code = cudaGetDeviceCount(&runtime_count);
    (void)cudaGetLastError();
    if (code == cudaSuccess) {
        EXPECT_EQ(count, runtime_count);
    } else {
        EXPECT_EQ(count, 0) << "runtime answered " << cudaGetErrorName(code);
    }
    EXPECT_EQ(device_count(), count);  // asking twice gives the same answer
}

// count_devices() tells a machine without a GPU (the runtime answers "no device" or "no driver")
// from a GPU setup that fails (any other error), which the GPU tests must not skip.
TEST(DevicePresence, CountDevicesNamesTheKindOfAbsenceTheRuntimeAnswered) {
    int runtime_count = 0;
    const cudaError_t code = cudaGetDeviceCount(&runtime_count);
    (void)cudaGetLastError();
    DeviceAbsence expected = runtime_count > 0 ? DeviceAbsence::none : DeviceAbsence::no_device;
    if (code == cudaErrorInsufficientDriver) expected = DeviceAbsence::no_driver;
    else if (code != cudaSuccess && code != cudaErrorNoDevice) expected = DeviceAbsence::error;
    const DeviceCount devices = count_devices();
    EXPECT_EQ(devices.absence, expected) << "runtime answered " << cudaGetErrorName(code);
    EXPECT_EQ(devices.count, device_count());
    EXPECT_EQ(devices.reason, device_unavailable_reason());
}

TEST(DevicePresence, UnavailableReasonIsEmptyExactlyWhenThereIsADevice) {
    const std::string reason = device_unavailable_reason();
    if (device_count() > 0) {
        EXPECT_TRUE(reason.empty()) << reason;
    } else {
        EXPECT_FALSE(reason.empty());
        EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
    }
}

TEST(DevicePresence, UsingTheGpuWithoutOneThrowsAOneLineGpuError) {
    if (device_count() > 0) GTEST_SKIP() << "a GPU is present";
    try {
        DeviceBuffer<int> buffer(1024);
        FAIL() << "allocating device memory without a GPU did not throw";
    } catch (const GpuError& error) {
        const std::string message = error.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_NE(message.find("cudaMalloc of 4096 bytes"), std::string::npos) << message;  // names what failed
        EXPECT_NE(error.code(), cudaSuccess);
    }
    EXPECT_THROW(DeviceSorter<std::uint64_t> sorter(1000), GpuError);
}

TEST(DevicePresence, ErrorDescriptionsNameTheCauseAndTheCode) {
    const std::string no_device = describe_cuda_error(cudaErrorNoDevice);
    EXPECT_NE(no_device.find("no CUDA-capable GPU"), std::string::npos) << no_device;
    EXPECT_NE(no_device.find("cudaErrorNoDevice"), std::string::npos) << no_device;
    const std::string old_driver = describe_cuda_error(cudaErrorInsufficientDriver);
    EXPECT_NE(old_driver.find("driver"), std::string::npos) << old_driver;
    EXPECT_NE(old_driver.find("cudaErrorInsufficientDriver"), std::string::npos) << old_driver;
    const std::string memory = describe_cuda_error(cudaErrorMemoryAllocation);
    EXPECT_NE(memory.find("out of device memory"), std::string::npos) << memory;
}

// Planning from a budget needs no GPU.
TEST(DevicePresence, MaxKeysForDeviceBytesFitsTheBudgetTightly) {
    using Sorter = DeviceSorter<std::uint64_t, std::uint32_t>;
    for (const std::size_t budget : {std::size_t{0}, std::size_t{100}, std::size_t{1} << 20, std::size_t{3} << 30,
                                     (std::size_t{80} << 30) + 12345}) {
        const std::size_t n = Sorter::max_keys_for_device_bytes(budget);
        EXPECT_LE(Sorter::device_bytes_needed(n), budget) << "budget " << budget;
        EXPECT_GT(Sorter::device_bytes_needed(n + 1), budget) << "budget " << budget;
    }
    // Keys, payloads and their scratch copies: 2 * (8 + 4) bytes per key, plus a little.
    EXPECT_GE(Sorter::device_bytes_needed(1000000), 24u * 1000000);
    EXPECT_LE(Sorter::device_bytes_needed(1000000), 25u * 1000000);
}

}  // namespace
}  // namespace gpusort::gpu
