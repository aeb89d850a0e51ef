// The log of the test-only CUDA fault injector (gpu/cuda_result.cpp, GPUSORT_CUDA_FAULT_LOG): the
// number of checked CUDA results on its first line, then "N OPERATION" for each. Read by the tests
// of gpusort-file-faults and gpusort-mpi-faults.
#pragma once

#include "scratch_dir.hpp"

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gpusort::testing {

// The number of checked results, and the numbers of those that checked each operation.
struct CudaFaultLog {
    std::uint64_t total = 0;
    std::map<std::string, std::vector<std::uint64_t>> points;
};

inline CudaFaultLog read_cuda_fault_log(const std::string& path) {
    CudaFaultLog log;
    std::istringstream in(read_text(path));
    in >> log.total;
    std::uint64_t n = 0;
    std::string operation;
    while (in >> n && std::getline(in >> std::ws, operation)) log.points[operation].push_back(n);
    return log;
}

}  // namespace gpusort::testing
