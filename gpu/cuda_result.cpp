// observe_cuda_result: where every checked CUDA result passes. The release build passes it on.
// The test-only build (GPUSORT_FAULT_INJECTION, linked into test programs only) can fail one
// chosen result, so that tests show a CUDA error at any point of a sort ends it cleanly:
//   GPUSORT_CUDA_FAULT=N[:KIND]  the N-th checked result (1-based, counted over the process)
//                                becomes a failure; KIND is launch (cudaErrorLaunchFailure, the
//                                default), memory (cudaErrorMemoryAllocation) or unavailable
//                                (cudaErrorDevicesUnavailable)
//   GPUSORT_CUDA_FAULT_LOG=FILE  at exit, the number of checked results is written to FILE
#include "gpu/gpu_error.hpp"

#ifdef GPUSORT_FAULT_INJECTION
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#endif

namespace gpusort::gpu {

#ifndef GPUSORT_FAULT_INJECTION

cudaError_t observe_cuda_result(cudaError_t code) noexcept { return code; }

#else

namespace {

struct CudaFaultPlan {
    std::uint64_t at = 0;  // 0: no fault
    cudaError_t error = cudaErrorLaunchFailure;
    std::string log;
    std::atomic<std::uint64_t> seen{0};

    CudaFaultPlan() {
        if (const char* text = std::getenv("GPUSORT_CUDA_FAULT")) {
            at = std::strtoull(text, nullptr, 10);
            if (const char* kind = std::strchr(text, ':')) {
                if (std::strcmp(kind + 1, "memory") == 0) error = cudaErrorMemoryAllocation;
                else if (std::strcmp(kind + 1, "unavailable") == 0) error = cudaErrorDevicesUnavailable;
            }
        }
        if (const char* path = std::getenv("GPUSORT_CUDA_FAULT_LOG")) log = path;
    }
    ~CudaFaultPlan() {
        if (!log.empty()) std::ofstream(log) << seen.load() << "\n";
    }
};

CudaFaultPlan& plan() {
    static CudaFaultPlan instance;
    return instance;
}

}  // namespace

cudaError_t observe_cuda_result(cudaError_t code) noexcept {
    CudaFaultPlan& p = plan();
    const std::uint64_t n = ++p.seen;
    return n == p.at && code == cudaSuccess ? p.error : code;
}

#endif

}  // namespace gpusort::gpu
