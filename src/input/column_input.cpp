// Columns: their layout from the files' sizes, and joined records read out of their maps.
#include "src/input/column_input.hpp"

#include "src/input/column_fields.hpp"

#include "gpusort/compression.hpp"
#include "gpusort/errors.hpp"
#include "gpusort/key_spec.hpp"
#include "io/io_error.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>


namespace gpusort {

std::size_t ColumnLayout::record_size() const {
    return key_width + std::accumulate(value_widths.begin(), value_widths.end(), std::size_t{0}) + index_width;
}

std::size_t ColumnLayout::value_offset(std::size_t value) const {
    return key_width + std::accumulate(value_widths.begin(), value_widths.begin() + static_cast<std::ptrdiff_t>(value),
                                       std::size_t{0});
}

bool sorts_columns(const SortOptions& options) { return !options.values.empty() || options.index_output.has_value(); }

namespace {

// The size of `path`, a regular, uncompressed file (what columns are read from through maps).
std::uint64_t column_file_size(const std::string& path, const char* what) {
    // A pipe is refused before it is opened: opening one waits for its writer.
    if (path == "-" || compression_of(path) != Compression::none || io::is_device(path))
        throw SortError(std::string(what) + " '" + path + "': columns are read from regular, uncompressed files");
    const io::FileStatus status = io::File::open_read(path).status();
    if (!status.regular)
        throw SortError(std::string(what) + " '" + path + "': columns are read from regular, uncompressed files");
    return status.size;
}

// The width of a value column of `bytes` bytes beside `records` keys.
std::size_t value_width(const ValueColumn& value, std::uint64_t bytes, std::uint64_t records) {
    const std::string name = "'" + value.input + "'";
    if (value.width) {
        if (*value.width == 0) throw std::invalid_argument("the width of the values in " + name + " must be at least 1");
        if (bytes != records * *value.width)
            throw SortError(name + " is " + std::to_string(bytes) + " bytes long, not " + std::to_string(records) +
                            " records of " + std::to_string(*value.width) + " bytes (the keys' count)");
        return *value.width;
    }
    if (records == 0) {
        if (bytes != 0) throw SortError(name + " holds " + std::to_string(bytes) + " bytes of values for no keys");
        return 1;  // nothing is read or written
    }
    if (bytes == 0 || bytes % records != 0)
        throw SortError(name + " is " + std::to_string(bytes) + " bytes long, which is not a whole number of values for the " +
                        std::to_string(records) + " keys (give the width as VALUES:OUTPUT:WIDTH where it is known)");
    return static_cast<std::size_t>(bytes / records);
}

}  // namespace

ColumnLayout column_layout(const SortOptions& options, std::size_t key_width) {
    const std::uint64_t key_bytes = column_file_size(options.input, "keys");
    std::vector<std::uint64_t> value_bytes;
    for (const ValueColumn& value : options.values) value_bytes.push_back(column_file_size(value.input, "values"));
    return column_layout(options, key_width, key_bytes, value_bytes);
}

ColumnLayout column_layout(const SortOptions& options, std::size_t key_width, std::uint64_t key_bytes,
                           const std::vector<std::uint64_t>& value_bytes) {
    ColumnLayout layout;
    layout.key_width = key_width;
    if (key_bytes % key_width != 0)
        throw SortError("'" + options.input + "' is " + std::to_string(key_bytes) +
                        " bytes long, which is not a multiple of the record size " + std::to_string(key_width));
    layout.records = key_bytes / key_width;
    for (std::size_t i = 0; i < options.values.size(); ++i)
        layout.value_widths.push_back(value_width(options.values[i], value_bytes[i], layout.records));
    if (options.index_output) {
        const bool narrow = options.index_type == IndexType::u32 ||
                            (options.index_type == IndexType::automatic && layout.records <= (std::uint64_t{1} << 32));
        if (narrow && layout.records > (std::uint64_t{1} << 32))
            throw SortError("--index-type u32 cannot number the " + std::to_string(layout.records) + " records of '" +
                            options.input + "': give u64");
        layout.index_width = narrow ? 4 : 8;
    }
    if (layout.record_size() > kMaxRecordSize) {
        std::string values;
        for (const ValueColumn& value : options.values) values += ", '" + value.input + "'";
        throw SortError("a record of '" + options.input + "'" + values + (layout.index_width ? " and the index" : "") +
                        " together takes " + std::to_string(layout.record_size()) + " bytes: at most " +
                        std::to_string(kMaxRecordSize) + " (1 MiB) are supported");
    }
    return layout;
}

ColumnReader::ColumnReader(const std::vector<ColumnSource>& columns, std::uint64_t records) {
    for (const ColumnSource& source : columns) {
        Column column;
        column.width = source.width;
        column.offset = record_size_;
        column.file = source.file;
        column.memory = source.memory;
        column.row_numbers = !source.file && !source.memory;
        if (source.file && source.file->size() < records * source.width)
            throw SortError("'" + source.file->path() + "' is shorter than its " + std::to_string(records) + " records");
        record_size_ += source.width;
        columns_.push_back(std::move(column));
    }
}

void ColumnReader::read_block(std::uint64_t first, std::uint64_t count, std::byte* out) const {
    thread_local std::vector<std::byte> packed;
    for (const Column& c : columns_) {
        std::byte* to = out + c.offset;
        if (c.row_numbers) {
            for (std::uint64_t i = 0; i < count; ++i) {
                const std::uint64_t row = first + i;
                if (c.width == 4) {
                    const auto narrow = static_cast<std::uint32_t>(row);
                    std::memcpy(to + i * record_size_, &narrow, 4);
                } else {
                    std::memcpy(to + i * record_size_, &row, 8);
                }
            }
        } else if (c.memory) {
            copy_fields(c.memory + first * c.width, c.width, to, record_size_, c.width, count);
        } else {
            packed.resize(count * c.width);
            c.file->read_at(first * c.width, packed);
            copy_fields(packed.data(), c.width, to, record_size_, c.width, count);
        }
    }
}

void ColumnReader::read(std::uint64_t first, std::span<std::byte> out) const {
    for_row_blocks(out.size() / record_size_, [&](std::uint64_t row, std::uint64_t n) {
        read_block(first + row, n, out.data() + row * record_size_);
    });
}

}  // namespace gpusort
