// INPUT as the ranks of gpusort-mpi read it: one file, or the files of --input-list one after the
// other, read at any offset of their concatenation. Every file must be a regular, uncompressed file
// of whole records, so that a record never spans two files and record r of the concatenation is
// the r-th in input order (the order that ties between equal keys keep).
#pragma once

#include "gpusort/compression.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpusort::distributed {

// The paths of an --input-list file: one per line, in order; empty lines are skipped, and a '\r'
// before the end of a line is not part of the path. Relative paths are taken from the working
// folder. Throws SortError when the list cannot be read or names no file.
std::vector<std::string> read_input_list(const std::string& list);

class InputFiles {
public:
    InputFiles() = default;
    // Opens every file; throws SortError (or io::IoError) naming the first file that cannot be
    // opened, is not a regular uncompressed file (`forced`, --input-compression, else by its name's
    // ending), or is not a whole number of `record_size` records.
    InputFiles(const std::vector<std::string>& paths, std::size_t record_size, std::optional<Compression> forced = {});

    std::uint64_t size() const { return size_; }  // bytes of all files together
    // Bytes [offset, offset + bytes.size()) of the concatenation, each file's share read in parallel.
    void read(std::uint64_t offset, std::span<std::byte> bytes) const;
    // A read map of bytes [offset, offset + bytes) of the concatenation when they lie in one file
    // (always, with one file) that can be mapped, else null: read() then reads them. The map's pages
    // raise SIGBUS when touched if the file shrinks under it (as one being rewritten might).
    std::unique_ptr<io::FileMapping> map(std::uint64_t offset, std::uint64_t bytes) const;

private:
    struct Member {
        io::File file;
        std::uint64_t start = 0;  // its first byte in the concatenation
        std::uint64_t size = 0;
    };
    // The first member that ends past `offset`.
    std::vector<Member>::const_iterator member_at(std::uint64_t offset) const;
    std::vector<Member> members_;
    std::uint64_t size_ = 0;
};

}  // namespace gpusort::distributed
