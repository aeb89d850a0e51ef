// ReadAhead: reads started before they are needed. A few threads of its own take reads from a
// queue, so that a consumer (the host merge: a block of each spilled run) works on one block while
// the next is read, and the disk has the next request in hand when the last one ends.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace gpusort::io {

class ReadAhead {
public:
    // `threads` reads at once (one at least).
    explicit ReadAhead(unsigned threads);
    // Runs the reads already started, then joins the threads.
    ~ReadAhead();
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // Queues `read` for one of the threads. The future ends when it has run, and get() rethrows
    // what it threw. The caller keeps what `read` touches alive until the future is ready.
    std::future<void> start(std::function<void()> read);

private:
    void serve();

    std::mutex mutex_;
    std::condition_variable queued_;
    std::deque<std::packaged_task<void()>> queue_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace gpusort::io
