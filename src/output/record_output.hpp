// RecordOutput: turns sorted run entries (key words, then the record) into the output's
// records. The merge hands it the entries of each output slice in order (slices in parallel,
// each written from the slice's first output rank on); with --unique only the first entry of
// each group of equal keys is kept, and finish() closes the gaps the dropped ones left, the
// first record of a slice included when its key ends the slice before. A sequential output
// (a stream) gets its slices in order, so duplicates are dropped as the records go out.
#pragma once

#include "src/output/sort_output.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace gpusort {

class RecordOutput {
public:
    // key_bytes: bytes of key words at the start of an entry; slices: the merge's output slices.
    RecordOutput(const SortOutput& output, std::size_t key_bytes, std::size_t record_size, bool unique,
                 std::uint64_t slices);

    // Entries of `slice` whose first has output rank `rank`; a slice's entries come in order,
    // from one thread at a time.
    void put(std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries);
    // After the last put(): moves the kept records together (unique) and returns how many there are.
    std::uint64_t finish();
    // Bytes per entry put.
    std::size_t entry_bytes() const { return entry_bytes_; }

private:
    struct Slice {
        bool started = false;
        std::uint64_t begin = 0;  // output rank of the slice's first entry
        std::uint64_t kept = 0;   // records written from `begin` on
        std::vector<std::byte> first_key, last_key;
    };
    void move_records(std::uint64_t from, std::uint64_t to, std::uint64_t count);
    void put_in_order(std::span<const std::byte> entries);
    void write_unmapped(std::uint64_t offset, std::span<const std::byte> bytes);
    void read_unmapped(std::uint64_t offset, std::span<std::byte> bytes);

    const SortOutput& output_;
    std::size_t key_bytes_;
    std::size_t record_size_;
    std::size_t entry_bytes_;
    bool unique_;
    std::vector<Slice> slices_;
    std::uint64_t in_order_kept_ = 0;  // records written to a sequential output
    std::vector<std::byte> last_key_;  // the key of the last entry put there
};

}  // namespace gpusort
