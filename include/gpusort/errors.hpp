// The exceptions the library throws. Every failure of a sort is a gpusort::Error, a
// std::runtime_error whose message is one line naming the file and the cause; catch Error for all
// of them, or one of its kinds below. Options that are invalid in themselves (a budget below 1M, a
// record too small for its key) throw std::invalid_argument, and memory that runs out
// std::bad_alloc. Whatever is thrown, no file is left at OUTPUT that was not there, an existing
// OUTPUT is unchanged and no temp files remain.
#pragma once

#include <stdexcept>
#include <string>

namespace gpusort {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// The sort cannot be done as asked: not enough disk space or memory for it, an input that does not
// hold whole records or that changed while it was read, an output that failed --verify, no GPU
// for --backend gpu.
class SortError : public Error {
public:
    using Error::Error;
};

// A system call on a file or stream failed (no space left, an I/O error, a file that cannot be
// opened, a reader that went away); the message names the file and the system's reason.
class IoError : public Error {
public:
    using Error::Error;
};

// The GPU failed while it sorted (a CUDA error, device memory that ran out).
class GpuError : public Error {
public:
    using Error::Error;
};

// The sort was stopped by its caller (ProgressCounters::cancel()).
class Interrupted : public Error {
public:
    using Error::Error;
};

}  // namespace gpusort
