// OutputTarget: opening OUTPUT (a file renamed into place, stdout, a pipe or device; compressed
// or not), reserving and mapping a file's space, finishing, verifying and committing.
#include "src/output/sort_output.hpp"

#include "io/io_error.hpp"
#include "io/stream_writer.hpp"
#include "io/syscalls.hpp"
#include "gpusort/sort_file.hpp"
#include "src/input/column_input.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

namespace gpusort {

void StreamOutput::append(std::uint64_t offset, std::span<const std::byte> sorted) {
    if (offset != position_) throw std::logic_error("a stream output was written out of order");
    // The bytes that reach the stream (altered only by a test's fault hook).
    const std::span<const std::byte> bytes = io::sys::corrupt_output(sorted, offset);
    if (verifier_) {
        if (bytes.size() % verifier_->record_size() != 0) throw std::logic_error("a checked stream got part of a record");
        verifier_->add(bytes);
    }
    writer_.write(bytes);
    position_ += sorted.size();
}

void StreamOutput::check_records(const KeySpec& spec, bool strict) { verifier_.emplace(spec, strict); }

void SortOutput::write(std::uint64_t offset, std::span<const std::byte> bytes) const {
    struct Write {
        std::uint64_t offset;
        std::span<const std::byte> bytes;
        void operator()(const MappedFile& to) const { io::copy_parallel(to.data + offset, bytes); }
        void operator()(const PositionalFile& to) const { io::write_parallel(*to.file, to.base + offset, bytes); }
        void operator()(StreamOutput* to) const { to->append(offset, bytes); }
        void operator()(const ColumnFiles* to) const { to->write(offset, bytes); }
    };
    std::visit(Write{offset, bytes}, destination_);
    if (written_) written_(offset, bytes.size());
    if (progress_) progress_->add(bytes.size());
}

namespace {

// The written pages of OUTPUT's map are released in pieces of this size.
constexpr std::uint64_t kReleasePieceBytes = std::uint64_t{256} << 20;

}  // namespace

OutputShape output_shape(const std::string& path, std::optional<Compression> compression) {
    OutputShape shape;
    shape.compression = compression.value_or(compression_of(path));
    const bool file = path != "-" && !io::is_device(path);  // a device is written in place
    shape.sequential = !file || shape.compression != Compression::none;
    if (file) shape.folder = io::parent_folder(io::follow_links(path));
    return shape;
}

std::string runs_folder(const std::optional<std::string>& tmp_dir, const OutputShape& output) {
    const std::string folder = tmp_dir.value_or(output.folder);
    if (!folder.empty()) return folder;
    const char* env = std::getenv("TMPDIR");
    return env && *env ? env : "/tmp";
}

OutputTarget::OutputTarget(const OutputOptions& options)
    : name_(options.path == "-" ? "standard output" : options.path),
      verify_block_bytes_(options.verify_block_bytes),
      verify_queue_(options.verify_queue) {
    progress_ = options.progress;
    if (!options.columns.empty()) {
        columns_ = std::make_unique<ColumnOutput>(options.columns, options.column_record_size);
        return;
    }
    if (options.memory) {
        memory_ = options.memory;
        return;
    }
    compression_ = options.region ? Compression::none : options.compression.value_or(compression_of(options.path));
    int fd = -1;
    if (options.region) {
        region_ = io::File::duplicate(options.region->fd, options.path);  // closed with the target
        region_offset_ = options.region->offset;
    } else if (options.path == "-") {
        fd = STDOUT_FILENO;
    } else {
        if (io::is_device(options.path)) {
            // A pipe, device or socket: written in place (it cannot be replaced by a rename).
            device_ = io::File::open_write(options.path);
            fd = device_.fd();
        } else {
            atomic_ = std::make_unique<io::AtomicOutputFile>(options.path);
            if (compression_ != Compression::none) fd = atomic_->file().fd();
        }
    }
    if (fd == STDOUT_FILENO && io::is_terminal(fd))
        throw SortError("refusing to write binary records to a terminal: redirect standard output or name an OUTPUT file");
    if (fd >= 0) {
        writer_ = std::make_unique<io::StreamWriter>(fd, name_, compression_, std::max(1u, options.threads),
                                                     options.compression_level, options.block_bytes,
                                                     options.blocks_in_flight);
        stream_ = std::make_unique<StreamOutput>(*writer_);
    }
}

OutputTarget::~OutputTarget() = default;

void OutputTarget::check_as_written(const KeySpec& spec, bool strict) {
    if (stream_) stream_->check_records(spec, strict);
}

const SortOutput& OutputTarget::open(std::uint64_t bytes) {
    reserved_ = bytes;
    if (stream_) return output_.emplace(stream_.get(), progress_);
    if (columns_) return output_.emplace(&columns_->open(bytes / columns_->record_size(), may_map_), progress_);
    if (memory_) {
        if (bytes > memory_->size()) throw std::logic_error("the output's memory is too small");
        return output_.emplace(MappedFile{memory_->data(), bytes}, progress_);
    }
    if (direct_piece_ > 0 && atomic_ && bytes > 0 && atomic_->file().use_direct_io(direct_piece_)) {
        atomic_->file().allocate(bytes);
        return output_.emplace(PositionalFile{&atomic_->file(), 0}, progress_);
    }
    const io::File& file = atomic_ ? atomic_->file() : region_;
    // Written through a memory map when the space is reserved (no page can then meet a full disk).
    if (bytes > 0 && file.allocate(region_offset_, bytes) && may_map_) {
        mapping_.emplace(file, region_offset_, bytes);
        // Dropping a map's written pages takes the kernel 0.5-0.6 s per 16 GiB (the H200 machine), on
        // one thread: done behind the writes rather than all at the end.
        released_.emplace(*mapping_, kReleasePieceBytes);
        return output_.emplace(MappedFile{mapping_->data(), mapping_->size()}, progress_, release_behind(*released_));
    }
    return output_.emplace(PositionalFile{&file, region_offset_}, progress_);
}

void OutputTarget::finish(std::uint64_t bytes) {
    written_ = bytes;
    if (columns_) {
        output_.reset();
        columns_->finish(bytes / columns_->record_size());
        return;
    }
    if (memory_) {
        output_.reset();
        return;
    }
    if (writer_) {
        if (stream_->position() != bytes) throw std::logic_error("the output stream is short of its records");
        writer_->finish();
        return;
    }
    output_.reset();
    released_.reset();
    mapping_.reset();
    if (atomic_ && bytes < reserved_) atomic_->file().truncate(bytes);
    if (atomic_) written_ = io::sys::corrupt_output_file(atomic_->file().fd(), bytes);  // a test's fault hook
}

namespace {

[[noreturn]] void verify_failed(const std::string& name, const std::string& what) {
    throw SortError("--verify: '" + name + "' " + what + "; the output was not kept");
}

}  // namespace

void OutputTarget::verify(const OutputExpectation& expected) const {
    const std::size_t record = expected.spec.record_size;
    std::optional<RecordVerifier> read_back;
    const RecordVerifier* found = nullptr;
    std::uint64_t bytes = 0;
    if (in_place()) {
        found = stream_ ? stream_->verifier() : nullptr;
        if (!found) throw std::logic_error("a stream output was not checked as written");
        bytes = stream_->position();
    } else if (columns_) {
        if (progress_) progress_->start_phase(ProgressPhase::verifying, written_);
        found = &read_back.emplace(expected.spec, expected.strict);
        bytes = read_back_columns(*read_back);
    } else {
        if (progress_) progress_->start_phase(ProgressPhase::verifying, written_);
        found = &read_back.emplace(expected.spec, expected.strict);
        VerifiedFile source{atomic_ ? atomic_->file() : region_, name_, compression_, verify_block_bytes_, verify_queue_, {}};
        if (!atomic_) source.part = {region_offset_, written_};
        bytes = verify_file(source, *read_back, progress_);
        if (bytes % record != 0)
            verify_failed(name_, writer_ ? "ends in the middle of a record" : "is not a multiple of the record size");
    }
    if (const auto out_of_order = found->first_out_of_order())
        verify_failed(name_, "is out of order at record " + std::to_string(*out_of_order));
    if (bytes != expected.records * record)
        verify_failed(name_, "holds " + std::to_string(bytes / record) + " records, not " +
                                 std::to_string(expected.records));
    if (found->records() != expected.records)
        verify_failed(name_, "was read back as " + std::to_string(found->records()) + " records, not " +
                                 std::to_string(expected.records));
    if (expected.checksum && !(found->checksum() == *expected.checksum))
        verify_failed(name_, "does not hold the same records as the input (checksums differ)");
}

std::uint64_t OutputTarget::read_back_columns(RecordVerifier& verifier) const {
    std::vector<ColumnSource> sources;
    for (std::size_t i = 0; i < columns_->columns(); ++i) {
        if (!columns_->file(i)) throw std::logic_error("--verify of columns whose keys are not written");
        sources.push_back({columns_->file(i), columns_->column(i).width});
    }
    const std::uint64_t records = written_ / columns_->record_size();
    const ColumnReader reader(sources, records);
    const std::uint64_t block = std::max<std::uint64_t>(1, verify_block_bytes_ / reader.record_size());
    std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(block, records) * reader.record_size()));
    for (std::uint64_t first = 0; first < records; first += block) {
        const std::uint64_t n = std::min(block, records - first);
        const std::span<std::byte> part(buffer.data(), n * reader.record_size());
        reader.read(first, part);
        verifier.add(part);
        if (progress_) progress_->add(part.size());
    }
    return records * reader.record_size();
}

void OutputTarget::commit(bool sync) {
    if (atomic_) atomic_->commit(sync);
    if (columns_) columns_->commit(sync);
}

std::uint64_t OutputTarget::bytes_out() const {
    if (columns_) return columns_->bytes_out();
    return writer_ ? writer_->bytes_out() : written_;
}

}  // namespace gpusort
