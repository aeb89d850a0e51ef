// The inputs of gpusort-sort opened and read with GNU sort's messages, runs read back from a spill
// file, and the cutting of a byte stream into lines.
#include "src/text/line_input.hpp"

#include "gpusort/errors.hpp"
#include "io/file_mapping.hpp"
#include "io/host_buffer.hpp"
#include "io/stream_reader.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
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

// A file is mapped rather than read where this share of its bytes, or more, is in the page cache:
// faulting a cold file in through a map is slower than reading it (io/file_mapping.hpp).
constexpr double kMappedShare = 0.9;
// The size of a huge page of x86-64 and arm64 (with 4 KiB pages), which maps a large folio whole.
constexpr std::uint64_t kHugePage = std::uint64_t{2} << 20;

}  // namespace

std::unique_ptr<MappedInput> MappedInput::map(int fd, std::uint64_t offset, std::uint64_t size) {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t lead = offset % page;  // a map starts at a page
    const std::uint64_t start = offset - lead;
    const auto length = static_cast<std::size_t>((lead + size + 1 + page - 1) / page * page);
    // Private pages for all of it first, so that the byte after the file's lies on a page of its
    // own where the file ends on a page's end; placed where a huge page of the map holds the same
    // bytes as one of the file (the file's large folios can then be mapped whole: far fewer misses
    // of the TLB where lines are gathered from all over it). The file is then mapped over them.
    const auto slack = static_cast<std::size_t>(kHugePage);
    void* reserved = ::mmap(nullptr, length + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED) return nullptr;
    const auto base = reinterpret_cast<std::uintptr_t>(reserved);
    const std::uintptr_t aligned = base + (start % kHugePage + kHugePage - base % kHugePage) % kHugePage;
    if (aligned > base) ::munmap(reserved, aligned - base);
    ::munmap(reinterpret_cast<void*>(aligned + length), base + slack - aligned);
    std::unique_ptr<MappedInput> mapped(new MappedInput());
    mapped->region_ = reinterpret_cast<void*>(aligned);
    mapped->length_ = length;
    mapped->size_ = size;
    mapped->data_ = static_cast<char*>(mapped->region_) + lead;
    if (size > 0) {
        if (::mmap(mapped->region_, static_cast<std::size_t>(lead + size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                   static_cast<off_t>(start)) == MAP_FAILED)
            return nullptr;  // the reserved pages go with `mapped`
        ::madvise(mapped->region_, static_cast<std::size_t>(lead + size), MADV_HUGEPAGE);  // advice only
    }
    return mapped;
}

MappedInput::~MappedInput() { ::munmap(region_, length_); }

std::size_t MappedSource::read(std::span<char> buffer) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), input_->size() - pos_));
    io::copy_parallel(reinterpret_cast<std::byte*>(buffer.data()), std::as_bytes(std::span<const char>(input_->data() + pos_, n)));
    pos_ += n;
    return n;
}

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

void InputFile::open() {
    if (fd_ >= 0) return;
    fd_ = ::open(name_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail(open_error_, name_, errno);
}

std::unique_ptr<MappedInput> InputFile::map_rest() {
    if (!known_size_ || ended_) return nullptr;
    open();
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) <= offset_) return nullptr;
    const std::uint64_t size = static_cast<std::uint64_t>(st.st_size) - offset_;
    const io::File file(::dup(fd_), name_);  // asked through a descriptor of its own
    const std::optional<std::uint64_t> cached = file.fd() >= 0 ? io::resident_bytes(file, offset_ + size) : std::nullopt;
    if (!cached || static_cast<double>(*cached) < kMappedShare * static_cast<double>(offset_ + size)) return nullptr;
    std::unique_ptr<MappedInput> mapped = MappedInput::map(fd_, offset_, size);
    if (!mapped) return nullptr;
    offset_ += size;  // read to its end, as by read()
    if (fd_ == STDIN_FILENO) ::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET);
    ended_ = true;
    close();
    return mapped;
}

std::size_t InputFile::read(std::span<char> buffer) {
    if (ended_) return 0;
    open();
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
