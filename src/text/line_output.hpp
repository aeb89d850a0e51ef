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
// throws its own errors. Many bytes at once (write_many) go into a regular file open for reading
// and writing through a memory map of their place, filled on all threads; many bytes placed by
// many threads at once (write_placed) go into a regular file with pwrite(2) at their places.
class LineWriter {
public:
    using Sink = std::function<void(std::span<const char>)>;
    // fill(into, from) puts bytes [from, from + into.size()) of what write_many() writes into `into`.
    using Fill = std::function<void(std::span<char> into, std::uint64_t from)>;

    LineWriter(int fd, std::string name, std::size_t buffer_bytes, char terminator);
    LineWriter(Sink sink, std::size_t buffer_bytes, char terminator);
    LineWriter(LineWriter&&) noexcept;
    ~LineWriter();

    // A hint that write_many() of `bytes` bytes (or fewer) comes next: where it would go through a
    // map, the map is made now and its pages faulted in by a thread of its own meanwhile.
    void expect(std::uint64_t bytes);

    // The line and its terminator.
    void write(std::string_view line);
    // Writes `bytes` bytes that `fill` gives, a piece at a time (each may be filled in parallel).
    void write_many(std::uint64_t bytes, const Fill& fill);
    // put(offset, bytes): bytes [offset, offset + bytes.size()) of what write_placed() writes.
    using PutAt = std::function<void(std::uint64_t offset, std::span<const char> bytes)>;
    // Writes `bytes` bytes that fill(put) gives in pieces, from any threads, each byte once: each
    // piece is written at its place at once with pwrite(2) (the writers of one file take turns,
    // but none waits for a map to be faulted in, which the page cache's limit on dirty pages holds
    // back). on_written's callback is not told of them. False (nothing written) where the
    // descriptor is not a regular file open for writing without O_APPEND, or for fewer bytes than
    // write_many() maps.
    bool write_placed(std::uint64_t bytes, const std::function<void(const PutAt& put)>& fill);
    // Writes out what the buffer holds.
    void flush();
    char terminator() const { return terminator_; }
    // Bytes given so far, written or buffered.
    std::uint64_t bytes() const { return flushed_ + used_; }
    // Tells `written` of the bytes as they are written out (to count progress).
    void on_written(std::function<void(std::uint64_t)> written) { written_ = std::move(written); }

private:
    void write_out(const char* data, std::size_t size);
    // write_many() through a map of the bytes' place in the file; false where the descriptor is
    // not a regular file open for reading and writing (without O_APPEND) at its end, or no room
    // could be reserved.
    bool write_mapped(std::uint64_t bytes, const Fill& fill);
    class OutputMap;
    // A map of `bytes` bytes from the end of the file, where the descriptor's offset is, reserved
    // (null where the file cannot be mapped so); with `ahead`, faulted in by a thread meanwhile.
    std::unique_ptr<OutputMap> map_end(std::uint64_t bytes, bool ahead);
    // The map expect() made, gone, and the file cut back to where it began.
    void drop_map();

    int fd_ = -1;
    std::string name_;
    Sink sink_;
    std::vector<char> buffer_;
    std::size_t used_ = 0;
    std::uint64_t flushed_ = 0;
    char terminator_;
    std::function<void(std::uint64_t)> written_;
    std::unique_ptr<OutputMap> map_;  // made by expect()
};

// Lines in the order write_all() writes them.
class LineSequence {
public:
    virtual ~LineSequence() = default;
    virtual std::size_t size() const = 0;
    // Line i, without its terminator.
    virtual std::string_view line(std::size_t i) const = 0;
    // A hint that line(i) comes soon: its text to be fetched. line(i) itself should read little
    // but where the line lies (write_all() asks for every line's size before any text).
    virtual void prefetch(std::size_t) const {}
};

// The lines written in order, but with -u only the first of each run of lines whose keys are
// equal (equal_keys).
class UniqueLines {
public:
    UniqueLines(LineWriter& writer, const TextKeys& keys) : writer_(&writer), keys_(&keys) {}
    void write(std::string_view line);
    // Writes the lines as write() of each in turn would: where each block of them goes found
    // first, then all gathered on TBB's threads by LineWriter::write_many().
    void write_all(const LineSequence& lines);
    // Writes `lines` lines of `bytes` bytes, which fill(put) puts at their places, where the writer
    // can (LineWriter::write_placed) and no line would be dropped (no -u) or watched; else false.
    bool write_placed(std::uint64_t lines, std::uint64_t bytes, const std::function<void(const LineWriter::PutAt&)>& fill);
    // A hint that write_all() of lines of `bytes` bytes (or fewer) comes next (LineWriter::expect).
    void expect(std::uint64_t bytes) { writer_->expect(bytes); }
    // Lines written so far.
    std::uint64_t lines() const { return lines_; }
    // Also gives each line written to `watcher` (to check a stream output as it is written).
    void watch(std::function<void(std::string_view)> watcher) { watcher_ = std::move(watcher); }

private:
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
