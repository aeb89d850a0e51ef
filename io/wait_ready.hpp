// wait_ready: poll(2) on one descriptor for a while, so that the threads of the stream reader and
// writer can look at their stop flag between waits on a pipe that stays silent or full.
#pragma once

#include "io/io_error.hpp"

#include <cerrno>
#include <poll.h>
#include <string>

namespace gpusort::io {

// Waits until fd is ready for `events` (POLLIN, POLLOUT; its end or an error count as ready: the
// next read or write tells which); false when it was not within the time or a signal came.
inline bool wait_ready(int fd, short events, int milliseconds, const std::string& name) {
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, milliseconds);
    if (ready < 0) {
        if (errno == EINTR) return false;
        throw_errno("cannot wait for", name, errno);
    }
    return ready > 0;
}

}  // namespace gpusort::io
