// RecordOutput: stripping key words, dropping duplicates, closing the gaps.
#include "src/record_output.hpp"

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

// Records of `count` entries (stripped of their keys) at output record `record` on. Large puts
// (a sorter's pieces) are copied by several threads, isolated so that a waiting thread cannot
// pick up another merge slice meanwhile (its buffers are this thread's).
void RecordOutput::write_records(std::uint64_t record, std::span<const std::byte> entries, std::uint64_t count) {
    const std::size_t r = record_size_, e = entry_bytes_, k = key_bytes_;
    if (std::byte* mapped = output_.mapped()) {
        auto copy = [&](std::uint64_t begin, std::uint64_t end) {
            for (std::uint64_t i = begin; i != end; ++i)
                std::memcpy(mapped + (record + i) * r, entries.data() + i * e + k, r);
        };
        constexpr std::uint64_t kBlock = 16384;
        if (count < 4 * kBlock) {
            copy(0, count);
            return;
        }
        tbb::this_task_arena::isolate([&] {
            tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, count, kBlock),
                              [&](const tbb::blocked_range<std::uint64_t>& range) { copy(range.begin(), range.end()); });
        });
        return;
    }
    std::vector<std::byte> records(count * r);
    for (std::uint64_t i = 0; i < count; ++i) std::memcpy(records.data() + i * r, entries.data() + i * e + k, r);
    output_.file.write_at(record * r, records);
}

void RecordOutput::put(std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries) {
    if (slice >= slices_.size()) throw std::logic_error("RecordOutput: slice out of range");
    Slice& s = slices_[slice];
    const std::uint64_t count = entries.size() / entry_bytes_;
    if (count == 0) return;
    if (!s.started) {
        s.started = true;
        s.begin = rank;
        s.first_key.assign(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(key_bytes_));
        s.last_key.resize(key_bytes_);
    }
    if (!unique_) {
        write_records(rank, entries, count);
        s.kept = rank + count - s.begin;
        return;
    }
    // Kept entries move to the front of `entries`' copy, then go out in one write.
    thread_local std::vector<std::byte> kept;
    kept.resize(entries.size());
    std::uint64_t n = 0;
    const bool seen = rank > s.begin;
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::byte* entry = entries.data() + i * entry_bytes_;
        const std::byte* previous = i > 0 ? entry - entry_bytes_ : (seen ? s.last_key.data() : nullptr);
        if (previous && std::memcmp(previous, entry, key_bytes_) == 0) continue;
        std::memcpy(kept.data() + n * entry_bytes_, entry, entry_bytes_);
        ++n;
    }
    std::memcpy(s.last_key.data(), entries.data() + (count - 1) * entry_bytes_, key_bytes_);
    write_records(s.begin + s.kept, std::span<const std::byte>(kept.data(), n * entry_bytes_), n);
    s.kept += n;
}

// Moves `count` records from record `from` down to record `to` (to < from), front to back.
void RecordOutput::move_records(std::uint64_t from, std::uint64_t to, std::uint64_t count) {
    const std::uint64_t bytes = count * record_size_;
    if (std::byte* mapped = output_.mapped()) {
        std::memmove(mapped + to * record_size_, mapped + from * record_size_, bytes);
        return;
    }
    constexpr std::uint64_t kBlock = std::uint64_t{8} << 20;
    std::vector<std::byte> block(static_cast<std::size_t>(std::min(bytes, kBlock)));
    for (std::uint64_t done = 0; done < bytes; done += kBlock) {
        const std::size_t n = static_cast<std::size_t>(std::min(kBlock, bytes - done));
        output_.file.read_at(from * record_size_ + done, std::span<std::byte>(block.data(), n));
        output_.file.write_at(to * record_size_ + done, std::span<const std::byte>(block.data(), n));
    }
}

std::uint64_t RecordOutput::finish() {
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
