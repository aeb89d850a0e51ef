// RecordOutput: stripping key words, dropping duplicates, closing the gaps.
#include "src/output/record_output.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace gpusort {

RecordOutput::RecordOutput(const SortOutput& output, std::size_t key_bytes, std::size_t record_size, bool unique,
                           std::uint64_t slices)
    : output_(output),
      key_bytes_(key_bytes),
      record_size_(record_size),
      entry_bytes_(key_bytes + record_size),
      unique_(unique),
      slices_(slices) {}

namespace {

// Entries handled per task when a put is split among threads.
constexpr std::uint64_t kBlock = 16384;

// body(first, end) for consecutive blocks of [0, count): on this thread for a few blocks (the
// merge's puts), else on several, isolated so that a waiting thread cannot pick up another merge
// slice meanwhile (whose buffers would be this thread's).
template <class Body>
void for_blocks(std::uint64_t count, Body body) {
    const std::uint64_t blocks = (count + kBlock - 1) / kBlock;
    auto run = [&](std::uint64_t b) { body(b, b * kBlock, std::min(count, (b + 1) * kBlock)); };
    if (blocks < 4) {
        for (std::uint64_t b = 0; b < blocks; ++b) run(b);
        return;
    }
    tbb::this_task_arena::isolate([&] { tbb::parallel_for(std::uint64_t{0}, blocks, run); });
}

}  // namespace

void RecordOutput::put(std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries) {
    if (output_.sequential()) {
        put_in_order(entries);
        return;
    }
    if (slice >= slices_.size()) throw std::logic_error("RecordOutput: slice out of range");
    Slice& s = slices_[slice];
    const std::size_t r = record_size_, e = entry_bytes_, k = key_bytes_;
    const std::uint64_t count = entries.size() / e;
    if (count == 0) return;
    if (!s.started) {
        s.started = true;
        s.begin = rank;
        s.first_key.assign(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(k));
        s.last_key.resize(k);
    }
    // Entry i is kept unless (--unique) its key equals the one before it, in this put or the last.
    const std::byte* base = entries.data();
    const std::byte* last = rank > s.begin ? s.last_key.data() : nullptr;
    auto kept = [&](std::uint64_t i) {
        if (!unique_) return true;
        const std::byte* previous = i > 0 ? base + (i - 1) * e : last;
        return !previous || std::memcmp(previous, base + i * e, k) != 0;
    };
    // Where each block's kept records go: counted first, then copied, both block by block.
    const std::uint64_t blocks = (count + kBlock - 1) / kBlock;
    std::vector<std::uint64_t> offset(blocks + 1, 0);
    if (unique_) {
        for_blocks(count, [&](std::uint64_t b, std::uint64_t first, std::uint64_t end) {
            for (std::uint64_t i = first; i != end; ++i) offset[b + 1] += kept(i) ? 1 : 0;
        });
        for (std::uint64_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
    } else {
        for (std::uint64_t b = 0; b <= blocks; ++b) offset[b] = std::min(count, b * kBlock);
    }
    const std::uint64_t n = offset[blocks];
    const std::uint64_t at = unique_ ? s.begin + s.kept : rank;  // output record of the first kept one
    // Into the output's map in place, or into a buffer written at its offset.
    const auto* map = std::get_if<MappedFile>(&output_.destination());
    std::vector<std::byte> buffer(map ? 0 : n * r);
    std::byte* destination = map ? map->data + at * r : buffer.data();
    for_blocks(count, [&](std::uint64_t b, std::uint64_t first, std::uint64_t end) {
        std::uint64_t j = offset[b];
        for (std::uint64_t i = first; i != end; ++i)
            if (kept(i)) std::memcpy(destination + j++ * r, base + i * e + k, r);
    });
    if (!map) write_unmapped(at * r, buffer);
    if (output_.progress()) output_.progress()->add(n * r);
    std::memcpy(s.last_key.data(), base + (count - 1) * e, k);
    s.kept = at + n - s.begin;
}

// Moves `count` records from record `from` down to record `to` (to < from), front to back.
void RecordOutput::move_records(std::uint64_t from, std::uint64_t to, std::uint64_t count) {
    const std::uint64_t bytes = count * record_size_;
    if (const auto* map = std::get_if<MappedFile>(&output_.destination())) {
        std::byte* data = map->data;
        std::memmove(data + to * record_size_, data + from * record_size_, bytes);
        return;
    }
    // Whole records at a time (the columns of joined records are read and written by record).
    const std::uint64_t kBlock = std::max<std::uint64_t>(1, (std::uint64_t{8} << 20) / record_size_) * record_size_;
    std::vector<std::byte> block(static_cast<std::size_t>(std::min(bytes, kBlock)));
    for (std::uint64_t done = 0; done < bytes; done += kBlock) {
        const std::size_t n = static_cast<std::size_t>(std::min(kBlock, bytes - done));
        read_unmapped(from * record_size_ + done, std::span<std::byte>(block.data(), n));
        write_unmapped(to * record_size_ + done, std::span<const std::byte>(block.data(), n));
    }
}

// Bytes of the output that is not a map: a file written with pwrite, or the files of columns.
void RecordOutput::write_unmapped(std::uint64_t offset, std::span<const std::byte> bytes) {
    if (const auto* columns = std::get_if<const ColumnFiles*>(&output_.destination())) {
        (*columns)->write(offset, bytes);
        return;
    }
    const PositionalFile& to = std::get<PositionalFile>(output_.destination());
    to.file->write_at(to.base + offset, bytes);
}

void RecordOutput::read_unmapped(std::uint64_t offset, std::span<std::byte> bytes) {
    if (const auto* columns = std::get_if<const ColumnFiles*>(&output_.destination())) {
        (*columns)->read(offset, bytes);
        return;
    }
    const PositionalFile& from = std::get<PositionalFile>(output_.destination());
    from.file->read_at(from.base + offset, bytes);
}

void RecordOutput::put_in_order(std::span<const std::byte> entries) {
    const std::size_t r = record_size_, e = entry_bytes_, k = key_bytes_;
    const std::uint64_t count = entries.size() / e;
    if (count == 0) return;
    const std::byte* base = entries.data();
    std::vector<std::byte> buffer(count * r);
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::byte* previous = i > 0 ? base + (i - 1) * e : (in_order_kept_ > 0 ? last_key_.data() : nullptr);
        if (unique_ && previous && std::memcmp(previous, base + i * e, k) == 0) continue;
        std::memcpy(buffer.data() + n++ * r, base + i * e + k, r);
    }
    last_key_.assign(base + (count - 1) * e, base + (count - 1) * e + k);
    output_.write(in_order_kept_ * r, std::span<const std::byte>(buffer.data(), n * r));
    in_order_kept_ += n;
}

std::uint64_t RecordOutput::finish() {
    if (output_.sequential()) return in_order_kept_;
    std::uint64_t written = 0;
    const Slice* previous = nullptr;
    for (const Slice& s : slices_) {
        if (!s.started) continue;
        // A slice that starts with the key the one before ended with holds no new first record.
        const std::uint64_t drop = unique_ && previous && previous->last_key == s.first_key ? 1 : 0;
        const std::uint64_t count = s.kept - drop;
        if (count > 0 && s.begin + drop != written) move_records(s.begin + drop, written, count);
        written += count;
        previous = &s;
    }
    return written;
}

}  // namespace gpusort
