// Run formation: the input is cut into chunks of plan.run_records records; the ChunkSorter sorts
// each (two at once, in its two slots, so one chunk is read while the other is sorted and
// written) and its sorted entries (normalised keys, each followed by its record when records
// are sorted: plan.entry_bytes bytes per entry; or, given `record_keys`, the bare sorted records,
// whose keys that spec takes from them) become a run: in one spill file, or in one host buffer
// when plan.runs_kept_in_memory. Every sample_stride-th key of each run is kept in memory.
// form_runs reads a file of known size at any offsets; form_runs_from_stream reads a stream of
// unknown size front to back into two host buffers, one chunk after the other, and spills each
// run as it comes, thinning the samples out as the stream grows to keep them within the plan's.
// Both count progress (when given) as the sorted runs are stored, in the input's bytes.
#pragma once

#include "io/file.hpp"
#include "io/parallel_io.hpp"
#include "io/spill_file.hpp"
#include "src/sorters/chunk_sorter.hpp"
#include "io/host_buffer.hpp"
#include "src/sorters/slot_pipeline.hpp"
#include "gpusort/progress.hpp"
#include "gpusort/sort_plan.hpp"
#include "src/plan/merge_plan.hpp"
#include "src/runs/sorted_run.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <vector>

#include <tbb/parallel_pipeline.h>

namespace gpusort {

// Reads input bytes [offset, offset + size) (from any thread).
using ReadAt = std::function<void(std::uint64_t offset, std::span<std::byte> bytes)>;

// Stores sorted entries through store(offset, piece): at once, or with `progress`, piece by piece,
// each counted as the input bytes it came from.
inline void store_counted(std::span<const std::byte> entries, std::size_t entry, std::size_t input_width,
                          ProgressCounters* progress, unsigned threads,
                          const std::function<void(std::uint64_t offset, std::span<const std::byte> piece)>& store) {
    const std::size_t piece_bytes = io::progress_piece_bytes(progress != nullptr, threads, entries.size());
    io::for_each_piece(entries, entry, piece_bytes, [&](std::size_t offset, std::span<const std::byte> piece) {
        store(offset, piece);
        if (progress) progress->add(piece.size() / entry * input_width);
    });
}

// A run's sorted chunk: its entries (sort_run), or its bare records where they are keyed so.
inline PhaseTimes sort_into_run(ChunkSorter& sorter, const FixedKeySpec* record_keys, std::size_t slot,
                                std::uint64_t records, const ChunkIo& io) {
    return record_keys ? sorter.sort_chunk(slot, records, io) : sorter.sort_run(slot, records, io);
}

// input_width: bytes per record of the input. `into`, when given (plan.records entries long), holds
// the runs instead of a host buffer of their own or a spill file: memory the caller owns.
template <class T>
std::vector<SortedRun<T>> form_runs(const ReadAt& read, std::size_t input_width, const SortPlan& plan,
                                    ChunkSorter& sorter, const FixedKeySpec* record_keys, const std::string& tmp_dir,
                                    PhaseTimes& times, ProgressCounters* progress = nullptr,
                                    std::span<std::byte> into = {}) {
    const std::size_t entry = plan.entry_bytes;
    const std::uint64_t total = plan.records;
    const std::uint64_t chunk = plan.run_records;
    const std::uint64_t chunks = (total + chunk - 1) / chunk;

    // Runs and their sample arrays are laid out before the first chunk is read.
    std::shared_ptr<io::SpillFile> spill;
    std::shared_ptr<io::HostBuffer> buffer;
    std::byte* memory = into.data();
    if (!into.empty()) {
        if (into.size() != total * entry) throw std::logic_error("form_runs: the memory given does not fit the runs");
    } else if (plan.runs_kept_in_memory) {
        buffer = std::make_shared<io::HostBuffer>(static_cast<std::size_t>(total * entry));
        memory = buffer->data();
    } else {
        spill = std::make_shared<io::SpillFile>(tmp_dir, plan.spill_files, spill_piece(plan));
        spill->allocate(0, total * entry);
    }
    std::vector<SortedRun<T>> runs;
    for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t size = std::min(chunk, total - c * chunk);
        runs.push_back(memory ? SortedRun<T>::in_memory(buffer, memory, c * chunk, size, plan.sample_stride, entry)
                              : SortedRun<T>::in_file(spill, c * chunk, size, plan.sample_stride, entry));
        runs.back().record_keys = record_keys;
    }
    const std::size_t slots = chunks > 1 ? 2 : 1;
    sorter.prepare(slots, std::min(chunk, total), plan.chunk_memory);

