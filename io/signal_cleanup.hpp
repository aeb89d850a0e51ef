// Signal cleanup: files that must not outlive the program although they have a name for a while
// (temp files and the output where the file system has no O_TMPFILE, and the hidden name the
// output gets for an instant in commit()). Their paths are registered here; on SIGINT, SIGTERM
// or SIGHUP a handler unlinks every registered path, then the program ends by that signal, as it
// would have without the handler. Nothing here allocates once registered, and the handler calls
// only async-signal-safe functions.
#pragma once

#include "io/file.hpp"

#include <csignal>
#include <cstddef>
#include <string>

namespace gpusort::io {

// How many paths can be registered at once (a sort needs a few: the output and a temp file
// being created per thread).
inline constexpr std::size_t kSignalCleanupCapacity = 64;

// Installs the cleanup handler for SIGINT, SIGTERM and SIGHUP (a signal that is ignored when this
// is first called, as under nohup, stays ignored), and ignores SIGXFSZ so that a file size limit
// (RLIMIT_FSIZE) shows up as EFBIG errors that name the file instead of killing the program.
// Later calls do nothing. Throws IoError when sigaction fails.
void install_signal_cleanup();

// One registered path: unlinked if a cleanup signal ends the program while this object is
// active; unregistered by release() or on destruction (the file itself is left alone then).
// Unlinks `path` where it names the file `id` itself (not a symbolic link to it); async-signal-safe.
void unlink_if_names(const char* path, const FileId& id) noexcept;

class UnlinkOnSignal {
public:
    UnlinkOnSignal() noexcept = default;
    // Registers `path`. Cleanup is best effort: when the registry is full or the path is longer
    // than PATH_MAX nothing is registered and active() is false.
    explicit UnlinkOnSignal(const std::string& path) noexcept;
    // The same, unlinked only while `path` still names the file `id` (unlink_if_names): a file that
    // another process made and moves there (gpusort-mpi's --partitioned files), whose name may hold
    // an older file until then, which stays.
    UnlinkOnSignal(const std::string& path, const FileId& id) noexcept;
    UnlinkOnSignal(UnlinkOnSignal&& other) noexcept;
    UnlinkOnSignal& operator=(UnlinkOnSignal&& other) noexcept;
    UnlinkOnSignal(const UnlinkOnSignal&) = delete;
    UnlinkOnSignal& operator=(const UnlinkOnSignal&) = delete;
    ~UnlinkOnSignal() { release(); }

    bool active() const noexcept { return slot_ >= 0; }
    // Unregisters now, e.g. once the file was renamed to its final name or unlinked.
    void release() noexcept;

private:
    void arm(const std::string& path, const FileId* only_that_file) noexcept;
    int slot_ = -1;
};

// Closes the gap between creating a named file and registering it: while alive, the cleanup
// signals are blocked in this thread, and a handler that runs in another thread waits (a few
// seconds at most) until every such scope has ended before it unlinks the registered paths. Once
// a cleanup has begun, constructing one waits for the program to end instead of returning.
class HoldCleanupSignals {
public:
    HoldCleanupSignals() noexcept;
    ~HoldCleanupSignals();
    HoldCleanupSignals(const HoldCleanupSignals&) = delete;
    HoldCleanupSignals& operator=(const HoldCleanupSignals&) = delete;

private:
    sigset_t saved_mask_{};  // the thread's signal mask before
    bool mask_saved_ = false;
};

// How many paths are registered now (for tests and diagnostics).
std::size_t registered_for_signal_cleanup() noexcept;

}  // namespace gpusort::io
