// Signal cleanup, in forked children: SIGINT, SIGTERM and SIGHUP unlink the registered paths and
// still end the program by that signal; unregistered or released paths stay; HoldCleanupSignals
// defers a signal until the file it covers is registered; SIGXFSZ is ignored, so a file size
// limit gives EFBIG. In this process: the registry's handles (count, release, move, capacity).
#include "io/signal_cleanup.hpp"
#include "io/atomic_output_file.hpp"
#include "io/temp_file.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <functional>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// Exit codes a child uses to say what went wrong before the signal could end it.
constexpr int kChildSetupFailed = 90;
constexpr int kChildSurvived = 91;

// Runs `body` in a forked child and returns its wait status. `body` must end the child (by a
// signal or _exit); returning counts as kChildSurvived.
int wait_status_of_child(const std::function<void()>& body) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        body();
        ::_exit(kChildSurvived);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

std::string describe(int status) {
    if (WIFSIGNALED(status)) return std::string("killed by ") + ::strsignal(WTERMSIG(status));
    if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
    return "status " + std::to_string(status);
}

bool create_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

}  // namespace

TEST(SignalCleanup, EachSignalFromOutsideUnlinksRegisteredPathsAndEndsTheProgramByIt) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        ScratchDir dir;
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(ready[0]);
            io::install_signal_cleanup();
            if (!create_file(dir / "registered") || !create_file(dir / "unregistered") || !create_file(dir / "released"))
                ::_exit(kChildSetupFailed);
            io::UnlinkOnSignal registered(dir / "registered");
            io::UnlinkOnSignal released(dir / "released");
            released.release();
            if (!registered.active()) ::_exit(kChildSetupFailed);
            const char byte = 'r';
            if (::write(ready[1], &byte, 1) != 1) ::_exit(kChildSetupFailed);
            for (int i = 0; i < 6000; ++i) ::usleep(10000);  // the signal ends this (60 s at most)
            ::_exit(kChildSurvived);
        }
        ::close(ready[1]);
        char byte = 0;
        const bool child_ready = ::read(ready[0], &byte, 1) == 1;
        ::close(ready[0]);
        if (child_ready) ::kill(pid, sig);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(child_ready) << describe(status);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << ::strsignal(sig) << ": " << describe(status);
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"unregistered", "released"})) << ::strsignal(sig);
    }
}

TEST(SignalCleanup, RaisedSignalUnlinksEveryRegisteredPath) {
    ScratchDir dir;
    const int status = wait_status_of_child([&] {
        io::install_signal_cleanup();
        std::vector<io::UnlinkOnSignal> handles;
        for (int i = 0; i < 10; ++i) {
            const std::string path = dir / ("file" + std::to_string(i));
            if (!create_file(path)) ::_exit(kChildSetupFailed);
            handles.emplace_back(path);
        }
        if (!create_file(dir / "kept")) ::_exit(kChildSetupFailed);
        ::raise(SIGTERM);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << describe(status);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"kept"}));
}

// A path registered with its file's device and inode is unlinked only while it names that file:
// one put there since stays, and so does the path's file when the registered one never came.
TEST(SignalCleanup, APathRegisteredWithItsFileIsUnlinkedOnlyWhileItNamesThatFile) {
    ScratchDir dir;
    const int status = wait_status_of_child([&] {
        io::install_signal_cleanup();
        struct stat st {};
        if (!create_file(dir / "same") || ::stat((dir / "same").c_str(), &st) != 0) ::_exit(kChildSetupFailed);
        io::UnlinkOnSignal same(dir / "same", io::FileId{st.st_dev, st.st_ino});
        if (!create_file(dir / "old") || !create_file(dir / "made") || ::stat((dir / "made").c_str(), &st) != 0)
            ::_exit(kChildSetupFailed);
        io::UnlinkOnSignal replaced(dir / "replaced", io::FileId{st.st_dev, st.st_ino});  // "made", moved there, then replaced
        if (::rename((dir / "made").c_str(), (dir / "replaced").c_str()) != 0 || !create_file(dir / "newer") ||
            ::rename((dir / "newer").c_str(), (dir / "replaced").c_str()) != 0)
            ::_exit(kChildSetupFailed);
        io::UnlinkOnSignal never(dir / "old", io::FileId{st.st_dev, st.st_ino});  // "old" is another file
        ::raise(SIGTERM);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << describe(status);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"old", "replaced"}));
}

