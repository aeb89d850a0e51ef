// gpusort-sort's output: buffered writes of lines with GNU sort's messages, -u's filter, and the
// choice of stdout, a device or pipe, or a file put in place atomically.
#include "src/text/line_output.hpp"

#include "gpusort/errors.hpp"
#include "io/file_mapping.hpp"
#include "src/text/line_order.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <numeric>
#include <thread>
#include <cerrno>
#include <cstring>
#include <optional>
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

namespace {

// write_many() of this many bytes or more goes through a map, and write_placed() takes this many
// or more, where they can.
constexpr std::uint64_t kManyBytes = std::uint64_t{64} << 20;
// A map is faulted in by pieces of this size.
constexpr std::uint64_t kPopulatePiece = std::uint64_t{32} << 20;

// The size of the regular file open at `fd` for writing (and reading, with `readable`) without
// O_APPEND, whose bytes may be written at places of their own; nullopt for anything else.
std::optional<std::uint64_t> placeable_size(int fd, bool readable) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    const int flags = ::fcntl(fd, F_GETFL);
    const int mode = flags & O_ACCMODE;
    if (flags < 0 || (flags & O_APPEND) != 0 || (readable ? mode != O_RDWR : mode == O_RDONLY)) return std::nullopt;
    return static_cast<std::uint64_t>(st.st_size);
}

// Reserves bytes [at, at + bytes) of the output `file` (named `name`); false where its file system cannot.
bool reserve(const io::File& file, const std::string& name, std::uint64_t at, std::uint64_t bytes) {
    try {
        return file.allocate(at, bytes);
    } catch (const IoError& e) {
        throw IoError("write failed: " + name + ": " + e.what());
    }
}

// Writes all `size` bytes at `data` by transfer(data, size, done) (write or pwrite of what is left,
// `done` bytes in), again where interrupted; a failure throws "write failed: NAME: CAUSE".
template <class Transfer>
void write_fully(const std::string& name, const char* data, std::size_t size, Transfer&& transfer) {
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = transfer(data + done, size - done, done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw IoError("write failed: " + name + ": " + std::strerror(n < 0 ? errno : ENOSPC));
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace

// Bytes [at, at + size) of the writer's file, reserved and mapped, their pages faulted in ahead of
// the writes: by a thread of its own from the start (while the lines are still being sorted), the
// rest in parallel by ready().
class LineWriter::OutputMap {
public:
    OutputMap(const io::File& file, std::uint64_t at, std::uint64_t size, bool ahead) : at_(at), map_(file, at, size) {
        if (ahead) thread_ = std::thread([this] {
            for (std::uint64_t p = 0; p < pieces() && !stop_; ++p)
                if (!populate(p)) break;  // the writes fault the pages in
        });
    }
    ~OutputMap() { stop(); }
    std::uint64_t at() const { return at_; }
    std::uint64_t size() const { return map_.size(); }
    char* data() const { return reinterpret_cast<char*>(map_.data()); }
    // Every page faulted in: the thread stopped, the pieces it left done in parallel.
    void ready() {
        stop();
        tbb::parallel_for(done_.load(), pieces(), [&](std::uint64_t p) { populate(p); });
    }

private:
    std::uint64_t pieces() const { return (map_.size() + kPopulatePiece - 1) / kPopulatePiece; }
    bool populate(std::uint64_t p) {
        const bool done = map_.populate(p * kPopulatePiece, std::min(kPopulatePiece, map_.size() - p * kPopulatePiece));
        if (done) done_ = p + 1;
        return done;
    }
    void stop() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }

    std::uint64_t at_;
    io::FileMapping map_;
    std::atomic<bool> stop_ = false;
    std::atomic<std::uint64_t> done_ = 0;  // pieces faulted in by the thread
    std::thread thread_;
};

LineWriter::~LineWriter() {
    try {
        drop_map();
    } catch (const IoError&) {  // the file is being given up
    }
}

void LineWriter::drop_map() {
    if (!map_) return;
    const std::uint64_t at = map_->at();
    map_.reset();
    if (::ftruncate(fd_, static_cast<off_t>(at)) != 0) throw IoError("write failed: " + name_ + ": " + std::strerror(errno));
}

LineWriter::LineWriter(LineWriter&&) noexcept = default;

void LineWriter::write_many(std::uint64_t bytes, const Fill& fill) {
    if (bytes >= kManyBytes && write_mapped(bytes, fill)) {
        if (written_) written_(bytes);
        return;
    }
    for (std::uint64_t from = 0; from < bytes;) {
        if (used_ == buffer_.size()) flush();
        const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size() - used_, bytes - from));
        fill(std::span<char>(buffer_).subspan(used_, piece), from);
        used_ += piece;
        from += piece;
    }
}

