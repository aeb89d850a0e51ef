// ChunkEngine: per-slot streams, device arrays, sorters and double staging buffers; the
// piecewise copy-in / sort / copy-out pipeline of one chunk, shared by the plain mode (keys) and
// the record mode (records sorted by normalised key, gathered piece by piece on the way out).
#include "gpu/chunk_engine.hpp"

#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/event.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/key_mapping.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/record_keys.hpp"
#include "gpu/stream.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <variant>

#include <unistd.h>

namespace gpusort::gpu {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A slot's two pinned staging buffers, and the events that say when each one's last copy is done.
struct Staging {
    PinnedBuffer<std::byte> buffer[2];
    Event copied[2]{Event(false), Event(false)};
};

// Copy in: reads elements [begin, end) of `width` bytes piece by piece (whole elements per piece),
// piece p into buffer[p % 2] while piece p - 1 is copied from the other one to `device` (the
// chunk's elements). Returns the seconds spent from the first read to the last copy queued.
double copy_in(Staging& staging, cudaStream_t stream, std::size_t begin, std::size_t end, std::size_t width,
               std::byte* device, const ChunkCallbacks& io) {
    const std::size_t piece = staging.buffer[0].size() / width;
    const auto read_start = std::chrono::steady_clock::now();
    for (std::size_t first = begin, p = 0; first < end; first += piece, ++p) {
        const std::size_t count = std::min(piece, end - first);
        auto& buffer = staging.buffer[p % 2];
        staging.copied[p % 2].synchronize();  // its last copy (of this call or an earlier one) is done
        io.read(first, buffer.data(), count);
        check_cuda(cudaMemcpyAsync(device + first * width, buffer.data(), count * width, cudaMemcpyHostToDevice, stream),
                   "cudaMemcpyAsync (chunk to the device)");
        staging.copied[p % 2].record(stream);
    }
    return seconds_since(read_start);
}

// Pieces of a chunk's source pinned (registered read only) for their copies on one stream, at most
// kSourcePiecesPinned at once: pinning another first waits for the oldest one's copy and unpins it.
class PinnedPieces {
public:
    PinnedPieces(cudaStream_t stream, const ChunkCallbacks& io) : stream_(stream), io_(io) {}
    ~PinnedPieces() {  // on an error: unpinned once their copies are done, untold
        for (std::size_t i = done_; i < pinned_; ++i) {
            Piece& piece = pieces_[i % kRing];
            cudaEventSynchronize(piece.copied.get());
            cudaHostUnregister(const_cast<std::byte*>(piece.data));
        }
        cudaGetLastError();
    }
    PinnedPieces(const PinnedPieces&) = delete;
    PinnedPieces& operator=(const PinnedPieces&) = delete;

    // Pins elements [first, first + count) at `data` (whole pages) and queues their copy to `device`;
    // false where the kernel would not pin them (nothing queued).
    bool copy(const std::byte* data, std::size_t bytes, std::byte* device, std::uint64_t first, std::size_t count) {
        if (pinned_ - done_ == kRing) unpin_oldest();
        const cudaError_t pinned = cudaHostRegister(const_cast<std::byte*>(data), bytes, cudaHostRegisterReadOnly);
        if (pinned != cudaSuccess) {
            cudaGetLastError();  // not an error of the device: the caller reads these elements instead
            return false;
        }
        Piece& piece = pieces_[pinned_++ % kRing];
        piece.data = data;
        piece.first = first;
        piece.count = count;
        check_cuda(cudaMemcpyAsync(device, data, bytes, cudaMemcpyHostToDevice, stream_),
                   "cudaMemcpyAsync (chunk to the device, from its source)");
        piece.copied.record(stream_);
        return true;
    }
    // Waits for every copy queued and unpins its piece.
    void finish() {
        while (done_ < pinned_) unpin_oldest();
    }

private:
    static constexpr std::size_t kRing = ChunkEnginePolicy::kSourcePiecesPinned;
    struct Piece {
        const std::byte* data = nullptr;
        std::uint64_t first = 0;
        std::size_t count = 0;
        Event copied{false};
    };
    void unpin_oldest() {
        Piece& piece = pieces_[done_ % kRing];
        piece.copied.synchronize();
        ++done_;  // unpinned whatever the result: not again on an error
        check_cuda(cudaHostUnregister(const_cast<std::byte*>(piece.data)), "cudaHostUnregister (a chunk's source)");
        if (io_.copied) io_.copied(piece.first, piece.count);
    }

