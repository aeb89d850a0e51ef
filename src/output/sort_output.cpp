// OutputTarget: opening OUTPUT (a file renamed into place, stdout, a pipe or device; compressed
// or not), reserving and mapping a file's space, finishing, verifying and committing.
#include "src/output/sort_output.hpp"

#include "io/io_error.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "io/syscalls.hpp"
#include "gpusort/sort_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpusort {

void StreamOutput::append(std::uint64_t offset, std::span<const std::byte> bytes) {
    if (offset != position_) throw std::logic_error("a stream output was written out of order");
    if (checker_) {
        if (bytes.size() % record_size_ != 0) throw std::logic_error("a checked stream got part of a record");
        if (!out_of_order_) out_of_order_ = checker_->check(bytes);
        checksum_.add_records(bytes, record_size_);
    }
    writer_.write(bytes);
    position_ += bytes.size();
}

void StreamOutput::check_records(const KeySpec& spec, bool strict) {
    record_size_ = spec.record_size;
    checker_ = std::make_unique<OrderChecker>(spec, strict);
}

void SortOutput::write(std::uint64_t offset, std::span<const std::byte> bytes) const {
    if (stream)
        stream->append(offset, bytes);
    else if (mapping)
        io::copy_parallel(mapping->data() + offset, bytes);
    else
        io::write_parallel(*file, offset, bytes);
    if (progress) progress->add(bytes.size());
}

OutputTarget::OutputTarget(const OutputOptions& options) : name_(options.path == "-" ? "standard output" : options.path) {
    compression_ = options.compression.value_or(compression_of(options.path));
    int fd = -1;
    if (options.path == "-") {
        fd = STDOUT_FILENO;
    } else {
        struct stat st {};
        if (::stat(options.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
            // A pipe, device or socket: written in place (it cannot be replaced by a rename).
            const int device =
                io::sys::retry_interrupted([&] { return io::sys::open(options.path.c_str(), O_WRONLY | O_CLOEXEC); });
            if (device < 0) io::throw_errno("cannot write", options.path, errno);
            device_ = io::File(device, options.path);
            fd = device;
        } else {
            atomic_ = std::make_unique<io::AtomicOutputFile>(options.path);
            if (compression_ != Compression::none) fd = atomic_->file().fd();
        }
    }
    if (fd == STDOUT_FILENO && ::isatty(fd))
        throw SortError("refusing to write binary records to a terminal: redirect standard output or name an OUTPUT file");
    if (fd >= 0) {
        writer_ = std::make_unique<io::StreamWriter>(fd, name_, compression_, std::max(1u, options.threads),
                                                     options.compression_level);
        stream_ = std::make_unique<StreamOutput>(*writer_);
        output_.stream = stream_.get();
    } else {
        output_.file = &atomic_->file();
    }
    output_.progress = options.progress;
}

OutputTarget::~OutputTarget() = default;

std::string OutputTarget::folder() const { return atomic_ ? io::parent_folder(atomic_->path()) : std::string(); }

void OutputTarget::check_as_written(const KeySpec& spec, bool strict) {
    if (stream_) stream_->check_records(spec, strict);
}

const SortOutput& OutputTarget::open(std::uint64_t bytes) {
    if (!writer_ && bytes > 0) {
        // Written through a memory map when the space is reserved (no page can then meet a full disk).
        if (atomic_->file().allocate(bytes) && may_map_) {
            mapping_.emplace(atomic_->file(), bytes);
            output_.mapping = &*mapping_;
        }
    }
    reserved_ = bytes;
    return output_;
}

void OutputTarget::finish(std::uint64_t bytes) {
    written_ = bytes;
    if (writer_) {
        if (stream_->position() != bytes) throw std::logic_error("the output stream is short of its records");
        writer_->finish();
        return;
    }
    output_.mapping = nullptr;
    mapping_.reset();
    if (bytes < reserved_) atomic_->file().truncate(bytes);
}

namespace {

constexpr std::size_t kVerifyBlock = std::size_t{64} << 20;

[[noreturn]] void verify_failed(const std::string& name, const std::string& what) {
    throw SortError("--verify: '" + name + "' " + what + "; the output was not kept");
}

}  // namespace

void OutputTarget::verify(const OutputExpectation& expected) const {
    const std::size_t record = expected.spec.record_size;
    std::optional<std::uint64_t> out_of_order;
    MultisetChecksum checksum;
    std::uint64_t bytes = 0;
    if (in_place()) {
        if (!stream_ || !stream_->checked()) throw std::logic_error("a stream output was not checked as written");
        out_of_order = stream_->out_of_order();
        checksum = stream_->checksum();
        bytes = stream_->position();
    } else {
        if (output_.progress) output_.progress->start_phase(ProgressPhase::verifying, written_);
        OrderChecker checker(expected.spec, expected.strict);
        const std::size_t block_bytes = std::max<std::size_t>(1, kVerifyBlock / record) * record;
        io::HostBuffer block(block_bytes);
        auto check = [&](std::span<const std::byte> data) {
            if (!out_of_order) out_of_order = checker.check(data);
            checksum.add_records(data, record);
            bytes += data.size();
            if (output_.progress) output_.progress->add(data.size());
        };
        const io::File& file = atomic_->file();
        if (writer_) {
            // Read the compressed file back from its start through a second descriptor.
            const int fd = ::dup(file.fd());
            if (fd < 0) io::throw_errno("cannot read back", name_, errno);
            io::File copy(fd, name_);
            if (io::sys::lseek(fd, 0, SEEK_SET) != 0) io::throw_errno("cannot read back", name_, errno);
            io::StreamReader reader(fd, name_, compression_);
            for (;;) {
                const std::size_t n = reader.read(std::span<std::byte>(block.data(), block_bytes));
                if (n % record != 0) verify_failed(name_, "ends in the middle of a record");
                if (n > 0) check(std::span<const std::byte>(block.data(), n));
                if (n < block_bytes) break;
            }
        } else {
            const std::uint64_t size = file.size();
            if (size % record != 0) verify_failed(name_, "is not a multiple of the record size");
            for (std::uint64_t offset = 0; offset < size; offset += block_bytes) {
                const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes, size - offset));
                io::read_parallel(file, offset, std::span<std::byte>(block.data(), n));
                check(std::span<const std::byte>(block.data(), n));
            }
        }
    }
    if (out_of_order) verify_failed(name_, "is out of order at record " + std::to_string(*out_of_order));
    if (bytes != expected.records * record)
        verify_failed(name_, "holds " + std::to_string(bytes / record) + " records, not " +
                                 std::to_string(expected.records));
    if (checksum.count != expected.records)
        verify_failed(name_, "was read back as " + std::to_string(checksum.count) + " records, not " +
                                 std::to_string(expected.records));
    if (expected.checksum && !(checksum == *expected.checksum))
        verify_failed(name_, "does not hold the same records as the input (checksums differ)");
}

void OutputTarget::commit(bool sync) {
    if (atomic_) atomic_->commit(sync);
}

std::uint64_t OutputTarget::bytes_out() const { return writer_ ? writer_->bytes_out() : written_; }

}  // namespace gpusort
