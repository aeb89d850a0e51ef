// Running the programs under test as a child process: arguments passed as they are (no shell),
// stdout and stderr captured through pipes, an optional step run in the child just before exec
// (a resource limit, another user), the child's end (exit code or signal) kept apart, its resource
// use, and an optional bound on how long it may run. A child can be stopped (SIGSTOP) at a moment
// the test chooses, so that what the test does next (a signal, a change to INPUT) lands there.
#pragma once

#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <optional>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace gpusort::testing {

struct Result {
    int wait_status = -1;
    std::string out;  // stdout
    std::string err;  // stderr
    rusage usage{};   // the child's resource use (ru_maxrss: its peak resident memory in KiB)
    bool timed_out = false;  // it outran the bound given to wait() and was killed

    bool exited() const { return WIFEXITED(wait_status); }
    int exit_code() const { return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1; }
    bool killed_by(int sig) const { return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == sig; }
    // As a shell reports it: the exit code, or 128 + the signal that killed it.
    int status() const { return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status); }
    // "exited with 1" or "killed by Terminated", for failure messages.
    std::string how_it_ended() const {
        if (timed_out) return "hung: killed after its time ran out";
        if (WIFEXITED(wait_status)) return "exited with " + std::to_string(WEXITSTATUS(wait_status));
        if (WIFSIGNALED(wait_status)) return std::string("killed by ") + ::strsignal(WTERMSIG(wait_status));
        return "wait status " + std::to_string(wait_status);
    }
};

// A running program. wait() collects its output and its end; a child never waited for is
// killed (SIGKILL) and reaped on destruction.
class ChildProcess {
public:
    ChildProcess(const std::string& program, const std::vector<std::string>& args,
                 const std::function<void()>& before_exec = {}) {
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        if (::pipe2(err, O_CLOEXEC) != 0) {
            ::close(out[0]);
            ::close(out[1]);
            throw std::runtime_error("pipe failed");
        }
        std::vector<std::string> argv_strings = {program};
        argv_strings.insert(argv_strings.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : argv_strings) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::dup2(out[1], STDOUT_FILENO);
            ::dup2(err[1], STDERR_FILENO);
            if (before_exec) before_exec();
            ::execv(program.c_str(), argv.data());
            const std::string message = "exec " + program + ": " + std::strerror(errno) + "\n";
            [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, message.data(), message.size());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        out_fd_ = out[0];
        err_fd_ = err[0];
    }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
        if (out_fd_ >= 0) ::close(out_fd_);
        if (err_fd_ >= 0) ::close(err_fd_);
    }

    pid_t pid() const { return pid_; }

    // Whether the child has ended (a zombie not yet reaped counts as ended).
    bool has_ended() const {
        siginfo_t info{};
        info.si_pid = 0;
        return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
    }

    // Collects the output and the end. With a bound, a child still running when it has passed is
    // killed (SIGKILL) and the result says timed_out.
    Result wait(std::optional<std::chrono::milliseconds> bound = std::nullopt) {
        Result result;
        const auto deadline = std::chrono::steady_clock::now() + bound.value_or(std::chrono::milliseconds(0));
        // Milliseconds to the deadline for poll (-1: none), killing the child once it has passed.
        auto time_left = [&] {
            if (!bound || result.timed_out) return -1;
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() > 0) return static_cast<int>(std::min<long long>(left.count(), 1000));
            ::kill(pid_, SIGKILL);
            result.timed_out = true;
            return -1;
        };
        pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
        std::string* sinks[2] = {&result.out, &result.err};
        int open_pipes = 2;
        while (open_pipes > 0) {
            if (::poll(fds, 2, time_left()) < 0) {
                if (errno == EINTR) continue;
                break;
            }
            for (int i = 0; i < 2; ++i) {
                if (fds[i].fd < 0 || fds[i].revents == 0) continue;
                char buffer[4096];
                const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
                if (n > 0) {
                    sinks[i]->append(buffer, static_cast<std::size_t>(n));
                } else if (n == 0 || errno != EINTR) {
                    fds[i].fd = -1;
                    --open_pipes;
                }
            }
        }
        // Both pipes closed; the child may still run (it closed them itself).
        while (bound && !has_ended() && time_left() >= 0) ::poll(nullptr, 0, 1);
        while (::wait4(pid_, &result.wait_status, 0, &result.usage) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return result;
    }

private:
    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
};

// Whether one of the process's descriptors is open on a file in `folder` (a nameless temp file
// shows as "FOLDER/#123 (deleted)").
inline bool has_file_open_in(pid_t pid, const std::string& folder) {
    const std::string prefix = std::filesystem::canonical(folder).string() + "/";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        std::error_code link_ec;
        const std::string target = std::filesystem::read_symlink(entry.path(), link_ec).string();
        if (!link_ec && target.rfind(prefix, 0) == 0) return true;
    }
    return false;
}

// Stops the child (SIGSTOP) at a moment when `holds` is true of it: polls `holds` while the child
// runs, then stops the child and asks again, now that the child cannot move on; where it no
// longer holds, the child goes on (SIGCONT) and the polling too. True with the child stopped and
// `holds` true: the test acts, then resumes it with SIGCONT (a signal sent while it is stopped is
// taken as it resumes). False, with the child running or ended, when it ended first or
// kHangBound passed.
inline bool stop_when(const ChildProcess& child, const std::function<bool()>& holds) {
    const auto deadline = std::chrono::steady_clock::now() + kHangBound;
    for (;;) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) return false;
        if (!wait_for([&] { return child.has_ended() || holds(); }, left) || child.has_ended()) return false;
        if (::kill(child.pid(), SIGSTOP) != 0) return false;
        // Until every thread has stopped, or the child ended (left to be reaped by wait()).
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WSTOPPED | WEXITED | WNOWAIT) != 0) {
            if (errno != EINTR) return false;
        }
        if (info.si_code != CLD_STOPPED) return false;
        if (holds()) return true;
        ::kill(child.pid(), SIGCONT);
    }
}

inline Result run(const std::string& program, const std::vector<std::string>& args,
                  const std::function<void()>& before_exec = {}) {
    return ChildProcess(program, args, before_exec).wait();
}

// The exit statuses of gpusort-file's failures: a sort that failed, and a malformed command line.
inline constexpr int kFailed = 1;
inline constexpr int kBadCommandLine = 2;

// One line on stderr, "gpusort-file: ...", holding every one of `must_contain`, and exit status
// `status`: 1 for a sort that failed (the default), 2 for a malformed command line.
inline void expect_one_error_line(const Result& r, const std::vector<std::string>& must_contain,
                                  int status = kFailed) {
    EXPECT_TRUE(r.exited() && r.exit_code() == status)
        << r.how_it_ended() << ", expected exit status " << status << "; stderr: " << r.err;
    EXPECT_EQ(r.err.rfind("gpusort-file: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.empty() ? '\0' : r.err.back(), '\n') << r.err;
    for (const auto& text : must_contain)
        EXPECT_NE(r.err.find(text), std::string::npos) << "missing '" << text << "' in: " << r.err;
}

inline void expect_one_error_line(const Result& r, const std::string& must_contain, int status = kFailed) {
    expect_one_error_line(r, std::vector<std::string>{must_contain}, status);
}

}  // namespace gpusort::testing
