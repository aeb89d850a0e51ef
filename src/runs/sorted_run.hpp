// SortedRun: a sorted sequence of entries (a normalised key, followed by the record when records
// are sorted; or the bare records, whose keys are taken from them when read: runs of records
// merged on the device, which needs no key words) stored in a spill file or in host memory, with
// an in-memory sample (every stride-th key) that lets the merge find split points with few reads.
// RunSequence is the view of one run that the multi-way selection searches.
#pragma once

#include "io/file.hpp"
#include "io/host_buffer.hpp"
#include "io/parallel_io.hpp"
#include "io/spill_file.hpp"
#include "src/keys/key_rules.hpp"

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort {

// Bytes of entries read at once to take their keys (a thread's scratch space).
inline constexpr std::size_t kEntryPieceBytes = std::size_t{1} << 20;

// The key of an entry: its first sizeof(T) bytes, or, where `record_keys` is given (T is then a
// record's key words), the key that spec takes from the bare record.
template <class T>
T entry_key(const std::byte* entry, const FixedKeySpec* record_keys) {
    if constexpr (requires { T::word; }) {
        if (record_keys) {
            constexpr std::size_t words = sizeof(T::word) / sizeof(T::word[0]);
            return record_key<words>(reinterpret_cast<const unsigned char*>(entry), *record_keys);
        }
    }
    T key;
    std::memcpy(&key, entry, sizeof(T));
    return key;
}

template <class T>
struct SortedRun {
    // Keeps the run's spill file or host buffer alive; freed with the last run that uses it.
    std::shared_ptr<const void> storage;
    const io::SpillFile* file = nullptr;  // the run lies in this spill file ...
    const std::byte* memory = nullptr; // ... or in host memory (from where its positions count)
    std::size_t entry_bytes = sizeof(T);  // an entry: the key T, then (records) the record itself
    const FixedKeySpec* record_keys = nullptr;  // set: entries are bare records, keyed by this spec
    std::uint64_t first = 0;           // position of the run's first entry in the file or memory (entries)
    std::uint64_t size = 0;            // entries
    std::uint64_t sample_stride = 0;
    std::vector<T> samples;            // samples[s] == key at position s * sample_stride

    static SortedRun in_file(std::shared_ptr<const io::SpillFile> spill, std::uint64_t first, std::uint64_t size,
                             std::uint64_t stride, std::size_t entry_bytes = sizeof(T)) {
        SortedRun run;
        run.file = spill.get();
        run.storage = std::move(spill);
        run.set_place(first, size, stride, entry_bytes);
        return run;
    }
    static SortedRun in_memory(std::shared_ptr<const void> buffer, const std::byte* base, std::uint64_t first,
                               std::uint64_t size, std::uint64_t stride, std::size_t entry_bytes = sizeof(T)) {
        SortedRun run;
        run.storage = std::move(buffer);
        run.memory = base;
        run.set_place(first, size, stride, entry_bytes);
        return run;
    }

    // Entries [pos, ...) of a run in memory.
    const std::byte* entries_at(std::uint64_t pos) const { return memory + (first + pos) * entry_bytes; }
    void read_entries(std::uint64_t pos, std::uint64_t count, std::byte* out) const {
        if (memory)
            io::copy_parallel(out, std::span<const std::byte>(entries_at(pos), count * entry_bytes));
        else
            io::read_parallel(*file, (first + pos) * entry_bytes, std::span<std::byte>(out, count * entry_bytes));
    }
    // The last `tail` bytes of each of entries [pos, pos + count), packed into `out`: the whole
    // entries, or the records of entries that hold them (their key words left out).
    void read_tails(std::uint64_t pos, std::uint64_t count, std::size_t tail, std::byte* out) const {
        if (tail == entry_bytes) return read_entries(pos, count, out);
        const std::size_t skip = entry_bytes - tail;
        const auto copy_tails = [&](const std::byte* entries, std::uint64_t first, std::uint64_t n) {
            tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, n, 4096), [&](const tbb::blocked_range<std::uint64_t>& r) {
                for (std::uint64_t i = r.begin(); i < r.end(); ++i)
                    std::memcpy(out + (first + i) * tail, entries + i * entry_bytes + skip, tail);
            });
        };
        if (memory) return copy_tails(entries_at(pos), 0, count);
        // From the file a piece of entries at a time, read in parallel.
        const std::uint64_t piece = std::max<std::uint64_t>(1, 4 * kEntryPieceBytes / entry_bytes);
        std::vector<std::byte> entries(static_cast<std::size_t>(std::min(piece, count) * entry_bytes));
        for (std::uint64_t done = 0; done < count; done += piece) {
            const std::uint64_t n = std::min(piece, count - done);
            read_entries(pos + done, n, entries.data());
            copy_tails(entries.data(), done, n);
        }
    }
    T read_at(std::uint64_t pos) const {
        T key;
        read_range(pos, std::span<T>(&key, 1));
        return key;
    }
    // The keys of entries [pos, pos + out.size()).
    void read_range(std::uint64_t pos, std::span<T> out) const {
        if (entry_bytes == sizeof(T) && !record_keys) {
            read_entries(pos, out.size(), reinterpret_cast<std::byte*>(out.data()));
            return;
        }
        // A piece of entries at a time: a window of large records would take much memory.
        const std::size_t piece = std::max<std::size_t>(1, kEntryPieceBytes / entry_bytes);
        thread_local std::vector<std::byte> entries;
        for (std::size_t done = 0; done < out.size(); done += piece) {
            const std::size_t n = std::min(piece, out.size() - done);
            entries.resize(n * entry_bytes);
            read_entries(pos + done, n, entries.data());
            for (std::size_t i = 0; i < n; ++i) out[done + i] = entry_key<T>(entries.data() + i * entry_bytes, record_keys);
        }
    }