TEST(SignalCleanup, ASignalIgnoredBeforeInstallingStaysIgnored) {
    ScratchDir dir;
    const int status = wait_status_of_child([&] {
        ::signal(SIGHUP, SIG_IGN);  // as under nohup
        io::install_signal_cleanup();
        if (!create_file(dir / "registered")) ::_exit(kChildSetupFailed);
        io::UnlinkOnSignal registered(dir / "registered");
        ::raise(SIGHUP);
        ::_exit(0);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"registered"}));
}

TEST(SignalCleanup, AHeldSignalWaitsUntilTheFileItCoversIsRegistered) {
    ScratchDir dir;
    const int status = wait_status_of_child([&] {
        io::install_signal_cleanup();
        io::UnlinkOnSignal registered;
        {
            io::HoldCleanupSignals hold;
            ::raise(SIGINT);  // pending until the hold ends
            if (!create_file(dir / "still-alive-after-raise") || !create_file(dir / "named")) ::_exit(kChildSetupFailed);
            registered = io::UnlinkOnSignal(dir / "named");
        }
        ::_exit(kChildSurvived);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << describe(status);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"still-alive-after-raise"}));
}

TEST(SignalCleanup, IgnoresSigxfszSoAFileSizeLimitGivesEfbig) {
    ScratchDir dir;
    auto write_past_the_limit = [&] {
        const rlimit no_core{0, 0};  // SIGXFSZ would dump core
        const rlimit limit{64 * 1024, RLIM_INFINITY};
        if (::setrlimit(RLIMIT_CORE, &no_core) != 0 || ::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(kChildSetupFailed);
        const int fd = ::open((dir / "big").c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) ::_exit(kChildSetupFailed);
        const std::string block(16 * 1024, 'x');
        for (int i = 0; i < 8; ++i) {
            if (::write(fd, block.data(), block.size()) < 0) ::_exit(errno == EFBIG ? 0 : 1);
        }
        ::_exit(2);  // the limit did not apply
    };
    // Without the cleanup installed the limit kills (this is what the program avoids)...
    int status = wait_status_of_child(write_past_the_limit);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) << describe(status);
    // ...with it, the write fails with EFBIG and the program goes on.
    status = wait_status_of_child([&] {
        io::install_signal_cleanup();
        write_past_the_limit();
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
}

TEST(SignalCleanup, RegistryHandlesCountReleaseMoveAndCapacity) {
    ScratchDir dir;
    const std::size_t before = io::registered_for_signal_cleanup();
    {
        io::UnlinkOnSignal a(dir / "a");
        EXPECT_TRUE(a.active());
        EXPECT_EQ(io::registered_for_signal_cleanup(), before + 1);
        io::UnlinkOnSignal moved(std::move(a));
        EXPECT_FALSE(a.active());
        EXPECT_TRUE(moved.active());
        EXPECT_EQ(io::registered_for_signal_cleanup(), before + 1);
        io::UnlinkOnSignal b(dir / "b");
        b = std::move(moved);  // b's own path is released
        EXPECT_EQ(io::registered_for_signal_cleanup(), before + 1);
        b.release();
        EXPECT_FALSE(b.active());
        EXPECT_EQ(io::registered_for_signal_cleanup(), before);
        b.release();  // twice is harmless
    }
    EXPECT_EQ(io::registered_for_signal_cleanup(), before);

    // Nothing registered for an empty or over-long path, and none beyond the capacity.
    EXPECT_FALSE(io::UnlinkOnSignal(std::string()).active());
    EXPECT_FALSE(io::UnlinkOnSignal(dir.path() + "/" + std::string(5000, 'x')).active());
    {
        std::vector<io::UnlinkOnSignal> handles;
        for (std::size_t i = 0; i < io::kSignalCleanupCapacity + 5; ++i) handles.emplace_back(dir / std::to_string(i));
        const auto active = std::count_if(handles.begin(), handles.end(), [](const auto& h) { return h.active(); });
        EXPECT_EQ(static_cast<std::size_t>(active), io::kSignalCleanupCapacity - before);
        EXPECT_EQ(io::registered_for_signal_cleanup(), io::kSignalCleanupCapacity);
    }
    EXPECT_EQ(io::registered_for_signal_cleanup(), before);
}

TEST(SignalCleanup, TempAndOutputFilesLeaveNothingRegistered) {
    ScratchDir dir;
    const std::size_t before = io::registered_for_signal_cleanup();
    {
        io::File temp = io::create_temp_file(dir.path());
        io::AtomicOutputFile out(dir / "out");
        io::AtomicOutputFile abandoned(dir / "abandoned");
        out.commit(false);
    }
    EXPECT_EQ(io::registered_for_signal_cleanup(), before);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"out"}));
}
