// ChunkSorter: the one interface through which the core sorts a chunk of the input, keys in,
// sorted keys out. Implementations: CpuChunkSorter (IPS4o in host memory) and GpuChunkSorter
// (the GPU engine). Both give identical bytes for the same input and order.
//
// A sorter holds `slots` chunks at once (allocated once, in prepare()); the core sorts chunks in
// different slots from different threads, so reading one chunk overlaps sorting and writing
// another. A chunk's keys are pulled through ChunkIo::read and the sorted keys pushed through
// ChunkIo::write, in pieces addressed by the key index within the chunk, in order. Every sorter
// takes every call of this interface; what only some can do is an interface of its own.
#pragma once

#include "gpusort/phase_times.hpp"
#include "gpusort/sort_plan.hpp"
#include "src/plan/plan_sort.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace gpusort {

struct ChunkIo {
    std::function<void(std::uint64_t first, std::span<std::byte> bytes)> read;
    std::function<void(std::uint64_t first, std::span<const std::byte> bytes)> write;
    // Optional: the chunk's keys (records) where they already lie in memory, readable until the sort
    // returns (a read-only map of the input will do). A sorter on a device copies them from there
    // itself where it can, calling `read` only for the rest, and tells `copied` of what it took
    // (gpu::ChunkCallbacks::source); the others read every key through `read`.
    const std::byte* source = nullptr;
    std::function<void(std::uint64_t first, std::uint64_t keys)> copied;
};

// Sorts slices of runs back into output keys or records: the GPU's merge
// (src/merge/slice_merge.hpp). A capability of its own: only a sorter on a device has it; the runs
// of the others are merged on the host.
class SliceSorter {
public:
    virtual ~SliceSorter() = default;
    // Sorts one slice of `keys` elements in `slot` of the chunk sorter, stably: they come in (the
    // parts of several runs, one after the other) as normalised keys, or for records as the
    // records of the runs' entries (their key words left out), and go out as raw keys or records.
    virtual PhaseTimes sort_slice(std::size_t slot, std::uint64_t keys, const ChunkIo& io) = 0;
    // Bytes of one element as sort_slice reads it.
    virtual std::size_t slice_width() const = 0;
};

class ChunkSorter {
public:
    virtual ~ChunkSorter() = default;
    // "cpu", or the GPU's name.
    virtual std::string name() const = 0;
    // The device the chunks live on (its free memory, the staging it prefers); nullopt: they live
    // in host memory, and the host budget bounds them.
    virtual std::optional<DeviceCapacity> device() const { return std::nullopt; }
    // The largest chunk (keys) when `slots` chunks are held at once in `memory` (the plan's).
    virtual std::uint64_t capacity(std::size_t slots, const ChunkMemory& memory) const = 0;
    // Allocates `slots` slots for chunks of up to chunk_keys keys in `memory`; (0, 0) frees them. A
    // sorter on the host takes no more than memory.host_bytes (std::logic_error where it would).
    virtual void prepare(std::size_t slots, std::uint64_t chunk_keys, const ChunkMemory& memory) = 0;
    // Sorts one chunk of `keys` raw keys (records) in `slot` into the sorted raw keys (records).
    virtual PhaseTimes sort_chunk(std::size_t slot, std::uint64_t keys, const ChunkIo& io) = 0;
    // Sorts one chunk of `keys` raw keys (records) in `slot` into a run: sorted entries in the form
    // the merge compares (normalised keys; for records, key words and record: record_layout.hpp).
    virtual PhaseTimes sort_run(std::size_t slot, std::uint64_t keys, const ChunkIo& io) = 0;
    // The slice merge this sorter offers, sharing its slots; null when its runs are merged on the host.
    virtual SliceSorter* slice_sorter() { return nullptr; }
};

}  // namespace gpusort
