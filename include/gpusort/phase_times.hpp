// PhaseTimes: seconds spent in each phase of a sort (phases overlap in time, so they may add up
// to more than the wall clock), and ScopedPhase, which adds the lifetime of a scope to one of them.
#pragma once

#include <chrono>
#include <cstdint>

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

// Seconds and bytes of one phase of the merge, summed over its slices (slices overlap, so the
// seconds of a phase may add up to more than the merge's wall clock).
struct MergePhase {
    double seconds = 0;
    std::uint64_t bytes = 0;
    void add(double s, std::uint64_t b) {
        seconds += s;
        bytes += b;
    }
};

// Where the merge's time goes. On the GPU: the slice bounds are selected; each slice's run parts
// are gathered into pinned staging by host copies (or reads of spilled runs), copied in, sorted,
// copied out, and copied into the output (`write`), whose fresh pages are faulted in ahead of
// those copies (`fault`: from the start of run formation when the output is open by then, so its
// seconds overlap run formation too). On the host: the loser trees, with their reads of spilled
// runs and their writes, over all passes (`host`).
struct MergeTimes {
    MergePhase select, gather, copy_in, sort, copy_out, write, fault, host;
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
