// Anonymous temp files: O_TMPFILE where the file system has it, mkstemp + unlink elsewhere (the
// name registered for signal cleanup until it is unlinked).
#include "io/temp_file.hpp"

#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"
#include "io/syscalls.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpusort::io {

File create_temp_file(const std::string& folder) {
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) throw_errno("cannot use temp folder", folder, errno);
    if (!S_ISDIR(st.st_mode)) throw IoError("cannot use temp folder '" + folder + "': not a directory");

    const std::string label = folder + " (temp file)";
    int fd = -1;
#ifdef O_TMPFILE
    fd = sys::retry_interrupted(
        [&] { return sys::open(folder.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600); });
    if (fd >= 0) return File(fd, label);
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT)
        throw_errno("cannot create a temp file in", folder, errno);
#endif
    std::string pattern = folder + "/.gpusort-tmp-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    // The name exists from mkostemp to unlink: a cleanup signal meanwhile still removes it.
    UnlinkOnSignal cleanup;
    int err = 0;
    {
        HoldCleanupSignals hold;
        fd = sys::mkostemp(name.data(), O_CLOEXEC);
        err = errno;
        if (fd >= 0) cleanup = UnlinkOnSignal(name.data());
    }
    // The folder was there a moment ago: ENOENT means a file system that makes no new files (/proc).
    if (fd < 0 && err == ENOENT)
        throw IoError("cannot create a temp file in '" + folder + "': no file can be created there (" +
                      std::strerror(err) + ")");
    if (fd < 0) throw_errno("cannot create a temp file in", folder, err);
    ::unlink(name.data());
    cleanup.release();
    return File(fd, label);
}

bool direct_io_supported(const std::string& folder) { return create_temp_file(folder).use_direct_io(); }

bool direct_io_possible_in(const std::string& folder) {
#ifdef O_TMPFILE
    const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    ::close(fd);
    return true;
#else
    (void)folder;
    return false;
#endif
}

}  // namespace gpusort::io