    std::mutex times_mutex;
    run_in_slots(chunks, slots, [&](std::uint64_t c, std::size_t slot) {
        SortedRun<T>& run = runs[c];
        ChunkIo chunk_io;
        chunk_io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
            read((run.first + first) * input_width, bytes);
        };
        chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
            take_samples<T>(bytes, entry, first, plan.sample_stride, run.samples, record_keys);
            const std::uint64_t at = (run.first + first) * entry;
            store_counted(bytes, entry, input_width, progress, plan.threads, [&](std::uint64_t offset, std::span<const std::byte> piece) {
                if (memory)
                    io::copy_parallel(memory + at + offset, piece);
                else
                    io::write_parallel(*spill, at + offset, piece);
            });
        };
        const PhaseTimes chunk_times = sort_into_run(sorter, record_keys, slot, run.size, chunk_io);
        std::lock_guard lock(times_mutex);
        times += chunk_times;
    });
    return runs;
}

// The chunks of a stream, read in turn into two host buffers of chunk_records records each.
// read_next(buffer) fills a buffer as far as the stream goes and returns the bytes placed.
struct StreamChunks {
    StreamChunks(std::size_t width, std::uint64_t chunk_records)
        : input_width(width), chunk_records(chunk_records) {
        for (auto& b : buffers) b = io::HostBuffer(static_cast<std::size_t>(chunk_records * width));
    }
    // Reads the next chunk into `slot`'s buffer; returns its records (0 at the end of the stream).
    std::uint64_t fill(std::size_t slot, const std::function<std::size_t(std::span<std::byte>)>& read_next) {
        records[slot] = read_next(std::span<std::byte>(buffers[slot].data(), buffers[slot].size())) / input_width;
        return records[slot];
    }
    std::size_t input_width;
    std::uint64_t chunk_records;
    io::HostBuffer buffers[2];
    std::uint64_t records[2] = {0, 0};
};

namespace detail {

// The state of run formation from a stream, and its two steps: take the next chunk (read into a
// free slot, unless it was read already) and lay out its run; sort the chunk into its run.
template <class T>
class StreamRunFormation {
public:
    StreamRunFormation(StreamChunks& chunks, std::size_t pre_read, const std::function<std::size_t(std::span<std::byte>)>& read_next,
                       const SortPlan& plan, ChunkSorter& sorter, const FixedKeySpec* record_keys, const std::string& tmp_dir,
                       PhaseTimes& times, ProgressCounters* progress)
        : chunks_(chunks), pre_read_(pre_read), read_next_(read_next), plan_(plan), sorter_(sorter), record_keys_(record_keys),
          times_(times),
          progress_(progress), spill_(std::make_shared<io::SpillFile>(tmp_dir, plan.spill_files, spill_piece(plan))),
          stride_(plan.sample_stride) {}

    struct Chunk {
        SortedRun<T>* run = nullptr;
        std::size_t index = 0;  // of the run
        std::size_t slot = 0;
    };

    // The next chunk in a free slot, its run laid out in the spill file; stops at the stream's end.
    Chunk next_chunk(tbb::flow_control& fc) {
        const std::size_t slot = take_slot();
        std::uint64_t n = chunks_.records[slot];
        if (next_ >= pre_read_) {
            double seconds = 0;
            {
                ScopedPhase phase(seconds);
                n = chunks_.fill(slot, read_next_);
            }
            std::lock_guard lock(mutex_);
            times_.read += seconds;
        }
        if (n == 0) {
            fc.stop();
            return {};
        }
        const std::size_t entry = plan_.entry_bytes;
        spill_->allocate(position_ * entry, n * entry);
        {
            std::lock_guard lock(mutex_);
            runs_.push_back(std::make_unique<SortedRun<T>>(SortedRun<T>::in_file(spill_, position_, n, stride_for(n), entry)));
            runs_.back()->record_keys = record_keys_;
            formed_.push_back(false);
        }
        position_ += n;
        ++next_;
        return Chunk{runs_.back().get(), runs_.size() - 1, slot};
    }

