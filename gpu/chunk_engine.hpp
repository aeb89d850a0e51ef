// ChunkEngine: sorts chunks of a file's keys on one GPU, streaming them through pinned staging
// buffers. A chunk is pulled from the caller piece by piece (read callback) and copied in while
// the next piece is read; mapped to normalised sort keys, sorted by DeviceSorter, mapped back (or
// left normalised for a run that will be merged) and copied out piece by piece, each piece handed
// to the caller (write callback) while the next one is copied. Each slot has its own stream,
// device arrays, sorter and staging buffers, so chunks in different slots, sorted from different
// host threads, overlap: one is read and copied in while another is sorted, copied out and written.
// All memory is allocated once, in prepare().
//
// Two modes. Plain: keys of 1, 2, 4 or 8 bytes (a KeyOrder), the whole element being the key.
// Record: fixed-size records with a composite key (a FixedKeySpec); the chunk is sorted stably by
// the records' normalised keys (record_keys.hpp): the key words of every record and its index are
// sorted on the device, and records (or entries: key words followed by the record) are gathered
// in that order, a staging piece at a time, on their way out. Keys are normalised by the key rules
// of src/keys/key_rules.hpp, as on the host.
#pragma once

#include "src/keys/key_rules.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpusort::gpu {

// Tuning of the chunk pipeline.
struct ChunkEnginePolicy {
    // Bytes of one pinned staging buffer (two per slot): the unit of reads, copies and writes. The
    // preferred size, which a caller with a small host budget may lower (a sort's plan does).
    static constexpr std::size_t kStagingBytes = std::size_t{64} << 20;
    // A chunk copied straight from its source (ChunkCallbacks::source) is pinned and copied in pieces
    // of about this many bytes, at most kSourcePiecesPinned of them pinned at once. On the H100
    // machine, a fresh map of 16 GiB of a file in the page cache was pinned in pieces of 64 MiB at
    // 43 GB/s (0.40 s), each piece's copy overlapping the next one's pinning, where 16 threads
    // copied it into pinned memory at 42 GB/s and the sort's pread path moved 10-12 GB/s.
    static constexpr std::size_t kSourcePieceBytes = std::size_t{64} << 20;
    static constexpr std::size_t kSourcePiecesPinned = 4;
};

// Elements are keys (plain mode) or records and entries (record mode), of input_width() bytes
// on the way in and output_width(restore) bytes on the way out; pieces hold whole elements.
struct ChunkCallbacks {
    // Fills `keys` elements at `data` with the chunk's elements [first, first + keys).
    std::function<void(std::uint64_t first, void* data, std::size_t keys)> read;
    // Takes the sorted elements [first, first + keys) of the chunk.
    std::function<void(std::uint64_t first, const void* data, std::size_t keys)> write;
    // Optional: the chunk's elements where they already lie in host memory, readable until sort_chunk
    // returns (a read-only map of a file will do). The device then copies them from there itself, no
    // host copy, pinning the memory (cudaHostRegister, read only) a piece at a time. `read` still
    // fills what cannot go that way: the elements before the first page boundary and after the last
    // (where whole pages end), and the rest of the chunk from a piece the kernel would not pin on
    // (after which this engine reads every chunk). `copied(first, keys)` is told of the elements
    // copied straight from `source`, once each, when their copy is done.
    const void* source = nullptr;
    std::function<void(std::uint64_t first, std::size_t keys)> copied;
};

// Seconds a chunk spent in each stage (spans on the host's clock for read/write, on the
// device's events for the copies and the sort; stages overlap).
struct ChunkTimes {
    double read = 0, copy_in = 0, sort = 0, copy_out = 0, write = 0;
};

class ChunkEngine {
public:
    // Plain mode: keys of order.type on `device`, sorted in `order`; allocates nothing yet.
    ChunkEngine(int device, const KeyOrder& order);
    // Record mode: records of spec.record_size bytes sorted by their normalised key; allocates
    // nothing yet. `spec` comes from fixed_key_spec() (src/keys/record_layout.hpp).
    ChunkEngine(int device, const FixedKeySpec& spec);
    ~ChunkEngine();
    ChunkEngine(const ChunkEngine&) = delete;
    ChunkEngine& operator=(const ChunkEngine&) = delete;

    int device() const { return device_; }
    bool record_mode() const { return record_mode_; }
    // Bytes of an element read in: the key width (plain), the record size (record).
    std::size_t input_width() const;
    // Bytes of an element written out: the key width (plain); the record size when `restore`,
    // else the entry size 8 * key_words + record_size (record).
    std::size_t output_width(bool restore) const;
    // Device memory one slot needs for chunks of up to `keys` keys (records), with staging
    // buffers of `staging` bytes (record mode gathers an output piece of that size on the device).
    std::size_t slot_device_bytes(std::uint64_t keys, std::size_t staging = ChunkEnginePolicy::kStagingBytes) const;
    // The largest chunk for which `slots` slots fit in `device_bytes`.
    std::uint64_t capacity(std::size_t slots, std::size_t device_bytes,
                           std::size_t staging = ChunkEnginePolicy::kStagingBytes) const;

    // Allocates `slots` slots for chunks of up to chunk_keys keys, with two pinned staging buffers
    // of `staging` bytes each (less for a chunk smaller than that; at least one element). Throws
    // GpuError.
    void prepare(std::size_t slots, std::uint64_t chunk_keys, std::size_t staging = ChunkEnginePolicy::kStagingBytes);
    // Sorts a chunk of `keys` keys in `slot`. `normalized`: the keys come in already normalised
    // (of the raw width); `restore`: they go out in their raw form, else normalised. Blocks until
    // the last piece was written. Slots may be used from different threads at once; one chunk per
    // slot at a time.
    // Record mode: `keys` records come in (`normalized` must be false, else GpuError); they are
    // sorted stably by normalised key (equal keys keep their input order) and go out as records
    // when `restore`, else as entries: the key words (native-endian std::uint64_t, word 0 first)
    // immediately followed by the record, packed. Times: `sort` covers key extraction and the
    // sort; each output piece is gathered on the device just before its copy, within `copy_out`.
    ChunkTimes sort_chunk(std::size_t slot, std::uint64_t keys, bool normalized, bool restore, const ChunkCallbacks& io);

private:
    struct Slot;
    // Bytes of each pinned staging buffer (and, in record mode, of the device piece buffer) for
    // chunks of `keys` keys, given `staging` bytes.
    std::size_t staging_bytes(std::uint64_t keys, std::size_t staging) const;
    void sort_records(Slot& slot, std::size_t n, bool restore, const ChunkCallbacks& io, ChunkTimes& times);
    // Copies the chunk's n elements of `width` bytes to `device`: from io.source where it can, else
    // through the slot's staging. Returns the seconds from the first read to the last copy queued.
    double copy_chunk_in(Slot& slot, std::size_t n, std::size_t width, std::byte* device, const ChunkCallbacks& io);

    int device_;
    std::size_t key_width_ = 0;
    KeyOrder order_;
    bool record_mode_ = false;
    FixedKeySpec spec_{};
    std::uint64_t chunk_keys_ = 0;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::atomic<bool> source_pinnable_{true};  // false once the kernel would not pin a chunk's source
};

}  // namespace gpusort::gpu