    cudaStream_t stream_;
    const ChunkCallbacks& io_;
    Piece pieces_[kRing];
    std::size_t pinned_ = 0, done_ = 0;  // pieces pinned, and unpinned again, so far
};

// Copy in from io.source: the elements on whole pages go straight from there, a piece at a time
// pinned; those before the first page boundary and after the last through the staging buffers.
// From a piece the kernel would not pin, the rest is read through the staging buffers too, and
// `pinnable` is cleared. Returns the seconds from the first read to the last copy queued.
double copy_in_from_source(Staging& staging, cudaStream_t stream, std::size_t n, std::size_t width, std::byte* device,
                           const ChunkCallbacks& io, std::atomic<bool>& pinnable) {
    const auto start = std::chrono::steady_clock::now();
    const auto* source = static_cast<const std::byte*>(io.source);
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    // Elements that start on a page boundary come every `step` elements from the first such one.
    const std::size_t step = page / std::gcd(width, page);
    std::size_t head = n;
    for (std::size_t k = 0; k < std::min(step, n); ++k)
        if (reinterpret_cast<std::uintptr_t>(source + k * width) % page == 0) {
            head = k;
            break;
        }
    const std::size_t whole = head < n ? (n - head) / step * step : 0;  // elements on whole pages
    if (whole == 0) return copy_in(staging, stream, 0, n, width, device, io);
    const std::size_t piece = std::max<std::size_t>(1, ChunkEnginePolicy::kSourcePieceBytes / width / step) * step;
    copy_in(staging, stream, 0, head, width, device, io);
    std::size_t first = head;
    {
        PinnedPieces pieces(stream, io);
        while (first < head + whole) {
            const std::size_t count = std::min(piece, head + whole - first);
            if (!pieces.copy(source + first * width, count * width, device + first * width, first, count)) {
                pinnable = false;
                break;
            }
            first += count;
        }
        pieces.finish();
    }
    copy_in(staging, stream, first, n, width, device, io);
    return seconds_since(start);
}

// Copy out: piece p of the n sorted elements of `width` bytes is copied into buffer[p % 2] while
// piece p - 1 is written. make_piece(first, count) queues whatever work puts elements
// [first, first + count) on the device and returns their device address. `done` is recorded after
// the last copy. Returns the seconds spent in the write callback; blocks until the last write.
template <class MakePiece>
double copy_out(Staging& staging, cudaStream_t stream, std::size_t n, std::size_t width, MakePiece make_piece,
                Event& done, const ChunkCallbacks& io) {
    const std::size_t piece = staging.buffer[0].size() / width;
    const std::size_t pieces = (n + piece - 1) / piece;
    double write_seconds = 0;
    auto write_piece = [&](std::size_t p) {
        const std::size_t first = p * piece, count = std::min(piece, n - first);
        staging.copied[p % 2].synchronize();
        const auto start = std::chrono::steady_clock::now();
        io.write(first, staging.buffer[p % 2].data(), count);
        write_seconds += seconds_since(start);
    };
    for (std::size_t p = 0; p < pieces; ++p) {
        const std::size_t first = p * piece, count = std::min(piece, n - first);
        const std::byte* source = make_piece(first, count);
        check_cuda(cudaMemcpyAsync(staging.buffer[p % 2].data(), source, count * width, cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync (sorted chunk to the host)");
        staging.copied[p % 2].record(stream);
        if (p == pieces - 1) done.record(stream);
        if (p >= 1) write_piece(p - 1);
    }
    write_piece(pieces - 1);
    return write_seconds;
}
}  // namespace

struct ChunkEngine::Slot {
    Stream stream;
    DeviceBuffer<std::byte> raw;   // plain: narrow raw keys (widths 1 and 2), else empty; record: the records
    DeviceBuffer<std::byte> keys;  // sort keys (u32, u64 or Key128); wide raw keys are mapped in place
    DeviceBuffer<std::uint64_t> index;  // record: each sorted key's record index (the permutation)
    DeviceBuffer<std::byte> piece;      // record: one output piece, gathered before its copy out
    std::variant<std::monostate, DeviceSorter<std::uint32_t>, DeviceSorter<std::uint64_t>,
                 DeviceSorter<std::uint64_t, std::uint64_t>, DeviceSorter<Key128, std::uint64_t>>
        sorter;
    Staging staging;
    Event marks[4]{Event(true), Event(true), Event(true), Event(true)};
};

ChunkEngine::ChunkEngine(int device, const KeyOrder& order)
    : device_(device), key_width_(key_width(order.type)), order_(order) {}

ChunkEngine::ChunkEngine(int device, const FixedKeySpec& spec) : device_(device), record_mode_(true), spec_(spec) {}

ChunkEngine::~ChunkEngine() = default;

std::size_t ChunkEngine::input_width() const { return record_mode_ ? spec_.record_size : key_width_; }

std::size_t ChunkEngine::output_width(bool restore) const {
    if (!record_mode_) return key_width_;
    return restore ? spec_.record_size : std::size_t{8} * spec_.key_words() + spec_.record_size;
}

std::size_t ChunkEngine::staging_bytes(std::uint64_t keys, std::size_t staging) const {
    const std::size_t widest = std::max(input_width(), output_width(false));
    return std::min(std::max(staging, widest), std::max<std::size_t>(static_cast<std::size_t>(keys) * widest, 1));
}

std::size_t ChunkEngine::slot_device_bytes(std::uint64_t keys, std::size_t staging) const {
    const std::size_t n = static_cast<std::size_t>(keys);
    if (record_mode_) {
        // Records, sort keys, index payload, the sorter's scratch, and one gathered output piece.
        const std::size_t sorter = spec_.key_words() == 1
                                       ? DeviceSorter<std::uint64_t, std::uint64_t>::device_bytes_needed(n)
                                       : DeviceSorter<Key128, std::uint64_t>::device_bytes_needed(n);
        return n * spec_.record_size + sorter + staging_bytes(keys, staging);
    }
    const std::size_t raw = key_width_ < 4 ? n * key_width_ : 0;
    if (sort_key_width(key_width_) == 4) return raw + n * 4 + DeviceSorter<std::uint32_t>::scratch_bytes(n);
    return raw + n * 8 + DeviceSorter<std::uint64_t>::scratch_bytes(n);
}

std::uint64_t ChunkEngine::capacity(std::size_t slots, std::size_t device_bytes, std::size_t staging) const {
    const std::size_t per_slot = device_bytes / std::max<std::size_t>(slots, 1);
    std::uint64_t lo = 0, hi = per_slot / input_width() + 1;  // slot_device_bytes(hi) > per_slot
    while (lo + 1 < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        (slot_device_bytes(mid, staging) <= per_slot ? lo : hi) = mid;
    }
    return lo;
}

void ChunkEngine::prepare(std::size_t slots, std::uint64_t chunk_keys, std::size_t staging_size) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    slots_.clear();
    chunk_keys_ = chunk_keys;
    const std::size_t n = static_cast<std::size_t>(chunk_keys);
    const std::size_t staging = staging_bytes(chunk_keys, staging_size);
    for (std::size_t s = 0; s < slots; ++s) {
        auto slot = std::make_unique<Slot>();
        if (record_mode_) {
            slot->raw = DeviceBuffer<std::byte>(n * spec_.record_size);
            slot->index = DeviceBuffer<std::uint64_t>(n);
            slot->piece = DeviceBuffer<std::byte>(staging);
            if (spec_.key_words() == 1) {
                slot->keys = DeviceBuffer<std::byte>(n * sizeof(std::uint64_t));
                slot->sorter.emplace<DeviceSorter<std::uint64_t, std::uint64_t>>(n);
            } else {
                slot->keys = DeviceBuffer<std::byte>(n * sizeof(Key128));
                slot->sorter.emplace<DeviceSorter<Key128, std::uint64_t>>(n);
            }
        } else {
            if (key_width_ < 4) slot->raw = DeviceBuffer<std::byte>(n * key_width_);
            slot->keys = DeviceBuffer<std::byte>(n * sort_key_width(key_width_));
            if (sort_key_width(key_width_) == 4) slot->sorter.emplace<DeviceSorter<std::uint32_t>>(n);
            else slot->sorter.emplace<DeviceSorter<std::uint64_t>>(n);
        }
        for (auto& buffer : slot->staging.buffer) buffer = PinnedBuffer<std::byte>(staging);
        slots_.push_back(std::move(slot));
    }
}

ChunkTimes ChunkEngine::sort_chunk(std::size_t slot_index, std::uint64_t keys, bool normalized, bool restore,
                                   const ChunkCallbacks& io) {
    ChunkTimes times;
    if (record_mode_ && normalized)
        throw GpuError(cudaErrorInvalidValue, "records cannot come in normalised: the record mode normalises their keys");
    if (keys == 0) return times;
    if (slot_index >= slots_.size() || keys > chunk_keys_)
        throw GpuError(cudaErrorInvalidValue, "chunk larger than the engine was prepared for");
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    Slot& slot = *slots_[slot_index];
    const std::size_t n = static_cast<std::size_t>(keys);
    if (record_mode_) {
        sort_records(slot, n, restore, io, times);
    } else {
        cudaStream_t stream = slot.stream.get();
        std::byte* raw = key_width_ < 4 ? slot.raw.data() : slot.keys.data();

        slot.marks[0].record(stream);
        times.read = copy_chunk_in(slot, n, key_width_, raw, io);
        slot.marks[1].record(stream);

        // Keys that come in normalised are only widened.
        map_to_sort_keys(raw, slot.keys.data(), n, order_, !normalized, stream);
        if (auto* s32 = std::get_if<DeviceSorter<std::uint32_t>>(&slot.sorter))
            s32->sort(reinterpret_cast<std::uint32_t*>(slot.keys.data()), n, stream);
        else
            std::get<DeviceSorter<std::uint64_t>>(slot.sorter).sort(reinterpret_cast<std::uint64_t*>(slot.keys.data()), n, stream);
        map_from_sort_keys(slot.keys.data(), raw, n, order_, restore, stream);
        slot.marks[2].record(stream);

        const std::size_t width = key_width_;
        times.write = copy_out(
            slot.staging, stream, n, width, [&](std::size_t first, std::size_t) { return raw + first * width; },
            slot.marks[3], io);
    }
    slot.stream.synchronize();
    times.copy_in = Event::elapsed_ms(slot.marks[0], slot.marks[1]) / 1e3;
    times.sort = Event::elapsed_ms(slot.marks[1], slot.marks[2]) / 1e3;
    times.copy_out = Event::elapsed_ms(slot.marks[2], slot.marks[3]) / 1e3;
    return times;
}

double ChunkEngine::copy_chunk_in(Slot& slot, std::size_t n, std::size_t width, std::byte* device,
                                  const ChunkCallbacks& io) {
    if (io.source && source_pinnable_)
        return copy_in_from_source(slot.staging, slot.stream.get(), n, width, device, io, source_pinnable_);
    return copy_in(slot.staging, slot.stream.get(), 0, n, width, device, io);
}

void ChunkEngine::sort_records(Slot& slot, std::size_t n, bool restore, const ChunkCallbacks& io, ChunkTimes& times) {
    cudaStream_t stream = slot.stream.get();
    const std::byte* records = slot.raw.data();
    std::uint64_t* index = slot.index.data();

    slot.marks[0].record(stream);
    times.read = copy_chunk_in(slot, n, spec_.record_size, slot.raw.data(), io);
    slot.marks[1].record(stream);

    // Sort (key, index) pairs stably. Keys of 3 or 4 words: least significant half first, then the
    // most significant half of each record in that order, carrying the permutation along (LSD).
    const unsigned words = spec_.key_words();
    if (words == 1) {
        auto* keys = reinterpret_cast<std::uint64_t*>(slot.keys.data());
        extract_record_sort_keys(records, n, spec_, nullptr, 0, true, keys, index, stream);
        std::get<DeviceSorter<std::uint64_t, std::uint64_t>>(slot.sorter).sort(keys, index, n, stream);
    } else {
        auto* keys = reinterpret_cast<Key128*>(slot.keys.data());
        auto& sorter = std::get<DeviceSorter<Key128, std::uint64_t>>(slot.sorter);
        extract_record_sort_keys(records, n, spec_, nullptr, words > 2 ? 2 : 0, false, keys, index, stream);
        sorter.sort(keys, index, n, stream);
        if (words > 2) {
            extract_record_sort_keys(records, n, spec_, index, 0, false, keys, nullptr, stream);
            sorter.sort(keys, index, n, stream);
        }
    }
    slot.marks[2].record(stream);

    // Copy out: each piece is gathered into the device piece buffer, then copied. The gathers are
    // queued on the slot's stream between the copies, so a piece is never overwritten early.
    std::byte* piece = slot.piece.data();
    times.write = copy_out(
        slot.staging, stream, n, output_width(restore),
        [&](std::size_t first, std::size_t count) {
            gather_records(records, index + first, count, spec_, !restore, piece, stream);
            return static_cast<const std::byte*>(piece);
        },
        slot.marks[3], io);
}

}  // namespace gpusort::gpu