bool LineWriter::write_placed(std::uint64_t bytes, const std::function<void(const PutAt&)>& fill) {
    if (bytes < kManyBytes || sink_ || !placeable_size(fd_, false)) return false;
    flush();
    drop_map();
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (at < 0) return false;
    reserve(io::File::duplicate(fd_, name_), name_, static_cast<std::uint64_t>(at), bytes);  // where it can be
    fill([&](std::uint64_t offset, std::span<const char> data) {
        write_fully(name_, data.data(), data.size(), [&](const char* from, std::size_t size, std::size_t done) {
            return ::pwrite(fd_, from, size, static_cast<off_t>(at + offset + done));
        });
    });
    if (::lseek(fd_, at + static_cast<off_t>(bytes), SEEK_SET) < 0) throw IoError("write failed: " + name_ + ": " + std::strerror(errno));
    flushed_ += bytes;
    return true;
}

void LineWriter::expect(std::uint64_t bytes) {
    if (bytes >= kManyBytes) map_ = map_end(bytes, true);
}

std::unique_ptr<LineWriter::OutputMap> LineWriter::map_end(std::uint64_t bytes, bool ahead) {
    const std::optional<std::uint64_t> size = placeable_size(fd_, true);
    if (!size) return nullptr;
    flush();
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (at < 0 || static_cast<std::uint64_t>(at) != *size) return nullptr;  // only a file's end is mapped: what is not written is cut off
    const io::File file = io::File::duplicate(fd_, name_);
    if (!reserve(file, name_, static_cast<std::uint64_t>(at), bytes)) return nullptr;
    return std::make_unique<OutputMap>(file, static_cast<std::uint64_t>(at), bytes, ahead);
}

bool LineWriter::write_mapped(std::uint64_t bytes, const Fill& fill) {
    flush();
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (map_ && (map_->at() != static_cast<std::uint64_t>(at) || map_->size() < bytes)) drop_map();
    std::unique_ptr<OutputMap> map = map_ ? std::move(map_) : map_end(bytes, false);
    if (!map) return false;
    map->ready();
    fill(std::span<char>(map->data(), static_cast<std::size_t>(bytes)), 0);
    const std::uint64_t end = map->at() + bytes;
    const bool cut = map->size() > bytes;  // fewer bytes than expect() mapped
    map.reset();
    if (cut && ::ftruncate(fd_, static_cast<off_t>(end)) != 0) throw IoError("write failed: " + name_ + ": " + std::strerror(errno));
    if (::lseek(fd_, static_cast<off_t>(end), SEEK_SET) < 0) throw IoError("write failed: " + name_ + ": " + std::strerror(errno));
    flushed_ += bytes;
    return true;
}

void LineWriter::flush() {
    const std::size_t used = std::exchange(used_, 0);
    write_out(buffer_.data(), used);
}

