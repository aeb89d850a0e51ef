#include "io/read_ahead.hpp"

#include <algorithm>

namespace gpusort::io {

ReadAhead::ReadAhead(unsigned threads) {
    const unsigned count = std::max(1u, threads);
    threads_.reserve(count);
    for (unsigned i = 0; i < count; ++i) threads_.emplace_back([this] { serve(); });
}

ReadAhead::~ReadAhead() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_all();
    for (auto& thread : threads_) thread.join();
}

std::future<void> ReadAhead::start(std::function<void()> read) {
    std::packaged_task<void()> task(std::move(read));
    std::future<void> done = task.get_future();
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(task));
    }
    queued_.notify_one();
    return done;
}

void ReadAhead::serve() {
    for (;;) {
        std::packaged_task<void()> task;
        {
            std::unique_lock lock(mutex_);
            queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and every read has run
            task = std::move(queue_.front());
            queue_.pop_front();
        }
        task();  // an exception goes to the task's future
    }
}

}  // namespace gpusort::io
