// AtomicOutputFile: O_TMPFILE + linkat (+ rename when the path exists), or a hidden unique name +
// rename; a hidden name is registered for signal cleanup for as long as it exists, and its file is
// locked (flock), so that a later sort can tell the leftovers of a SIGKILL from files in use.
#include "io/atomic_output_file.hpp"

#include "io/io_error.hpp"
#include "io/output_set.hpp"
#include "io/signal_cleanup.hpp"
#include "io/syscalls.hpp"

#include <cerrno>
#include <climits>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpusort::io {

namespace {

constexpr char kHiddenPrefix[] = ".gpusort-out-";

std::string hidden_name(const std::string& folder) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string name = folder + "/" + kHiddenPrefix;
    for (int i = 0; i < 12; ++i) name += digits[rng() % 36];
    return name;
}

// Whether `name` is still the file open at `fd` (not removed, nor replaced by another).
bool names_file(const std::string& name, int fd) {
    struct stat by_name {}, open {};
    return ::lstat(name.c_str(), &by_name) == 0 && ::fstat(fd, &open) == 0 && by_name.st_dev == open.st_dev &&
           by_name.st_ino == open.st_ino;
}

// Removes the hidden files in `folder` that no running sort holds: those a sort ended by SIGKILL
// (or a crash) left between naming its output and moving it over OUTPUT. A sort holds an exclusive
// flock on its file from before the file has a hidden name until it is moved, so a file whose lock
// can be taken is a leftover. Best effort, with the plain calls: nothing here may fail the sort.
void remove_leftovers(const std::string& folder) {
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return;
    while (const dirent* entry = ::readdir(dir)) {
        if (std::string_view(entry->d_name).rfind(kHiddenPrefix, 0) != 0) continue;
        const std::string name = folder + "/" + entry->d_name;
        const int fd = ::open(name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            names_file(name, fd))
            ::unlink(name.c_str());
        ::close(fd);
    }
    ::closedir(dir);
}

}  // namespace

std::string follow_links(const std::string& path) {
    std::string current = path;
    std::vector<char> target(PATH_MAX);
    for (int links = 0;; ++links) {
        const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
        if (n < 0) return current;  // no link (or nothing there): what follows reports any error
        if (links == 40) throw_errno("cannot write", path, ELOOP);
        if (static_cast<std::size_t>(n) == target.size()) throw_errno("cannot write", path, ENAMETOOLONG);
        const std::string link(target.data(), static_cast<std::size_t>(n));
        const auto slash = current.find_last_of('/');
        current = link.front() == '/' || slash == std::string::npos ? link : current.substr(0, slash + 1) + link;
    }
}

