// ProgressCounters: the phase of a sort and its bytes done, as relaxed atomics.
#include "gpusort/progress.hpp"

#include "gpusort/errors.hpp"

#include <chrono>

namespace gpusort {

const char* progress_phase_name(ProgressPhase phase) {
    switch (phase) {
    case ProgressPhase::starting: return "starting";
    case ProgressPhase::reading: return "reading";
    case ProgressPhase::sorting: return "sorting";
    case ProgressPhase::merging: return "merging";
    case ProgressPhase::writing: return "writing";
    case ProgressPhase::flushing: return "flushing";
    case ProgressPhase::verifying: return "verifying";
    case ProgressPhase::exchanging: return "exchanging";
    case ProgressPhase::done: return "done";
    }
    return "?";
}

ProgressCounters::ProgressCounters()
    : phase_(static_cast<int>(ProgressPhase::starting)), phase_start_ns_(now_ns()) {}

std::int64_t ProgressCounters::now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

namespace {

[[noreturn]] void stop() { throw Interrupted("interrupted: the sort was cancelled"); }

}  // namespace

void ProgressCounters::start_phase(ProgressPhase phase, std::uint64_t total_bytes, Counting counting) {
    if (phase != ProgressPhase::done && cancelled()) stop();
    if (listener_) listener_(snapshot());
    done_.store(0, std::memory_order_relaxed);
    total_.store(total_bytes, std::memory_order_relaxed);
    counted_.store(counting == Counting::bytes, std::memory_order_relaxed);
    phase_start_ns_.store(now_ns(), std::memory_order_relaxed);
    phase_.store(static_cast<int>(phase), std::memory_order_relaxed);
    phase_number_.fetch_add(1, std::memory_order_relaxed);
}

void ProgressCounters::stop_if_cancelled() const {
    if (cancelled()) stop();
}

void ProgressCounters::add(std::uint64_t bytes) {
    if (cancelled()) stop();
    done_.fetch_add(bytes, std::memory_order_relaxed);
}

ProgressCounters::Snapshot ProgressCounters::snapshot() const {
    Snapshot s;
    s.phase_number = phase_number_.load(std::memory_order_relaxed);
    s.phase = static_cast<ProgressPhase>(phase_.load(std::memory_order_relaxed));
    s.total = total_.load(std::memory_order_relaxed);
    s.done = done_.load(std::memory_order_relaxed);
    s.counted = counted_.load(std::memory_order_relaxed);
    const std::int64_t elapsed = now_ns() - phase_start_ns_.load(std::memory_order_relaxed);
    s.phase_seconds = elapsed > 0 ? static_cast<double>(elapsed) * 1e-9 : 0.0;
    return s;
}

}  // namespace gpusort
