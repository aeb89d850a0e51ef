// observe_cuda_result: where every checked CUDA result passes. The release build passes it on.
// The test-only build (GPUSORT_FAULT_INJECTION, linked into test programs only) can fail one
// chosen result, so that tests show a CUDA error at any point of a sort ends it cleanly:
//   GPUSORT_CUDA_FAULT=N[:KIND]  the N-th checked result (1-based, counted over the process)
//                                becomes a failure; KIND is launch (cudaErrorLaunchFailure, the
//                                default), memory (cudaErrorMemoryAllocation) or unavailable
//                                (cudaErrorDevicesUnavailable)
//   GPUSORT_CUDA_FAULT_LOG=FILE  at exit, FILE gets the number of checked results on its first
//                                line, then one line per result: its number and what it checked
//                                ("12 cudaMemcpyAsync (chunk to the device)"), in number order
#include "gpu/gpu_error.hpp"

#ifdef GPUSORT_FAULT_INJECTION
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#endif

namespace gpusort::gpu {

#ifndef GPUSORT_FAULT_INJECTION

cudaError_t observe_cuda_result(cudaError_t code, const char*) noexcept { return code; }

#else

namespace {

struct CudaFaultPlan {
    std::uint64_t at = 0;  // 0: no fault
    cudaError_t error = cudaErrorLaunchFailure;
    std::string log;
    std::atomic<std::uint64_t> seen{0};
    std::mutex mutex;  // guards `operations`
    std::vector<std::pair<std::uint64_t, std::string>> operations;  // kept only when logging

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
        if (log.empty()) return;
        std::sort(operations.begin(), operations.end());
        std::ofstream out(log);
        out << seen.load() << "\n";
        for (const auto& [n, operation] : operations) out << n << " " << operation << "\n";
    }
};

CudaFaultPlan& plan() {
    static CudaFaultPlan instance;
    return instance;
}

}  // namespace

cudaError_t observe_cuda_result(cudaError_t code, const char* operation) noexcept {
    CudaFaultPlan& p = plan();
    const std::uint64_t n = ++p.seen;
    if (!p.log.empty()) {
        try {
            const std::lock_guard lock(p.mutex);
            p.operations.emplace_back(n, operation != nullptr ? operation : "?");
        } catch (...) {  // out of memory: the log lacks this line, and the test that reads it fails
        }
    }
    return n == p.at && code == cudaSuccess ? p.error : code;
}

#endif

}  // namespace gpusort::gpu
