// Progress of a sort: the phase it is in and the bytes done of the phase's total, counters that the
// sort updates from any thread and that a display (gpusort-file --progress) reads.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpusort {

enum class ProgressPhase { starting, reading, sorting, merging, writing, verifying, done };

// The phase's name as the progress line shows it.
const char* progress_phase_name(ProgressPhase phase);

// What the sort has done in its current phase. Updates are relaxed atomics, cheap enough to make
// for every piece of 1 to 64 MiB from any thread; a snapshot taken while start_phase() runs may
// mix the old phase with the new one for one redraw.
class ProgressCounters {
public:
    ProgressCounters();

    // Starts a phase of `total_bytes` (0: unknown, e.g. reading stdin) with nothing done yet.
    void start_phase(ProgressPhase phase, std::uint64_t total_bytes);
    void add(std::uint64_t bytes);

    struct Snapshot {
        ProgressPhase phase = ProgressPhase::starting;
        std::uint64_t done = 0;
        std::uint64_t total = 0;  // 0: unknown
        double phase_seconds = 0;  // since the phase started
        std::uint64_t phase_number = 0;  // counts start_phase() calls, so a repeated phase is seen as new
    };
    Snapshot snapshot() const;

private:
    static std::int64_t now_ns();

    std::atomic<int> phase_;
    std::atomic<std::uint64_t> done_{0};
    std::atomic<std::uint64_t> total_{0};
    std::atomic<std::int64_t> phase_start_ns_;
    std::atomic<std::uint64_t> phase_number_{0};
};

}  // namespace gpusort
