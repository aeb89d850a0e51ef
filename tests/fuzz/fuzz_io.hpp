// Descriptors for the fuzz targets: a memory file holding given bytes, a pipe that a thread fills
// with given bytes, and a pipe that a thread drains (its writing end is also reachable by path, as
// /proc/self/fd/N, for code that opens its OUTPUT by name).
#pragma once

#include "io/file.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gpusort::fuzz {

inline std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// A file in memory (memfd) holding `bytes`, its offset at 0.
inline io::File memory_file(std::span<const std::byte> bytes) {
    const int fd = ::memfd_create("gpusort-fuzz", MFD_CLOEXEC);
    if (fd < 0) throw std::runtime_error("memfd_create failed");
    io::File file(fd, "memory file");
    file.write_at(0, bytes);
    return file;
}

// Both ends of a new pipe.
struct Pipe {
    int read = -1;
    int write = -1;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
        read = fds[0];
        write = fds[1];
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    void close_read() {
        if (read >= 0) ::close(read);
        read = -1;
    }
    void close_write() {
        if (write >= 0) ::close(write);
        write = -1;
    }
};

// A pipe that a thread fills with `bytes`, `piece` bytes per write(2), then closes. When the
// reading end is closed early the thread stops (SIGPIPE is blocked on it: the write fails).
class PipeFeeder {
public:
    PipeFeeder(std::span<const std::byte> bytes, std::size_t piece) : bytes_(bytes.begin(), bytes.end()) {
        thread_ = std::thread([this, piece] {
            sigset_t pipe_signal;
            sigemptyset(&pipe_signal);
            sigaddset(&pipe_signal, SIGPIPE);
            pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
            for (std::size_t done = 0; done < bytes_.size();) {
                const ssize_t n = ::write(pipe_.write, bytes_.data() + done, std::min(piece, bytes_.size() - done));
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                done += static_cast<std::size_t>(n);
            }
            pipe_.close_write();
        });
    }
    ~PipeFeeder() {
        pipe_.close_read();
        thread_.join();
    }
    PipeFeeder(const PipeFeeder&) = delete;
    PipeFeeder& operator=(const PipeFeeder&) = delete;

    int read_fd() const { return pipe_.read; }

private:
    Pipe pipe_;
    std::vector<std::byte> bytes_;
    std::thread thread_;
};

// A pipe that a thread drains until every writing end is closed.
class PipeCollector {
public:
    PipeCollector() {
        thread_ = std::thread([this] {
            std::byte buffer[65536];
            for (;;) {
                const ssize_t n = ::read(pipe_.read, buffer, sizeof buffer);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                bytes_.insert(bytes_.end(), buffer, buffer + n);
            }
        });
    }
    ~PipeCollector() {
        pipe_.close_write();
        if (thread_.joinable()) thread_.join();
    }
    PipeCollector(const PipeCollector&) = delete;
    PipeCollector& operator=(const PipeCollector&) = delete;

    int write_fd() const { return pipe_.write; }
    // Closes this end for writing and returns all that came once the other writers are gone.
    std::vector<std::byte> take() {
        pipe_.close_write();
        thread_.join();
        return std::move(bytes_);
    }

private:
    Pipe pipe_;
    std::vector<std::byte> bytes_;
    std::thread thread_;
};

}  // namespace gpusort::fuzz
