// Builds the one-line messages of IoError from errno values.
#include "io/io_error.hpp"

#include <cerrno>
#include <cstring>

namespace gpusort::io {

namespace {
const char* hint(int err) {
    switch (err) {
    case ENOSPC: return " (the disk is full; free space or choose another --tmp-dir / output folder)";
    case EDQUOT: return " (disk quota exceeded)";
    case EACCES:
    case EPERM: return " (check the permissions)";
    case EROFS: return " (the file system is read-only)";
    case EFBIG: return " (the file size limit was reached)";
    case EMFILE:
    case ENFILE: return " (too many open files)";
    default: return "";
    }
}
}  // namespace

void throw_errno(const std::string& what, const std::string& path, int err) {
    throw IoError(what + " '" + path + "': " + std::strerror(err) + hint(err));
}

}  // namespace gpusort::io
