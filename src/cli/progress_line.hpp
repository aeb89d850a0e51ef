// Progress of a sort as one line on a terminal (gpusort-file --progress): the text of the line for
// a snapshot of the sort's ProgressCounters, and ProgressLine, a thread that redraws it a few
// times a second with the phase, bytes done of total, throughput and time left.
#pragma once

#include "gpusort/progress.hpp"
#include "gpusort/sort_file.hpp"
#include "src/text/line_file.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace gpusort {

// The line for a snapshot, without "\r" or newline, e.g.
//   "sorting   1.25 GiB of 4.00 GiB  31%  1.20 GB/s  0:02 left"
//   "reading   1.25 GiB  1.20 GB/s"                     (total unknown)
//   "sorting   4.00 GiB  0:05 elapsed"                  (a phase timed only)
// Sizes are in binary units (KiB, MiB, ...), throughput in decimal ones (kB/s, MB/s, ...); the
// time left (remaining bytes / bytes_per_second, rounded up) appears only when the total and a
// throughput are known and bytes are left, and not in the done phase. The starting phase, and a
// done phase with nothing counted, show their name alone.
std::string render_progress(const ProgressCounters::Snapshot& snapshot, double bytes_per_second);

// The line a sort ends with on a terminal, e.g.
//   "sorted 26214400 records (200.00 MiB) in 2.15 s, 97.54 MB/s; 1 run, no merge;
//    backend cpu (no usable GPU: ...)"     (one line)
// with ", N kept" after the records when --unique dropped some, and "; verified" after --verify.
std::string sort_summary(const SortReport& report);
// The same for gpusort-file --lines: "sorted N lines (SIZE) in ...; R runs, ...[; verified]".
std::string line_sort_summary(const LineFileReport& report);

// Throughput over the last `window_seconds` of one phase, from (seconds, bytes done) samples.
class ThroughputWindow {
public:
    explicit ThroughputWindow(double window_seconds = 3.0) : window_seconds_(window_seconds) {}
    // Forgets the samples: a new phase starts at 0 bytes, 0 seconds.
    void restart();
    void add(double seconds, std::uint64_t done);
    // Bytes per second between the oldest sample in the window and the newest; 0 when they are
    // too close in time to tell.
    double bytes_per_second() const;

private:
    struct Sample {
        double seconds;
        std::uint64_t done;
    };
    double window_seconds_;
    std::deque<Sample> samples_{Sample{0, 0}};
};

// While alive, a thread redraws the line on `fd` every `interval` ("\r", the line, "\x1b[K" to
// clear what a longer line left); on destruction it draws the final state, or the summary given to
// finish(), and ends the line with "\n". Nothing it writes throws or raises SIGPIPE: interrupted
// writes are retried, a full non-blocking descriptor drops a frame (the next one starts over at
// "\r"), and any other write error stops the drawing.
class ProgressLine {
public:
    ProgressLine(const ProgressCounters& counters, int fd,
                 std::chrono::milliseconds interval = std::chrono::milliseconds(200));
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    // Ends the line now with `summary` in place of the last state (a sort that ended well).
    void finish(const std::string& summary);

private:
    void stop() noexcept;
    void draw_until_stopped() noexcept;
    // Takes a snapshot, updates the throughput and writes the frame; false once writing failed.
    bool draw(bool final_frame);

    const ProgressCounters& counters_;
    int fd_;
    std::chrono::milliseconds interval_;
    ThroughputWindow throughput_;
    std::uint64_t shown_phase_number_ = 0;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::string summary_;  // the final frame, when set
    std::thread thread_;
};

}  // namespace gpusort
