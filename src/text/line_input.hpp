// Where gpusort-sort's lines come from: the inputs (files, or stdin for "-") read front to back
// with GNU sort's messages, stretches of a spill file holding sorted runs, and LineReader, which
// cuts any of them into lines through one buffer (a last line without its terminator is a line).
#pragma once

#include "io/file.hpp"

#include <cstddef>
#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort::io {
class StreamReader;
}

namespace gpusort {

// A regular file's bytes mapped privately: the page cache's pages, not copied (reading a cached
// file through a map took half the time of pread into fresh memory: io/file_mapping.hpp), with one
// byte more after them that may be written, for a terminator added to a last line. A page written
// is the process's own copy; the file is never changed. Bytes past the end of a file that shrinks
// under the map raise SIGBUS when touched, as with any map of a file.
class MappedInput {
public:
    // Bytes [offset, offset + size) of the regular file open as `fd`; null where they cannot be
    // mapped (the address space is limited, say): the file is then read instead.
    static std::unique_ptr<MappedInput> map(int fd, std::uint64_t offset, std::uint64_t size);
    ~MappedInput();
    MappedInput(const MappedInput&) = delete;
    MappedInput& operator=(const MappedInput&) = delete;

    char* data() const { return data_; }
    std::uint64_t size() const { return size_; }

private:
    MappedInput() = default;

    void* region_ = nullptr;
    std::size_t length_ = 0;
    char* data_ = nullptr;
    std::uint64_t size_ = 0;
};

// Bytes read front to back.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    // Fills the front of `buffer`; returns the bytes placed, 0 only at the end.
    virtual std::size_t read(std::span<char> buffer) = 0;
    // The source as messages name it.
    virtual const std::string& name() const = 0;
    // The bytes it holds when that is known up front (a regular file); nullopt otherwise.
    virtual std::optional<std::uint64_t> known_size() const { return std::nullopt; }
    // All of the bytes not yet read, mapped, where the source is a regular file whose bytes are
    // mostly in the page cache (then it is read to its end); null otherwise.
    virtual std::unique_ptr<MappedInput> map_rest() { return nullptr; }
};

// An input operand: a file, or stdin for "-" (left open). A file is checked to be readable when
// the InputFile is made, opened when first read and closed at its end, so that no more inputs
// are open at once than are being read. A regular file is read with positional reads, a large
// read cut into blocks read in parallel on TBB's threads (from the page cache, one thread moves a
// fraction of what several do). Failures throw IoError "OPEN_ERROR: NAME: CAUSE" (made,
// opened) or "read failed: NAME: CAUSE", as GNU sort says them (its words for an input that cannot
// be opened: "cannot read" for a sort or a merge, "open failed" for a check).
class InputFile final : public ByteSource {
public:
    InputFile(std::string operand, std::string open_error);
    InputFile(InputFile&& other) noexcept;
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    ~InputFile() override;

    std::size_t read(std::span<char> buffer) override;
    const std::string& name() const override { return name_; }
    std::optional<std::uint64_t> known_size() const override { return known_size_; }
    std::unique_ptr<MappedInput> map_rest() override;

private:
    void open();
    void close();

    std::string name_;
    std::string open_error_;
    int fd_ = -1;
    bool ended_ = false;
    std::optional<std::uint64_t> known_size_;
    std::uint64_t offset_ = 0;  // of a regular file: where the next read starts
};

// Checks every operand in turn, so that one that cannot be read fails before anything is written.
std::vector<InputFile> check_inputs(const std::vector<std::string>& operands, const std::string& open_error);

// Bytes [begin, end) of a spill file (a sorted run, or a part of one), read once, front to back:
// the file's blocks behind the reader are freed as it goes (File::release), whole MiBs that lie
// within [begin, end) only, as the bytes around them may belong to another reader. A run that was
// written back to disk would otherwise be freed all at once when its file closes, which takes
// seconds; pages still dirty are dropped without being written.
class RunSource final : public ByteSource {
public:
    RunSource(const io::File& file, std::uint64_t begin, std::uint64_t end);
    std::size_t read(std::span<char> buffer) override;
    const std::string& name() const override { return file_->path(); }

private:
    void release_behind();

    const io::File* file_;
    std::uint64_t pos_;
    std::uint64_t end_;
    std::uint64_t released_;  // bytes before it are freed (a MiB boundary), or ~0 where the file system cannot
};

// The bytes of a StreamReader (a compressed file, or a stream), read front to back.
class StreamSource final : public ByteSource {
public:
    explicit StreamSource(std::unique_ptr<io::StreamReader> reader);
    ~StreamSource() override;
    std::size_t read(std::span<char> buffer) override;
    const std::string& name() const override;

private:
    std::unique_ptr<io::StreamReader> reader_;
};

// The bytes of a MappedInput read front to back (copied in parallel), named as its file.
class MappedSource final : public ByteSource {
public:
    MappedSource(std::unique_ptr<MappedInput> input, std::string name) : input_(std::move(input)), name_(std::move(name)) {}
    std::size_t read(std::span<char> buffer) override;
    const std::string& name() const override { return name_; }

private:
    std::unique_ptr<MappedInput> input_;
    std::string name_;
    std::uint64_t pos_ = 0;
};

// A line longer than `limit` bytes, the `number`th of `name`: the one message for it.
[[noreturn]] void line_too_long(const std::string& name, std::uint64_t number, std::size_t limit);

// The lines of a source in turn, without their terminators, through a buffer of `buffer_bytes`
// that grows to hold a longer line, up to `line_limit` bytes (a longer line throws).
class LineReader {
public:
    LineReader(ByteSource& source, std::size_t buffer_bytes, std::size_t line_limit, char terminator);

    // Moves to the next line: false at the end of the source.
    bool next();
    // The current line; valid until the next call of next().
    std::string_view line() const { return line_; }
    // The current line's number in its source, from 1.
    std::uint64_t number() const { return number_; }
    // Whether the current line is the source's last and has no terminator.
    bool unterminated() const { return unterminated_; }
    const std::string& name() const { return source_->name(); }

private:
    // Reads more after the bytes not yet cut into lines, moved to the front; false at the end.
    bool refill();

    ByteSource* source_;
    std::vector<char> buffer_;
    std::size_t line_limit_;
    char terminator_;
    std::size_t begin_ = 0;  // the first byte not yet cut into lines
    std::size_t end_ = 0;    // the end of the bytes read
    bool ended_ = false;
    std::string_view line_;
    std::uint64_t number_ = 0;
    bool unterminated_ = false;
};

}  // namespace gpusort
