// Where gpusort-sort's lines go: LineWriter appends lines through one large buffer to a
// descriptor (the output, or a spill file), UniqueLines drops the duplicates of -u on the way,
// and TextOutput is the output itself: -o FILE written atomically (a nameless file beside it,
// renamed over it once complete), a device or pipe named by -o written in place, or stdout.
#pragma once

#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "src/text/text_keys.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort {

// Writes with write(2) at the descriptor's offset; a failure throws IoError "write failed: NAME:
// CAUSE", as GNU sort says it. Or hands its bytes to a sink (a compressed stream, say), which
// throws its own errors.
class LineWriter {
public:
    using Sink = std::function<void(std::span<const char>)>;

    LineWriter(int fd, std::string name, std::size_t buffer_bytes, char terminator);
    LineWriter(Sink sink, std::size_t buffer_bytes, char terminator);

    // The line and its terminator.
    void write(std::string_view line);
    // Writes out what the buffer holds.
    void flush();
    // The buffer's free bytes, to be filled by the caller and then taken with fill(): lines with
    // their terminators, as write() would put them.
    std::span<char> room() { return std::span<char>(buffer_).subspan(used_); }
    void fill(std::size_t bytes) { used_ += bytes; }
    // Whether the buffer holds nothing.
    bool empty() const { return used_ == 0; }
    char terminator() const { return terminator_; }
    // Bytes given so far, written or buffered.
    std::uint64_t bytes() const { return flushed_ + used_; }

private:
    void write_out(const char* data, std::size_t size);

    int fd_ = -1;
    std::string name_;
    Sink sink_;
    std::vector<char> buffer_;
    std::size_t used_ = 0;
    std::uint64_t flushed_ = 0;
    char terminator_;
};

// The lines written in order, but with -u only the first of each run of lines whose keys are
// equal (equal_keys).
class UniqueLines {
public:
    UniqueLines(LineWriter& writer, const TextKeys& keys) : writer_(&writer), keys_(&keys) {}
    void write(std::string_view line);
    // Writes lines 0 to count - 1 (line_at(i) gives line i) as write() of each in turn would, the
    // lines gathered into the writer's buffer on all threads (TBB's).
    void write_all(std::size_t count, const std::function<std::string_view(std::size_t)>& line_at);
    // Lines written so far.
    std::uint64_t lines() const { return lines_; }
    // Also gives each line written to `watcher` (to check a stream output as it is written).
    void watch(std::function<void(std::string_view)> watcher) { watcher_ = std::move(watcher); }

private:
    void gather(std::span<const char* const> starts, std::span<const std::uint64_t> ends);

    LineWriter* writer_;
    const TextKeys* keys_;
    std::string last_;
    bool any_ = false;
    std::uint64_t lines_ = 0;
    std::function<void(std::string_view)> watcher_;
};

class TextOutput {
public:
    // Stdout when `path` is empty; a file is prepared at once, so that an output that cannot be
    // made fails before any work ("open failed: PATH: CAUSE").
    explicit TextOutput(const std::optional<std::string>& path);
    int fd() const;
    const std::string& name() const { return name_; }
    // Puts a file output in place (after its writer's flush), flushed to disk first with `sync`.
    void commit(bool sync = false);
    // Whether the output is a file put in place by commit() (not stdout, a device or a pipe).
    bool is_file() const { return atomic_ != nullptr; }

private:
    std::string name_;
    std::unique_ptr<io::AtomicOutputFile> atomic_;
    io::File device_;
};

}  // namespace gpusort