namespace {

mode_t final_mode(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
    mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

// The folder of `path` (already followed to its end), once OUTPUT is known not to be a directory
// and the leftovers of ended sorts are gone from it (the sets they left half placed rolled back).
std::string prepare_folder(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw IoError("cannot write '" + path + "': it is a directory");
    const std::string folder = parent_folder(path);
    roll_back_ended_sets(folder);
    remove_leftovers(folder);
    return folder;
}

}  // namespace

// The file's data were flushed before the rename: a crash that loses the rename leaves the old
// OUTPUT (or none), never a partial one.
void flush_folder(const std::string& folder) {
    const int dir =
        sys::retry_interrupted([&] { return sys::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
    if (dir < 0) return;
    sys::fsync(dir);
    sys::close(dir);
}

std::string AtomicOutputFile::hidden_name_for(const std::string& path) {
    const std::string folder = parent_folder(follow_links(path));
    for (;;) {
        std::string name = hidden_name(folder);
        struct stat st {};
        if (::lstat(name.c_str(), &st) != 0) return name;
    }
}

AtomicOutputFile::AtomicOutputFile(const std::string& path, const std::string& hidden) : path_(follow_links(path)) {
    prepare_folder(path_);
    int fd = -1, err = 0;
    {
        HoldCleanupSignals hold;
        fd = sys::retry_interrupted(
            [&] { return sys::open(hidden.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600); });
        err = errno;
        if (fd >= 0) temp_name_cleanup_ = UnlinkOnSignal(hidden);
    }
    if (fd < 0) throw_errno("cannot write", path_, err);
    file_ = File(fd, path_);
    temp_name_ = hidden;
    // Named before it is locked: another sort may have taken it for a leftover in between.
    ::flock(fd, LOCK_EX);
    if (!names_file(hidden, fd)) throw IoError("cannot write '" + path_ + "': another sort removed its hidden file");
}

AtomicOutputFile::AtomicOutputFile(const std::string& path) : path_(follow_links(path)) {
    const std::string folder = prepare_folder(path_);
    int fd = -1;
#ifdef O_TMPFILE
    fd = sys::retry_interrupted([&] { return sys::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600); });
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) throw_errno("cannot write", path_, errno);
    // Held until the file is at the path: a hidden name it may get on the way is not a leftover.
    if (fd >= 0) ::flock(fd, LOCK_EX);
#endif
    while (fd < 0) {
        std::string pattern = folder + "/" + kHiddenPrefix + "XXXXXX";
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        int err = 0;
        {
            HoldCleanupSignals hold;
            fd = sys::mkostemp(name.data(), O_CLOEXEC);
            err = errno;
            if (fd >= 0) temp_name_cleanup_ = UnlinkOnSignal(name.data());
        }
        if (fd < 0) throw_errno("cannot write", path_, err);
        // Named before it is locked: another sort may have taken it for a leftover in between.
        ::flock(fd, LOCK_EX);
        if (!names_file(name.data(), fd)) {
            temp_name_cleanup_.release();
            ::close(fd);
            fd = -1;
            continue;
        }
        temp_name_ = name.data();
    }
    file_ = File(fd, path_);
}

AtomicOutputFile::~AtomicOutputFile() {
    if (!committed_ && !temp_name_.empty()) ::unlink(temp_name_.c_str());
    temp_name_cleanup_.release();
}

void AtomicOutputFile::commit(bool sync) {
    commit_finish(sync);
    // Where nothing is at the path yet, the nameless file is linked there at once: it never has
    // another name, which a SIGKILL between the link and the rename would leave behind.
    if (temp_name_.empty() && link_at_path()) {
        committed_ = true;
        if (sync) flush_folder(parent_folder(path_));
        return;
    }
    // Else it gets a hidden unique name, then is moved over the path.
    commit_hidden_name();
    if (const int err = commit_place(); err != 0) {
        discard();
        throw_errno("cannot move the finished output to", path_, err);
    }
    committed_ = true;
    if (sync) flush_folder(parent_folder(path_));
}

void AtomicOutputFile::commit_finish(bool sync) {
    if (sys::fchmod(file_.fd(), final_mode(path_)) != 0) throw_errno("cannot set permissions of", path_, errno);
    if (sync) file_.sync_data();
    // A second descriptor keeps the file open, and locked, until it is at the path, so that the first
    // is closed before the file appears there (a file system may report a failed write only on close).
    held_ = File(::fcntl(file_.fd(), F_DUPFD_CLOEXEC, 0), path_);
    if (!held_.is_open()) throw_errno("cannot write", path_, errno);
    file_.close();
}

bool AtomicOutputFile::link_at_path() {
    // The nameless file is linked through the second descriptor.
    const std::string proc = "/proc/self/fd/" + std::to_string(held_.fd());
    if (sys::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        held_ = File();  // closed without a check: the file was written and closed before
        return true;
    }
    if (errno != EEXIST) throw_errno("cannot write", path_, errno);
    return false;
}

void AtomicOutputFile::commit_hidden_name(const std::string& wanted) {
    if (!temp_name_.empty() && wanted.empty()) return;
    // Linked through the second descriptor where the file has no name, else from its name (which
    // is unlinked after: a name that is not there already is never replaced).
    const std::string from = temp_name_.empty() ? "/proc/self/fd/" + std::to_string(held_.fd()) : temp_name_;
    const int follow = temp_name_.empty() ? AT_SYMLINK_FOLLOW : 0;
    const std::string folder = parent_folder(path_);
    for (int attempt = 0;; ++attempt) {
        std::string name = wanted.empty() ? hidden_name(folder) : wanted;
        bool linked = false;
        int err = 0;
        {
            HoldCleanupSignals hold;
            linked = sys::linkat(AT_FDCWD, from.c_str(), AT_FDCWD, name.c_str(), follow) == 0;
            err = errno;
            if (linked) {
                if (!temp_name_.empty()) ::unlink(temp_name_.c_str());
                temp_name_cleanup_ = UnlinkOnSignal(name);
            }
        }
        if (linked) {
            temp_name_ = std::move(name);
            return;
        }
        if (err != EEXIST || !wanted.empty() || attempt > 100) throw_errno("cannot write", path_, err);
    }
}

int AtomicOutputFile::commit_place() {
    if (sys::rename(temp_name_.c_str(), path_.c_str()) != 0) return errno;
    temp_name_.clear();
    temp_name_cleanup_.release();
    held_ = File();  // closed without a check: the file was written and closed before
    return 0;
}

void AtomicOutputFile::discard() {
    if (!temp_name_.empty()) ::unlink(temp_name_.c_str());
    temp_name_.clear();
    temp_name_cleanup_.release();
}

}  // namespace gpusort::io
