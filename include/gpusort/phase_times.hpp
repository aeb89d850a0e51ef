// PhaseTimes: seconds spent in each phase of a sort (phases overlap in time, so they may add up
// to more than the wall clock), and ScopedPhase, which adds the lifetime of a scope to one of them.
#pragma once

#include <chrono>

namespace gpusort {

struct PhaseTimes {
    double read = 0;      // input read into memory
    double copy_in = 0;   // host to device (GPU only)
    double sort = 0;      // normalise, sort, map back
    double copy_out = 0;  // device to host (GPU only)
    double write = 0;     // sorted keys written (runs, or the output of a one-run sort)
    double merge = 0;     // all merge passes, their reads and writes included

    PhaseTimes& operator+=(const PhaseTimes& other) {
        read += other.read;
        copy_in += other.copy_in;
        sort += other.sort;
        copy_out += other.copy_out;
        write += other.write;
        merge += other.merge;
        return *this;
    }
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