void LineWriter::write_out(const char* data, std::size_t size) {
    if (size > 0) drop_map();  // what was mapped for write_many() is not written so
    flushed_ += size;
    if (written_ && size > 0) written_(size);
    if (sink_) {
        if (size > 0) sink_(std::span<const char>(data, size));
        return;
    }
    write_fully(name_, data, size, [&](const char* from, std::size_t left, std::size_t) { return ::write(fd_, from, left); });
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

// write_all() places lines by blocks of this many: each block's bytes summed first, then its lines
// copied from where its bytes begin. A multiple of 64, so that each block has words of its own in
// the bits of lines dropped.
constexpr std::size_t kPlaceBlock = 4096;
// How far ahead of the line at hand write_all() fetches lines' text: lines in a sorted order lie
// anywhere in memory, and a thread that only waited for each in turn would wait most of the time.
constexpr std::size_t kFetchAhead = 16;

// Which lines write_all() keeps, and where each block of them begins in its output.
struct LinePlaces {
    std::size_t lines = 0;                  // of the sequence
    std::vector<std::uint64_t> block_ends;  // bytes of the lines kept in blocks 0 to b, each with its terminator
    std::vector<std::uint64_t> dropped;     // with -u, bit i set where line i is dropped
    std::uint64_t kept = 0;                 // lines kept

    bool is_dropped(std::size_t i) const { return !dropped.empty() && (dropped[i / 64] >> (i % 64) & 1) != 0; }
    // The lines of block b: [first, last).
    std::size_t first(std::size_t b) const { return b * kPlaceBlock; }
    std::size_t last(std::size_t b) const { return std::min(lines, (b + 1) * kPlaceBlock); }
};

// Sums each block's bytes (the lines' sizes, read without their text where the sequence can), and
// with -u finds the lines whose keys equal those of the line before (or of `last`, written before).
LinePlaces place_lines(const LineSequence& lines, const TextKeys& keys, std::string_view last) {
    const std::size_t count = lines.size();
    LinePlaces places;
    places.lines = count;
    places.block_ends.resize((count + kPlaceBlock - 1) / kPlaceBlock);
    if (keys.unique) places.dropped.assign((count + 63) / 64, 0);
    tbb::parallel_for(std::size_t{0}, places.block_ends.size(), [&](std::size_t b) {
        std::uint64_t bytes = 0;
        for (std::size_t i = places.first(b); i < places.last(b); ++i) {
            const std::string_view line = lines.line(i);
            if (keys.unique) {
                if (i + kFetchAhead < count) lines.prefetch(i + kFetchAhead);
                if (i > 0 ? equal_keys(lines.line(i - 1), line, keys) : last.data() && equal_keys(last, line, keys)) {
                    places.dropped[i / 64] |= std::uint64_t{1} << (i % 64);
                    continue;
                }
            }
            bytes += line.size() + 1;
        }
        places.block_ends[b] = bytes;
    });
    std::partial_sum(places.block_ends.begin(), places.block_ends.end(), places.block_ends.begin());
    places.kept = count;
    for (const std::uint64_t word : places.dropped) places.kept -= static_cast<std::uint64_t>(std::popcount(word));
    return places;
}

// Bytes [from, from + into.size()) of the lines kept, each with its terminator, copied into `into`
// by blocks in parallel.
void gather_lines(const LineSequence& lines, const LinePlaces& places, char terminator, std::span<char> into, std::uint64_t from) {
    const std::uint64_t to = from + into.size();
    const std::vector<std::uint64_t>& ends = places.block_ends;
    const std::size_t first = static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), from) - ends.begin());
    const std::size_t last = static_cast<std::size_t>(std::lower_bound(ends.begin() + first, ends.end(), to) - ends.begin());
    tbb::parallel_for(first, std::min(last + 1, ends.size()), [&](std::size_t b) {
        std::uint64_t at = b > 0 ? ends[b - 1] : 0;  // where the line at hand begins in the output
        const std::size_t end = places.last(b);
        for (std::size_t i = places.first(b); i < end && at < to; ++i) {
            if (i + kFetchAhead < end) lines.prefetch(i + kFetchAhead);
            if (places.is_dropped(i)) continue;
            const std::string_view line = lines.line(i);
            const std::uint64_t line_end = at + line.size() + 1;
            // The line and its terminator, [at, line_end), where it meets [from, to).
            if (line_end > from) {
                const std::uint64_t lo = std::max(at, from), hi = std::min(line_end, to);
                const std::uint64_t in_text = std::min(hi, line_end - 1);
                if (in_text > lo) std::memcpy(into.data() + (lo - from), line.data() + (lo - at), static_cast<std::size_t>(in_text - lo));
                if (hi == line_end) into[static_cast<std::size_t>(hi - 1 - from)] = terminator;
            }
            at = line_end;
        }
    });
}

}  // namespace

bool UniqueLines::write_placed(std::uint64_t lines, std::uint64_t bytes, const std::function<void(const LineWriter::PutAt&)>& fill) {
    if (keys_->unique || watcher_ || !writer_->write_placed(bytes, fill)) return false;
    lines_ += lines;
    return true;
}

// Where each block of lines goes is found first (the bytes of the lines kept before it: with -u,
// those whose keys differ from the line before). Then write_many() asks for pieces of those bytes,
// and the blocks that fall in a piece are copied in parallel.
void UniqueLines::write_all(const LineSequence& lines) {
    const std::size_t count = lines.size();
    if (watcher_) {
        for (std::size_t i = 0; i < count; ++i) write(lines.line(i));
        return;
    }
    if (count == 0) return;
    const LinePlaces places = place_lines(lines, *keys_, any_ ? std::string_view(last_) : std::string_view());
    const char terminator = writer_->terminator();
    writer_->write_many(places.block_ends.back(),
                        [&](std::span<char> into, std::uint64_t from) { gather_lines(lines, places, terminator, into, from); });
    lines_ += places.kept;
    if (keys_->unique) {  // the last line has the keys of the last one written
        last_.assign(lines.line(count - 1));
        any_ = true;
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
