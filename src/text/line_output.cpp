// gpusort-sort's output: buffered writes of lines with GNU sort's messages, -u's filter, and the
// choice of stdout, a device or pipe, or a file put in place atomically.
#include "src/text/line_output.hpp"

#include "gpusort/errors.hpp"
#include "src/text/line_order.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

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

// Lines written at once by write_all(): their sizes are found, then they are gathered.
constexpr std::size_t kBatchLines = std::size_t{1} << 16;

}  // namespace

// In batches: which lines are kept (with -u, those whose keys differ from the line before) and
// where each lies and ends in the batch's bytes, found in parallel (each line's text fetched
// ahead into the cache); then the batch's lines gathered into the writer's buffer in parallel,
// as much of it at a time as the buffer has room for.
void UniqueLines::write_all(std::size_t count, const std::function<std::string_view(std::size_t)>& line_at) {
    if (watcher_) {
        for (std::size_t i = 0; i < count; ++i) write(line_at(i));
        return;
    }
    const std::size_t batch = std::min(count, kBatchLines);
    std::vector<const char*> starts(batch);
    std::vector<std::uint64_t> ends(batch);  // after each line kept, from the batch's start
    for (std::size_t first = 0; first < count; first += kBatchLines) {
        const std::size_t n = std::min(kBatchLines, count - first);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                const std::string_view line = line_at(first + i);
                __builtin_prefetch(line.data());
                const bool duplicate = keys_->unique && (i > 0 ? equal_keys(line_at(first + i - 1), line, *keys_)
                                                               : any_ && equal_keys(last_, line, *keys_));
                starts[i] = line.data();
                ends[i] = duplicate ? 0 : line.size() + 1;
            }
        });
        std::size_t kept = 0;
        for (std::size_t i = 0; i < n; ++i) {
            kept += ends[i] != 0;
            if (i > 0) ends[i] += ends[i - 1];
        }
        gather(std::span<const char* const>(starts.data(), n), std::span<const std::uint64_t>(ends.data(), n));
        lines_ += kept;
        if (keys_->unique) {  // the batch's last line has the keys of the last one written
            last_.assign(line_at(first + n - 1));
            any_ = true;
        }
    }
}

// The lines that begin at `starts` and end (with their terminators) at `ends` in the batch's
// bytes (as write_all() found them; a line dropped takes none) copied into the writer's buffer
// in pieces that fit it; a line longer than the buffer goes straight out.
void UniqueLines::gather(std::span<const char* const> starts, std::span<const std::uint64_t> ends) {
    const char terminator = writer_->terminator();
    auto line = [&](std::size_t k) {
        const std::uint64_t begin = k > 0 ? ends[k - 1] : 0;
        return std::string_view(starts[k], ends[k] == begin ? 0 : static_cast<std::size_t>(ends[k] - begin - 1));
    };
    for (std::size_t i = 0; i < ends.size();) {
        const std::uint64_t base = i > 0 ? ends[i - 1] : 0;
        const std::span<char> room = writer_->room();
        const std::size_t j = static_cast<std::size_t>(std::upper_bound(ends.begin() + i, ends.end(), base + room.size()) - ends.begin());
        if (j == i) {  // not even the next line fits
            if (!writer_->empty()) {
                writer_->flush();
                continue;
            }
            writer_->write(line(i++));
            continue;
        }
        tbb::parallel_for(tbb::blocked_range<std::size_t>(i, j, 1024), [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t k = range.begin(); k != range.end(); ++k) {
                const std::uint64_t begin = k > 0 ? ends[k - 1] : 0;
                if (ends[k] == begin) continue;  // dropped
                const std::string_view text = line(k);
                char* out = room.data() + (begin - base);
                std::memcpy(out, text.data(), text.size());
                out[text.size()] = terminator;
            }
        });
        writer_->fill(static_cast<std::size_t>(ends[j - 1] - base));
        i = j;
    }
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
