// IoError: the exception every io/ function throws (the public gpusort::IoError); its message
// names the file and the cause.
#pragma once

#include "gpusort/errors.hpp"

#include <string>

namespace gpusort::io {

using IoError = gpusort::IoError;

// Throws IoError "<what> '<path>': <strerror(err)>" (plus a hint for common causes).
[[noreturn]] void throw_errno(const std::string& what, const std::string& path, int err);

// An input as messages name it: "'PATH'", or "standard input" for "-".
inline std::string input_shown(const std::string& path) {
    return path == "-" ? "standard input" : "'" + path + "'";
}

}  // namespace gpusort::io
