// run_sort: the sort on a worker thread, the calling thread waiting with the GIL released.
#include "src/python/run_sort.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace gpusort::python {

namespace py = pybind11;

namespace {

// How often the waiting thread looks for Ctrl-C, and how many of those looks per progress call
// (about 5 calls a second).
constexpr std::chrono::milliseconds kPollInterval{100};
constexpr int kPollsPerProgressCall = 2;

// The sort on its thread, and what it hands the waiting thread: its notices, its end.
class SortWorker {
public:
    explicit SortWorker(const std::function<SortReport(const SortHooks&)>& sort) {
        thread_ = std::thread([this, &sort] { run(sort); });
    }
    // The thread always ends before the worker goes (a sort cannot outlive its options).
    ~SortWorker() {
        counters_.cancel();
        join();
    }
    SortWorker(const SortWorker&) = delete;
    SortWorker& operator=(const SortWorker&) = delete;

    // Waits at most `timeout` for the sort to end; true once it has.
    bool wait_for(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        return ended_cv_.wait_for(lock, timeout, [this] { return ended_; });
    }
    std::vector<std::string> take_notices() {
        std::lock_guard lock(mutex_);
        return std::exchange(notices_, {});
    }
    ProgressCounters::Snapshot snapshot() const { return counters_.snapshot(); }
    void cancel_and_join() {
        counters_.cancel();
        join();
    }
    // After the end: the report, or the sort's exception thrown again.
    SortReport result() {
        join();
        if (error_) std::rethrow_exception(error_);
        return std::move(*report_);
    }

private:
    void join() {
        if (thread_.joinable()) thread_.join();
    }
    void run(const std::function<SortReport(const SortHooks&)>& sort) {
        SortHooks hooks;
        hooks.progress = &counters_;
        hooks.notice = [this](const std::string& text) {
            std::lock_guard lock(mutex_);
            notices_.push_back(text);
        };
        std::optional<SortReport> report;
        std::exception_ptr error;
        try {
            report = sort(hooks);
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard lock(mutex_);
        report_ = std::move(report);
        error_ = error;
        ended_ = true;
        ended_cv_.notify_all();
    }

    ProgressCounters counters_;
    std::mutex mutex_;
    std::condition_variable ended_cv_;
    bool ended_ = false;
    std::vector<std::string> notices_;
    std::optional<SortReport> report_;
    std::exception_ptr error_;
    std::thread thread_;
};

void call_progress(const py::object& progress, const ProgressCounters::Snapshot& now) {
    if (!progress.is_none()) progress(progress_phase_name(now.phase), now.done, now.total);
}

void deliver_notices(SortWorker& worker, const py::object& notice) {
    for (const std::string& text : worker.take_notices())
        if (!notice.is_none()) notice(text);
}

// Waits for the sort, the GIL released but for the moments it takes to look for Ctrl-C (Python's
// handler only marks the signal; PyErr_CheckSignals raises KeyboardInterrupt for it) and to call
// the callbacks. Returns once the sort has ended; raises what Ctrl-C or a callback raised.
void wait_for_sort(SortWorker& worker, const py::object& progress, const py::object& notice) {
    for (int polls = 1;; ++polls) {
        bool ended = false;
        {
            py::gil_scoped_release release;
            ended = worker.wait_for(kPollInterval);
        }
        deliver_notices(worker, notice);
        if (ended) return;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (polls % kPollsPerProgressCall == 0) call_progress(progress, worker.snapshot());
    }
}

}  // namespace

SortReport run_sort(const std::function<SortReport(const SortHooks&)>& sort, const py::object& progress,
                    const py::object& notice) {
    SortWorker worker(sort);
    try {
        wait_for_sort(worker, progress, notice);
    } catch (...) {
        // Ctrl-C or a callback's exception: the sort stops and cleans up before it is raised.
        py::gil_scoped_release release;
        worker.cancel_and_join();
        throw;
    }
    SortReport report = worker.result();
    if (!progress.is_none()) progress("done", report.bytes, report.bytes);
    return report;
}

}  // namespace gpusort::python
