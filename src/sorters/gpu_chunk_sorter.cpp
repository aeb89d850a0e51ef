// GpuChunkSorter: budget from the device's free memory, ChunkIo adapted to the engine's callbacks.
#include "src/sorters/gpu_chunk_sorter.hpp"

#include "gpu/device.hpp"

#include <algorithm>

namespace gpusort {

namespace {

gpu::KeyMapping mapping_of(const KeyOrder& order) {
    gpu::KeyMapping mapping;
    switch (key_kind(order.type)) {
    case KeyKind::unsigned_int: mapping.kind = gpu::KeyClass::unsigned_int; break;
    case KeyKind::signed_int: mapping.kind = gpu::KeyClass::signed_int; break;
    case KeyKind::floating: mapping.kind = gpu::KeyClass::floating; break;
    }
    mapping.descending = order.descending;
    return mapping;
}

gpu::RecordKeyFormat format_of(const KeySpec& spec) {
    spec.validate();
    if (spec.fields.size() > gpu::kMaxRecordKeyFields) throw std::invalid_argument("too many key fields");
    gpu::RecordKeyFormat format;
    format.record_size = static_cast<std::uint32_t>(spec.record_size);
    format.field_count = static_cast<std::uint32_t>(spec.fields.size());
    for (std::size_t i = 0; i < spec.fields.size(); ++i) {
        const KeyField& f = spec.fields[i];
        gpu::RecordKeyField& g = format.fields[i];
        g.offset = static_cast<std::uint32_t>(f.offset);
        g.length = static_cast<std::uint32_t>(f.length);
        if (f.is_bytes) {
            g.kind = gpu::FieldKind::bytes;
        } else {
            switch (key_kind(f.type)) {
            case KeyKind::unsigned_int: g.kind = gpu::FieldKind::unsigned_int; break;
            case KeyKind::signed_int: g.kind = gpu::FieldKind::signed_int; break;
            case KeyKind::floating: g.kind = gpu::FieldKind::floating; break;
            }
        }
        g.big_endian = f.big_endian;
        g.descending = f.descending;
    }
    return format;
}

}  // namespace

void GpuChunkSorter::set_budget(std::optional<std::uint64_t> device_memory) {
    const gpu::DeviceInfo info = gpu::device_info(engine_.device());
    name_ = info.name;
    // Leave a twentieth (at least 256 MiB) of the free memory to the driver and other programs.
    const std::uint64_t reserve = std::max<std::uint64_t>(info.free_bytes / 20, std::uint64_t{256} << 20);
    // A budget is an upper bound: one larger than what can be had shrinks to it (and so do the chunks).
    const std::uint64_t available = info.free_bytes > reserve ? info.free_bytes - reserve : 0;
    device_memory_ = std::min(device_memory.value_or(available), available);
}

GpuChunkSorter::GpuChunkSorter(const KeyOrder& order, int device, std::optional<std::uint64_t> device_memory)
    : engine_(device, key_width(order.type), mapping_of(order)) {
    set_budget(device_memory);
}

GpuChunkSorter::GpuChunkSorter(const KeySpec& records, int device, std::optional<std::uint64_t> device_memory)
    : engine_(device, format_of(records)) {
    set_budget(device_memory);
}

std::uint64_t GpuChunkSorter::capacity(std::size_t slots, std::uint64_t) const {
    return engine_.capacity(slots, static_cast<std::size_t>(device_memory_));
}

void GpuChunkSorter::prepare(std::size_t slots, std::uint64_t chunk_keys) { engine_.prepare(slots, chunk_keys); }

PhaseTimes GpuChunkSorter::sort_chunk(std::size_t slot, std::uint64_t keys, ChunkForm form, const ChunkIo& io) {
    gpu::ChunkCallbacks callbacks;
    const std::size_t in_width = engine_.input_width();
    const std::size_t out_width = engine_.output_width(output_is_raw(form));
    callbacks.read = [&](std::uint64_t first, void* data, std::size_t count) {
        io.read(first, std::span<std::byte>(static_cast<std::byte*>(data), count * in_width));
    };
    callbacks.write = [&](std::uint64_t first, const void* data, std::size_t count) {
        io.write(first, std::span<const std::byte>(static_cast<const std::byte*>(data), count * out_width));
    };
    const gpu::ChunkTimes t =
        engine_.sort_chunk(slot, keys, input_is_normalized(form), output_is_raw(form), callbacks);
    PhaseTimes times;
    times.read = t.read;
    times.copy_in = t.copy_in;
    times.sort = t.sort;
    times.copy_out = t.copy_out;
    times.write = t.write;
    return times;
}

}  // namespace gpusort
