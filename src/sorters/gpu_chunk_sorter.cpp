// GpuChunkSorter: the device's figures for the plan, the plan's memory handed to the engine, ChunkIo
// adapted to the engine's callbacks.
#include "src/sorters/gpu_chunk_sorter.hpp"
#include "src/plan/plan_sort.hpp"

#include "gpu/device.hpp"
#include "src/keys/record_layout.hpp"

namespace gpusort {

namespace {

// The device's name and free memory now (throws GpuError when it cannot be used), and the engine's
// preferred staging.
DeviceCapacity device_capacity(int device) {
    const gpu::DeviceInfo info = gpu::device_info(device);
    return DeviceCapacity{info.name, info.free_bytes, gpu::ChunkEnginePolicy::kStagingBytes};
}

}  // namespace

GpuChunkSorter::GpuChunkSorter(const KeyOrder& order, int device)
    : engine_(device, order), device_(device_capacity(device)) {}

GpuChunkSorter::GpuChunkSorter(const KeySpec& records, int device)
    : engine_(device, fixed_key_spec(records)), device_(device_capacity(device)) {}

std::uint64_t GpuChunkSorter::capacity(std::size_t slots, const ChunkMemory& memory) const {
    return engine_.capacity(slots, static_cast<std::size_t>(memory.device_bytes),
                            static_cast<std::size_t>(memory.staging_bytes));
}

void GpuChunkSorter::prepare(std::size_t slots, std::uint64_t chunk_keys, const ChunkMemory& memory) {
    engine_.prepare(slots, chunk_keys, static_cast<std::size_t>(memory.staging_bytes));
}

PhaseTimes GpuChunkSorter::sort_chunk(std::size_t slot, std::uint64_t keys, const ChunkIo& io) {
    return sort(slot, keys, false, true, io);
}

PhaseTimes GpuChunkSorter::sort_run(std::size_t slot, std::uint64_t keys, const ChunkIo& io) {
    return sort(slot, keys, false, false, io);
}

// Keys come in normalised; records raw (the engine takes their key words from them again).
PhaseTimes GpuChunkSorter::sort_slice(std::size_t slot, std::uint64_t keys, const ChunkIo& io) {
    return sort(slot, keys, !engine_.record_mode(), true, io);
}

PhaseTimes GpuChunkSorter::sort(std::size_t slot, std::uint64_t keys, bool normalized, bool restore,
                                const ChunkIo& io) {
    gpu::ChunkCallbacks callbacks;
    const std::size_t in_width = engine_.input_width();
    const std::size_t out_width = engine_.output_width(restore);
    callbacks.read = [&](std::uint64_t first, void* data, std::size_t count) {
        io.read(first, std::span<std::byte>(static_cast<std::byte*>(data), count * in_width));
    };
    callbacks.write = [&](std::uint64_t first, const void* data, std::size_t count) {
        io.write(first, std::span<const std::byte>(static_cast<const std::byte*>(data), count * out_width));
    };
    callbacks.source = io.source;
    if (io.copied) callbacks.copied = [&](std::uint64_t first, std::size_t count) { io.copied(first, count); };
    const gpu::ChunkTimes t =
        engine_.sort_chunk(slot, keys, normalized, restore, callbacks);
    PhaseTimes times;
    times.read = t.read;
    times.copy_in = t.copy_in;
    times.sort = t.sort;
    times.copy_out = t.copy_out;
    times.write = t.write;
    return times;
}

}  // namespace gpusort
