// The verification of sorted records, shared by gpusort-file --verify and gpusort-check:
// RecordVerifier takes records as they come and finds whether they are in the order of a key
// spec (strictly, for --unique outputs), how many there are and their order-independent checksum
// (record_checksum.hpp), to be compared with the input's; verify_file() reads a whole file, plain
// or compressed, into one. What a mismatch means (and how to say it) is the caller's.
#pragma once

#include "gpusort/compression.hpp"
#include "gpusort/key_spec.hpp"
#include "gpusort/progress.hpp"
#include "io/file.hpp"
#include "io/stream_reader.hpp"
#include "src/verify/order_check.hpp"
#include "src/verify/record_checksum.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace gpusort {

class RecordVerifier {
public:
    // Counts and checksums records of record_size bytes; no order (an original to compare with).
    explicit RecordVerifier(std::size_t record_size);
    // Also checks the order of `spec`; strict: each key must be larger than the one before.
    // Throws std::invalid_argument when the spec is not valid.
    RecordVerifier(const KeySpec& spec, bool strict);

    // The next records, whole ones (throws std::invalid_argument otherwise).
    void add(std::span<const std::byte> records);

    std::size_t record_size() const { return record_size_; }
    std::uint64_t records() const { return checksum_.count; }
    const MultisetChecksum& checksum() const { return checksum_; }
    // The index of the first record out of order (smaller than the one before it, or not larger
    // when strict); never when no order is checked.
    std::optional<std::uint64_t> first_out_of_order() const { return first_out_of_order_; }

private:
    std::size_t record_size_;
    std::optional<OrderChecker> order_;
    std::optional<std::uint64_t> first_out_of_order_;
    MultisetChecksum checksum_;
};

// A file to verify: open for reading, its name for messages, and whether it is compressed; read
// in blocks of at most block_bytes (a sort's plan gives less under a small budget) and, when
// compressed, through a read-ahead queue of that size.
struct VerifiedFile {
    const io::File& file;
    std::string name;
    Compression compression = Compression::none;
    std::size_t block_bytes = std::size_t{64} << 20;
    io::StreamReaderQueue queue = {};
    // Only bytes [first, first + second) of a plain regular file (a region a sort wrote into).
    std::optional<std::pair<std::uint64_t, std::uint64_t>> part = std::nullopt;
};

// Reads the whole file, decompressed, and adds its whole records to `verifier`; counts the
// (decompressed) bytes in `progress` when set. A plain regular file is read at offsets by several
// threads; a compressed one from its start, and a pipe or device from where it is, through a second
// descriptor (which moves the file's offset), on a thread of its own. Returns the bytes the file holds: more than the records
// added when it ends in the middle of a record (that part is not added). Throws io::IoError
// when reading fails or the compressed data are corrupt.
std::uint64_t verify_file(const VerifiedFile& source, RecordVerifier& verifier, ProgressCounters* progress = nullptr);

}  // namespace gpusort
