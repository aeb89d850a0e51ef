// Run formation: the input is cut into chunks of plan.run_records records; the ChunkSorter sorts
// each (two at once, in its two slots, so one chunk is read while the other is sorted and
// written) and its sorted entries (normalised keys, each followed by its record when records
// are sorted: plan.entry_bytes bytes per entry) become a run: in one spill file, or in one host
// buffer when plan.runs_kept_in_memory. Every sample_stride-th key of each run is kept in memory.
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

// input_width: bytes per record of the input. `into`, when given (plan.records entries long), holds
// the runs instead of a host buffer of their own or a spill file: memory the caller owns.
template <class T>
std::vector<SortedRun<T>> form_runs(const ReadAt& read, std::size_t input_width, const SortPlan& plan,
                                    ChunkSorter& sorter, const std::string& tmp_dir, PhaseTimes& times,
                                    ProgressCounters* progress = nullptr, std::span<std::byte> into = {}) {
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
        spill = std::make_shared<io::SpillFile>(tmp_dir, plan.spill_files, plan.spill_piece());
        spill->allocate(0, total * entry);
    }
    std::vector<SortedRun<T>> runs;
    for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t size = std::min(chunk, total - c * chunk);
        runs.push_back(memory ? SortedRun<T>::in_memory(buffer, memory, c * chunk, size, plan.sample_stride, entry)
                              : SortedRun<T>::in_file(spill, c * chunk, size, plan.sample_stride, entry));
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
            take_samples<T>(bytes, entry, first, plan.sample_stride, run.samples);
            const std::uint64_t at = (run.first + first) * entry;
            store_counted(bytes, entry, input_width, progress, plan.threads, [&](std::uint64_t offset, std::span<const std::byte> piece) {
                if (memory)
                    io::copy_parallel(memory + at + offset, piece);
                else
                    io::write_parallel(*spill, at + offset, piece);
            });
        };
        const PhaseTimes chunk_times = sorter.sort_run(slot, run.size, chunk_io);
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

// Runs from a stream. `pre_read` chunks are already in the buffers (slot 0, then 1); the rest
// are read as the slots free up. Every run goes into one spill file that grows run by run. The
// runs take plan.sample_stride until their samples would outgrow plan.sample_memory; then the
// stride doubles, and the runs already formed keep every other sample.
template <class T>
std::vector<SortedRun<T>> form_runs_from_stream(StreamChunks& chunks, std::size_t pre_read,
                                                const std::function<std::size_t(std::span<std::byte>)>& read_next,
                                                const SortPlan& plan, ChunkSorter& sorter, const std::string& tmp_dir,
                                                PhaseTimes& times, ProgressCounters* progress = nullptr) {
    const std::size_t entry = plan.entry_bytes;
    auto spill = std::make_shared<io::SpillFile>(tmp_dir, plan.spill_files, plan.spill_piece());
    std::vector<std::unique_ptr<SortedRun<T>>> runs;
    std::vector<bool> formed;  // runs whose samples are all taken (guarded by the mutex below)
    std::uint64_t stride = plan.sample_stride;
    sorter.prepare(2, chunks.chunk_records, plan.chunk_memory);
    // The stride for a new run of n entries: doubled (and the formed runs thinned out) while all the
    // samples would take more than the plan's share, up to one sample per chunk.
    auto stride_for = [&](std::uint64_t n) {
        auto sample_bytes = [&] {
            std::uint64_t bytes = (n + stride - 1) / stride * sizeof(T);
            for (const auto& run : runs) bytes += run->samples.size() * sizeof(T);
            return bytes;
        };
        while (sample_bytes() > plan.sample_memory && stride < chunks.chunk_records) {
            stride *= 2;
            for (std::size_t r = 0; r < runs.size(); ++r)
                if (formed[r]) thin_samples(*runs[r], stride);
        }
        return stride;
    };

    struct Chunk {
        SortedRun<T>* run = nullptr;
        std::size_t index = 0;  // of the run
        std::size_t slot = 0;
    };
    std::uint64_t next = 0, position = 0;
    std::mutex mutex;  // guards free_slots, times, formed and the samples of formed runs
    // Chunks may finish out of order (a thread waiting inside one chunk's sort can run the other
    // chunk to its end), so a chunk takes whichever slot is free, not c % 2; the chunks already
    // read lie in slots 0 and 1 and take those (chunk 0 may be done before chunk 1 starts).
    std::vector<std::size_t> free_slots = {1, 0};
    tbb::parallel_pipeline(
        2,
        tbb::make_filter<void, Chunk>(tbb::filter_mode::serial_in_order,
                                      [&](tbb::flow_control& fc) -> Chunk {
                                          std::size_t slot;
                                          {
                                              std::lock_guard lock(mutex);
                                              // A chunk already read is in its own slot (free: it was never used);
                                              // else any slot is free: at most two chunks are in flight.
                                              auto it = next < pre_read
                                                            ? std::find(free_slots.begin(), free_slots.end(), next)
                                                            : free_slots.end() - 1;
                                              slot = *it;
                                              free_slots.erase(it);
                                          }
                                          std::uint64_t n = chunks.records[slot];
                                          if (next >= pre_read) {
                                              double seconds = 0;
                                              {
                                                  ScopedPhase phase(seconds);
                                                  n = chunks.fill(slot, read_next);
                                              }
                                              std::lock_guard lock(mutex);
                                              times.read += seconds;
                                          }
                                          if (n == 0) {
                                              fc.stop();
                                              return {};
                                          }
                                          spill->allocate(position * entry, n * entry);
                                          {
                                              std::lock_guard lock(mutex);
                                              runs.push_back(std::make_unique<SortedRun<T>>(
                                                  SortedRun<T>::in_file(spill, position, n, stride_for(n), entry)));
                                              formed.push_back(false);
                                          }
                                          position += n;
                                          ++next;
                                          return Chunk{runs.back().get(), runs.size() - 1, slot};
                                      }) &
            tbb::make_filter<Chunk, void>(tbb::filter_mode::parallel, [&](Chunk c) {
                SortedRun<T>& run = *c.run;
                const std::byte* data = chunks.buffers[c.slot].data();
                ChunkIo chunk_io;
                chunk_io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
                    io::copy_parallel(bytes.data(), std::span<const std::byte>(data + first * chunks.input_width, bytes.size()));
                };
                chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
                    take_samples<T>(bytes, entry, first, run.sample_stride, run.samples);
                    const std::uint64_t at = (run.first + first) * entry;
                    store_counted(bytes, entry, chunks.input_width, progress, plan.threads,
                                  [&](std::uint64_t offset, std::span<const std::byte> piece) {
                                      io::write_parallel(*spill, at + offset, piece);
                                  });
                };
                const PhaseTimes chunk_times = sorter.sort_run(c.slot, run.size, chunk_io);
                std::lock_guard lock(mutex);
                times += chunk_times;
                formed[c.index] = true;
                free_slots.push_back(c.slot);
            }));
    std::vector<SortedRun<T>> result;
    for (auto& run : runs) result.push_back(std::move(*run));
    return result;
}

}  // namespace gpusort
