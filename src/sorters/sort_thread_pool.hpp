// SortThreadPool: the threads that IPS4o's parallel sort runs on, created once per sorter. It
// starts as many of the threads asked for as the system lets it: where one cannot be started (a
// limit on processes or on memory), the pool keeps those it has and the sorts run on fewer.
// (ips4o::StdThreadPool cannot do this: a thread that fails to start ends the whole program, as
// the threads it already started are destroyed while still joinable.)
#pragma once

#include <ips4o.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpusort {

class SortThreadPool {
public:
    using Sync = ips4o::detail::Sync;

    // Starts threads - 1 threads (the caller's thread is the pool's first) or as many as it can.
    explicit SortThreadPool(unsigned threads);
    ~SortThreadPool();
    SortThreadPool(const SortThreadPool&) = delete;
    SortThreadPool& operator=(const SortThreadPool&) = delete;

    // The threads a sort runs on, the caller's included.
    int numThreads() const { return static_cast<int>(workers_.size()) + 1; }
    // Why fewer threads were started than asked for ("" when all of them were).
    const std::string& shortfall() const { return shortfall_; }

    Sync& sync() { return sync_; }

    // Runs func(id, count) on count = min(threads, numThreads()) threads at once, id 0 on the
    // calling thread, and returns when every one has returned. One run at a time.
    template <class F>
    void operator()(F&& func, int threads = std::numeric_limits<int>::max()) {
        const int count = std::min(threads, numThreads());
        if (count <= 1)
            func(0, 1);
        else
            run(std::function<void(int, int)>(std::forward<F>(func)), count);
    }

private:
    void run(const std::function<void(int, int)>& func, int count);
    void work(int id);

    Sync sync_{1};
    std::vector<std::thread> workers_;
    std::string shortfall_;

    std::mutex mutex_;
    std::condition_variable wake_;  // a run starts, or the pool stops
    std::condition_variable idle_;  // the last worker of a run has returned
    const std::function<void(int, int)>* job_ = nullptr;
    int job_threads_ = 0;
    int busy_ = 0;                  // workers of the current run that have not returned yet
    std::uint64_t generation_ = 0;  // runs started
    bool stop_ = false;
};

// The pool of a sorter that sorts on `threads` threads: none for one thread. Where fewer threads
// start than asked for, it says so through notice (optional), and the sorts run on those that did.
std::unique_ptr<SortThreadPool> make_sort_thread_pool(unsigned threads,
                                                      const std::function<void(const std::string&)>& notice);

}  // namespace gpusort
