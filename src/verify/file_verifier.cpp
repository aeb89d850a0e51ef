// RecordVerifier and verify_file(): a file is read in blocks of whole records (64 MiB unless told
// less, or one record when records are larger), each block checked for order and added to the
// checksum.
#include "src/verify/file_verifier.hpp"

#include "io/host_buffer.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/stream_reader.hpp"
#include "io/syscalls.hpp"

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <unistd.h>

namespace gpusort {

RecordVerifier::RecordVerifier(std::size_t record_size) : record_size_(record_size) {
    if (record_size == 0) throw std::invalid_argument("RecordVerifier: records of 0 bytes");
}

RecordVerifier::RecordVerifier(const KeySpec& spec, bool strict) : record_size_(spec.record_size) {
    order_.emplace(spec, strict);
}

void RecordVerifier::add(std::span<const std::byte> records) {
    if (order_) {
        const auto bad = order_->check(records);
        if (!first_out_of_order_) first_out_of_order_ = bad;
    }
    checksum_.add_records(records, record_size_);
}

std::uint64_t verify_file(const VerifiedFile& source, RecordVerifier& verifier, ProgressCounters* progress) {
    const std::size_t record = verifier.record_size();
    std::size_t block_bytes = std::max<std::size_t>(1, source.block_bytes / record) * record;
    auto add = [&](const std::byte* data, std::size_t n) {
        verifier.add(std::span(data, n));
        if (progress) progress->add(n);
    };
    const bool regular = source.file.is_regular();  // else a pipe or device: read front to back
    if (source.compression == Compression::none && regular) {
        const std::uint64_t first = source.part ? source.part->first : 0;
        const std::uint64_t size = source.part ? source.part->second : source.file.size();
        const std::uint64_t whole = size - size % record;
        block_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes, std::max<std::uint64_t>(whole, record)));
        io::HostBuffer block(block_bytes);
        for (std::uint64_t offset = 0; offset < whole; offset += block_bytes) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes, whole - offset));
            io::read_parallel(source.file, first + offset, std::span(block.data(), n));
            add(block.data(), n);
        }
        return size;
    }
    const io::File second = io::File::duplicate(source.file.fd(), source.name);  // the reader's own
    const int fd = second.fd();
    if (regular && io::sys::lseek(fd, 0, SEEK_SET) != 0) io::throw_errno("cannot read", source.name, errno);
    io::StreamReader reader(fd, source.name, source.compression, source.queue);
    io::HostBuffer block(block_bytes);
    std::uint64_t bytes = 0;
    for (;;) {
        const std::size_t n = reader.read(std::span(block.data(), block_bytes));
        bytes += n;
        const std::size_t whole = n - n % record;  // n < block_bytes: the end
        if (whole > 0) add(block.data(), whole);
        if (n < block_bytes) return bytes;
    }
}

}  // namespace gpusort
