// GpuChunkSorter: the ChunkSorter of the GPU engine (gpu::ChunkEngine), within the device memory
// and staging the plan gives it. Built only when the GPU layer is.
#pragma once

#include "gpu/chunk_engine.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/sorters/chunk_sorter.hpp"
#include "gpusort/key_spec.hpp"
#include "gpusort/key_type.hpp"

#include <optional>

namespace gpusort {

class GpuChunkSorter final : public ChunkSorter, private SliceSorter {
public:
    // Keys of order.type on `device`. Throws GpuError when the device cannot be used.
    GpuChunkSorter(const KeyOrder& order, int device);
    // Records with a key spec: sort_chunk gives sorted records, sort_run run entries.
    GpuChunkSorter(const KeySpec& records, int device);
    std::string name() const override { return device_.name; }
    // Chunks live in device memory (the plan's device budget); host memory holds only the pinned
    // staging buffers. The free memory is the device's when the sorter was made.
    std::optional<DeviceCapacity> device() const override { return device_; }
    std::uint64_t capacity(std::size_t slots, const ChunkMemory& memory) const override;
    void prepare(std::size_t slots, std::uint64_t chunk_keys, const ChunkMemory& memory) override;
    PhaseTimes sort_chunk(std::size_t slot, std::uint64_t keys, const ChunkIo& io) override;
    PhaseTimes sort_run(std::size_t slot, std::uint64_t keys, const ChunkIo& io) override;
    // The device merges runs by sorting slices of them.
    SliceSorter* slice_sorter() override { return this; }

private:
    PhaseTimes sort_slice(std::size_t slot, std::uint64_t keys, const ChunkIo& io) override;
    std::size_t slice_width() const override { return engine_.input_width(); }
    // One chunk through the engine: normalised or raw keys in, raw or normalised out.
    PhaseTimes sort(std::size_t slot, std::uint64_t keys, bool normalized, bool restore, const ChunkIo& io);

    gpu::ChunkEngine engine_;
    DeviceCapacity device_;
};

}  // namespace gpusort
