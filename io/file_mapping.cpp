// FileMapping: mmap(MAP_SHARED) / munmap; ReleaseBehind.
#include "io/file_mapping.hpp"

#include "io/io_error.hpp"
#include "io/syscalls.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace gpusort::io {

FileMapping::FileMapping(const File& file, std::uint64_t offset, std::uint64_t size, Access access) : size_(size) {
    if (size == 0) return;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    lead_ = static_cast<std::size_t>(offset % page);
    const int protection = access == Access::read ? PROT_READ : PROT_READ | PROT_WRITE;
    void* p = sys::mmap(nullptr, size + lead_, protection, MAP_SHARED, file.fd(), static_cast<off_t>(offset - lead_));
    if (p == MAP_FAILED) throw_errno("cannot map", file.path(), errno);
    ::madvise(p, size + lead_, MADV_HUGEPAGE);  // advice only: large folios where the file system has them
    data_ = static_cast<std::byte*>(p) + lead_;
}

std::optional<std::uint64_t> resident_bytes(const File& file, std::uint64_t size) {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    constexpr std::uint64_t kWindow = std::uint64_t{1} << 30;  // mapped at once
    constexpr std::uint64_t kStride = std::uint64_t{8} << 20;  // a sample every this many bytes ...
    constexpr std::uint64_t kSample = std::uint64_t{256} << 10;  // ... of this many
    std::vector<unsigned char> pages(static_cast<std::size_t>(kSample / page));
    std::uint64_t asked = 0, resident = 0;
    for (std::uint64_t window = 0; window < size; window += kWindow) {
        const std::uint64_t length = std::min(kWindow, size - window);
        void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, file.fd(), static_cast<off_t>(window));
        if (p == MAP_FAILED) return std::nullopt;
        bool failed = false;
        for (std::uint64_t at = 0; at < length && !failed; at += kStride) {
            const std::uint64_t bytes = std::min(kSample, length - at);
            failed = ::mincore(static_cast<std::byte*>(p) + at, bytes, pages.data()) != 0;
            const std::size_t count = static_cast<std::size_t>((bytes + page - 1) / page);
            for (std::size_t i = 0; i < count; ++i) resident += pages[i] & 1;
            asked += count;
        }
        ::munmap(p, length);
        if (failed) return std::nullopt;
    }
    if (asked == 0) return 0;
    // The samples' share of pages in the cache, of the whole file.
    return std::min<std::uint64_t>(size, static_cast<std::uint64_t>(static_cast<double>(resident) / asked * size));
}

bool populate_for_writing(std::byte* data, std::uint64_t length) {
#ifdef MADV_POPULATE_WRITE
    if (length == 0) return true;
    // madvise takes whole pages: from the one that holds the first byte.
    const std::size_t before =
        static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(data) % static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)));
    return ::madvise(data - before, length + before, MADV_POPULATE_WRITE) == 0;
#else
    (void)data;
    (void)length;
    return false;
#endif
}

void FileMapping::release_before(std::uint64_t end) {
    if (!data_) return;
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t mapped = size_ + lead_;
    // The last page goes with the map's end; any other, once the byte after it is reached.
    const std::size_t until = end >= size_ ? mapped : static_cast<std::size_t>(lead_ + end) / page * page;
    if (until <= released_) return;
    ::madvise(data_ - lead_ + released_, until - released_, MADV_DONTNEED);  // a shared map: the file keeps them
    released_ = until;
}

ReleaseBehind::ReleaseBehind(FileMapping& map, std::uint64_t piece) : map_(map), piece_(std::max<std::uint64_t>(piece, 1)) {
    thread_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stop_ || prefix_ >= released_ + piece_ || (prefix_ == map_.size() && prefix_ > released_); });
            if (stop_) return;
            released_ = prefix_;
            const std::uint64_t end = released_;
            lock.unlock();
            map_.release_before(end);
            lock.lock();
        }
    });
}

ReleaseBehind::~ReleaseBehind() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void ReleaseBehind::written(std::uint64_t offset, std::uint64_t size) {
    if (size == 0) return;
    {
        std::lock_guard lock(mutex_);
        auto [at, fresh] = ahead_.emplace(offset, offset + size);
        if (!fresh) at->second = std::max(at->second, offset + size);
        while (!ahead_.empty() && ahead_.begin()->first <= prefix_) {
            prefix_ = std::max(prefix_, ahead_.begin()->second);
            ahead_.erase(ahead_.begin());
        }
    }
    wake_.notify_one();
}

FileMapping::~FileMapping() {
    if (data_) ::munmap(data_ - lead_, size_ + lead_);  // released pages too: they were dropped, not unmapped
}

}  // namespace gpusort::io
