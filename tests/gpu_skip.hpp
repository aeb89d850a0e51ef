// The one place where a GPU test may skip. SKIP_WITHOUT_GPU() (a test of the sort through the GPU
// backend) and SKIP_WITHOUT_DEVICE() (a test of the GPU layer) skip a test, saying why, only where
// this machine has no GPU: the CUDA runtime answers "no device" or "no driver", or the build has no
// CUDA. Any other failure to count the devices or to build the GPU sorter fails the test. Under
// GPUSORT_REQUIRE_GPU=1 (the runs on the GPU machine) a missing GPU fails the test too, so that no
// GPU test passes there by skipping.
#pragma once

#include "src/sorters/make_chunk_sorter.hpp"
#ifdef GPUSORT_WITH_GPU
#include "gpu/device.hpp"
#endif

#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <string>

namespace gpusort::testing {

// True under GPUSORT_REQUIRE_GPU=1: this machine has a GPU, and a test that finds none fails.
inline bool gpu_required() {
    const char* value = std::getenv("GPUSORT_REQUIRE_GPU");
    return value != nullptr && std::string(value) == "1";
}

// What a GPU test does here (run, skip or fail), and why.
struct GpuGate {
    enum Verdict { run, skip, fail };
    Verdict verdict = run;
    std::string why;
};

// No GPU on this machine: skip, or fail where one is required.
inline GpuGate without_gpu(const std::string& why) {
    if (gpu_required()) return {GpuGate::fail, "GPUSORT_REQUIRE_GPU=1, but no GPU can be used: " + why};
    return {GpuGate::skip, why};
}

// A test of the GPU layer: the devices as the CUDA runtime counts them.
inline GpuGate device_gate() {
#ifdef GPUSORT_WITH_GPU
    const gpu::DeviceCount devices = gpu::count_devices();
    switch (devices.absence) {
        case gpu::DeviceAbsence::none: return {};
        case gpu::DeviceAbsence::no_device:
        case gpu::DeviceAbsence::no_driver: return without_gpu(devices.reason);
        case gpu::DeviceAbsence::error: break;
    }
    return {GpuGate::fail, "the CUDA runtime fails to count the GPUs: " + devices.reason};
#else
    return without_gpu("this build has no CUDA");
#endif
}

// Empty when the sorter factory builds a GPU sorter, else what it threw.
inline std::string gpu_sorter_error() {
    try {
        make_chunk_sorter({Backend::gpu, 0, 1, {}}, KeyOrder{KeyType::u64, false});
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

// A test of the sort through the GPU backend: a device, and the GPU sorter built on it.
inline GpuGate backend_gate() {
    GpuGate gate = device_gate();
    if (gate.verdict != GpuGate::run) return gate;
    const std::string error = gpu_sorter_error();
    if (!error.empty()) return {GpuGate::fail, "a GPU is present, but the GPU sorter cannot be built: " + error};
    return gate;
}

}  // namespace gpusort::testing

#define GPUSORT_APPLY_GPU_GATE(gate_expression)                                                    \
    do {                                                                                           \
        const ::gpusort::testing::GpuGate gpusort_gate = (gate_expression);                        \
        if (gpusort_gate.verdict == ::gpusort::testing::GpuGate::skip) GTEST_SKIP() << gpusort_gate.why; \
        if (gpusort_gate.verdict == ::gpusort::testing::GpuGate::fail) GTEST_FAIL() << gpusort_gate.why; \
    } while (false)

#define SKIP_WITHOUT_GPU() GPUSORT_APPLY_GPU_GATE(::gpusort::testing::backend_gate())
#define SKIP_WITHOUT_DEVICE() GPUSORT_APPLY_GPU_GATE(::gpusort::testing::device_gate())
