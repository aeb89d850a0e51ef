// CpuChunkSorter: sorts chunks in host memory with IPS4o (in-place parallel super scalar
// samplesort) on a pool of threads created once.
#pragma once

#include "src/chunk_sorter.hpp"

#include <memory>

namespace ips4o {
class StdThreadPool;
}

namespace gpusort {

class CpuChunkSorter final : public ChunkSorter {
public:
    explicit CpuChunkSorter(unsigned threads);
    ~CpuChunkSorter() override;
    std::string name() const override { return "cpu"; }
    void sort(std::span<std::uint8_t> keys) override;
    void sort(std::span<std::uint16_t> keys) override;
    void sort(std::span<std::uint32_t> keys) override;
    void sort(std::span<std::uint64_t> keys) override;

private:
    template <class U>
    void sort_keys(std::span<U> keys);
    std::unique_ptr<ips4o::StdThreadPool> pool_;  // null: sort on the calling thread
};

}  // namespace gpusort
