// ChunkSorter: the one interface through which the core sorts a chunk of the input, keys in,
// sorted keys out. Implementations: CpuChunkSorter (IPS4o in host memory) and GpuChunkSorter
// (the GPU engine). Both give identical bytes for the same input and order.
//
// A sorter holds `slots` chunks at once (allocated once, in prepare()); the core sorts chunks in
// different slots from different threads, so reading one chunk overlaps sorting and writing
// another. A chunk's keys are pulled through ChunkIo::read and the sorted keys pushed through
// ChunkIo::write, in pieces addressed by the key index within the chunk, in order.
#pragma once

#include "gpusort/phase_times.hpp"
#include "gpusort/sort_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace gpusort {

// What a chunk's keys are on the way in and on the way out.
enum class ChunkForm {
    raw_to_raw,         // the whole input as one chunk, straight into the output
    raw_to_normalized,  // a chunk of the input that becomes a run
    normalized_to_raw,  // a slice of the runs (already normalised) that goes into the output
};
inline bool input_is_normalized(ChunkForm form) { return form == ChunkForm::normalized_to_raw; }
inline bool output_is_raw(ChunkForm form) { return form != ChunkForm::raw_to_normalized; }

struct ChunkIo {
    std::function<void(std::uint64_t first, std::span<std::byte> bytes)> read;
    std::function<void(std::uint64_t first, std::span<const std::byte> bytes)> write;
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
    // Allocates `slots` slots for chunks of up to chunk_keys keys in `memory`; (0, 0) frees them.
    virtual void prepare(std::size_t slots, std::uint64_t chunk_keys, const ChunkMemory& memory) = 0;
    // Sorts one chunk of `keys` keys in `slot`, taking and giving keys in the given forms.
    virtual PhaseTimes sort_chunk(std::size_t slot, std::uint64_t keys, ChunkForm form, const ChunkIo& io) = 0;
};

}  // namespace gpusort