    // Sorts a chunk into its run, taking its samples, and frees its slot.
    void sort_chunk(Chunk c) {
        SortedRun<T>& run = *c.run;
        const std::size_t entry = plan_.entry_bytes;
        const std::byte* data = chunks_.buffers[c.slot].data();
        ChunkIo chunk_io;
        chunk_io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
            io::copy_parallel(bytes.data(), std::span<const std::byte>(data + first * chunks_.input_width, bytes.size()));
        };
        chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
            take_samples<T>(bytes, entry, first, run.sample_stride, run.samples, record_keys_);
            const std::uint64_t at = (run.first + first) * entry;
            store_counted(bytes, entry, chunks_.input_width, progress_, plan_.threads,
                          [&](std::uint64_t offset, std::span<const std::byte> piece) {
                              io::write_parallel(*spill_, at + offset, piece);
                          });
        };
        const PhaseTimes chunk_times = sort_into_run(sorter_, record_keys_, c.slot, run.size, chunk_io);
        std::lock_guard lock(mutex_);
        times_ += chunk_times;
        formed_[c.index] = true;
        free_slots_.push_back(c.slot);
    }

    std::vector<SortedRun<T>> runs() {
        std::vector<SortedRun<T>> result;
        for (auto& run : runs_) result.push_back(std::move(*run));
        return result;
    }

private:
    // A chunk already read is in its own slot (free: it was never used); else any slot is free: at
    // most two chunks are in flight.
    std::size_t take_slot() {
        std::lock_guard lock(mutex_);
        auto it = next_ < pre_read_ ? std::find(free_slots_.begin(), free_slots_.end(), next_) : free_slots_.end() - 1;
        const std::size_t slot = *it;
        free_slots_.erase(it);
        return slot;
    }

    // The stride for a new run of n entries: doubled (and the formed runs thinned out) while all the
    // samples would take more than the plan's share, up to one sample per chunk.
    std::uint64_t stride_for(std::uint64_t n) {
        auto sample_bytes = [&] {
            std::uint64_t bytes = (n + stride_ - 1) / stride_ * sizeof(T);
            for (const auto& run : runs_) bytes += run->samples.size() * sizeof(T);
            return bytes;
        };
        while (sample_bytes() > plan_.sample_memory && stride_ < chunks_.chunk_records) {
            stride_ *= 2;
            for (std::size_t r = 0; r < runs_.size(); ++r)
                if (formed_[r]) thin_samples(*runs_[r], stride_);
        }
        return stride_;
    }

    StreamChunks& chunks_;
    std::size_t pre_read_;
    const std::function<std::size_t(std::span<std::byte>)>& read_next_;
    const SortPlan& plan_;
    ChunkSorter& sorter_;
    const FixedKeySpec* record_keys_;
    PhaseTimes& times_;
    ProgressCounters* progress_;
    std::shared_ptr<io::SpillFile> spill_;  // every run, growing run by run
    std::vector<std::unique_ptr<SortedRun<T>>> runs_;
    std::vector<bool> formed_;  // runs whose samples are all taken (guarded by mutex_)
    std::uint64_t stride_;
    std::uint64_t next_ = 0, position_ = 0;  // the next chunk, and its first record in the stream
    std::mutex mutex_;  // guards free_slots_, times_, formed_ and the samples of formed runs
    // Chunks may finish out of order (a thread waiting inside one chunk's sort can run the other
    // chunk to its end), so a chunk takes whichever slot is free, not c % 2; the chunks already
    // read lie in slots 0 and 1 and take those (chunk 0 may be done before chunk 1 starts).
    std::vector<std::size_t> free_slots_ = {1, 0};
};

}  // namespace detail

// Runs from a stream. `pre_read` chunks are already in the buffers (slot 0, then 1); the rest
// are read as the slots free up. Every run goes into one spill file that grows run by run. The
// runs take plan.sample_stride until their samples would outgrow plan.sample_memory; then the
// stride doubles, and the runs already formed keep every other sample.
template <class T>
std::vector<SortedRun<T>> form_runs_from_stream(StreamChunks& chunks, std::size_t pre_read,
                                                const std::function<std::size_t(std::span<std::byte>)>& read_next,
                                                const SortPlan& plan, ChunkSorter& sorter, const FixedKeySpec* record_keys,
                                                const std::string& tmp_dir, PhaseTimes& times,
                                                ProgressCounters* progress = nullptr) {
    using Formation = detail::StreamRunFormation<T>;
    Formation formation(chunks, pre_read, read_next, plan, sorter, record_keys, tmp_dir, times, progress);
    sorter.prepare(2, chunks.chunk_records, plan.chunk_memory);
    tbb::parallel_pipeline(
        2,
        tbb::make_filter<void, typename Formation::Chunk>(
            tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) { return formation.next_chunk(fc); }) &
            tbb::make_filter<typename Formation::Chunk, void>(
                tbb::filter_mode::parallel, [&](typename Formation::Chunk c) { formation.sort_chunk(c); }));
    return formation.runs();
}

}  // namespace gpusort
