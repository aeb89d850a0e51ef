// Where the ranks of one host keep their sorted runs for each other (exchange_runs.cpp):
// each rank forms its runs in its own region of OUTPUT (with --partitioned, its own file), whose
// pages it would fill in the end anyway, and the other ranks of the host read them there through
// maps of their own. Fresh pages of a file map come as large folios where the file system has them
// (ext4): several times cheaper to fault in and to free than the small pages of tmpfs (/dev/shm),
// which cost the job of two ranks seconds (docs/distributed.md). No copy of the runs is ever
// written to disk that OUTPUT does not need, and a rank that dies leaves only OUTPUT's hidden file,
// which the others remove.
#pragma once

#include "io/file.hpp"
#include "io/file_mapping.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace gpusort::distributed {

// This rank's runs: bytes [offset, offset + bytes) of `file`, reserved (allocate) and mapped for
// writing, their pages faulted in ahead of the writes on `threads` threads of their own, front to
// back, as the runs are written. address() names the file for another process of this host
// (/proc/PID/fd/FD).
class OwnRuns {
public:
    // Throws IoError; throws SortError where the file system cannot reserve the space (a map must
    // not meet a full disk).
    OwnRuns(const io::File& file, std::uint64_t offset, std::uint64_t bytes, unsigned threads);
    ~OwnRuns();  // stops the threads after the block each is in
    OwnRuns(const OwnRuns&) = delete;
    OwnRuns& operator=(const OwnRuns&) = delete;

    std::span<std::byte> bytes() const;
    const std::string& address() const { return address_; }
    // This rank's map of its region; null where the region is empty.
    io::FileMapping* mapping() const { return map_.get(); }

private:
    std::unique_ptr<io::FileMapping> map_;
    std::string address_;
    std::atomic<std::uint64_t> next_{0};
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

// Another rank's runs: bytes [offset, offset + bytes) of the file at its OwnRuns' address, mapped
// read only. Throws IoError.
class PeerRuns {
public:
    PeerRuns() = default;  // none
    PeerRuns(const std::string& address, std::uint64_t offset, std::uint64_t bytes);
    std::span<const std::byte> bytes() const;

private:
    io::File file_;
    std::unique_ptr<io::FileMapping> map_;
};

}  // namespace gpusort::distributed
