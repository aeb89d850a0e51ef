// Where a sort puts its result. SortOutput is the view the sorting code writes through: a regular
// file written at any offsets by several threads (through its memory map when its space could be
// reserved), or a sequential stream (stdout, a pipe or device, or a compressed file) that takes the
// bytes strictly in order. OutputTarget owns the destination: it opens it before the sort (so a
// bad OUTPUT fails at once), reserves the space once the size is known, and after the sort
// finishes the stream, verifies (--verify) and moves the file into place.
#pragma once

#include "io/atomic_output_file.hpp"
#include "gpusort/compression.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/parallel_io.hpp"
#include "io/stream_reader.hpp"
#include "io/host_buffer.hpp"
#include "gpusort/key_spec.hpp"
#include "gpusort/progress.hpp"
#include "src/output/column_output.hpp"
#include "src/verify/file_verifier.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

namespace gpusort::io {
class StreamWriter;
}

namespace gpusort {

// A sequential destination: bytes must come in order, from one thread at a time. With a checker
// set (--verify on a stream that cannot be read back), the records are checked on their way out.
class StreamOutput {
public:
    explicit StreamOutput(io::StreamWriter& writer) : writer_(writer) {}
    // Bytes [offset, offset + size) of the output; offset must be where the last append ended.
    void append(std::uint64_t offset, std::span<const std::byte> bytes);
    std::uint64_t position() const { return position_; }

    void check_records(const KeySpec& spec, bool strict);
    // What the check found in the records written so far; null when they are not checked.
    const RecordVerifier* verifier() const { return verifier_ ? &*verifier_ : nullptr; }

private:
    io::StreamWriter& writer_;
    std::uint64_t position_ = 0;
    std::optional<RecordVerifier> verifier_;
};

// A regular file written at any offsets by several threads, through its memory map (its space
// is reserved, so no page can meet a full disk), or memory the caller gives (SharedRuns::part) ...
struct MappedFile {
    std::byte* data;
    std::uint64_t size;
};
// ... or with positional writes (its space could not be reserved, or a map is not wanted). The
// output starts at byte `base` of the file (a part of a larger file, OutputRegion).
struct PositionalFile {
    const io::File* file;
    std::uint64_t base = 0;
};

// What the sorting code writes through: one of the destinations (or joined records split into the
// files of their columns, column_output.hpp), and the counters of the bytes written (when set).
class SortOutput {
public:
    using Destination = std::variant<MappedFile, PositionalFile, StreamOutput*, const ColumnFiles*>;
    // Told of the bytes [offset, offset + size) written, as they are (where a map's written pages
    // are released behind the writes: io::ReleaseBehind).
    using Written = std::function<void(std::uint64_t offset, std::uint64_t size)>;
    SortOutput(Destination destination, ProgressCounters* progress, Written written = {})
        : destination_(destination), progress_(progress), written_(std::move(written)) {}

    const Destination& destination() const { return destination_; }
    ProgressCounters* progress() const { return progress_; }
    // A stream: the bytes must come in order.
    bool sequential() const { return std::holds_alternative<StreamOutput*>(destination_); }
    // Bytes [offset, offset + size) of the output (on a stream: the next bytes).
    void write(std::uint64_t offset, std::span<const std::byte> bytes) const;
    // Bytes [offset, offset + size) of a map were written straight into its memory, not through write().
    void written_in_place(std::uint64_t offset, std::uint64_t size) const {
        if (written_) written_(offset, size);
    }

private:
    Destination destination_;
    ProgressCounters* progress_;
    Written written_;
};

// What releases a map's written pages behind the writes: the bytes written at `offset` of an output
// are at `shift + offset` of the map.
inline SortOutput::Written release_behind(io::ReleaseBehind& released, std::uint64_t shift = 0) {
    return [&released, shift](std::uint64_t offset, std::uint64_t size) { released.written(shift + offset, size); };
}

struct OutputOptions {
    std::string path;                            // "-": stdout
    std::optional<Compression> compression;  // forced; default: by the name's ending
    int compression_level = -1;                  // -1: the format's default
    // The stream writer's queue of a compressed output, as planned: compressing threads, bytes
    // per block and blocks in flight (0: the writer's defaults).
    unsigned threads = 1;
    std::size_t block_bytes = 0;
    std::size_t blocks_in_flight = 0;
    // --verify reads a file back in blocks of this size, a compressed one through this queue.
    std::size_t verify_block_bytes = std::size_t{64} << 20;
    io::StreamReaderQueue verify_queue = {};
    ProgressCounters* progress = nullptr;
    // A part of an open file to write into instead (PartSortOptions::output_region): `path` then only
    // names it, and the output is uncompressed and never resized, renamed or flushed.
    std::optional<OutputRegion> region;
    // Columns: joined records of column_record_size bytes split into these files instead (`path`
    // then names the first in messages), committed together.
    std::vector<OutputColumn> columns;
    std::size_t column_record_size = 0;
    // ... or the records into this memory (sort_memory()): nothing is created or renamed.
    std::optional<std::span<std::byte>> memory;
};

// What OUTPUT is, found without opening or creating anything (OutputTarget opens it the same way):
// stdout, a pipe or device written in place, or a file renamed into place (in `folder`, symbolic
// links followed); written in order unless it is an uncompressed file.
struct OutputShape {
    bool sequential = false;
    std::string folder;  // a file's folder; empty for stdout, pipes and devices
    Compression compression = Compression::none;
};
OutputShape output_shape(const std::string& path, std::optional<Compression> compression);
// Where spilled runs go: --tmp-dir where given, else next to a file OUTPUT (`output`), else
// $TMPDIR (or /tmp).
std::string runs_folder(const std::optional<std::string>& tmp_dir, const OutputShape& output);

// What --verify checks the output against.
struct OutputExpectation {
    KeySpec spec;                                // order of the records
    bool strict = false;                         // keys strictly increasing (--unique)
    std::uint64_t records = 0;
    std::optional<MultisetChecksum> checksum;    // the input's records (not with --unique)
};

class OutputTarget {
public:
    explicit OutputTarget(const OutputOptions& options);
    ~OutputTarget();
    OutputTarget(const OutputTarget&) = delete;
    OutputTarget& operator=(const OutputTarget&) = delete;

