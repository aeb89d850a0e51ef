// sys: the system calls that the io layer and the sort make on files and streams, one thin function
// each, so that a test build can make any one of them fail. Every function takes the calling line
// as its last parameter (left to its default): each line that calls one is a distinct *site*. Also
// the two places the output passes on its way out, so that a test build can corrupt it.
//
// The programs link the plain version (gpusort_syscalls: the calls themselves, nothing else). The
// test builds of gpusort-file and gpusort-mpi (gpusort-file-faults, gpusort-mpi-faults) link the
// version with the fault-injection hook (gpusort_syscalls_faults), which reads these environment
// variables once, at the first call (GPUSORT_FAULT_CORRUPT at the first output that passes):
//
//   GPUSORT_FAULT_LOG=FILE      at exit, writes to FILE one line per site reached, "OP FILE:LINE HITS
//                               FUNCTION" (e.g. "pwrite io/file.cpp:75 12 void gpusort::io::File::write_at(...)";
//                               paths relative to the source tree; FUNCTION: the calling function),
//                               and for each fault injected "injected OP FILE:LINE HIT KIND TARGET"
//                               (HIT: the first call it hit; TARGET: the path the call named, where its
//                               descriptor led, e.g. "/tmp/d/#123 (deleted)" or "pipe:[77]", or "(no file)").
//   GPUSORT_FAULT_INJECT="OP FILE:LINE HIT KIND[;OP FILE:LINE HIT KIND...]"
//                               makes the HIT-th call (from 1, counted over all threads) of OP at that
//                               site fail, once: a retry from there is a later call and goes through.
//                               HIT "*" fails every call there (e.g. "open io/temp_file.cpp:26 * EOPNOTSUPP"
//                               plays a file system without O_TMPFILE). KIND:
//                               short   read, write, pread, pwrite transfer about half of what was asked
//                                       (all of it when one byte was asked);
//                               eintr   the call is not made and fails with EINTR;
//                               an errno name (EIO, ENOSPC, EFBIG, ENOMEM, EOPNOTSUPP, EINTR, ...): the
//                                       call is not made and fails with that errno;
//                               SIGKILL the process kills itself there, as the kernel's out-of-memory
//                                       killer or a failing node would end it (no cleanup, no log).
//                               A malformed setting ends the program with status 3.
//   GPUSORT_FAULT_CORRUPT="KIND RECORD_BYTES RECORD"
//                               corrupts what reaches OUTPUT, as a faulty disk, cable or program would:
//                               the output taken as records of RECORD_BYTES bytes, the record RECORD
//                               (from 0) and the next one, both of which must be in the output. KIND:
//                               flip       the top bit of the record's first byte is inverted;
//                               drop       the record is left out (the output is a record short);
//                               duplicate  the record is written again in place of the next one;
//                               swap       the record and the next one trade places.
//                               A stream (stdout, a pipe or device, a compressed file) is corrupted as
//                               its bytes pass corrupt_output(), before --verify checks them and before
//                               they are compressed; a file written at offsets (through its map, with
//                               pwrite or direct I/O), once it is finished and before it is verified,
//                               by corrupt_output_file() (not a part written into a region of a larger
//                               file). A malformed setting ends the program with status 3.
//
// msync is not among the calls: the output's memory map is never flushed by itself (the data are
// flushed with fdatasync on the file).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <source_location>
#include <span>
#include <sys/types.h>

namespace gpusort::io {

// Bytes asked for as the buffer of a pipe that a stream reads or writes (1 MiB: the most an
// unprivileged process may set by default).
inline constexpr int kPipeBuffer = 1 << 20;

}  // namespace gpusort::io

namespace gpusort::io::sys {

#ifdef __cpp_lib_source_location
using Where = std::source_location;
#else
// Compilers whose standard library lacks std::source_location (clang 14 with libstdc++ 12) get the
// same three facts from the builtins that std::source_location is made of.
struct Where {
    static constexpr Where current(const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                                   const char* function = __builtin_FUNCTION()) {
        return Where{file, line, function};
    }
    constexpr const char* file_name() const { return file_; }
    constexpr unsigned line() const { return static_cast<unsigned>(line_); }
    constexpr const char* function_name() const { return function_; }

    const char* file_;
    int line_;
    const char* function_;
};
#endif

int open(const char* path, int flags, mode_t mode = 0, Where where = Where::current());
int close(int fd, Where where = Where::current());
ssize_t read(int fd, void* data, std::size_t size, Where where = Where::current());
ssize_t write(int fd, const void* data, std::size_t size, Where where = Where::current());
ssize_t pread(int fd, void* data, std::size_t size, off_t offset, Where where = Where::current());
ssize_t pwrite(int fd, const void* data, std::size_t size, off_t offset, Where where = Where::current());
int fallocate(int fd, int mode, off_t offset, off_t length, Where where = Where::current());
int ftruncate(int fd, off_t length, Where where = Where::current());
int fdatasync(int fd, Where where = Where::current());
int fsync(int fd, Where where = Where::current());
void* mmap(void* address, std::size_t length, int protection, int flags, int fd, off_t offset,
           Where where = Where::current());
off_t lseek(int fd, off_t offset, int whence, Where where = Where::current());
int fchmod(int fd, mode_t mode, Where where = Where::current());
int linkat(int old_folder, const char* old_path, int new_folder, const char* new_path, int flags,
           Where where = Where::current());
int rename(const char* old_path, const char* new_path, Where where = Where::current());
int mkostemp(char* name_template, int flags, Where where = Where::current());

// Where the output's bytes pass on their way out, for GPUSORT_FAULT_CORRUPT; not system calls. The
// plain version returns `bytes`, which are bytes [offset, offset + size) of a stream's output; the
// hook's returns them as corrupted, in memory of its own that is valid until its next call (a
// stream's bytes come from one thread at a time).
std::span<const std::byte> corrupt_output(std::span<const std::byte> bytes, std::uint64_t offset);
// The same for the finished output file `fd` of `size` bytes, changed in place; returns its size
// after (a record less after a drop). The plain version returns `size`.
std::uint64_t corrupt_output_file(int fd, std::uint64_t size);

// Calls `call` (a call above that returns -1 on failure) again while it fails with EINTR: for calls
// that an interruption leaves without effect (open, fallocate, ftruncate).
template <class Call>
auto retry_interrupted(Call call) {
    for (;;) {
        const auto result = call();
        if (result != -1 || errno != EINTR) return result;
    }
}

}  // namespace gpusort::io::sys
