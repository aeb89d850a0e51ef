// The progress line: its text (units, percent, time left, phases timed only), the summary line,
// the counters under concurrent updates, the smoothed throughput, and ProgressLine redrawing into
// a pipe and ending with a newline or the summary.
#include "src/cli/progress_line.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

ProgressCounters::Snapshot snapshot_of(ProgressPhase phase, std::uint64_t done, std::uint64_t total) {
    ProgressCounters::Snapshot s;
    s.phase = phase;
    s.done = done;
    s.total = total;
    return s;
}

// Both ends of a pipe, closed at the end of the test.
struct Pipe {
    int read_end = -1, write_end = -1;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe() {
        if (read_end >= 0) ::close(read_end);
        if (write_end >= 0) ::close(write_end);
    }
    // What was written and not read yet.
    std::string drain() const {
        ::fcntl(read_end, F_SETFL, ::fcntl(read_end, F_GETFL) | O_NONBLOCK);
        std::string text;
        char buffer[4096];
        ssize_t n;
        while ((n = ::read(read_end, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
        return text;
    }
};

}  // namespace

TEST(ProgressRender, KnownTotalShowsPercentThroughputAndTimeLeft) {
    // 2.75 GiB left at 1.2 GB/s: 2.46 s, shown rounded up.
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::sorting, 5 * GiB / 4, 4 * GiB), 1.2e9),
              "sorting   1.25 GiB of 4.00 GiB  31%  1.20 GB/s  0:03 left");
    // 9.5 MB left at 1 kB/s: hours.
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::merging, 500'000, 10'000'000), 1000),
              "merging   488.28 KiB of 9.54 MiB  5%  1.00 kB/s  2:38:20 left");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::writing, 0, 512), 100), "writing   0 B of 512 B  0%  100 B/s  0:06 left");
    // Nothing left: no time left rather than "0:00 left"; a few bytes left: at least a second.
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::verifying, 3 * GiB, 3 * GiB), 2e9),
              "verifying 3.00 GiB of 3.00 GiB  100%  2.00 GB/s");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::writing, 3 * GiB - 1, 3 * GiB), 2e9),
              "writing   3.00 GiB of 3.00 GiB  99%  2.00 GB/s  0:01 left");
}

TEST(ProgressRender, APhaseTimedOnlyShowsItsSizeAndTheTimeTaken) {
    ProgressCounters::Snapshot s = snapshot_of(ProgressPhase::sorting, 0, 4 * GiB);
    s.counted = false;
    s.phase_seconds = 65.9;  // rounded down: the time it has taken
    EXPECT_EQ(render_progress(s, 0), "sorting   4.00 GiB  1:05 elapsed");
    s.phase = ProgressPhase::flushing;
    s.total = 0;
    s.phase_seconds = 0.4;
    EXPECT_EQ(render_progress(s, 123), "flushing  0:00 elapsed");
}

TEST(ProgressSummary, SaysRecordsBytesTimeThroughputRunsPassesAndTheBackend) {
    SortReport report;
    report.records = report.output_records = 26214400;
    report.bytes = 200 * MiB;
    report.seconds = 2.15;
    report.runs = 1;
    report.backend = "cpu";
    report.backend_reason = "no usable GPU: no CUDA-capable device is detected";
    EXPECT_EQ(sort_summary(report),
              "sorted 26214400 records (200.00 MiB) in 2.15 s, 97.54 MB/s; 1 run, no merge; "
              "backend cpu (no usable GPU: no CUDA-capable device is detected)");
    report.records = 1;
    report.output_records = 1;
    report.bytes = 8;
    report.seconds = 0;
    report.runs = 7;
    report.merge_passes = 2;
    report.backend = "NVIDIA H100 80GB HBM3";
    report.backend_reason = "a GPU was found";
    report.verified = true;
    EXPECT_EQ(sort_summary(report),
              "sorted 1 record (8 B) in 0.00 s; 7 runs, 2 merge passes; backend NVIDIA H100 80GB HBM3 (a GPU was "
              "found); verified");
    report.records = 1000;
    report.output_records = 10;  // --unique
    report.merge_passes = 1;
    report.verified = false;
    EXPECT_EQ(sort_summary(report),
              "sorted 1000 records (8 B), 10 kept in 0.00 s; 7 runs, 1 merge pass; backend NVIDIA H100 80GB HBM3 (a GPU "
              "was found)");
}

