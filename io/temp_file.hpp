// TempFile: a scratch file in a chosen folder that has no name from the start (O_TMPFILE, or
// a unique name unlinked right after creation), so nothing is left behind however the
// program ends, a crash or SIGKILL included. Its space is freed when it is closed.
#pragma once

#include "io/file.hpp"

#include <string>

namespace gpusort::io {

// Creates the anonymous temp file in `folder`; throws IoError naming the folder on failure.
File create_temp_file(const std::string& folder);

// Whether a temp file in `folder` can do direct I/O; throws IoError when none can be made there.
bool direct_io_supported(const std::string& folder);
// The same as a probe that fails nothing: false also where no nameless file (O_TMPFILE) can be
// made there. It makes the plain system calls, which a test build never makes fail.
bool direct_io_possible_in(const std::string& folder);

}  // namespace gpusort::io
