// The inputs of gpusort-sort opened and read with GNU sort's messages, runs read back from a spill
// file, and the cutting of a byte stream into lines.
#include "src/text/line_input.hpp"

#include "gpusort/errors.hpp"
#include "io/stream_reader.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace gpusort {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& name, int err) {
    throw IoError(what + ": " + name + ": " + std::strerror(err));
}

// Reads of a regular file of this many bytes or more are cut into blocks of kReadBlock read in parallel.
constexpr std::size_t kParallelRead = std::size_t{16} << 20;
constexpr std::size_t kReadBlock = std::size_t{4} << 20;

// Fills `buffer` from byte `offset` of the regular file `fd`; returns the bytes placed, fewer
// only where the file ends.
std::size_t read_at(int fd, std::uint64_t offset, std::span<char> buffer, const std::string& name) {
    std::size_t done = 0;
    while (done < buffer.size()) {
        const ssize_t n = ::pread(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("read failed", name, errno);
        }
        done += static_cast<std::size_t>(n);
    }
    return done;
}

// read_at() by blocks in parallel: the bytes up to the first block that came short (where the
// file ends), which are all that is placed at the front of `buffer`.
std::size_t read_parallel_at(int fd, std::uint64_t offset, std::span<char> buffer, const std::string& name) {
    const std::size_t blocks = (buffer.size() + kReadBlock - 1) / kReadBlock;
    std::vector<std::size_t> got(blocks);
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::span<char> block = buffer.subspan(b * kReadBlock, std::min(kReadBlock, buffer.size() - b * kReadBlock));
        got[b] = read_at(fd, offset + b * kReadBlock, block, name);
    });
    std::size_t placed = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
        placed += got[b];
        if (got[b] < std::min(kReadBlock, buffer.size() - b * kReadBlock)) break;
    }
    return placed;
}

}  // namespace

InputFile::InputFile(std::string operand, std::string open_error) : name_(std::move(operand)), open_error_(std::move(open_error)) {
    struct stat st {};
    if (name_ == "-") {
        fd_ = STDIN_FILENO;
        const off_t pos = ::lseek(fd_, 0, SEEK_CUR);
        if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && pos >= 0) {
            known_size_ = static_cast<std::uint64_t>(std::max<off_t>(st.st_size - pos, 0));
            offset_ = static_cast<std::uint64_t>(pos);
        }
        return;
    }
    if (::access(name_.c_str(), R_OK) != 0) fail(open_error_, name_, errno);
    if (::stat(name_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) known_size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::InputFile(InputFile&& other) noexcept
    : name_(std::move(other.name_)), open_error_(std::move(other.open_error_)), fd_(std::exchange(other.fd_, -1)),
      ended_(other.ended_), known_size_(other.known_size_), offset_(other.offset_) {}

InputFile::~InputFile() { close(); }

void InputFile::close() {
    if (fd_ > STDIN_FILENO) ::close(fd_);
    fd_ = -1;
}

std::size_t InputFile::read(std::span<char> buffer) {
    if (ended_) return 0;
    if (fd_ < 0) {
        fd_ = ::open(name_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) fail(open_error_, name_, errno);
    }
    if (known_size_) {  // a regular file
        const std::size_t n = buffer.size() >= kParallelRead ? read_parallel_at(fd_, offset_, buffer, name_)
                                                             : read_at(fd_, offset_, buffer, name_);
        offset_ += n;
        if (n == 0) {
            if (fd_ == STDIN_FILENO) ::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET);  // all of it read, as by read()
            ended_ = true;
            close();
        }
        return n;
    }
    for (;;) {
        const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
        if (n > 0) return static_cast<std::size_t>(n);
        if (n == 0) {
            ended_ = true;
            close();
            return 0;
        }
        if (errno != EINTR) fail("read failed", name_, errno);
    }
}

std::vector<InputFile> check_inputs(const std::vector<std::string>& operands, const std::string& open_error) {
    std::vector<InputFile> inputs;
    inputs.reserve(operands.size());
    for (const std::string& operand : operands) inputs.emplace_back(operand, open_error);
    return inputs;
}

namespace {
// A run's blocks are freed in whole MiBs (a multiple of any file system's block), 64 MiB at a time.
constexpr std::uint64_t kReleaseUnit = std::uint64_t{1} << 20;
constexpr std::uint64_t kReleaseStep = 64 * kReleaseUnit;
constexpr std::uint64_t kNotReleasing = ~std::uint64_t{0};
}  // namespace

RunSource::RunSource(const io::File& file, std::uint64_t begin, std::uint64_t end)
    : file_(&file), pos_(begin), end_(end), released_((begin + kReleaseUnit - 1) / kReleaseUnit * kReleaseUnit) {}

std::size_t RunSource::read(std::span<char> buffer) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end_ - pos_));
    file_->read_at(pos_, std::as_writable_bytes(buffer.first(n)));
    pos_ += n;
    release_behind();
    return n;
}

void RunSource::release_behind() {
    if (released_ == kNotReleasing) return;
    const std::uint64_t to = pos_ / kReleaseUnit * kReleaseUnit;  // the whole MiBs read; the one holding pos_ is not
    if (to < released_ + (pos_ == end_ ? kReleaseUnit : kReleaseStep)) return;
    released_ = file_->release(released_, to - released_) ? to : kNotReleasing;
}

StreamSource::StreamSource(std::unique_ptr<io::StreamReader> reader) : reader_(std::move(reader)) {}
StreamSource::~StreamSource() = default;
std::size_t StreamSource::read(std::span<char> buffer) { return reader_->read(std::as_writable_bytes(buffer)); }
const std::string& StreamSource::name() const { return reader_->name(); }

void line_too_long(const std::string& name, std::uint64_t number, std::size_t limit) {
    throw SortError(name + ":" + std::to_string(number) + ": line too long (the limit is " + std::to_string(limit) +
                    " bytes: a quarter of -S, at most 64 MiB)");
}

LineReader::LineReader(ByteSource& source, std::size_t buffer_bytes, std::size_t line_limit, char terminator)
    : source_(&source), buffer_(std::min(buffer_bytes, line_limit + 1)), line_limit_(line_limit), terminator_(terminator) {}

bool LineReader::next() {
    std::size_t scanned = begin_;
    for (;;) {
        const char* start = buffer_.data() + begin_;
        const void* found = std::memchr(buffer_.data() + scanned, terminator_, end_ - scanned);
        const std::size_t length = found ? static_cast<std::size_t>(static_cast<const char*>(found) - start) : end_ - begin_;
        if (length > line_limit_) line_too_long(name(), number_ + 1, line_limit_);
        if (found || (!refill() && length > 0)) {
            line_ = std::string_view(buffer_.data() + begin_, length);
            unterminated_ = !found;
            begin_ = std::min(end_, begin_ + length + 1);
            ++number_;
            return true;
        }
        if (ended_ && begin_ == end_) return false;
        scanned = begin_ + length;
    }
}

bool LineReader::refill() {
    if (ended_) return false;
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (end_ == buffer_.size()) buffer_.resize(std::min(2 * buffer_.size(), line_limit_ + 1));
    const std::size_t n = source_->read(std::span<char>(buffer_).subspan(end_));
    end_ += n;
    ended_ = n == 0;
    return !ended_;
}

}  // namespace gpusort
