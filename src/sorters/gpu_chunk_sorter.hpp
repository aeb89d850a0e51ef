// GpuChunkSorter: the ChunkSorter of the GPU engine (gpu::ChunkEngine) within a device-memory
// budget. Built only when the GPU layer is.
#pragma once

#include "gpu/chunk_engine.hpp"
#include "src/sorters/chunk_sorter.hpp"
#include "src/keys/key_normalization.hpp"
#include "gpusort/key_spec.hpp"

#include <optional>

namespace gpusort {

class GpuChunkSorter final : public ChunkSorter {
public:
    // device_memory: the budget; default, and at most, the device's free memory less a reserve.
    GpuChunkSorter(const KeyOrder& order, int device, std::optional<std::uint64_t> device_memory);
    // Records with a key spec: raw_to_raw gives sorted records, raw_to_normalized run entries.
    GpuChunkSorter(const KeySpec& records, int device, std::optional<std::uint64_t> device_memory);
    std::string name() const override { return name_; }
    // Chunks live in device memory; host memory holds only fixed staging buffers.
    bool chunks_in_host_memory() const override { return false; }
    std::uint64_t capacity(std::size_t slots, std::uint64_t host_bytes) const override;
    void prepare(std::size_t slots, std::uint64_t chunk_keys) override;
    PhaseTimes sort_chunk(std::size_t slot, std::uint64_t keys, ChunkForm form, const ChunkIo& io) override;

    std::uint64_t device_memory() const override { return device_memory_; }

private:
    void set_budget(std::optional<std::uint64_t> device_memory);

    gpu::ChunkEngine engine_;
    std::string name_;
    std::uint64_t device_memory_;
};

}  // namespace gpusort
