// Run formation: the input is cut into chunks of plan.run_records records; the ChunkSorter sorts
// each (two at once, in its two slots, so one chunk is read while the other is sorted and
// written) and its sorted entries (normalised keys, each followed by its record when records
// are sorted: plan.record_size bytes per entry) become a run: in one spill file, or in one host
// buffer when plan.runs_in_memory. Every sample_stride-th key of each run is kept in memory.
#pragma once

#include "io/file.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "src/chunk_sorter.hpp"
#include "src/host_buffer.hpp"
#include "src/slot_pipeline.hpp"
#include "src/sort_plan.hpp"
#include "src/sorted_run.hpp"

#include <memory>
#include <mutex>
#include <vector>


namespace gpusort {

// input_width: bytes per record of the input.
template <class T>
std::vector<SortedRun<T>> form_runs(const io::File& input, std::size_t input_width, const SortPlan& plan,
                                    ChunkSorter& sorter, const std::string& tmp_dir, PhaseTimes& times) {
    const std::size_t entry = plan.record_size;
    const std::uint64_t total = plan.records;
    const std::uint64_t chunk = plan.run_records;
    const std::uint64_t chunks = (total + chunk - 1) / chunk;

    // Runs and their sample arrays are laid out before the first chunk is read.
    std::shared_ptr<io::File> spill;
    std::shared_ptr<HostBuffer> memory;
    if (plan.runs_in_memory) {
        memory = std::make_shared<HostBuffer>(static_cast<std::size_t>(total * entry));
    } else {
        spill = std::make_shared<io::File>(io::create_temp_file(tmp_dir));
        spill->allocate(total * entry);
    }
    std::vector<SortedRun<T>> runs;
    for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t size = std::min(chunk, total - c * chunk);
        runs.push_back(memory ? SortedRun<T>::in_memory(memory, memory->data(), c * chunk, size, plan.sample_stride, entry)
                              : SortedRun<T>::in_file(spill, c * chunk, size, plan.sample_stride, entry));
    }
    const std::size_t slots = chunks > 1 ? 2 : 1;
    sorter.prepare(slots, std::min(chunk, total));

    std::mutex times_mutex;
    run_in_slots(chunks, slots, [&](std::uint64_t c, std::size_t slot) {
        SortedRun<T>& run = runs[c];
        ChunkIo chunk_io;
        chunk_io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
            io::read_parallel(input, (run.first + first) * input_width, bytes);
        };
        chunk_io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
            take_samples<T>(bytes, entry, first, plan.sample_stride, run.samples);
            if (memory)
                copy_parallel(memory->data() + (run.first + first) * entry, bytes);
            else
                io::write_parallel(*spill, (run.first + first) * entry, bytes);
        };
        const PhaseTimes chunk_times = sorter.sort_chunk(slot, run.size, ChunkForm::raw_to_normalized, chunk_io);
        std::lock_guard lock(times_mutex);
        times += chunk_times;
    });
    return runs;
}

}  // namespace gpusort
