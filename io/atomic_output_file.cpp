// AtomicOutputFile: O_TMPFILE + linkat + rename (or a hidden unique name + rename); a hidden name is
// registered for signal cleanup for as long as it exists.
#include "io/atomic_output_file.hpp"

#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"

#include <cerrno>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpusort::io {

namespace {

std::string hidden_name(const std::string& folder) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string name = folder + "/.gpusort-out-";
    for (int i = 0; i < 12; ++i) name += digits[rng() % 36];
    return name;
}

mode_t final_mode(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
    mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

}  // namespace

AtomicOutputFile::AtomicOutputFile(std::string path) : path_(std::move(path)) {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw IoError("cannot write '" + path_ + "': it is a directory");
    const std::string folder = parent_folder(path_);
    int fd = -1;
#ifdef O_TMPFILE
    fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        throw_errno("cannot write", path_, errno);
#endif
    if (fd < 0) {
        std::string pattern = folder + "/.gpusort-out-XXXXXX";
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        int err = 0;
        {
            HoldCleanupSignals hold;
            fd = ::mkostemp(name.data(), O_CLOEXEC);
            err = errno;
            if (fd >= 0) temp_name_cleanup_ = UnlinkOnSignal(name.data());
        }
        if (fd < 0) throw_errno("cannot write", path_, err);
        temp_name_ = name.data();
    }
    file_ = File(fd, path_);
}

AtomicOutputFile::~AtomicOutputFile() {
    if (!committed_ && !temp_name_.empty()) ::unlink(temp_name_.c_str());
    temp_name_cleanup_.release();
}

void AtomicOutputFile::commit(bool sync) {
    if (::fchmod(file_.fd(), final_mode(path_)) != 0) throw_errno("cannot set permissions of", path_, errno);
    if (sync) file_.sync_data();
    if (temp_name_.empty()) {
        // Give the nameless file a hidden unique name, then move it over the path.
        const std::string proc = "/proc/self/fd/" + std::to_string(file_.fd());
        const std::string folder = parent_folder(path_);
        for (int attempt = 0;; ++attempt) {
            std::string name = hidden_name(folder);
            bool linked = false;
            int err = 0;
            {
                HoldCleanupSignals hold;
                linked = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0;
                err = errno;
                if (linked) temp_name_cleanup_ = UnlinkOnSignal(name);
            }
            if (linked) {
                temp_name_ = std::move(name);
                break;
            }
            if (err != EEXIST || attempt > 100) throw_errno("cannot write", path_, err);
        }
    }
    if (::rename(temp_name_.c_str(), path_.c_str()) != 0) {
        int err = errno;
        ::unlink(temp_name_.c_str());
        temp_name_.clear();
        temp_name_cleanup_.release();
        throw_errno("cannot move the finished output to", path_, err);
    }
    committed_ = true;
    temp_name_cleanup_.release();
    if (sync) {
        // Make the rename itself durable: flush the folder's entry.
        int dir = ::open(parent_folder(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir >= 0) {
            ::fsync(dir);
            ::close(dir);
        }
    }
    file_.close();
}

}  // namespace gpusort::io
