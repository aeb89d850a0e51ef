// The CPU sorters' thread pool (src/sorters/sort_thread_pool.hpp) and the count of threads the
// system lets a sort start (startable_threads): every id of a run on its own thread at once, IPS4o
// sorting with it as std::sort does, and, under a limit on tasks (RLIMIT_NPROC) in a child
// process, a pool of the threads that could start instead of the end of the program.
#include "src/sorters/sort_thread_pool.hpp"
#include "gpusort/sort_plan.hpp"
#include "src/plan/plan_sort.hpp"
#include "task_limit.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

TEST(SortThreadPool, RunsEveryIdOfARunOnItsOwnThreadAtOnce) {
    SortThreadPool pool(4);
    ASSERT_EQ(pool.numThreads(), 4);
    EXPECT_EQ(pool.shortfall(), "");
    for (int round = 0; round < 200; ++round) {
        const int asked = 1 + round % 5;  // 5: more than the pool has
        const int expected = std::min(asked, 4);
        std::mutex mutex;
        std::vector<int> ids;
        std::set<std::thread::id> threads;
        int counts_seen = 0;
        pool(
            [&](int id, int count) {
                // Every thread waits here for all the others: only threads running at once pass.
                if (count > 1) pool.sync().barrier();
                std::lock_guard lock(mutex);
                ids.push_back(id);
                threads.insert(std::this_thread::get_id());
                counts_seen += count == expected;
            },
            asked);
        std::sort(ids.begin(), ids.end());
        std::vector<int> all(static_cast<std::size_t>(expected));
        for (int i = 0; i < expected; ++i) all[static_cast<std::size_t>(i)] = i;
        ASSERT_EQ(ids, all) << "round " << round;
        ASSERT_EQ(threads.size(), static_cast<std::size_t>(expected)) << "round " << round;
        ASSERT_EQ(counts_seen, expected) << "round " << round;
    }
}

TEST(SortThreadPool, IPS4oSortsWithItAsStdSortDoes) {
    std::mt19937_64 random(7);
    for (unsigned threads : {2u, 3u, 8u}) {
        SortThreadPool pool(threads);
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{3} << 20}) {
            std::vector<std::uint64_t> keys(n);
            for (auto& key : keys) key = random() % (n / 2 + 1);  // duplicates too
            std::vector<std::uint64_t> expected = keys;
            std::sort(expected.begin(), expected.end());
            ips4o::parallel::sort(keys.begin(), keys.end(), std::less<>(), pool);
            ASSERT_EQ(keys, expected) << threads << " threads, " << n << " keys";
        }
    }
}

namespace {

// Runs check(more) in a child process that may start only `more` threads besides itself; returns
// its exit code.
int in_child_with_thread_limit(int more, int (*check)(int)) {
    const pid_t child = ::fork();
    if (child == 0) {
        limit_threads_in_child(more);
        ::_exit(check(more));
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

// In the child: the pool keeps the threads that started, says why it has no more, and sorts.
int pool_keeps_the_threads_that_start(int more) {
    int error = 0;
    const unsigned can = startable_threads(16, &error);
    // ThreadSanitizer's runtime starts a thread of its own beside the first of ours, which may take
    // one of those allowed; elsewhere exactly `more` start.
    if (kThreadSanitizer ? can > static_cast<unsigned>(more) : can != static_cast<unsigned>(more)) return 1;
    if (error != EAGAIN) return 2;
    const int threads = std::min(static_cast<int>(can), 7) + 1;
    {
        SortThreadPool pool(8);
        if (pool.numThreads() != threads) return 3;
        if (pool.shortfall().empty()) return 4;
        std::vector<std::uint64_t> keys(1 << 20);
        std::mt19937_64 random(3);
        for (auto& key : keys) key = random();
        std::vector<std::uint64_t> expected = keys;
        std::sort(expected.begin(), expected.end());
        ips4o::parallel::sort(keys.begin(), keys.end(), std::less<>(), pool);
        if (keys != expected) return 5;
    }
    std::string notice;  // the pool's threads have ended: as many can start again
    auto made = make_sort_thread_pool(8, [&](const std::string& text) { notice = text; });
    if (!made || made->numThreads() != threads) return 6;
    if (notice.find("sorting with " + std::to_string(threads)) == std::string::npos) return 7;
    return 0;
}

}  // namespace

TEST(SortThreadPool, KeepsTheThreadsThatStartUnderALimitOnTasks) {
    // ips4o::StdThreadPool ends the program here (std::terminate on its half-built thread list).
    EXPECT_EQ(in_child_with_thread_limit(0, pool_keeps_the_threads_that_start), 0);
    if (!tasks_can_be_counted())
        GTEST_SKIP() << "only root can give a child a user of its own, so that it may start exactly 3 threads";
    EXPECT_EQ(in_child_with_thread_limit(3, pool_keeps_the_threads_that_start), 0);
}
