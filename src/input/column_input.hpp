// Columns: a sort of keys with values carried along (SortOptions::values, index_output) sorts one
// joined record per row: the key record, then each value's record, then the row's number (the index
// column, 4 or 8 bytes, native-endian), packed. ColumnLayout says where each column lies in a joined
// record; ColumnReader reads joined records out of the column files (positional reads, so that a
// file cut short while it is read is an error, not a fault), interleaving them, and also reads back
// a sort's column outputs for --verify.
#pragma once

#include "gpusort/sort_file.hpp"
#include "io/file.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpusort {

struct ColumnLayout {
    std::uint64_t records = 0;                 // rows (the key file's records)
    std::size_t key_width = 0;
    std::vector<std::size_t> value_widths;     // SortOptions::values, in order
    std::size_t index_width = 0;               // 0: no index column
    // Bytes of a joined record, and where a column's bytes start in one.
    std::size_t record_size() const;
    std::size_t value_offset(std::size_t value) const;
    std::size_t index_offset() const { return record_size() - index_width; }
};

// Whether `options` sort columns (values or an index output).
bool sorts_columns(const SortOptions& options);

// The layout of the columns of `options` (keys of key_width bytes each in options.input): the value
// widths from the files' sizes, or as given and checked against them; the index's width by
// options.index_type. Throws SortError where a file is not a regular, uncompressed file or a size
// does not fit, naming the file.
ColumnLayout column_layout(const SortOptions& options, std::size_t key_width);
// The same from the sizes of the columns, wherever they lie (in memory: sort_memory()).
ColumnLayout column_layout(const SortOptions& options, std::size_t key_width, std::uint64_t key_bytes,
                           const std::vector<std::uint64_t>& value_bytes);

// One column to read: an open file of `width`-byte records, the records in memory, or (neither)
// the row numbers.
struct ColumnSource {
    const io::File* file = nullptr;
    std::size_t width = 0;
    const std::byte* memory = nullptr;
};

class ColumnReader {
public:
    // Every file must hold `records` records of its width.
    ColumnReader(const std::vector<ColumnSource>& columns, std::uint64_t records);
    ColumnReader(const ColumnReader&) = delete;
    ColumnReader& operator=(const ColumnReader&) = delete;
    // Joined records [first, first + out.size() / record_size()) into `out`, on several threads.
    void read(std::uint64_t first, std::span<std::byte> out) const;
    std::size_t record_size() const { return record_size_; }

private:
    struct Column {
        const io::File* file = nullptr;      // ... or
        const std::byte* memory = nullptr;   // ... or neither: the row numbers
        bool row_numbers = false;
        std::size_t width = 0;
        std::size_t offset = 0;  // in a joined record
    };
    void read_block(std::uint64_t first, std::uint64_t count, std::byte* out) const;

    std::vector<Column> columns_;
    std::size_t record_size_ = 0;
};

}  // namespace gpusort
