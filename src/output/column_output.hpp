// Columns out: a sort with values carried along writes joined records (src/input/column_input.hpp)
// that ColumnFiles splits over the output files, each column's bytes into its file (written through
// a map where its space could be reserved, else with pwrite); a column whose output is not wanted
// (the keys, where only values or the index are asked for) is dropped. ColumnOutput owns those
// files: each is an io::AtomicOutputFile, and all are committed together (io::commit_together).
#pragma once

#include "io/atomic_output_file.hpp"
#include "io/file_mapping.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpusort {

// One column of the joined records: `width` bytes at `offset` of each, into `path`, or into
// `memory` (sort_memory()); neither: dropped.
struct OutputColumn {
    std::string path;
    std::size_t width = 0;
    std::size_t offset = 0;
    std::span<std::byte> memory = {};
};

// The destination the sorting code writes joined records through (SortOutput).
class ColumnFiles {
public:
    struct Column {
        std::byte* map = nullptr;        // the file's map, or
        const io::File* file = nullptr;  // the file written with pwrite; neither: dropped
        std::size_t width = 0;
        std::size_t offset = 0;
    };
    ColumnFiles(std::vector<Column> columns, std::size_t record_size, std::uint64_t records)
        : columns_(std::move(columns)), record_size_(record_size), records_(records) {}
    // Joined records from record offset / record_size() on, into their columns.
    void write(std::uint64_t offset, std::span<const std::byte> records) const;
    // Joined records back from the columns (a dropped column's bytes read as zeros).
    void read(std::uint64_t offset, std::span<std::byte> records) const;
    std::size_t record_size() const { return record_size_; }
    // The maps of the columns written through one (their whole reserved size).
    std::vector<std::span<std::byte>> maps() const;

private:
    std::vector<Column> columns_;
    std::size_t record_size_;
    std::uint64_t records_;
};

class ColumnOutput {
public:
    // Creates the hidden files of the columns written to files (refusing two that are the same file).
    ColumnOutput(std::vector<OutputColumn> columns, std::size_t record_size);
    ~ColumnOutput();
    // Reserves (and maps where it can) the space of `records` joined records.
    const ColumnFiles& open(std::uint64_t records, bool may_map);
    // After the last write: drops the unused ends (records dropped by --unique).
    void finish(std::uint64_t records);
    // The open files of the columns, for reading back (null for a dropped one).
    const io::File* file(std::size_t column) const;
    std::size_t columns() const { return columns_.size(); }
    std::size_t record_size() const { return record_size_; }
    const OutputColumn& column(std::size_t i) const { return columns_[i]; }
    // Moves every file into place, all or none.
    void commit(bool sync);
    // Bytes written to the files.
    std::uint64_t bytes_out() const;

private:
    std::vector<OutputColumn> columns_;
    std::size_t record_size_;
    std::vector<std::unique_ptr<io::AtomicOutputFile>> files_;  // null for a dropped column
    std::vector<std::unique_ptr<io::FileMapping>> maps_;
    std::optional<ColumnFiles> destination_;
    std::uint64_t records_ = 0;
};

}  // namespace gpusort
