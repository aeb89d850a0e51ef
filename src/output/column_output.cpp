// Columns out: joined records split into their files, and the files committed together.
#include "src/output/column_output.hpp"

#include "io/output_set.hpp"
#include "io/syscalls.hpp"
#include "src/input/column_fields.hpp"

#include <cstring>

namespace gpusort {

void ColumnFiles::write(std::uint64_t offset, std::span<const std::byte> records) const {
    const std::uint64_t first = offset / record_size_, count = records.size() / record_size_;
    for (const Column& c : columns_) {
        if (c.map) {
            for_row_blocks(count, [&](std::uint64_t row, std::uint64_t n) {
                copy_fields(records.data() + row * record_size_ + c.offset, record_size_, c.map + (first + row) * c.width, c.width,
                            c.width, n);
            });
        } else if (c.file) {
            std::vector<std::byte> packed(count * c.width);
            for_row_blocks(count, [&](std::uint64_t row, std::uint64_t n) {
                copy_fields(records.data() + row * record_size_ + c.offset, record_size_, packed.data() + row * c.width, c.width,
                            c.width, n);
            });
            c.file->write_at(first * c.width, packed);
        }
    }
}

void ColumnFiles::read(std::uint64_t offset, std::span<std::byte> records) const {
    const std::uint64_t first = offset / record_size_, count = records.size() / record_size_;
    std::vector<std::byte> packed;
    for (const Column& c : columns_) {
        const std::byte* from = c.map ? c.map + first * c.width : nullptr;
        if (!c.map && c.file) {
            packed.resize(count * c.width);
            c.file->read_at(first * c.width, packed);
            from = packed.data();
        }
        if (from) {
            copy_fields(from, c.width, records.data() + c.offset, record_size_, c.width, count);
        } else {
            for (std::uint64_t i = 0; i < count; ++i) std::memset(records.data() + i * record_size_ + c.offset, 0, c.width);
        }
    }
}

std::vector<std::span<std::byte>> ColumnFiles::maps() const {
    std::vector<std::span<std::byte>> maps;
    for (const Column& c : columns_)
        if (c.map) maps.emplace_back(c.map, records_ * c.width);
    return maps;
}

ColumnOutput::ColumnOutput(std::vector<OutputColumn> columns, std::size_t record_size)
    : columns_(std::move(columns)), record_size_(record_size) {
    std::vector<std::string> paths;
    for (const OutputColumn& c : columns_)
        if (c.memory.empty() && !c.path.empty()) paths.push_back(c.path);
    io::check_distinct_outputs(paths);
    for (const OutputColumn& c : columns_) {
        const bool file = c.memory.empty() && !c.path.empty();
        files_.push_back(file ? std::make_unique<io::AtomicOutputFile>(c.path) : nullptr);
    }
}

ColumnOutput::~ColumnOutput() = default;

const ColumnFiles& ColumnOutput::open(std::uint64_t records, bool may_map) {
    records_ = records;
    std::vector<ColumnFiles::Column> columns;
    maps_.clear();
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        ColumnFiles::Column c{nullptr, nullptr, columns_[i].width, columns_[i].offset};
        if (!columns_[i].memory.empty()) {
            if (columns_[i].memory.size() < records * c.width) throw std::logic_error("a column's memory is too small");
            c.map = columns_[i].memory.data();
        } else if (files_[i]) {
            const io::File& file = files_[i]->file();
            const std::uint64_t bytes = records * c.width;
            // Through a map only on reserved space (no page can then meet a full disk).
            if (bytes > 0 && file.allocate(bytes) && may_map) {
                maps_.push_back(std::make_unique<io::FileMapping>(file, 0, bytes));
                c.map = maps_.back()->data();
            } else {
                c.file = &file;
            }
        }
        columns.push_back(c);
    }
    return destination_.emplace(std::move(columns), record_size_, records);
}

void ColumnOutput::finish(std::uint64_t records) {
    destination_.reset();
    maps_.clear();
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        if (!files_[i]) continue;
        const std::uint64_t bytes = records * columns_[i].width;
        if (records < records_) files_[i]->file().truncate(bytes);
        io::sys::corrupt_output_file(files_[i]->file().fd(), bytes);  // a test's fault hook
    }
    records_ = records;
}

const io::File* ColumnOutput::file(std::size_t column) const {
    return files_[column] ? &files_[column]->file() : nullptr;
}

void ColumnOutput::commit(bool sync) {
    std::vector<io::AtomicOutputFile*> files;
    for (const auto& f : files_)
        if (f) files.push_back(f.get());
    if (!files.empty()) io::commit_together(files, sync);
}

std::uint64_t ColumnOutput::bytes_out() const {
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < columns_.size(); ++i)
        if (files_[i] || !columns_[i].memory.empty()) bytes += records_ * columns_[i].width;
    return bytes;
}

}  // namespace gpusort
