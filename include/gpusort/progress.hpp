// Progress of a sort: the phase it is in and the bytes done of the phase's total, counters that the
// sort updates from any thread and that a display (gpusort-file --progress) reads.
//
// A phase is either counted (the sort adds the bytes it has done, piece by piece, and a display can
// tell a rate and the time left) or timed only (work that gives no count on the way, such as the
// sort of one chunk in memory or the flush of the output: a display can tell only how long it has
// taken so far). A counted phase ends when its bytes are all done, so that 100% is not shown while
// work of the phase is left.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace gpusort {

// exchanging: the records on their way to the rank of their part (gpusort-mpi).
enum class ProgressPhase { starting, reading, sorting, merging, writing, flushing, verifying, exchanging, done };

// The phase's name as the progress line shows it.
const char* progress_phase_name(ProgressPhase phase);

// What the sort has done in its current phase. Updates are relaxed atomics, cheap enough to make
// for every piece of 1 to 64 MiB from any thread; a snapshot taken while start_phase() runs may
// mix the old phase with the new one for one redraw.
class ProgressCounters {
public:
    ProgressCounters();

    enum class Counting { bytes, time_only };
    // Starts a phase of `total_bytes` (0: unknown, e.g. reading stdin) with nothing done yet.
    void start_phase(ProgressPhase phase, std::uint64_t total_bytes, Counting counting = Counting::bytes);
    void add(std::uint64_t bytes);

    // Asks the sort that updates these counters to stop, from any thread: its next count or phase
    // (but the last, `done`) throws gpusort::Interrupted, and it ends as a failed sort ends: no
    // output, existing outputs unchanged, no temp files. A sort that has put its output in place
    // already is not undone. Work that gives no count (the sort of one chunk on the device) ends
    // before it stops.
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
    // Throws gpusort::Interrupted where cancel() was called (the sort asks before its output goes in place).
    void stop_if_cancelled() const;

    struct Snapshot {
        ProgressPhase phase = ProgressPhase::starting;
        std::uint64_t done = 0;
        std::uint64_t total = 0;  // 0: unknown
        bool counted = true;      // false: a phase that is timed only
        double phase_seconds = 0;  // since the phase started
        std::uint64_t phase_number = 0;  // counts start_phase() calls, so a repeated phase is seen as new
    };
    Snapshot snapshot() const;

    // Called by start_phase() with the phase that ends, as it ended (from the thread that starts
    // the next one): lets a test follow every phase of a sort. Set it before the sort starts.
    void set_phase_listener(std::function<void(const Snapshot& ended)> listener) { listener_ = std::move(listener); }

private:
    static std::int64_t now_ns();

    std::atomic<int> phase_;
    std::atomic<std::uint64_t> done_{0};
    std::atomic<std::uint64_t> total_{0};
    std::atomic<bool> counted_{true};
    std::atomic<std::int64_t> phase_start_ns_;
    std::atomic<std::uint64_t> phase_number_{0};
    std::atomic<bool> cancelled_{false};
    std::function<void(const Snapshot&)> listener_;
};

}  // namespace gpusort
