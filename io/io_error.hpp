// IoError: the exception every io/ function throws; its message names the file and the cause.
#pragma once

#include <stdexcept>
#include <string>

namespace gpusort::io {

class IoError : public std::runtime_error {
public:
    explicit IoError(const std::string& message) : std::runtime_error(message) {}
};

// Throws IoError "<what> '<path>': <strerror(err)>" (plus a hint for common causes).
[[noreturn]] void throw_errno(const std::string& what, const std::string& path, int err);

// An input as messages name it: "'PATH'", or "standard input" for "-".
inline std::string input_shown(const std::string& path) {
    return path == "-" ? "standard input" : "'" + path + "'";
}

}  // namespace gpusort::io
