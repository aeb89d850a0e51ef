// Signal cleanup: a fixed table of paths, each slot claimed and released with atomic state changes
// so that neither registering nor the handler takes a lock or allocates.
#include "io/signal_cleanup.hpp"

#include "io/io_error.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpusort::io {

namespace {

// A slot goes free -> filling -> armed -> free, or armed -> unlinking once a cleanup claims it.
enum SlotState : int { slot_free, slot_filling, slot_armed, slot_unlinking };

struct Slot {
    std::atomic<int> state{slot_free};
    char path[PATH_MAX];
    bool only_that_file = false;  // unlinked only while path names the file `file`
    FileId file;
};

Slot g_slots[kSignalCleanupCapacity];

// Cleanup progress: none yet, one handler sweeping the slots, sweep finished.
enum SweepState : int { sweep_none, sweep_running, sweep_done };
std::atomic<int> g_sweep{sweep_none};
// Threads inside a HoldCleanupSignals scope.
std::atomic<int> g_holders{0};

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t cleanup_signal_set() {
    sigset_t set;
    ::sigemptyset(&set);
    for (int sig : kCleanupSignals) ::sigaddset(&set, sig);
    return set;
}

// Sleeps 1 ms (nanosleep is async-signal-safe).
void pause_briefly() {
    timespec delay{0, 1000000};
    ::nanosleep(&delay, nullptr);
}

void unlink_if_armed(Slot& slot) {
    int expected = slot_armed;
    if (!slot.state.compare_exchange_strong(expected, slot_unlinking)) return;
    if (slot.only_that_file)
        unlink_if_names(slot.path, slot.file);
    else
        ::unlink(slot.path);
}

// Unlinks every registered path once, whichever thread gets here first; a second signal handled
// meanwhile in another thread waits for that sweep so that the program does not end before it.
void sweep_registered_paths() {
    int expected = sweep_none;
    if (g_sweep.compare_exchange_strong(expected, sweep_running)) {
        // Let files being created and registered right now get into the table (bounded wait).
        for (int waited = 0; waited < 2000 && g_holders.load() != 0; ++waited) pause_briefly();
        for (Slot& slot : g_slots) unlink_if_armed(slot);
        g_sweep.store(sweep_done);
        return;
    }
    for (int waited = 0; waited < 3000 && g_sweep.load() != sweep_done; ++waited) pause_briefly();
}

extern "C" void cleanup_and_end_by_signal(int sig) {
    const int saved_errno = errno;
    sweep_registered_paths();
    // Back to the default action and send the signal again: it is blocked while this handler
    // runs, so it arrives as the handler returns and ends the program with the usual status.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigemptyset(&default_action.sa_mask);
    ::sigaction(sig, &default_action, nullptr);
    ::raise(sig);
    errno = saved_errno;
}

}  // namespace

void install_signal_cleanup() {
    static std::atomic<bool> installed{false};
    if (installed.exchange(true)) return;
    for (int sig : kCleanupSignals) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) != 0)
            throw IoError(std::string("cannot read the action of signal ") + ::strsignal(sig) + ": " + std::strerror(errno));
        if (current.sa_handler == SIG_IGN) continue;
        struct sigaction action {};
        action.sa_handler = cleanup_and_end_by_signal;
        action.sa_mask = cleanup_signal_set();  // one cleanup at a time per thread
        action.sa_flags = SA_RESTART;
        if (::sigaction(sig, &action, nullptr) != 0)
            throw IoError(std::string("cannot handle signal ") + ::strsignal(sig) + ": " + std::strerror(errno));
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    if (::sigaction(SIGXFSZ, &ignore, nullptr) != 0)
        throw IoError(std::string("cannot ignore SIGXFSZ: ") + std::strerror(errno));
}

void unlink_if_names(const char* path, const FileId& id) noexcept {
    struct stat st {};  // lstat and unlink are async-signal-safe
    if (::lstat(path, &st) == 0 && static_cast<std::uint64_t>(st.st_dev) == id.device &&
        static_cast<std::uint64_t>(st.st_ino) == id.inode)
        ::unlink(path);
}

UnlinkOnSignal::UnlinkOnSignal(const std::string& path) noexcept { arm(path, nullptr); }

UnlinkOnSignal::UnlinkOnSignal(const std::string& path, const FileId& id) noexcept { arm(path, &id); }

void UnlinkOnSignal::arm(const std::string& path, const FileId* only_that_file) noexcept {
    if (path.empty() || path.size() >= PATH_MAX) return;
    for (std::size_t i = 0; i < kSignalCleanupCapacity; ++i) {
        Slot& slot = g_slots[i];
        int expected = slot_free;
        if (!slot.state.compare_exchange_strong(expected, slot_filling)) continue;
        std::memcpy(slot.path, path.c_str(), path.size() + 1);
        slot.only_that_file = only_that_file != nullptr;
        if (only_that_file) slot.file = *only_that_file;
        slot.state.store(slot_armed);
        slot_ = static_cast<int>(i);
        // A cleanup that began before this slot was armed may have passed it already.
        if (g_sweep.load() != sweep_none) unlink_if_armed(slot);
        return;
    }
}

UnlinkOnSignal::UnlinkOnSignal(UnlinkOnSignal&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }

UnlinkOnSignal& UnlinkOnSignal::operator=(UnlinkOnSignal&& other) noexcept {
    if (this != &other) {
        release();
        slot_ = other.slot_;
        other.slot_ = -1;
    }
    return *this;
}

void UnlinkOnSignal::release() noexcept {
    if (slot_ < 0) return;
    int expected = slot_armed;
    // When a cleanup has claimed the slot, it stays claimed: the program is ending.
    g_slots[slot_].state.compare_exchange_strong(expected, slot_free);
    slot_ = -1;
}

HoldCleanupSignals::HoldCleanupSignals() noexcept {
    const sigset_t signals = cleanup_signal_set();
    mask_saved_ = ::pthread_sigmask(SIG_BLOCK, &signals, &saved_mask_) == 0;
    g_holders.fetch_add(1);
    if (g_sweep.load() != sweep_none) {
        // Too late to create a file that the running cleanup would miss: wait for the end.
        g_holders.fetch_sub(1);
        for (;;) pause_briefly();
    }
}

HoldCleanupSignals::~HoldCleanupSignals() {
    g_holders.fetch_sub(1);
    if (mask_saved_) ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
}

std::size_t registered_for_signal_cleanup() noexcept {
    std::size_t count = 0;
    for (const Slot& slot : g_slots)
        if (slot.state.load() == slot_armed) ++count;
    return count;
}

}  // namespace gpusort::io
