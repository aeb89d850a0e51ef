// CpuChunkSorter: IPS4o, in parallel on a std::thread pool when more than one thread is allowed.
#include "src/cpu_chunk_sorter.hpp"

#include <functional>
#include <ips4o.hpp>

namespace gpusort {

CpuChunkSorter::CpuChunkSorter(unsigned threads) {
    if (threads > 1) pool_ = std::make_unique<ips4o::StdThreadPool>(static_cast<int>(threads));
}

CpuChunkSorter::~CpuChunkSorter() = default;

template <class U>
void CpuChunkSorter::sort_keys(std::span<U> keys) {
    if (pool_)
        ips4o::parallel::sort(keys.data(), keys.data() + keys.size(), std::less<>(), *pool_);
    else
        ips4o::sort(keys.data(), keys.data() + keys.size(), std::less<>());
}

void CpuChunkSorter::sort(std::span<std::uint8_t> keys) { sort_keys(keys); }
void CpuChunkSorter::sort(std::span<std::uint16_t> keys) { sort_keys(keys); }
void CpuChunkSorter::sort(std::span<std::uint32_t> keys) { sort_keys(keys); }
void CpuChunkSorter::sort(std::span<std::uint64_t> keys) { sort_keys(keys); }

}  // namespace gpusort
