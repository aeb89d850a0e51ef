// FileMapping: mmap(MAP_SHARED) / munmap.
#include "io/file_mapping.hpp"

#include "io/io_error.hpp"
#include "io/syscalls.hpp"

#include <cerrno>
#include <sys/mman.h>

namespace gpusort::io {

FileMapping::FileMapping(const File& file, std::uint64_t size) : size_(size) {
    if (size == 0) return;
    file.truncate(size);
    void* p = sys::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd(), 0);
    if (p == MAP_FAILED) throw_errno("cannot map", file.path(), errno);
    data_ = static_cast<std::byte*>(p);
}

bool FileMapping::populate(std::uint64_t offset, std::uint64_t length) const {
#ifdef MADV_POPULATE_WRITE
    return length == 0 || ::madvise(data_ + offset, length, MADV_POPULATE_WRITE) == 0;
#else
    (void)offset;
    (void)length;
    return false;
#endif
}

FileMapping::~FileMapping() {
    if (data_) ::munmap(data_, size_);
}

}  // namespace gpusort::io
