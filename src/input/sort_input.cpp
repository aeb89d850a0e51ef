// SortInput: choosing positional or streamed reading, and counting what is read.
#include "src/input/sort_input.hpp"

#include "io/io_error.hpp"
#include "io/host_buffer.hpp"
#include "io/parallel_io.hpp"
#include "gpusort/sort_file.hpp"

#include <stdexcept>
#include <unistd.h>

namespace gpusort {

SortInput::SortInput(const InputOptions& options)
    : name_(options.path == "-" ? "standard input" : options.path),
      record_size_(options.record_size),
      memory_(options.memory),
      keep_checksum_(options.checksum) {
    if (options.columns) {
        open_columns(options);
        return;
    }
    if (memory_) {
        size_ = memory_->size();
        return;
    }
    compression_ = options.compression.value_or(compression_of(options.path));
    if (options.path != "-") {
        file_ = io::File::open_read(options.path);
        const io::FileStatus status = file_.status();
        if (status.regular) {
            size_ = status.size;
            watched_.push_back({&file_, status.size, status.modified});
            if (compression_ == Compression::none) return;
        }
    }
    // stdin, a pipe or device, or a compressed file: one pass, front to back.
    streamed_ = true;
}

void SortInput::open_columns(const InputOptions& options) {
    const ColumnLayout& layout = *options.columns;
    std::vector<ColumnSource> sources;
    if (memory_) {
        sources.push_back({nullptr, layout.key_width, memory_->data()});
        for (std::size_t i = 0; i < options.value_memory.size(); ++i)
            sources.push_back({nullptr, layout.value_widths[i], options.value_memory[i].data()});
    } else {
        file_ = io::File::open_read(options.path);
        for (const std::string& path : options.values) value_files_.push_back(io::File::open_read(path));
        sources.push_back({&file_, layout.key_width});
        for (std::size_t i = 0; i < value_files_.size(); ++i) sources.push_back({&value_files_[i], layout.value_widths[i]});
    }
    if (layout.index_width > 0) sources.push_back({nullptr, layout.index_width});
    for (const ColumnSource& source : sources)
        if (source.file) {
            const io::FileStatus status = source.file->status();
            watched_.push_back({source.file, status.size, status.modified});
        }
    columns_ = std::make_unique<ColumnReader>(sources, layout.records);
    size_ = layout.records * layout.record_size();
}

void SortInput::open_stream(const io::StreamReaderQueue& queue) {
    if (!streamed_ || reader_) throw std::logic_error("SortInput::open_stream: not a stream, or opened already");
    reader_ = std::make_unique<io::StreamReader>(file_.is_open() ? file_.fd() : STDIN_FILENO, name_, compression_, queue);
}

bool SortInput::direct_io_possible() const {
    return !memory_ && !columns_ && !streamed_ && size_ > 0 && file_.direct_io_possible();
}

std::optional<std::uint64_t> SortInput::resident_bytes() const {
    if (memory_ || columns_ || streamed_) return std::nullopt;
    return io::resident_bytes(file_, size_);
}

bool SortInput::use_direct_io(std::size_t piece) {
    if (memory_ || columns_ || streamed_) throw std::logic_error("SortInput::use_direct_io: not a file read at offsets");
    return file_.use_direct_io(piece);
}

void SortInput::read_at(std::uint64_t offset, std::span<std::byte> bytes) {
    if (columns_)
        columns_->read(offset / record_size_, bytes);
    else if (memory_)
        io::copy_parallel(bytes.data(), memory_->subspan(static_cast<std::size_t>(offset), bytes.size()));
    else
        io::read_parallel(file_, offset, bytes);
    add_to_checksum(bytes);
}

const std::byte* SortInput::source() {
    if (keep_checksum_ || streamed_ || columns_ || memory_ || size_ == 0 || file_.direct()) return nullptr;
    if (!map_) {
        try {
            map_ = std::make_unique<io::FileMapping>(file_, 0, size_, io::FileMapping::Access::read);
        } catch (const io::IoError&) {
            return nullptr;  // read through read_at
        }
    }
    return map_->data();
}

std::size_t SortInput::read_next(std::span<std::byte> bytes) {
    const std::size_t n = reader_->read(bytes);
    bytes_read_ += n;
    if (n < bytes.size() && bytes_read_ % record_size_ != 0)
        throw SortError("'" + name_ + "' ends in the middle of a record: " + std::to_string(bytes_read_) +
                        " bytes are not a multiple of the record size " + std::to_string(record_size_));
    add_to_checksum(bytes.first(n));
    return n;
}

void SortInput::add_to_checksum(std::span<const std::byte> bytes) {
    if (!keep_checksum_ || bytes.empty()) return;
    MultisetChecksum part;
    part.add_records(bytes, record_size_);
    std::lock_guard lock(checksum_mutex_);
    checksum_ += part;
}

void SortInput::check_unchanged() const {
    for (const Watched& was : watched_) {
        const io::FileStatus now = was.file->status();
        if (now.size != was.size || now.modified.tv_sec != was.modified.tv_sec || now.modified.tv_nsec != was.modified.tv_nsec)
            throw SortError("'" + was.file->path() + "' changed while it was being sorted (it was written to meanwhile)");
    }
}

MultisetChecksum SortInput::checksum() const {
    std::lock_guard lock(checksum_mutex_);
    return checksum_;
}

}  // namespace gpusort
