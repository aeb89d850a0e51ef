// ChunkEngine: per-slot streams, device arrays, sorters and double staging buffers; the
// piecewise copy-in / sort / copy-out pipeline of one chunk.
#include "gpu/chunk_engine.hpp"

#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/event.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/stream.hpp"

#include <algorithm>
#include <chrono>
#include <variant>

namespace gpusort::gpu {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

struct ChunkEngine::Slot {
    Stream stream;
    DeviceBuffer<std::byte> raw;   // narrow raw keys (widths 1 and 2); empty otherwise
    DeviceBuffer<std::byte> keys;  // sort keys (u32 or u64); wide raw keys are mapped in place
    std::variant<std::monostate, DeviceSorter<std::uint32_t>, DeviceSorter<std::uint64_t>> sorter;
    PinnedBuffer<std::byte> staging[2];
    Event copied[2]{Event(false), Event(false)};
    Event marks[4]{Event(true), Event(true), Event(true), Event(true)};
};

ChunkEngine::ChunkEngine(int device, std::size_t key_width, KeyMapping mapping)
    : device_(device), key_width_(key_width), mapping_(mapping) {
    if (key_width != 1 && key_width != 2 && key_width != 4 && key_width != 8)
        throw GpuError(cudaErrorInvalidValue, "unsupported key width " + std::to_string(key_width));
}

ChunkEngine::~ChunkEngine() = default;

std::size_t ChunkEngine::slot_device_bytes(std::uint64_t keys) const {
    const std::size_t n = static_cast<std::size_t>(keys);
    const std::size_t raw = key_width_ < 4 ? n * key_width_ : 0;
    if (sort_key_width(key_width_) == 4) return raw + n * 4 + DeviceSorter<std::uint32_t>::scratch_bytes(n);
    return raw + n * 8 + DeviceSorter<std::uint64_t>::scratch_bytes(n);
}

std::uint64_t ChunkEngine::capacity(std::size_t slots, std::size_t device_bytes) const {
    const std::size_t per_slot = device_bytes / std::max<std::size_t>(slots, 1);
    std::uint64_t lo = 0, hi = per_slot / key_width_ + 1;  // slot_device_bytes(hi) > per_slot
    while (lo + 1 < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        (slot_device_bytes(mid) <= per_slot ? lo : hi) = mid;
    }
    return lo;
}

void ChunkEngine::prepare(std::size_t slots, std::uint64_t chunk_keys) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    slots_.clear();
    chunk_keys_ = chunk_keys;
    const std::size_t n = static_cast<std::size_t>(chunk_keys);
    const std::size_t staging = std::min(ChunkEnginePolicy::kStagingBytes, std::max<std::size_t>(n * key_width_, 1));
    for (std::size_t s = 0; s < slots; ++s) {
        auto slot = std::make_unique<Slot>();
        if (key_width_ < 4) slot->raw = DeviceBuffer<std::byte>(n * key_width_);
        slot->keys = DeviceBuffer<std::byte>(n * sort_key_width(key_width_));
        if (sort_key_width(key_width_) == 4) slot->sorter.emplace<DeviceSorter<std::uint32_t>>(n);
        else slot->sorter.emplace<DeviceSorter<std::uint64_t>>(n);
        for (auto& buffer : slot->staging) buffer = PinnedBuffer<std::byte>(staging);
        slots_.push_back(std::move(slot));
    }
}

ChunkTimes ChunkEngine::sort_chunk(std::size_t slot_index, std::uint64_t keys, bool normalized, bool restore,
                                   const ChunkCallbacks& io) {
    ChunkTimes times;
    if (keys == 0) return times;
    if (slot_index >= slots_.size() || keys > chunk_keys_)
        throw GpuError(cudaErrorInvalidValue, "chunk larger than the engine was prepared for");
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    Slot& slot = *slots_[slot_index];
    cudaStream_t stream = slot.stream.get();
    const std::size_t n = static_cast<std::size_t>(keys);
    std::byte* raw = key_width_ < 4 ? slot.raw.data() : slot.keys.data();
    const std::size_t piece_keys = slot.staging[0].size() / key_width_;
    const std::size_t pieces = (n + piece_keys - 1) / piece_keys;

    // Copy in: read piece p into staging[p % 2] while piece p - 1 is copied from the other one.
    slot.marks[0].record(stream);
    const auto read_start = std::chrono::steady_clock::now();
    for (std::size_t p = 0; p < pieces; ++p) {
        const std::size_t first = p * piece_keys, count = std::min(piece_keys, n - first);
        auto& staging = slot.staging[p % 2];
        if (p >= 2) slot.copied[p % 2].synchronize();
        io.read(first, staging.data(), count);
        check_cuda(cudaMemcpyAsync(raw + first * key_width_, staging.data(), count * key_width_,
                                   cudaMemcpyHostToDevice, stream),
                   "cudaMemcpyAsync (chunk to the device)");
        slot.copied[p % 2].record(stream);
    }
    times.read = seconds_since(read_start);
    slot.marks[1].record(stream);

    // Keys that come in normalised are only widened: the identity mapping of unsigned keys.
    map_to_sort_keys(raw, slot.keys.data(), n, key_width_, normalized ? KeyMapping{} : mapping_, stream);
    if (auto* s32 = std::get_if<DeviceSorter<std::uint32_t>>(&slot.sorter))
        s32->sort(reinterpret_cast<std::uint32_t*>(slot.keys.data()), n, stream);
    else
        std::get<DeviceSorter<std::uint64_t>>(slot.sorter).sort(reinterpret_cast<std::uint64_t*>(slot.keys.data()), n, stream);
    map_from_sort_keys(slot.keys.data(), raw, n, key_width_, mapping_, restore, stream);
    slot.marks[2].record(stream);

    // Copy out: piece p is copied into staging[p % 2] while piece p - 1 is written.
    double write_seconds = 0;
    auto write_piece = [&](std::size_t p) {
        const std::size_t first = p * piece_keys, count = std::min(piece_keys, n - first);
        slot.copied[p % 2].synchronize();
        const auto start = std::chrono::steady_clock::now();
        io.write(first, slot.staging[p % 2].data(), count);
        write_seconds += seconds_since(start);
    };
    for (std::size_t p = 0; p < pieces; ++p) {
        const std::size_t first = p * piece_keys, count = std::min(piece_keys, n - first);
        check_cuda(cudaMemcpyAsync(slot.staging[p % 2].data(), raw + first * key_width_, count * key_width_,
                                   cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync (sorted chunk to the host)");
        slot.copied[p % 2].record(stream);
        if (p == pieces - 1) slot.marks[3].record(stream);
        if (p >= 1) write_piece(p - 1);
    }
    write_piece(pieces - 1);
    slot.stream.synchronize();
    times.write = write_seconds;
    times.copy_in = Event::elapsed_ms(slot.marks[0], slot.marks[1]) / 1e3;
    times.sort = Event::elapsed_ms(slot.marks[1], slot.marks[2]) / 1e3;
    times.copy_out = Event::elapsed_ms(slot.marks[2], slot.marks[3]) / 1e3;
    return times;
}

}  // namespace gpusort::gpu
