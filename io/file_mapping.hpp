// FileMapping: a shared, writable memory map of the first `size` bytes of a file. Filling a fresh
// output through a map from many threads is several times faster than pwrite, whose writers take
// turns on the file; use it only on space reserved with File::allocate, so that no page written
// through the map can find the disk full.
#pragma once

#include "io/file.hpp"

#include <cstddef>
#include <cstdint>

namespace gpusort::io {

class FileMapping {
public:
    FileMapping(const File& file, std::uint64_t size);  // throws IoError
    ~FileMapping();
    FileMapping(const FileMapping&) = delete;
    FileMapping& operator=(const FileMapping&) = delete;

    std::byte* data() const { return data_; }
    // Faults in [offset, offset + length) as writable pages without changing their contents, so
    // that later writes there only copy. Returns false where the kernel cannot (before Linux 5.14).
    bool populate(std::uint64_t offset, std::uint64_t length) const;
    std::uint64_t size() const { return size_; }

private:
    std::byte* data_ = nullptr;
    std::uint64_t size_ = 0;
};

}  // namespace gpusort::io
