// SpillFile: the scratch space that sorted runs are spilled to, laid over several nameless temp
// files ("stripes") in turns of kSpillStripe bytes, so that threads writing different parts of it
// write different files. Buffered writes to one file go one at a time (ext4 takes the file's lock
// for each): on the GPU machine 16 threads wrote 16 GiB into one file at 3-4 GB/s, and into 16
// files at 45 GB/s. Byte b of the spill lies in stripe (b / kSpillStripe) % stripes, at
// (b / kSpillStripe / stripes) * kSpillStripe + b % kSpillStripe in it. The stripes are closed side
// by side when the SpillFile goes, which frees their page-cache pages.
#pragma once

#include "io/file.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpusort::io {

// Bytes of one turn of a stripe: a block of a parallel transfer (kParallelIoBlock) lies in one.
inline constexpr std::uint64_t kSpillStripe = std::uint64_t{8} << 20;

class SpillFile {
public:
    // `stripes` temp files in `folder` (at least one), with direct I/O in pieces of `direct_piece`
    // bytes (File::use_direct_io), or through the page cache when it is 0; throws IoError when
    // direct I/O is asked for and the folder's file system does not do it.
    SpillFile(const std::string& folder, std::size_t stripes, std::size_t direct_piece);
    SpillFile(SpillFile&&) noexcept = default;
    SpillFile& operator=(SpillFile&&) noexcept = default;
    ~SpillFile();

    std::size_t stripes() const { return stripes_.size(); }
    bool direct() const { return stripes_.front().direct(); }
    std::size_t direct_piece() const { return stripes_.front().direct_piece(); }

    // Exactly data.size() bytes at spill offset `offset`, cut at the turns of the stripes.
    void read_at(std::uint64_t offset, std::span<std::byte> data) const;
    void write_at(std::uint64_t offset, std::span<const std::byte> data) const;
    // Reserves disk space for spill bytes [offset, offset + length) (File::allocate in each stripe):
    // returns false when the file system cannot reserve space. The spill may grow this way while
    // its lower part is being written.
    bool allocate(std::uint64_t offset, std::uint64_t length) const;

private:
    // Calls f(stripe, offset in it, begin in the transfer, length) for each turn of [offset, offset + size).
    template <class F>
    void for_each_turn(std::uint64_t offset, std::size_t size, F&& f) const;

    std::vector<File> stripes_;
};

}  // namespace gpusort::io
