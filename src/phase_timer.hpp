// PhaseTimes: seconds spent in each phase of a sort (phases may overlap in time), and
// ScopedPhase, which adds the lifetime of a scope to one of them.
#pragma once

#include <chrono>

namespace gpusort {

struct PhaseTimes {
    double read = 0;   // input read into memory
    double sort = 0;   // normalise + in-memory sort
    double write = 0;  // sorted data written (runs, or the output of an in-memory sort)
    double merge = 0;  // all merge passes, reads and writes of the merge included
};

class ScopedPhase {
public:
    explicit ScopedPhase(double& seconds) : seconds_(seconds), start_(std::chrono::steady_clock::now()) {}
    ~ScopedPhase() {
        seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    ScopedPhase(const ScopedPhase&) = delete;
    ScopedPhase& operator=(const ScopedPhase&) = delete;

private:
    double& seconds_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace gpusort
