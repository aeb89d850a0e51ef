// Run formation: the input is cut into chunks of plan.run_records keys; each chunk is read,
// normalised, sorted by the ChunkSorter and written to one spill file as a sorted run, with
// its samples kept in memory. Two chunk buffers (allocated once) let the read of chunk k+1
// overlap the sort and write of chunk k.
#pragma once

#include "io/file.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "src/chunk_sorter.hpp"
#include "src/key_normalization.hpp"
#include "src/phase_timer.hpp"
#include "src/sort_plan.hpp"
#include "src/sorted_run.hpp"

#include <memory>
#include <vector>

#include <tbb/parallel_pipeline.h>

namespace gpusort {

template <class T>
std::vector<SortedRun<T>> form_runs(const io::File& input, const SortPlan& plan, const KeyOrder& order,
                                    ChunkSorter& sorter, const std::string& tmp_dir, PhaseTimes& times) {
    const std::uint64_t total = plan.records;
    const std::uint64_t chunk = plan.run_records;
    const std::uint64_t chunks = (total + chunk - 1) / chunk;

    auto spill = std::make_shared<io::File>(io::create_temp_file(tmp_dir));
    spill->allocate(total * sizeof(T));

    // Runs and their sample arrays are laid out before the first chunk is read.
    std::vector<SortedRun<T>> runs(chunks);
    for (std::uint64_t c = 0; c < chunks; ++c) {
        runs[c].file = spill;
        runs[c].first = c * chunk;
        runs[c].size = std::min(chunk, total - c * chunk);
        runs[c].sample_stride = plan.sample_stride;
        runs[c].samples = make_sample_vector<T>(runs[c].size, plan.sample_stride);
    }
    const std::size_t buffer_count = chunks > 1 ? 2 : 1;
    std::vector<std::unique_ptr<T[]>> buffers;
    for (std::size_t b = 0; b < buffer_count; ++b)
        buffers.push_back(std::make_unique_for_overwrite<T[]>(static_cast<std::size_t>(std::min(chunk, total))));

    std::uint64_t next_chunk = 0;
    auto keys_of = [&](std::uint64_t c) {
        const std::uint64_t first = c * chunk;
        return std::span<T>(buffers[c % buffer_count].get(), static_cast<std::size_t>(std::min(chunk, total - first)));
    };
    tbb::parallel_pipeline(
        buffer_count,
        tbb::make_filter<void, std::uint64_t>(tbb::filter_mode::serial_in_order,
                                              [&](tbb::flow_control& fc) -> std::uint64_t {
                                                  if (next_chunk == chunks) {
                                                      fc.stop();
                                                      return 0;
                                                  }
                                                  const std::uint64_t c = next_chunk++;
                                                  auto keys = keys_of(c);
                                                  ScopedPhase phase(times.read);
                                                  io::read_parallel(input, c * chunk * sizeof(T),
                                                                    std::as_writable_bytes(keys));
                                                  return c;
                                              }) &
            tbb::make_filter<std::uint64_t, std::uint64_t>(
                tbb::filter_mode::serial_in_order,
                [&](std::uint64_t c) {
                    auto keys = keys_of(c);
                    ScopedPhase phase(times.sort);
                    normalize_keys(keys, order);
                    sorter.sort(keys);
                    take_samples<T>(keys, 0, plan.sample_stride, runs[c].samples);
                    return c;
                }) &
            tbb::make_filter<std::uint64_t, void>(tbb::filter_mode::serial_in_order, [&](std::uint64_t c) {
                auto keys = keys_of(c);
                ScopedPhase phase(times.write);
                io::write_parallel(*spill, c * chunk * sizeof(T), std::as_bytes(keys));
            }));
    return runs;
}

}  // namespace gpusort
