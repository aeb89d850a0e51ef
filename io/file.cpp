// File: positional I/O on a POSIX descriptor with complete transfers and clear errors.
#include "io/file.hpp"

#include "io/io_error.hpp"
#include "io/syscalls.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <memory>
#include <stdexcept>
#include <utility>

namespace gpusort::io {

namespace {

constexpr std::uint64_t align_down(std::uint64_t x) { return x / kDirectIoAlignment * kDirectIoAlignment; }
constexpr std::uint64_t align_up(std::uint64_t x) { return align_down(x + kDirectIoAlignment - 1); }
bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kDirectIoAlignment == 0; }

// The calling thread's bounce buffer for direct transfers, aligned, of `bytes` at least (it grows
// to the largest piece the thread has used).
std::byte* bounce_buffer(std::size_t bytes) {
    struct Free {
        void operator()(std::byte* p) const { std::free(p); }
    };
    thread_local std::unique_ptr<std::byte, Free> buffer;
    thread_local std::size_t size = 0;
    if (size < bytes) {
        buffer.reset(static_cast<std::byte*>(std::aligned_alloc(kDirectIoAlignment, bytes)));
        size = buffer ? bytes : 0;
        if (!buffer) throw std::bad_alloc();
    }
    return buffer.get();
}

}  // namespace

File::File(File&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      direct_fd_(std::exchange(other.direct_fd_, -1)),
      direct_piece_(std::exchange(other.direct_piece_, 0)),
      path_(std::move(other.path_)) {}

File& File::operator=(File&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) sys::close(fd_);
        if (direct_fd_ >= 0) sys::close(direct_fd_);
        fd_ = std::exchange(other.fd_, -1);
        direct_fd_ = std::exchange(other.direct_fd_, -1);
        direct_piece_ = std::exchange(other.direct_piece_, 0);
        path_ = std::move(other.path_);
    }
    return *this;
}

File::~File() {
    if (fd_ >= 0) sys::close(fd_);
    if (direct_fd_ >= 0) sys::close(direct_fd_);
}

void File::close() {
    if (direct_fd_ >= 0) {
        const int fd = std::exchange(direct_fd_, -1);
        if (sys::close(fd) != 0 && errno != EINTR) throw_errno("cannot close", path_, errno);
    }
    if (fd_ < 0) return;
    int fd = std::exchange(fd_, -1);
    if (sys::close(fd) != 0 && errno != EINTR) throw_errno("cannot close", path_, errno);
}