private:
    void set_place(std::uint64_t first_entry, std::uint64_t entries, std::uint64_t stride, std::size_t bytes) {
        first = first_entry;
        size = entries;
        sample_stride = stride;
        entry_bytes = bytes;
        samples.resize((entries + stride - 1) / stride);
    }
};

// Keys at every `stride`-th position of a sorted buffer of entries (entry_bytes each, key first,
// or bare records keyed by `record_keys`) whose first entry has position `first_pos` in its run,
// stored into samples[first_pos / stride ...].
template <class T>
void take_samples(std::span<const std::byte> entries, std::size_t entry_bytes, std::uint64_t first_pos,
                  std::uint64_t stride, std::vector<T>& samples, const FixedKeySpec* record_keys = nullptr) {
    const std::uint64_t count = entries.size() / entry_bytes;
    std::uint64_t pos = (first_pos + stride - 1) / stride * stride;
    for (; pos < first_pos + count; pos += stride)
        samples[pos / stride] = entry_key<T>(entries.data() + (pos - first_pos) * entry_bytes, record_keys);
}

// The same for a buffer of plain keys.
template <class T>
void take_samples(std::span<const T> keys, std::uint64_t first_pos, std::uint64_t stride, std::vector<T>& samples) {
    take_samples<T>(std::as_bytes(keys), sizeof(T), first_pos, stride, samples);
}

// Keeps the samples at every `stride`-th position of the run (a multiple of its stride), so that
// its samples take less memory; the run's stride becomes `stride`.
template <class T>
void thin_samples(SortedRun<T>& run, std::uint64_t stride) {
    if (stride <= run.sample_stride) return;
    const std::uint64_t step = stride / run.sample_stride;
    const std::uint64_t kept = (run.size + stride - 1) / stride;
    for (std::uint64_t i = 0; i < kept; ++i) run.samples[i] = run.samples[i * step];
    run.samples.resize(kept);
    run.samples.shrink_to_fit();
    run.sample_stride = stride;
}

// A run of `size` entries that lies in memory from `base` (a piece of a run, or another process's),
// with its samples taken from there, on all threads.
template <class T>
SortedRun<T> sampled_run_in_memory(const std::byte* base, std::uint64_t size, std::uint64_t stride,
                                   std::size_t entry_bytes = sizeof(T)) {
    SortedRun<T> run = SortedRun<T>::in_memory(nullptr, base, 0, size, stride, entry_bytes);
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, size, stride * 64), [&](const tbb::blocked_range<std::uint64_t>& r) {
        take_samples<T>(std::span<const std::byte>(base + r.begin() * entry_bytes, (r.end() - r.begin()) * entry_bytes),
                        entry_bytes, r.begin(), stride, run.samples);
    });
    return run;
}

// A sorted run as the selection sees it. first_true(lo, hi, pred) returns the first position
// in [lo, hi) whose key satisfies pred (pred is false then true along the run), or hi. It
// searches the samples first and then reads at most one stride of keys from the file.
template <class T>
class RunSequence {
public:
    explicit RunSequence(const SortedRun<T>& run) : run_(&run) {}
    using value_type = T;

    std::uint64_t size() const { return run_->size; }
    T at(std::uint64_t pos) const {
        if (pos % run_->sample_stride == 0) return run_->samples[pos / run_->sample_stride];
        return run_->read_at(pos);
    }

    template <class Pred>
    std::uint64_t first_true(std::uint64_t lo, std::uint64_t hi, Pred pred) const {
        if (lo >= hi) return lo;
        const std::uint64_t stride = run_->sample_stride;
        const auto& samples = run_->samples;
        // Samples at positions inside [lo, hi).
        const std::uint64_t s_begin = (lo + stride - 1) / stride;
        const std::uint64_t s_end = (hi + stride - 1) / stride;
        auto it = std::partition_point(samples.begin() + static_cast<std::ptrdiff_t>(s_begin),
                                       samples.begin() + static_cast<std::ptrdiff_t>(s_end),
                                       [&](const T& key) { return !pred(key); });
        const std::uint64_t s = static_cast<std::uint64_t>(it - samples.begin());
        // The answer lies after the last sample that fails and at or before the one that holds.
        const std::uint64_t from = s > s_begin ? (s - 1) * stride + 1 : lo;
        const std::uint64_t to = std::min(hi, s * stride);
        if (from >= to) return to;
        thread_local std::vector<T> window;
        window.resize(to - from);
        run_->read_range(from, window);
        auto found = std::partition_point(window.begin(), window.end(),
                                          [&](const T& key) { return !pred(key); });
        return from + static_cast<std::uint64_t>(found - window.begin());
    }

private:
    const SortedRun<T>* run_;
};

// A sorted array in memory as the selection sees it.
template <class T>
class SpanSequence {
public:
    explicit SpanSequence(std::span<const T> keys) : keys_(keys) {}
    using value_type = T;
    std::uint64_t size() const { return keys_.size(); }
    T at(std::uint64_t pos) const { return keys_[pos]; }
    template <class Pred>
    std::uint64_t first_true(std::uint64_t lo, std::uint64_t hi, Pred pred) const {
        auto it = std::partition_point(keys_.begin() + static_cast<std::ptrdiff_t>(lo),
                                       keys_.begin() + static_cast<std::ptrdiff_t>(hi),
                                       [&](const T& key) { return !pred(key); });
        return static_cast<std::uint64_t>(it - keys_.begin());
    }

private:
    std::span<const T> keys_;
};

}  // namespace gpusort