TEST(ProgressRender, UnknownTotalShowsBytesAndThroughputOnly) {
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::reading, 5 * GiB / 4, 0), 1.2e9), "reading   1.25 GiB  1.20 GB/s");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::reading, 1023, 0), 850), "reading   1023 B  850 B/s");
}

TEST(ProgressRender, UnitsAndRounding) {
    auto bytes_shown = [](std::uint64_t done) { return render_progress(snapshot_of(ProgressPhase::reading, done, 0), 0); };
    EXPECT_EQ(bytes_shown(0), "reading   0 B");
    EXPECT_EQ(bytes_shown(1024), "reading   1.00 KiB");
    EXPECT_EQ(bytes_shown(3 * MiB / 2), "reading   1.50 MiB");
    EXPECT_EQ(bytes_shown(5 * GiB * 1024), "reading   5.00 TiB");
    auto rate_shown = [](double rate) { return render_progress(snapshot_of(ProgressPhase::reading, 0, 0), rate); };
    EXPECT_EQ(rate_shown(999), "reading   0 B  999 B/s");
    EXPECT_EQ(rate_shown(12.5e6), "reading   0 B  12.50 MB/s");
    EXPECT_EQ(rate_shown(3.5e12), "reading   0 B  3.50 TB/s");
    // Never 100% before the end, never more than 100%.
    EXPECT_NE(render_progress(snapshot_of(ProgressPhase::sorting, GiB - 1, GiB), 0).find("  99%"), std::string::npos);
    EXPECT_NE(render_progress(snapshot_of(ProgressPhase::sorting, 2 * GiB, GiB), 0).find("  100%"), std::string::npos);
}

TEST(ProgressRender, NoTimeLeftWithoutThroughputOrWhenDone) {
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::sorting, MiB, 4 * MiB), 0), "sorting   1.00 MiB of 4.00 MiB  25%");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::done, 4 * MiB, 4 * MiB), 2e6),
              "done      4.00 MiB of 4.00 MiB  100%  2.00 MB/s");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::merging, 4 * MiB, 4 * MiB), 2e6),
              "merging   4.00 MiB of 4.00 MiB  100%  2.00 MB/s");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::starting, 0, 4 * MiB), 0), "starting");
    EXPECT_EQ(render_progress(snapshot_of(ProgressPhase::done, 0, 0), 0), "done");
}

// The seconds since `start`, to bound a phase's time from outside.
double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ProgressCounters, AddsFromManyThreadsAndRestartsPerPhase) {
    ProgressCounters counters;
    EXPECT_EQ(counters.snapshot().phase, ProgressPhase::starting);
    auto before_phase = std::chrono::steady_clock::now();
    counters.start_phase(ProgressPhase::sorting, 123456789);
    const auto first = counters.snapshot().phase_number;
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 20000; ++i) counters.add(3);
        });
    for (auto& thread : threads) thread.join();
    std::this_thread::sleep_for(20ms);
    auto s = counters.snapshot();
    EXPECT_EQ(s.phase, ProgressPhase::sorting);
    EXPECT_EQ(s.done, 8u * 20000 * 3);
    EXPECT_EQ(s.total, 123456789u);
    EXPECT_GE(s.phase_seconds, 0.015);
    EXPECT_LE(s.phase_seconds, seconds_since(before_phase));

    // The same phase again is a new phase: nothing done, time from zero, a new number.
    before_phase = std::chrono::steady_clock::now();
    counters.start_phase(ProgressPhase::sorting, 0);
    s = counters.snapshot();
    EXPECT_EQ(s.done, 0u);
    EXPECT_EQ(s.total, 0u);
    EXPECT_LE(s.phase_seconds, seconds_since(before_phase));
    EXPECT_NE(s.phase_number, first);
}

