// FileMapping: a shared memory map of bytes [offset, offset + size) of a file, writable or read only.
// Filling a file through a map from many threads is several times faster than pwrite, whose writers
// take turns on the file's lock (on the H100 machine's ext4, 16 threads moved 9.7 GB/s through a
// map and 2.3 GB/s through pwrite into one file). It asks for transparent huge pages: where the file
// system gives large folios (ext4 on the H100 machine's kernel), fresh pages fault in several times
// faster (12-14 GB/s against 2.7-3.0 GB/s with small pages, gpusort-bench-host-paths). Write through
// a map only on space reserved with File::allocate, so that no page written can find the disk full.
// Reading a file in the page cache through a map copies nothing: two processes scanning 2 GiB each
// of one file took 0.11-0.13 s through maps and 0.27-0.29 s through pread into fresh memory there.
// A map's pages past the end of a file that shrinks under it raise SIGBUS when touched.
#pragma once

#include "io/file.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace gpusort::io {

// Faults in the pages of [data, data + length) (any memory this process may write: a file's map, or
// its own) as writable pages without changing their contents, so that later writes there only copy.
// Returns false where the kernel cannot (before Linux 5.14), or could not.
bool populate_for_writing(std::byte* data, std::uint64_t length);

// Bytes of the first `size` bytes of `file` that lie in the page cache now, estimated from samples
// (mincore over a map that is never touched: 256 KiB of every 8 MiB, so that 16 GiB take about
// 2000 calls; a file of up to 256 KiB is asked about whole); nullopt where that cannot be told.
std::optional<std::uint64_t> resident_bytes(const File& file, std::uint64_t size);

class FileMapping {
public:
    enum class Access { read_write, read };
    // The file must already span the bytes mapped; any offset will do (the map starts at the page
    // that holds it). Maps of neighbouring ranges may share a page. A read map's bytes must not be
    // written. Throws IoError.
    FileMapping(const File& file, std::uint64_t offset, std::uint64_t size, Access access = Access::read_write);
    ~FileMapping();
    FileMapping(const FileMapping&) = delete;
    FileMapping& operator=(const FileMapping&) = delete;

    // The byte at `offset` of the file.
    std::byte* data() const { return data_; }
    // Faults in [offset, offset + length) of the map as writable pages (populate_for_writing).
    bool populate(std::uint64_t offset, std::uint64_t length) const { return populate_for_writing(data_ + offset, length); }
    std::uint64_t size() const { return size_; }
    // Drops from the map the pages wholly before byte `end` (all of them where `end` is size()),
    // once they are done with (MADV_DONTNEED): their bytes stay in the file, and a touch faults them
    // back in. Dropping many written pages from a map takes long (16 GiB of 4 KiB pages: 0.5-0.8 s on
    // the H200 machine, on one thread however many share it), and one thread may do it behind the
    // writers of later bytes (ReleaseBehind). Calls come with `end` rising, from one thread at a time.
    void release_before(std::uint64_t end);

private:
    std::byte* data_ = nullptr;
    std::uint64_t size_ = 0;
    std::size_t lead_ = 0;      // bytes mapped before data_: from the start of its page
    std::size_t released_ = 0;  // bytes dropped from the start of the first page (whole pages)
};

// Releases a map's pages behind its writers, on a thread of its own: the writers say which bytes
// they have written, in any order and from any thread, and once every byte from the start of the
// map on is written `piece` bytes past what was released, those are released
// (FileMapping::release_before). What is not released when it goes out of scope stays mapped.
class ReleaseBehind {
public:
    ReleaseBehind(FileMapping& map, std::uint64_t piece);
    ~ReleaseBehind();  // waits for the release under way
    ReleaseBehind(const ReleaseBehind&) = delete;
    ReleaseBehind& operator=(const ReleaseBehind&) = delete;

    // Bytes [offset, offset + size) of the map are written.
    void written(std::uint64_t offset, std::uint64_t size);

private:
    FileMapping& map_;
    const std::uint64_t piece_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::map<std::uint64_t, std::uint64_t> ahead_;  // written ranges beyond the prefix: first byte -> end
    std::uint64_t prefix_ = 0;                      // every byte before it written
    std::uint64_t released_ = 0;                    // what the thread released (or is releasing)
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace gpusort::io