    // Whether the output is written in order (stdout, pipes, devices, compressed files).
    bool sequential() const { return writer_ != nullptr; }
    // A stream or device that is written in place, not through a file renamed into place (nor a
    // region of a file).
    bool in_place() const { return !atomic_ && !columns_ && !memory_ && !region_.is_open(); }
    const std::string& name() const { return name_; }
    Compression compression() const { return compression_; }

    // --verify of a stream or device: the records are checked as they are written.
    void check_as_written(const KeySpec& spec, bool strict);
    // A file is then written with pwrite, never through a memory map (which takes address space
    // as large as the output).
    void write_without_map() { may_map_ = false; }
    // A file is then written with direct I/O in pieces of `piece` bytes (io::File::use_direct_io),
    // not through a map; where its file system has none, as it would be otherwise.
    void write_direct(std::size_t piece) { direct_piece_ = piece; }
    // The file is written with direct I/O (once open).
    bool direct() const { return atomic_ && atomic_->file().direct(); }
    // Called once the output's size is known, before the first byte is written.
    const SortOutput& open(std::uint64_t bytes);
    // After the last write: drops the unused end (records dropped by --unique) and flushes the stream.
    void finish(std::uint64_t bytes);
    // Re-reads the output (a file, decompressed when compressed) and checks its order, count
    // and checksum; a stream or device is checked as it was written (check_as_written). Throws
    // SortError on any mismatch.
    void verify(const OutputExpectation& expected) const;
    // The columns' files read back as joined records, into `verifier`; returns the bytes read.
    std::uint64_t read_back_columns(RecordVerifier& verifier) const;
    // Moves the finished file into place (nothing to do for streams).
    void commit(bool sync);
    // Bytes that reached the destination (compressed bytes for a compressed output).
    std::uint64_t bytes_out() const;

private:
    std::string name_;
    Compression compression_ = Compression::none;
    std::unique_ptr<io::AtomicOutputFile> atomic_;  // regular files
    std::unique_ptr<ColumnOutput> columns_;         // ... or the files of columns
    std::optional<std::span<std::byte>> memory_;    // ... or memory
    io::File region_;                               // ... or a region of an open file, from region_offset_
    std::uint64_t region_offset_ = 0;
    io::File device_;                               // pipes and devices (stdout is not owned)
    std::unique_ptr<io::StreamWriter> writer_;
    std::unique_ptr<StreamOutput> stream_;
    std::optional<io::FileMapping> mapping_;
    std::optional<io::ReleaseBehind> released_;  // the map's written pages, released behind the writes
    std::optional<SortOutput> output_;  // from open() to finish()
    std::uint64_t reserved_ = 0;
    std::uint64_t written_ = 0;
    std::size_t verify_block_bytes_;
    io::StreamReaderQueue verify_queue_;
    bool may_map_ = true;
    std::size_t direct_piece_ = 0;
    ProgressCounters* progress_ = nullptr;
};

}  // namespace gpusort