namespace {

// The flags that open the descriptor's own file again with O_DIRECT (through its name in /proc,
// which works for a file that has no name, O_TMPFILE): for reading only where `fd` is read only.
int direct_flags(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return (flags >= 0 && (flags & O_ACCMODE) == O_RDONLY ? O_RDONLY : O_RDWR) | O_DIRECT | O_CLOEXEC;
}

std::string self_name(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace

bool File::use_direct_io(std::size_t piece) {
    if (piece == 0 || piece % kDirectIoAlignment != 0 || piece > kMaxDirectIoPiece)
        throw std::invalid_argument("direct I/O in pieces of " + std::to_string(piece) + " bytes");
    direct_piece_ = piece;
    if (direct_fd_ >= 0) return true;
    const std::string self = self_name(fd_);
    const int fd = sys::retry_interrupted([&] { return sys::open(self.c_str(), direct_flags(fd_)); });
    if (fd < 0) {
        // EINVAL: the file system has no direct I/O.
        if (errno == EINVAL) return false;
        throw_errno("cannot open for direct I/O", path_, errno);
    }
    direct_fd_ = fd;
    return true;
}

// A probe, which fails no sort: the plain calls, not sys:: (which a test build can make fail).
bool File::direct_io_possible() const {
    const int fd = ::open(self_name(fd_).c_str(), direct_flags(fd_));
    if (fd < 0) return false;
    ::close(fd);
    return true;
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

File File::open_write(const std::string& path) {
    const int fd = sys::retry_interrupted([&] { return sys::open(path.c_str(), O_WRONLY | O_CLOEXEC); });
    if (fd < 0) throw_errno("cannot write", path, errno);
    return File(fd, path);
}

File File::open_existing(const std::string& path, bool write, const std::string& what, const std::string& name) {
    const int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
    const int fd = sys::retry_interrupted([&] { return sys::open(path.c_str(), flags); });
    if (fd < 0) throw_errno(what, name, errno);
    return File(fd, name);
}

File File::duplicate(int fd, const std::string& path) {
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) throw_errno("cannot open", path, errno);
    return File(own, path);
}

std::uint64_t File::size() const { return status().size; }

FileStatus File::status() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_errno("cannot stat", path_, errno);
    return FileStatus{S_ISREG(st.st_mode), static_cast<std::uint64_t>(st.st_size), st.st_mtim};
}

void File::read_at(std::uint64_t offset, std::span<std::byte> data) const {
    if (direct_fd_ >= 0 && !data.empty())
        read_direct(offset, data);
    else
        read_buffered(offset, data);
}

void File::write_at(std::uint64_t offset, std::span<const std::byte> data) const {
    const std::uint64_t end = offset + data.size();
    const std::uint64_t first_block = align_up(offset);
    const std::uint64_t last_block = align_down(end);
    if (direct_fd_ < 0 || first_block >= last_block) {
        write_buffered(offset, data);
        return;
    }
    // Whole blocks go direct; the partial blocks at either end, which a write of the adjacent range
    // may share, through the page cache.
    write_buffered(offset, data.first(first_block - offset));
    write_direct(first_block, data.subspan(first_block - offset, last_block - first_block));
    write_buffered(last_block, data.subspan(last_block - offset));
}

// Blocks [align_down(offset), align_up(end)) are read a piece at a time: straight into `data` where
// a piece's blocks lie wholly inside it at an aligned address, else into the bounce buffer, from
// which the bytes asked for are copied out.
void File::read_direct(std::uint64_t offset, std::span<std::byte> data) const {
    const std::uint64_t end = offset + data.size();
    std::uint64_t at = offset;
    while (at < end) {
        const std::uint64_t from = align_down(at);
        const std::size_t length = static_cast<std::size_t>(std::min<std::uint64_t>(direct_piece_, align_up(end) - from));
        std::byte* into = data.data() + (at - offset);
        const bool straight = from == at && from + length <= end && aligned(into);
        std::byte* buffer = straight ? into : bounce_buffer(direct_piece_);
        const ssize_t n = sys::pread(direct_fd_, buffer, length, static_cast<off_t>(from));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno("cannot read", path_, errno);
        }
        const std::uint64_t got = std::min(end, from + static_cast<std::uint64_t>(n));
        if (got <= at) {
            // The end of the file, or a transfer too short to reach `at`: the rest through the page
            // cache, which reports an early end as such.
            read_buffered(at, data.subspan(at - offset));
            return;
        }
        if (!straight) std::memcpy(into, buffer + (at - from), got - at);
        at = got;
    }
}

// `offset` and data.size() are multiples of the alignment. A source that is not aligned is copied
// through the bounce buffer; after a short transfer, the rest of its block goes through the page cache.
void File::write_direct(std::uint64_t offset, std::span<const std::byte> data) const {
    std::size_t done = 0;
    while (done < data.size()) {
        const std::size_t piece = std::min(direct_piece_, data.size() - done);
        const std::byte* source = data.data() + done;
        if (!aligned(source)) {
            std::byte* bounce = bounce_buffer(direct_piece_);
            std::memcpy(bounce, source, piece);
            source = bounce;
        }
        std::size_t put = 0;
        while (put < piece) {
            const std::uint64_t at = offset + done + put;
            if (at % kDirectIoAlignment != 0) {
                const std::size_t rest = static_cast<std::size_t>(std::min<std::uint64_t>(piece - put, align_up(at) - at));
                write_buffered(at, std::span<const std::byte>(source + put, rest));
                put += rest;
                continue;
            }
            const ssize_t n = sys::pwrite(direct_fd_, source + put, piece - put, static_cast<off_t>(at));
            if (n < 0) {
                if (errno == EINTR) continue;
                throw_errno("cannot write", path_, errno);
            }
            if (n == 0) throw_errno("cannot write", path_, EIO);
            put += static_cast<std::size_t>(n);
        }
        done += piece;
    }
}

void File::read_buffered(std::uint64_t offset, std::span<std::byte> data) const {
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

void File::write_buffered(std::uint64_t offset, std::span<const std::byte> data) const {
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

bool File::release(std::uint64_t offset, std::uint64_t length) const {
    if (length == 0) return true;
    return sys::retry_interrupted([&] {
               return sys::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                                     static_cast<off_t>(length));
           }) == 0;
}

void File::truncate(std::uint64_t size) const {
    if (sys::retry_interrupted([&] { return sys::ftruncate(fd_, static_cast<off_t>(size)); }) != 0)
        throw_errno("cannot resize", path_, errno);
}

void File::sync_data() const {
    if (sys::fdatasync(fd_) != 0) throw_errno("cannot flush", path_, errno);
}

FileId File::id() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_errno("cannot stat", path_, errno);
    return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

bool is_device(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

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
