// CpuChunkSorter: read the chunk in parallel, normalise, IPS4o, map back if asked, write it.
#include "src/sorters/cpu_chunk_sorter.hpp"

#include "src/keys/key_dispatch.hpp"
#include "src/sorters/sort_thread_pool.hpp"

#include <functional>
#include <ips4o.hpp>
#include <stdexcept>
#include <tbb/task_arena.h>

namespace gpusort {

CpuChunkSorter::CpuChunkSorter(const KeyOrder& order, unsigned threads,
                               const std::function<void(const std::string&)>& notice)
    : order_(order), width_(key_width(order.type)), pool_(make_sort_thread_pool(threads, notice)) {}

CpuChunkSorter::~CpuChunkSorter() = default;

std::uint64_t CpuChunkSorter::capacity(std::size_t slots, const ChunkMemory& memory) const {
    return memory.host_bytes / std::max<std::size_t>(slots, 1) / width_;
}

void CpuChunkSorter::prepare(std::size_t slots, std::uint64_t chunk_keys, const ChunkMemory& memory) {
    // The plan's memory is what the slots take (its --plan and --stats say so): never more.
    if (slots * chunk_keys * width_ > memory.host_bytes)
        throw std::logic_error("the CPU sorter's slots would take more memory than the plan gives them");
    slots_.clear();
    for (std::size_t s = 0; s < slots; ++s)
        slots_.emplace_back(static_cast<std::size_t>(chunk_keys * width_));
}

template <class U>
void CpuChunkSorter::sort_keys(std::span<U> keys, bool restore) {
    normalize_keys(keys, order_);
    if (pool_)
        ips4o::parallel::sort(keys.data(), keys.data() + keys.size(), std::less<>(), *pool_);
    else
        ips4o::sort(keys.data(), keys.data() + keys.size(), std::less<>());
    if (restore) denormalize_keys(keys, order_);
}

PhaseTimes CpuChunkSorter::sort_chunk(std::size_t slot, std::uint64_t keys, const ChunkIo& io) {
    return sort(slot, keys, true, io);
}

PhaseTimes CpuChunkSorter::sort_run(std::size_t slot, std::uint64_t keys, const ChunkIo& io) {
    return sort(slot, keys, false, io);
}

PhaseTimes CpuChunkSorter::sort(std::size_t slot, std::uint64_t keys, bool restore, const ChunkIo& io) {
    PhaseTimes times;
    std::span<std::byte> bytes(slots_.at(slot).data(), static_cast<std::size_t>(keys * width_));
    {
        ScopedPhase phase(times.read);
        io.read(0, bytes);
    }
    {
        std::lock_guard lock(sort_mutex_);
        ScopedPhase phase(times.sort);
        void* data = bytes.data();
        const std::size_t n = static_cast<std::size_t>(keys);
        // Isolated: a thread waiting in the (parallel) key mapping must not take up another chunk,
        // whose sort would wait for the mutex this thread holds.
        tbb::this_task_arena::isolate([&] {
            with_key_width(width_, [&](auto key) {
                using U = decltype(key);
                sort_keys(std::span(static_cast<U*>(data), n), restore);
            });
        });
    }
    ScopedPhase phase(times.write);
    io.write(0, bytes);
    return times;
}

}  // namespace gpusort
