// gpusort-sort's output: buffered writes of lines with GNU sort's messages, -u's filter, and the
// choice of stdout, a device or pipe, or a file put in place atomically.
#include "src/text/line_output.hpp"

#include "gpusort/errors.hpp"
#include "src/text/line_order.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace gpusort {

LineWriter::LineWriter(int fd, std::string name, std::size_t buffer_bytes, char terminator)
    : fd_(fd), name_(std::move(name)), buffer_(buffer_bytes), terminator_(terminator) {}

LineWriter::LineWriter(Sink sink, std::size_t buffer_bytes, char terminator)
    : sink_(std::move(sink)), buffer_(buffer_bytes), terminator_(terminator) {}

void LineWriter::write(std::string_view line) {
    if (used_ + line.size() + 1 > buffer_.size()) {
        flush();
        if (line.size() + 1 > buffer_.size()) {  // a line longer than the buffer goes straight out
            write_out(line.data(), line.size());
            write_out(&terminator_, 1);
            return;
        }
    }
    std::memcpy(buffer_.data() + used_, line.data(), line.size());
    buffer_[used_ + line.size()] = terminator_;
    used_ += line.size() + 1;
}

void LineWriter::flush() {
    const std::size_t used = std::exchange(used_, 0);
    write_out(buffer_.data(), used);
}

void LineWriter::write_out(const char* data, std::size_t size) {
    flushed_ += size;
    if (sink_) {
        if (size > 0) sink_(std::span<const char>(data, size));
        return;
    }
    while (size > 0) {
        const ssize_t n = ::write(fd_, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw IoError("write failed: " + name_ + ": " + std::strerror(n < 0 ? errno : ENOSPC));
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

void UniqueLines::write(std::string_view line) {
    if (keys_->unique) {
        if (any_ && equal_keys(last_, line, *keys_)) return;
        last_.assign(line);
        any_ = true;
    }
    writer_->write(line);
    ++lines_;
    if (watcher_) watcher_(line);
}

namespace {

[[noreturn]] void open_failed(const std::string& path, int err) {
    throw IoError("open failed: " + path + ": " + std::strerror(err));
}

// The causes GNU sort names for an output file that cannot be made, found before the atomic
// output file is: a folder at the path, a folder that is missing or not writable.
void check_output_path(const std::string& path) {
    const std::string target = io::follow_links(path);
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) open_failed(path, EISDIR);
    if (::access(io::parent_folder(target).c_str(), W_OK | X_OK) != 0) open_failed(path, errno);
}

}  // namespace

TextOutput::TextOutput(const std::optional<std::string>& path) : name_(path.value_or("'standard output'")) {
    if (!path) return;
    if (io::is_device(*path)) {
        const int fd = ::open(path->c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) open_failed(*path, errno);
        device_ = io::File(fd, *path);
        return;
    }
    check_output_path(*path);
    atomic_ = std::make_unique<io::AtomicOutputFile>(*path);
}

int TextOutput::fd() const {
    if (atomic_) return atomic_->file().fd();
    return device_.is_open() ? device_.fd() : STDOUT_FILENO;
}

void TextOutput::commit(bool sync) {
    if (atomic_) atomic_->commit(sync);
}

}  // namespace gpusort
