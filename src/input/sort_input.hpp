// SortInput: where a sort takes its records from. A regular, uncompressed file (or records in
// memory) is read at any offsets by many threads, its size known up front; stdin, pipes, devices
// and compressed files are read once, front to back, through an io::StreamReader that decompresses
// on its own thread (started by open_stream(), with the queue the plan sized), and their size is
// known only at the end. With --verify, every byte read is added to an order-independent checksum
// of the input's records. (The conductor counts progress: what a phase has done is not always what
// it has read.)
#pragma once

#include "gpusort/compression.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/stream_reader.hpp"
#include "src/input/column_input.hpp"
#include "src/verify/record_checksum.hpp"

#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

namespace gpusort {

struct InputOptions {
    std::string path;                            // "-": stdin
    std::optional<Compression> compression;  // forced; default: by the name's ending
    std::size_t record_size = 1;
    bool checksum = false;                       // keep the checksum of the records read
    // The records themselves, read at any offsets instead of `path` (which names them in messages).
    std::optional<std::span<const std::byte>> memory;
    // Columns: joined records of `path` (the keys), the files `values` and the row numbers, as laid
    // out (record_size is then the layout's).
    std::optional<ColumnLayout> columns;
    std::vector<std::string> values;
    // ... or, with `memory` (the keys), the values in memory.
    std::vector<std::span<const std::byte>> value_memory;
};

class SortInput {
public:
    // Opens INPUT; a stream is not read yet.
    explicit SortInput(const InputOptions& options);

    // Read front to back (size unknown until the end) rather than at any offset.
    bool streamed() const { return streamed_; }
    // A stream starts being read ahead, through a queue of `queue`'s size; before read_next().
    void open_stream(const io::StreamReaderQueue& queue);
    const std::string& name() const { return name_; }
    // The size of a file read at offsets (of a compressed file: its stored size).
    std::uint64_t size() const { return size_; }
    const io::File& file() const { return file_; }

    // A file read at offsets, not one in memory, whose file system does direct I/O.
    bool direct_io_possible() const;
    // Bytes of such a file in the page cache now; nullopt when that cannot be told.
    std::optional<std::uint64_t> resident_bytes() const;
    // Reads such a file with direct I/O, in pieces of `piece` bytes, from now on (source() is then
    // null); false where its file system has none (it is then read through the page cache).
    bool use_direct_io(std::size_t piece);

    // A file: bytes [offset, offset + size), read by several threads.
    void read_at(std::uint64_t offset, std::span<std::byte> bytes);
    // The bytes of a file read at offsets where they already lie in memory: a read-only map of the
    // file (made on the first call); a sorter on a device copies chunks from there itself
    // (ChunkIo::source). Null for a stream, where the file cannot be mapped, where every byte must
    // pass read_at (the checksum, direct I/O), and for records in memory, which all threads copy
    // into the staging buffers faster (docs/design.md). Call before the sort's threads start.
    const std::byte* source();
    // A stream: the next bytes, as many as there are up to bytes.size() (fewer only at the end);
    // the stream ending inside a record is an error.
    std::size_t read_next(std::span<std::byte> bytes);
    // Bytes read so far (for a compressed input: decompressed bytes).
    std::uint64_t bytes_read() const { return bytes_read_; }

    // A file that was written to while it was being read (its size or modification time is not
    // what it was when it was opened; with columns, any of them) gives a wrong result: throws SortError.
    void check_unchanged() const;
    MultisetChecksum checksum() const;

private:
    void add_to_checksum(std::span<const std::byte> bytes);
    void open_columns(const InputOptions& options);

    // A regular file read, as it was when opened.
    struct Watched {
        const io::File* file;
        std::uint64_t size;
        timespec modified;
    };

    std::string name_;
    std::size_t record_size_;
    std::optional<std::span<const std::byte>> memory_;
    io::File file_;
    std::unique_ptr<io::FileMapping> map_;  // source()'s map of the file
    std::uint64_t size_ = 0;
    std::vector<Watched> watched_;  // the regular files read (compressed or not): checked by check_unchanged()
    std::vector<io::File> value_files_;     // columns: the value files ...
    std::unique_ptr<ColumnReader> columns_; // ... read with the keys as joined records
    bool streamed_ = false;
    Compression compression_ = Compression::none;
    std::unique_ptr<io::StreamReader> reader_;
    std::uint64_t bytes_read_ = 0;
    bool keep_checksum_;
    mutable std::mutex checksum_mutex_;
    MultisetChecksum checksum_;
};

}  // namespace gpusort
