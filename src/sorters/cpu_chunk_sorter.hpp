// CpuChunkSorter: sorts chunks in host memory with IPS4o (in-place parallel super scalar
// samplesort) on a pool of threads created once. Reads and writes of different slots overlap;
// the sorts themselves take turns, each using all threads.
#pragma once

#include "src/sorters/chunk_sorter.hpp"
#include "io/host_buffer.hpp"
#include "src/keys/key_normalization.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpusort {

class SortThreadPool;

class CpuChunkSorter final : public ChunkSorter {
public:
    // Says through notice (optional) when fewer threads than asked for could be started.
    CpuChunkSorter(const KeyOrder& order, unsigned threads,
                   const std::function<void(const std::string&)>& notice = {});
    ~CpuChunkSorter() override;
    std::string name() const override { return "cpu"; }
    std::uint64_t capacity(std::size_t slots, const ChunkMemory& memory) const override;
    void prepare(std::size_t slots, std::uint64_t chunk_keys, const ChunkMemory& memory) override;
    PhaseTimes sort_chunk(std::size_t slot, std::uint64_t keys, const ChunkIo& io) override;
    PhaseTimes sort_run(std::size_t slot, std::uint64_t keys, const ChunkIo& io) override;

private:
    // Normalises, sorts and (restore) maps the keys back.
    PhaseTimes sort(std::size_t slot, std::uint64_t keys, bool restore, const ChunkIo& io);
    template <class U>
    void sort_keys(std::span<U> keys, bool restore);

    KeyOrder order_;
    std::size_t width_;
    std::unique_ptr<SortThreadPool> pool_;  // null: sort on the calling thread
    std::mutex sort_mutex_;
    std::vector<io::HostBuffer> slots_;
};

}  // namespace gpusort
