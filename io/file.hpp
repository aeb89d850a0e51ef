// File: an owned POSIX file descriptor with whole-buffer positional reads and writes
// (pread/pwrite that retry on EINTR and on short transfers) and errors that name the file.
// A file may also do direct I/O (a spill file: see use_direct_io): its transfers then bypass the
// page cache wherever they cover whole aligned blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <span>
#include <string>

namespace gpusort::io {

// Direct I/O moves whole blocks of this many bytes, at offsets and addresses that are multiples of
// it (4 KiB: the logical block size of common disks, or a multiple of it).
inline constexpr std::size_t kDirectIoAlignment = 4096;
// Bytes of one direct transfer at most (a file's own piece may be smaller): each thread copies
// through a bounce buffer of the piece's size.
inline constexpr std::size_t kMaxDirectIoPiece = std::size_t{1} << 20;

// Identity of a file on its device (to detect INPUT == OUTPUT through any path, or a name that
// still holds a given file).
struct FileId {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    bool operator==(const FileId&) const = default;
};

// What fstat says of an open file that its readers rely on.
struct FileStatus {
    bool regular = false;    // a regular file (else a pipe, device, socket or folder)
    std::uint64_t size = 0;  // bytes
    timespec modified{};     // when its contents last changed
};

class File {
public:
    File() = default;
    File(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    File(File&& other) noexcept;
    File& operator=(File&& other) noexcept;
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    ~File();

    static File open_read(const std::string& path);
    // Opens an existing file for writing in place, as a pipe, device or socket is written (a
    // rename cannot replace it); throws IoError ("cannot write").
    static File open_write(const std::string& path);
    // Opens the existing file at `path` read only, or with `write` for reading and writing (as a
    // map for writing needs), the File named `name` in its errors; a failure throws IoError
    // ("WHAT 'NAME': cause"). For a file made by another process or another rank (its hidden name,
    // or /proc/PID/fd/FD), whose errors name what the user knows it as.
    static File open_existing(const std::string& path, bool write, const std::string& what, const std::string& name);
    // A descriptor of its own (close-on-exec) of the file open as `fd`, named `path`, closed with
    // the File returned; throws IoError ("cannot open") when no descriptor is left.
    static File duplicate(int fd, const std::string& path);
    File duplicate() const { return duplicate(fd_, path_); }

    int fd() const { return fd_; }
    const std::string& path() const { return path_; }
    bool is_open() const { return fd_ >= 0; }

    std::uint64_t size() const;
    FileStatus status() const;  // throws IoError ("cannot stat")
    bool is_regular() const { return status().regular; }
    // Opens a second descriptor of the same file with O_DIRECT (read only where this one is): from
    // then on, the parts of reads and writes that cover whole aligned blocks go through it, `piece`
    // bytes at a time (a multiple of kDirectIoAlignment, at most kMaxDirectIoPiece), straight from
    // or into memory at an aligned address, else through a per-thread bounce buffer, and the
    // unaligned ends of a write go through the page cache, so writes of adjacent ranges from
    // several threads never share a block. Returns false when the file system does not do direct
    // I/O; throws IoError on any other failure.
    bool use_direct_io(std::size_t piece = kMaxDirectIoPiece);
    // Whether use_direct_io() would succeed: the file system does direct I/O. Throws nothing.
    bool direct_io_possible() const;
    bool direct() const { return direct_fd_ >= 0; }
    std::size_t direct_piece() const { return direct_piece_; }

    // Reads exactly data.size() bytes at offset; running into the end of the file is an error.
    void read_at(std::uint64_t offset, std::span<std::byte> data) const;
    void write_at(std::uint64_t offset, std::span<const std::byte> data) const;
    // Reserves disk space for [0, size) so that a full disk shows up now, not mid-way. Returns
    // false when the file system cannot reserve space (the writes then report a full disk).
    bool allocate(std::uint64_t size) const { return allocate(0, size); }
    // The same for [offset, offset + length) only: a file may grow this way while its lower part
    // is being written (reserving over a range that is being written is not safe everywhere).
    bool allocate(std::uint64_t offset, std::uint64_t length) const;
    // Frees the disk blocks and page-cache pages of [offset, offset + length), bytes no longer
    // needed (they read as zeros after): both ends must lie on the file system's blocks. Returns
    // false where the file system cannot; nothing is lost then, the bytes stay until the file goes.
    bool release(std::uint64_t offset, std::uint64_t length) const;
    void truncate(std::uint64_t size) const;
    void sync_data() const;
    FileId id() const;  // throws IoError
    void close();

private:
    void read_buffered(std::uint64_t offset, std::span<std::byte> data) const;
    void write_buffered(std::uint64_t offset, std::span<const std::byte> data) const;
    void read_direct(std::uint64_t offset, std::span<std::byte> data) const;
    void write_direct(std::uint64_t offset, std::span<const std::byte> data) const;

    int fd_ = -1;
    int direct_fd_ = -1;
    std::size_t direct_piece_ = 0;
    std::string path_;
};

// Whether a pipe, device or socket is at `path`: neither a regular file nor a folder (false where
// nothing is).
bool is_device(const std::string& path);

// Whether `fd` is open on a terminal.
bool is_terminal(int fd);

// Returns false when the path does not exist.
bool file_id(const std::string& path, FileId& id);

// Bytes free to this user in the file system that holds `path`; nullopt when unknown.
std::optional<std::uint64_t> free_space(const std::string& path);
// Whether two existing paths lie on the same file system.
bool same_file_system(const std::string& a, const std::string& b);

// The folder part of a path ("." when it has none).
std::string parent_folder(const std::string& path);

}  // namespace gpusort::io
