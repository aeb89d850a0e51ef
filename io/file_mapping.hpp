// FileMapping: a shared, writable memory map of bytes [offset, offset + size) of a file. Filling a
// file through a map from many threads is several times faster than pwrite, whose writers take
// turns on the file's lock (on the H100 machine's ext4, 16 threads moved 9.7 GB/s through a map and
// 2.3 GB/s through pwrite into one file). Use it only on space reserved with File::allocate, so that
// no page written through the map can find the disk full.
#pragma once

#include "io/file.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>


namespace gpusort::io {

class FileMapping {
public:
    // The file must already span the bytes mapped; any offset will do (the map starts at the page
    // that holds it). Maps of neighbouring ranges may share a page. Throws IoError.
    FileMapping(const File& file, std::uint64_t offset, std::uint64_t size);
    ~FileMapping();
    FileMapping(const FileMapping&) = delete;
    FileMapping& operator=(const FileMapping&) = delete;

    // The byte at `offset` of the file.
    std::byte* data() const { return data_; }
    // Faults in [offset, offset + length) of the map as writable pages without changing their
    // contents, so that later writes there only copy. Returns false where the kernel cannot (before
    // Linux 5.14).
    bool populate(std::uint64_t offset, std::uint64_t length) const;
    std::uint64_t size() const { return size_; }

private:
    std::byte* data_ = nullptr;
    std::uint64_t size_ = 0;
    std::size_t lead_ = 0;  // bytes mapped before data_: from the start of its page
};

// Faults in the pages of a map (FileMapping::populate) ahead of the writes that will fill it, so that
// they are plain copies: `workers` threads take its blocks from front to back (the order in which
// a merge writes) until all are done or stop() is called. A fresh page of a file map faulted in at
// about 3.5 GB/s on the H100 machine's ext4 however many threads did it (gpusort-bench-host-paths),
// which is why this runs beside other work. The workers are threads of their own, not TBB tasks: a
// thread that waits for parallel work could take such a task up and stay in it until the whole map
// is done. The map must outlive it.
class PagePrefault {
public:
    PagePrefault(const FileMapping& mapping, unsigned workers);
    ~PagePrefault() { stop(); }
    PagePrefault(const PagePrefault&) = delete;
    PagePrefault& operator=(const PagePrefault&) = delete;

    // Lets each worker end the block it is in, and waits for them.
    void stop();
    // Once stopped: the seconds from the start until the last worker ended, and the bytes faulted in.
    double seconds() const { return std::chrono::duration<double>(end_ - start_).count(); }
    std::uint64_t bytes() const { return done_; }

private:
    std::vector<std::thread> workers_;
    std::atomic<std::uint64_t> next_{0};  // the next block to take
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> done_{0};
    std::mutex mutex_;
    std::chrono::steady_clock::time_point start_, end_;
};

}  // namespace gpusort::io
