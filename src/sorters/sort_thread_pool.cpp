// SortThreadPool: workers that wait for the next run, take part in it if their id is below its
// thread count, and report back.
#include "src/sorters/sort_thread_pool.hpp"

#include <system_error>

namespace gpusort {

SortThreadPool::SortThreadPool(unsigned threads) {
    const unsigned wanted = std::max(1u, threads);
    workers_.reserve(wanted - 1);
    for (unsigned id = 1; id < wanted; ++id) {
        try {
            workers_.emplace_back([this, id] { work(static_cast<int>(id)); });
        } catch (const std::system_error& e) {
            shortfall_ = e.what();
            break;
        }
    }
}

SortThreadPool::~SortThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
}

void SortThreadPool::run(const std::function<void(int, int)>& func, int count) {
    sync_.setNumThreads(count);
    {
        std::lock_guard lock(mutex_);
        job_ = &func;
        job_threads_ = count;
        busy_ = count - 1;
        ++generation_;
    }
    wake_.notify_all();
    func(0, count);
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
}

void SortThreadPool::work(int id) {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (id >= job_threads_) continue;
        const auto& job = *job_;
        const int count = job_threads_;
        lock.unlock();
        job(id, count);
        lock.lock();
        if (--busy_ == 0) idle_.notify_one();
    }
}

std::unique_ptr<SortThreadPool> make_sort_thread_pool(unsigned threads,
                                                      const std::function<void(const std::string&)>& notice) {
    if (threads <= 1) return nullptr;
    auto pool = std::make_unique<SortThreadPool>(threads);
    if (!pool->shortfall().empty() && notice)
        notice("only " + std::to_string(pool->numThreads()) + " of " + std::to_string(threads) +
               " sorting threads could be started (" + pool->shortfall() + "); sorting with " +
               std::to_string(pool->numThreads()));
    return pool;
}

}  // namespace gpusort
