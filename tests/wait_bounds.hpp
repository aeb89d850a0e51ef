// Bounds for tests that wait for something or time it. A busy machine can stall a thread for
// seconds and sanitizers slow our code several times, so a bound on a wait sits far above the
// normal time and only tells "done" from "hung"; a test waits for the event itself rather than
// sleeping a fixed time and hoping it happened. Also tells which sanitizer the tests run under.
#pragma once

#include <chrono>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
#define GPUSORT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUSORT_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define GPUSORT_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GPUSORT_TEST_TSAN 1
#endif
#endif

namespace gpusort::testing {

#ifdef GPUSORT_TEST_ASAN
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#ifdef GPUSORT_TEST_TSAN
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// The shadow memory of AddressSanitizer and ThreadSanitizer reserves terabytes of address space:
// a limit on a process's address space (RLIMIT_AS) cannot be tested in such a build.
inline constexpr bool kHugeShadowMemory = kAddressSanitizer || kThreadSanitizer;

// How many times slower than a plain build our code may run here.
inline constexpr int kSlowdown = kThreadSanitizer ? 10 : kAddressSanitizer ? 4 : 1;

// How long something that normally ends within a second may take before a test calls it a hang.
inline constexpr std::chrono::seconds kHangBound{30 * kSlowdown};

// Polls `happened` every millisecond until it returns true (then true) or `bound` has passed (false).
template <class Predicate>
bool wait_for(Predicate happened, std::chrono::steady_clock::duration bound = kHangBound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        if (happened()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace gpusort::testing
