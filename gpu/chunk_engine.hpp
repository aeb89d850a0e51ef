// ChunkEngine: sorts chunks of a file's keys on one GPU, streaming them through pinned staging
// buffers. A chunk is pulled from the caller piece by piece (read callback) and copied in while
// the next piece is read; mapped to normalised sort keys, sorted by DeviceSorter, mapped back (or
// left normalised for a run that will be merged) and copied out piece by piece, each piece handed
// to the caller (write callback) while the next one is copied. Each slot has its own stream,
// device arrays, sorter and staging buffers, so chunks in different slots, sorted from different
// host threads, overlap: one is read and copied in while another is sorted, copied out and written.
// All memory is allocated once, in prepare().
#pragma once

#include "gpu/key_mapping.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpusort::gpu {

// Tuning of the chunk pipeline.
struct ChunkEnginePolicy {
    // Bytes of one pinned staging buffer (two per slot): the unit of reads, copies and writes.
    static constexpr std::size_t kStagingBytes = std::size_t{64} << 20;
};

struct ChunkCallbacks {
    // Fills `keys` keys at `data` with the chunk's keys [first, first + keys).
    std::function<void(std::uint64_t first, void* data, std::size_t keys)> read;
    // Takes the sorted keys [first, first + keys) of the chunk.
    std::function<void(std::uint64_t first, const void* data, std::size_t keys)> write;
};

// Seconds a chunk spent in each stage (spans on the host's clock for read/write, on the
// device's events for the copies and the sort; stages overlap).
struct ChunkTimes {
    double read = 0, copy_in = 0, sort = 0, copy_out = 0, write = 0;
};

class ChunkEngine {
public:
    // Keys of `key_width` bytes (1, 2, 4 or 8) on `device`; allocates nothing yet.
    ChunkEngine(int device, std::size_t key_width, KeyMapping mapping);
    ~ChunkEngine();
    ChunkEngine(const ChunkEngine&) = delete;
    ChunkEngine& operator=(const ChunkEngine&) = delete;

    int device() const { return device_; }
    // Device memory one slot needs for chunks of up to `keys` keys.
    std::size_t slot_device_bytes(std::uint64_t keys) const;
    // The largest chunk for which `slots` slots fit in `device_bytes`.
    std::uint64_t capacity(std::size_t slots, std::size_t device_bytes) const;

    // Allocates `slots` slots for chunks of up to chunk_keys keys. Throws GpuError.
    void prepare(std::size_t slots, std::uint64_t chunk_keys);
    // Sorts a chunk of `keys` keys in `slot`. `normalized`: the keys come in already normalised
    // (of the raw width); `restore`: they go out in their raw form, else normalised. Blocks until
    // the last piece was written. Slots may be used from different threads at once; one chunk per
    // slot at a time.
    ChunkTimes sort_chunk(std::size_t slot, std::uint64_t keys, bool normalized, bool restore, const ChunkCallbacks& io);

private:
    struct Slot;
    int device_;
    std::size_t key_width_;
    KeyMapping mapping_;
    std::uint64_t chunk_keys_ = 0;
    std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace gpusort::gpu
