// File: positional I/O on a POSIX descriptor with complete transfers and clear errors.
#include "io/file.hpp"

#include "io/io_error.hpp"
#include "io/syscalls.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utility>

namespace gpusort::io {

File::File(File&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

File& File::operator=(File&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) sys::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        path_ = std::move(other.path_);
    }
    return *this;
}

File::~File() {
    if (fd_ >= 0) sys::close(fd_);
}

void File::close() {
    if (fd_ < 0) return;
    int fd = std::exchange(fd_, -1);
    if (sys::close(fd) != 0 && errno != EINTR) throw_errno("cannot close", path_, errno);
}

File File::open_read(const std::string& path) {
    int fd = sys::retry_interrupted([&] { return sys::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) throw_errno("cannot open", path, errno);
    File file(fd, path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw_errno("cannot stat", path, errno);
    if (S_ISDIR(st.st_mode)) throw IoError("cannot read '" + path + "': it is a directory");
    return file;
}

std::uint64_t File::size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_errno("cannot stat", path_, errno);
    return static_cast<std::uint64_t>(st.st_size);
}

void File::read_at(std::uint64_t offset, std::span<std::byte> data) const {
    std::size_t done = 0;
    while (done < data.size()) {
        ssize_t n = sys::pread(fd_, data.data() + done, data.size() - done,
                               static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno("cannot read", path_, errno);
        }
        if (n == 0) {
            throw IoError("cannot read '" + path_ + "': the file ended early (at byte " +
                          std::to_string(offset + done) + "); was it changed while sorting?");
        }
        done += static_cast<std::size_t>(n);
    }
}

void File::write_at(std::uint64_t offset, std::span<const std::byte> data) const {
    std::size_t done = 0;
    while (done < data.size()) {
        ssize_t n = sys::pwrite(fd_, data.data() + done, data.size() - done,
                                static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno("cannot write", path_, errno);
        }
        if (n == 0) throw_errno("cannot write", path_, EIO);
        done += static_cast<std::size_t>(n);
    }
}

bool File::allocate(std::uint64_t offset, std::uint64_t length) const {
    if (length == 0) return true;
    const int reserved = sys::retry_interrupted(
        [&] { return sys::fallocate(fd_, 0, static_cast<off_t>(offset), static_cast<off_t>(length)); });
    if (reserved == 0) return true;
    if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
        throw_errno("cannot reserve " + std::to_string(length) + " bytes for", path_, errno);
    return false;
}

void File::truncate(std::uint64_t size) const {
    if (sys::retry_interrupted([&] { return sys::ftruncate(fd_, static_cast<off_t>(size)); }) != 0)
        throw_errno("cannot resize", path_, errno);
}

void File::sync_data() const {
    if (sys::fdatasync(fd_) != 0) throw_errno("cannot flush", path_, errno);
}

bool file_id(const std::string& path, FileId& id) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    id.device = static_cast<std::uint64_t>(st.st_dev);
    id.inode = static_cast<std::uint64_t>(st.st_ino);
    return true;
}

std::string parent_folder(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::optional<std::uint64_t> free_space(const std::string& path) {
    struct statvfs st {};
    if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

bool same_file_system(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return a == b;
    return sa.st_dev == sb.st_dev;
}

}  // namespace gpusort::io
