// The progress line: the text of one line, and the thread that redraws it.
#include "src/cli/progress_line.hpp"

#include "io/syscalls.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

namespace gpusort {

namespace {

// "512 B", "1.25 GiB".
std::string format_bytes(std::uint64_t bytes) {
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    char text[32];
    if (bytes < 1024) {
        std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
        return text;
    }
    double value = static_cast<double>(bytes) / 1024;
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
    return text;
}

// "850 B/s", "1.20 GB/s".
std::string format_rate(double bytes_per_second) {
    static const char* const units[] = {"kB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
    char text[32];
    if (bytes_per_second < 1000) {
        std::snprintf(text, sizeof text, "%.0f B/s", bytes_per_second);
        return text;
    }
    double value = bytes_per_second / 1000;
    std::size_t unit = 0;
    while (value >= 1000 && unit + 1 < std::size(units)) {
        value /= 1000;
        ++unit;
    }
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
    return text;
}

// "0:02", "12:34", "1:02:03"; at most 99:59:59. A time left is rounded up, a time taken down.
enum class Round { up, down };
std::string format_duration(double seconds, Round round) {
    const double whole_seconds = round == Round::up ? std::ceil(seconds) : std::floor(seconds);
    const long long whole = std::min(static_cast<long long>(whole_seconds), 99LL * 3600 + 59 * 60 + 59);
    char text[32];
    if (whole >= 3600)
        std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", whole / 3600, whole / 60 % 60, whole % 60);
    else
        std::snprintf(text, sizeof text, "%lld:%02lld", whole / 60, whole % 60);
    return text;
}

// Writes all of `text`, retrying interrupted writes; false when the descriptor failed for good.
// A descriptor that stays full (non-blocking) loses the rest of this frame instead.
bool write_frame(int fd, const std::string& text) {
    std::size_t written = 0;
    int full_waits = 0;
    while (written < text.size()) {
        const ssize_t n = io::sys::write(fd, text.data() + written, text.size() - written);
        if (n > 0) {
            written += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (++full_waits > 4) return true;
            pollfd writable{fd, POLLOUT, 0};
            ::poll(&writable, 1, 50);
            continue;
        }
        return false;
    }
    return true;
}

}  // namespace


std::string render_progress(const ProgressCounters::Snapshot& snapshot, double bytes_per_second) {
    std::string line = progress_phase_name(snapshot.phase);
    const bool nothing_counted = snapshot.done == 0 && snapshot.total == 0;
    if (snapshot.phase == ProgressPhase::starting || (snapshot.phase == ProgressPhase::done && nothing_counted))
        return line;
    line.resize(std::max<std::size_t>(line.size(), 9), ' ');  // as wide as gpusort-file's longest name
    const bool total_known = snapshot.total > 0;
    if (!snapshot.counted) {
        // Timed only: what it works on, and for how long it has.
        line += ' ';
        if (total_known) line += format_bytes(snapshot.total) + "  ";
        line += format_duration(snapshot.phase_seconds, Round::down) + " elapsed";
        return line;
    }
    line += ' ';
    line += format_bytes(snapshot.done);
    if (total_known) {
        line += " of " + format_bytes(snapshot.total);
        unsigned percent = 100;
        if (snapshot.done < snapshot.total) {
            const double exact = 100.0 * static_cast<double>(snapshot.done) / static_cast<double>(snapshot.total);
            percent = std::min(static_cast<unsigned>(exact), 99u);
        }
        line += "  " + std::to_string(percent) + "%";
    }
    const bool rate_known = std::isfinite(bytes_per_second) && bytes_per_second >= 1;
    if (rate_known) line += "  " + format_rate(bytes_per_second);
    // The time left, rounded up: never "0:00" while bytes are left, and not shown once none are.
    const std::uint64_t remaining = snapshot.done < snapshot.total ? snapshot.total - snapshot.done : 0;
    if (remaining > 0 && rate_known && snapshot.phase != ProgressPhase::done)
        line += "  " + format_duration(static_cast<double>(remaining) / bytes_per_second, Round::up) + " left";
    return line;
}

namespace {

// What every summary says: "sorted N THINGS (SIZE)[, K kept] in S s, RATE; R runs, M merge passes".
std::string summary_of(std::uint64_t items, const char* one, const char* many, std::uint64_t kept, std::uint64_t bytes,
                       double seconds, std::uint64_t runs, unsigned merge_passes) {
    auto count = [](std::uint64_t n, const char* singular, const char* plural) {
        return std::to_string(n) + " " + (n == 1 ? singular : plural);
    };
    char time[32];
    std::snprintf(time, sizeof time, "%.2f s", seconds);
    std::string line = "sorted " + count(items, one, many) + " (" + format_bytes(bytes) + ")";
    if (kept != items) line += ", " + std::to_string(kept) + " kept";
    line += std::string(" in ") + time;
    if (seconds > 0) line += ", " + format_rate(static_cast<double>(bytes) / seconds);
    line += "; " + count(runs, "run", "runs") + ", ";
    line += merge_passes == 0 ? std::string("no merge") : count(merge_passes, "merge pass", "merge passes");
    return line;
}

}  // namespace

std::string sort_summary(const SortReport& report) {
    std::string line = summary_of(report.records, "record", "records", report.output_records, report.bytes, report.seconds,
                                  report.runs, report.merge_passes);
    line += "; backend " + report.backend;
    if (!report.backend_reason.empty()) line += " (" + report.backend_reason + ")";
    if (report.verified) line += "; verified";
    return line;
}

std::string line_sort_summary(const LineFileReport& report) {
    std::string line = summary_of(report.sort.lines, "line", "lines", report.output_lines, report.input_bytes, report.seconds,
                                  report.sort.runs, report.sort.merge_passes);
    if (report.verified) line += "; verified";
    return line;
}

void ThroughputWindow::restart() { samples_.assign(1, Sample{0, 0}); }

void ThroughputWindow::add(double seconds, std::uint64_t done) {
    if (seconds < samples_.back().seconds || done < samples_.back().done) restart();
    samples_.push_back(Sample{seconds, done});
    // Keep the newest sample at or before the start of the window, so the window is full.
    while (samples_.size() > 2 && samples_[1].seconds <= seconds - window_seconds_) samples_.pop_front();
}

double ThroughputWindow::bytes_per_second() const {
    const Sample& oldest = samples_.front();
    const Sample& newest = samples_.back();
    const double seconds = newest.seconds - oldest.seconds;
    if (seconds < 0.05 || newest.done < oldest.done) return 0;
    return static_cast<double>(newest.done - oldest.done) / seconds;
}

ProgressLine::ProgressLine(const ProgressCounters& counters, int fd, std::chrono::milliseconds interval)
    : counters_(counters), fd_(fd), interval_(interval) {
    thread_ = std::thread([this] { draw_until_stopped(); });
}

ProgressLine::~ProgressLine() { stop(); }

void ProgressLine::finish(const std::string& summary) {
    {
        std::lock_guard lock(mutex_);
        summary_ = summary;
    }
    stop();
}

void ProgressLine::stop() noexcept {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void ProgressLine::draw_until_stopped() noexcept {
    // A closed pipe or terminal gives EPIPE here instead of ending the program.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    try {
        bool drawing = true;
        std::unique_lock lock(mutex_);
        while (!stop_) {
            lock.unlock();
            if (drawing) drawing = draw(false);
            lock.lock();
            wake_.wait_for(lock, interval_, [this] { return stop_; });
        }
        lock.unlock();
        if (drawing) draw(true);
    } catch (...) {
        // Out of memory for a line of text: the progress line is not worth failing the sort for.
    }
}

bool ProgressLine::draw(bool final_frame) {
    const ProgressCounters::Snapshot snapshot = counters_.snapshot();
    if (snapshot.phase_number != shown_phase_number_) {
        throughput_.restart();
        shown_phase_number_ = snapshot.phase_number;
    }
    throughput_.add(snapshot.phase_seconds, snapshot.done);
    std::string frame = "\r";
    std::string summary;
    if (final_frame) {
        std::lock_guard lock(mutex_);
        summary = summary_;
    }
    frame += summary.empty() ? render_progress(snapshot, throughput_.bytes_per_second()) : summary;
    frame += "\x1b[K";
    if (final_frame) frame += '\n';
    return write_frame(fd_, frame);
}

}  // namespace gpusort