TEST(ThroughputWindow, FollowsTheLastSecondsNotTheWholePhase) {
    ThroughputWindow window(3.0);
    EXPECT_EQ(window.bytes_per_second(), 0.0);
    // 10 s at 100 B/s, then 10 s at 1000 B/s, sampled every 0.2 s.
    std::uint64_t done = 0;
    for (int step = 1; step <= 100; ++step) window.add(step * 0.2, done += 20);
    EXPECT_NEAR(window.bytes_per_second(), 100.0, 1.0);
    for (int step = 101; step <= 200; ++step) window.add(step * 0.2, done += 200);
    EXPECT_NEAR(window.bytes_per_second(), 1000.0, 1.0);
    // A restart (new phase) forgets the old rate; early on the rate is since the phase began.
    window.restart();
    window.add(0.5, 50);
    EXPECT_NEAR(window.bytes_per_second(), 100.0, 1e-9);
    // Counts going backwards also start over instead of giving a negative rate.
    window.add(0.6, 10);
    EXPECT_GE(window.bytes_per_second(), 0.0);
}

TEST(ProgressLine, RedrawsInPlaceAndEndsTheLineOnDestruction) {
    Pipe pipe;
    ProgressCounters counters;
    counters.start_phase(ProgressPhase::sorting, 1000);
    counters.add(500);
    std::string text;
    {
        ProgressLine line(counters, pipe.write_end, 10ms);
        // Some frames of the first state, however long a busy machine takes to draw them.
        EXPECT_TRUE(gpusort::testing::wait_for([&] {
            text += pipe.drain();
            return std::count(text.begin(), text.end(), '\r') >= 4;
        })) << text;
        counters.add(500);
    }
    text += pipe.drain();
    ASSERT_FALSE(text.empty());
    EXPECT_GE(std::count(text.begin(), text.end(), '\r'), 4) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_EQ(text.front(), '\r');
    EXPECT_NE(text.find("sorting   500 B of 1000 B  50%"), std::string::npos) << text;
    // The last frame: the final state, cleared to the end of the line, then the newline.
    const std::string last = text.substr(text.rfind('\r'));
    EXPECT_EQ(last.rfind("\rsorting   1000 B of 1000 B  100%", 0), 0u) << last;
    EXPECT_GE(last.size(), 4u);
    EXPECT_EQ(last.substr(last.size() - 4), "\x1b[K\n");
    // Every frame clears what a longer one before it left.
    EXPECT_EQ(static_cast<long>(std::count(text.begin(), text.end(), '\r')),
              static_cast<long>([&] {
                  std::size_t n = 0;
                  for (std::size_t at = text.find("\x1b[K"); at != std::string::npos; at = text.find("\x1b[K", at + 1)) ++n;
                  return n;
              }()));
}

TEST(ProgressLine, FinishEndsTheLineWithTheSummaryInPlaceOfTheLastState) {
    Pipe pipe;
    ProgressCounters counters;
    counters.start_phase(ProgressPhase::writing, 1000);
    counters.add(250);
    ProgressLine line(counters, pipe.write_end, 10ms);
    std::string text;
    EXPECT_TRUE(gpusort::testing::wait_for([&] {
        text += pipe.drain();
        return text.find("writing   250 B of 1000 B  25%") != std::string::npos;
    })) << text;
    counters.start_phase(ProgressPhase::done, 0);
    line.finish("sorted 125 records");
    text += pipe.drain();
    EXPECT_EQ(text.substr(text.rfind('\r')), "\rsorted 125 records\x1b[K\n");
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST(ProgressLine, AFullNonBlockingPipeDropsFramesWithoutHanging) {
    Pipe pipe;
    ::fcntl(pipe.write_end, F_SETFL, ::fcntl(pipe.write_end, F_GETFL) | O_NONBLOCK);
    const std::string filler(4096, 'x');
    while (::write(pipe.write_end, filler.data(), filler.size()) > 0) {
    }
    ASSERT_EQ(errno, EAGAIN);
    ProgressCounters counters;
    counters.start_phase(ProgressPhase::merging, 0);
    const auto start = std::chrono::steady_clock::now();
    {
        ProgressLine line(counters, pipe.write_end, 10ms);
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, gpusort::testing::kHangBound);
}

TEST(ProgressLineDeathTest, AClosedReaderNeitherKillsNorThrows) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            Pipe pipe;
            ::close(pipe.read_end);
            pipe.read_end = -1;
            ProgressCounters counters;
            counters.start_phase(ProgressPhase::writing, 100);
            {
                ProgressLine line(counters, pipe.write_end, 5ms);
                std::this_thread::sleep_for(40ms);
            }
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}
