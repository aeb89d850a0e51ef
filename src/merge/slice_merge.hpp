// Merge by sorting slices: the runs are cut into exact slices by multi-way selection, at most
// `slice_keys` keys each, and every slice (its part of each run, one after the other, in the
// runs' order) is handed to the slice sorter (a capability of the GPU's chunk sorter) as one chunk
// that comes back sorted, keys or records in raw form, at its own place in the output. Runs of
// records give the sorter their records without the key words of their entries; the sorter is
// stable, so equal keys keep the runs' order, which is the input's. On the GPU this replaces the
// host's loser-tree merge: the device sorts a slice faster than the host's threads can merge it,
// and all runs are taken at once, so there is a single pass whatever their number. Two slots
// overlap, as in run formation. The time and bytes of each step (selection, gather, copies, sort,
// writes) go to MergeTimes (--stats).
#pragma once

#include "src/sorters/chunk_sorter.hpp"
#include "src/merge/run_slices.hpp"
#include "src/sorters/slot_pipeline.hpp"
#include "src/runs/sorted_run.hpp"

#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include <tbb/parallel_for.h>

namespace gpusort {

// write(first_key, bytes): puts sorted raw keys (records) at their place in the output.
template <class T>
void merge_by_sorting_slices(std::span<const SortedRun<T>> runs, SliceSorter& sorter, std::uint64_t slice_keys,
                             std::size_t slots,
                             const std::function<void(std::uint64_t, std::span<const std::byte>)>& write,
                             MergeTimes& times) {
    std::uint64_t total = 0;
    for (const auto& run : runs) total += run.size;
    if (total == 0) return;
    const std::uint64_t slices = (total + slice_keys - 1) / slice_keys;

    const std::size_t width = sorter.slice_width();
    RunSlices cut;
    {
        ScopedPhase phase(times.select.seconds);
        cut = cut_into_slices<T>(runs, slices);
    }

    std::mutex times_mutex;
    run_in_slots(slices, slots, [&](std::uint64_t s, std::size_t slot) {
        const auto& from = cut.split[s];
        const auto& to = cut.split[s + 1];
        ChunkIo io;
        // Position p of the slice is in the part of the first run whose parts so far reach past p.
        // The pieces of the parts that [first, first + keys) covers are copied (runs in memory) or
        // read (spilled runs) in parallel, each cut into blocks itself.
        io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
            struct Piece {
                std::size_t run;
                std::uint64_t pos;
                std::span<std::byte> into;
            };
            std::vector<Piece> pieces;
            std::span<std::byte> rest = bytes;
            std::uint64_t part_start = 0;
            for (std::size_t i = 0; i < runs.size() && !rest.empty(); ++i) {
                const std::uint64_t part = to[i] - from[i];
                if (first < part_start + part) {
                    const std::uint64_t offset = first - part_start;
                    const std::size_t count =
                        static_cast<std::size_t>(std::min<std::uint64_t>(part - offset, rest.size() / width));
                    pieces.push_back({i, from[i] + offset, rest.first(count * width)});
                    rest = rest.subspan(count * width);
                    first += count;
                }
                part_start += part;
            }
            tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t p) {
                const Piece& piece = pieces[p];
                runs[piece.run].read_tails(piece.pos, piece.into.size() / width, width, piece.into.data());
            });
        };
        io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) { write(cut.rank[s] + first, bytes); };
        const PhaseTimes t = sorter.sort_slice(slot, cut.keys(s), io);
        const std::uint64_t bytes = cut.keys(s) * width;
        std::lock_guard lock(times_mutex);
        times.gather.add(t.read, bytes);
        times.copy_in.add(t.copy_in, bytes);
        times.sort.add(t.sort, 0);
        times.copy_out.add(t.copy_out, bytes);
        times.write.add(t.write, bytes);
    });
}

}  // namespace gpusort
