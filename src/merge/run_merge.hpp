// The k-way merge of sorted runs (of keys, or of entries of key and record). One merge cuts its output into equal slices by exact
// multi-way selection; TBB tasks merge the slices independently, each with a loser tree over
// buffered reads of its part of every run (each run's next block read ahead on threads of its
// own), and write each slice at its own output offset.
// A sequential output (a stream) takes the slices in order instead: smaller slices are merged
// into buffers by several tasks at once and handed on one after the other.
// merge_to_fan_in() runs the intermediate passes that bring the number of runs down to what
// one merge can read at once.
#pragma once

#include "io/file.hpp"
#include "io/read_ahead.hpp"
#include "io/spill_file.hpp"
#include "src/merge/loser_tree.hpp"
#include "gpusort/progress.hpp"
#include "src/merge/run_slices.hpp"
#include "gpusort/sort_plan.hpp"
#include "src/plan/merge_plan.hpp"
#include "src/runs/sorted_run.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <tbb/concurrent_queue.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace gpusort {

// A block of merged entries handed on: `slice` is the output slice they belong to, `rank` the
// output rank of the first.
using BlockPut = std::function<void(std::uint64_t slice, std::uint64_t rank, std::span<const std::byte> entries)>;

// Where a merge writes, one of:
namespace merge_into {
// Entry r at base + r * entry_bytes: an output's memory map, or a buffer of the merge.
struct Memory {
    std::byte* base;
    ProgressCounters* progress = nullptr;  // counts the bytes merged, when set
};
// Entry r at byte (first + r) * entry_bytes of `file`, by positional writes.
struct File {
    const io::File* file;
    std::uint64_t first = 0;
    ProgressCounters* progress = nullptr;  // counts the bytes written, when set
};
// Each full buffer of merged entries to put, from several tasks at once (a slice's in order).
struct Blocks {
    BlockPut put;
};
// Whole slices to put, one at a time, in output order: a stream.
struct Stream {
    BlockPut put;
};
}  // namespace merge_into
using MergeInto = std::variant<merge_into::Memory, merge_into::File, merge_into::Blocks, merge_into::Stream>;

template <class T>
struct MergeTarget {
    MergeInto into;
    // Plain keys: maps each buffer of keys back to their raw form just before it is written;
    // empty: they stay normalised.
    std::function<void(std::span<T>)> restore = {};
};

// Sampling as a wrapper around a put: the key of every stride-th entry (by output rank) goes to
// its place in `samples` (sized for the whole output), then the block goes on to `put`.
template <class T>
BlockPut sampled(std::vector<T>& samples, std::uint64_t stride, std::size_t entry_bytes, BlockPut put) {
    return [&samples, stride, entry_bytes, put = std::move(put)](std::uint64_t slice, std::uint64_t rank,
                                                                 std::span<const std::byte> entries) {
        take_samples<T>(entries, entry_bytes, rank, stride, samples);
        put(slice, rank, entries);
    };
}

namespace detail {

// Read buffers one merge task needs: one per run in a file (runs in memory are read in place),
// plus one for the output unless it is written straight into the output's memory map.
template <class T>
std::size_t merge_buffers(std::span<const SortedRun<T>> runs, const MergeTarget<T>& target) {
    std::size_t buffers = std::holds_alternative<merge_into::Memory>(target.into) ? 0 : 1;
    for (const auto& run : runs) buffers += run.memory ? 0 : 1;
    return buffers;
}

// A merge's cursor over its part [next, end) of one run. A run in a file is read a block at a
// time into one half of its buffer while the other half is merged: the next block is started on
// `read_ahead` as soon as the last one is taken.
template <class T>
class RunCursor {
public:
    // `buffer` holds `buffer_entries` entries (unused for a run in memory).
    RunCursor(const SortedRun<T>& run, std::uint64_t from, std::uint64_t to, std::byte* buffer,
              std::size_t buffer_entries, io::ReadAhead* read_ahead)
        : run_(&run), next_(from), end_(to), read_ahead_(buffer_entries >= 2 ? read_ahead : nullptr) {
        block_ = read_ahead_ ? buffer_entries / 2 : buffer_entries;
        buffers_[0] = buffer;
        buffers_[1] = buffer ? buffer + block_ * run.entry_bytes : nullptr;
    }
    RunCursor(RunCursor&&) = default;
    // A read still in flight writes into the buffer: it must end before the buffer goes.
    ~RunCursor() {
        if (ahead_.valid()) ahead_.wait();
    }

    bool exhausted() const { return next_ == end_ && !ahead_.valid(); }
    // The entries now at hand, and how many.
    const std::byte* entries() const { return entries_; }
    std::size_t length() const { return length_; }

    // Takes the next entries: in place for a run in memory; else the block read ahead (or read
    // now), starting the read of the one after it.
    void refill() {
        if (run_->memory) {
            entries_ = run_->entries_at(next_);
            length_ = static_cast<std::size_t>(end_ - next_);
            next_ = end_;
            return;
        }
        if (ahead_.valid()) {
            ahead_.get();
            std::swap(buffers_[0], buffers_[1]);
            length_ = ahead_length_;
        } else {
            length_ = take_block();
            run_->read_entries(next_ - length_, length_, buffers_[0]);
        }
        entries_ = buffers_[0];
        if (read_ahead_ && next_ < end_) {
            ahead_length_ = take_block();
            ahead_ = read_ahead_->start([run = run_, pos = next_ - ahead_length_, n = ahead_length_, into = buffers_[1]] {
                run->read_entries(pos, n, into);
            });
        }
    }

private:
    // The next block's length; its entries count as taken.
    std::size_t take_block() {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(block_, end_ - next_));
        next_ += n;
        return n;
    }

    const SortedRun<T>* run_;
    std::uint64_t next_;  // next run position not yet read (or being read ahead)
    std::uint64_t end_;
    io::ReadAhead* read_ahead_;
    std::size_t block_ = 0;
    std::byte* buffers_[2] = {};  // [0]: the block at hand; [1]: the block read ahead
    const std::byte* entries_ = nullptr;
    std::size_t length_ = 0;
    std::future<void> ahead_;
    std::size_t ahead_length_ = 0;
};

// A merge's cursor over one run's part, and the entry at hand in its block.
template <class T>
struct SliceCursor {
    RunCursor<T> run;
    std::size_t index = 0;  // of the entry at hand

    T key(std::size_t entry) const {
        T key;
        std::memcpy(&key, run.entries() + index * entry, sizeof(T));
        return key;
    }
};

// Opens a cursor on each run's part [from[i], to[i]) (a run in a file reads through the next of the
// read buffers laid one after the other from `workspace`) and builds the loser tree over their first
// keys. Returns the memory after the read buffers.
template <class T>
std::byte* open_cursors(std::span<const SortedRun<T>> runs, const std::vector<std::uint64_t>& from,
                        const std::vector<std::uint64_t>& to, std::size_t entry, std::byte* workspace,
                        std::size_t buffer_entries, io::ReadAhead* read_ahead, std::vector<SliceCursor<T>>& cursors,
                        LoserTree<T>& tree) {
    cursors.reserve(runs.size());
    std::byte* next_buffer = workspace;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::byte* buffer = nullptr;
        if (!runs[i].memory) {
            buffer = next_buffer;
            next_buffer += buffer_entries * entry;
        }
        cursors.push_back({RunCursor<T>(runs[i], from[i], to[i], buffer, buffer_entries, read_ahead)});
        if (from[i] < to[i]) {
            cursors[i].run.refill();
            tree.set_head(i, cursors[i].key(entry));
        } else {
            tree.set_done(i);
        }
    }
    tree.build();
    return next_buffer;
}

// Merges output ranks [rank_begin, ...) of slice `slice`, whose parts of run i are
// [from[i], to[i]). kPlain: the entries are the keys themselves (entry_bytes == sizeof(T)).
template <class T, bool kPlain>
void merge_slice(std::span<const SortedRun<T>> runs, const std::vector<std::uint64_t>& from,
                 const std::vector<std::uint64_t>& to, std::uint64_t slice, std::uint64_t rank_begin,
                 const MergeTarget<T>& target, std::byte* workspace, std::size_t buffer_entries,
                 io::ReadAhead* read_ahead) {
    const std::size_t entry = kPlain ? sizeof(T) : runs[0].entry_bytes;
    std::vector<SliceCursor<T>> cursors;
    LoserTree<T> tree(runs.size());
    std::byte* const next_buffer = open_cursors<T>(runs, from, to, entry, workspace, buffer_entries, read_ahead, cursors, tree);

    // Output goes in blocks of buffer_entries: straight into memory, or through a buffer.
    const auto* memory = std::get_if<merge_into::Memory>(&target.into);
    const auto* file = std::get_if<merge_into::File>(&target.into);
    const auto* blocks = std::get_if<merge_into::Blocks>(&target.into);
    if (!memory && !file && !blocks) throw std::logic_error("merge_slice: a stream takes whole slices");
    ProgressCounters* const progress = memory ? memory->progress : file ? file->progress : nullptr;
    std::uint64_t written = rank_begin;  // output rank of out[0]
    std::byte* out = memory ? memory->base + written * entry : next_buffer;
    std::size_t filled = 0;
    auto flush = [&] {
        std::span<std::byte> entries(out, filled * entry);
        if constexpr (kPlain)
            if (target.restore) target.restore(std::span<T>(reinterpret_cast<T*>(out), filled));
        if (blocks)
            blocks->put(slice, written, entries);
        else if (file)
            file->file->write_at((file->first + written) * entry, entries);
        if (progress) progress->add(entries.size());
        written += filled;
        filled = 0;
        if (memory) out = memory->base + written * entry;
    };

    while (!tree.all_done()) {
        const std::size_t w = tree.winner();
        SliceCursor<T>& c = cursors[w];
        if constexpr (kPlain)
            reinterpret_cast<T*>(out)[filled++] = tree.winner_key();
        else
            std::memcpy(out + filled++ * entry, c.run.entries() + c.index * entry, entry);
        if (filled == buffer_entries) flush();
        if (++c.index == c.run.length()) {
            if (c.run.exhausted()) {
                tree.winner_done();
                continue;
            }
            c.run.refill();
            c.index = 0;
        }
        tree.replace_winner(c.key(entry));
    }
    if (filled > 0) flush();
}

// Slices of one merge, each merged by merge_slice over the same runs with the same buffers.
template <class T>
struct SliceMerge {
    std::span<const SortedRun<T>> runs;
    std::size_t buffer_entries;  // per read buffer, and per output buffer
    io::ReadAhead* read_ahead;   // null: no run is in a file

    // Merges slice s of `cut` into `to` from output rank `rank`, with the task's `workspace`.
    // Isolated: a thread that waits inside a slice for parallel work of its own (target.restore maps
    // keys back with parallel_for) must not start another slice meanwhile, which would take the
    // same thread's workspace and overwrite the read buffers of the slice it interrupted.
    void operator()(const RunSlices& cut, std::uint64_t s, const MergeTarget<T>& to, std::uint64_t rank,
                    std::byte* workspace) const {
        tbb::this_task_arena::isolate([&] {
            if (runs[0].entry_bytes == sizeof(T))
                merge_slice<T, true>(runs, cut.split[s], cut.split[s + 1], s, rank, to, workspace, buffer_entries, read_ahead);
            else
                merge_slice<T, false>(runs, cut.split[s], cut.split[s + 1], s, rank, to, workspace, buffer_entries, read_ahead);
        });
    }
};

// Each task's workspace: its read buffers and its output buffer, whole keys of T at the start
// (plain merges store keys there).
template <class T>
using Workspaces = tbb::enumerable_thread_specific<std::unique_ptr<T[]>>;

template <class T>
std::byte* local_workspace(Workspaces<T>& workspaces) {
    return reinterpret_cast<std::byte*>(workspaces.local().get());
}

// The slices of a merge: as merge_slices(plan) has it, and for a stream at least as many as keep
// each within plan.in_order_slice_bytes.
inline std::uint64_t slice_count(const SortPlan& plan, std::uint64_t total, std::size_t entry, bool stream) {
    const std::uint64_t slice_bytes = plan.in_order_slice_bytes;
    return stream ? std::max(merge_slices(plan, total), (total * entry + slice_bytes - 1) / slice_bytes)
                  : merge_slices(plan, total);
}

// Every slice merged by the tasks at once, each written at its own output ranks.
template <class T>
void merge_slices_at_once(const SliceMerge<T>& merge, const RunSlices& cut, std::uint64_t slices,
                          const MergeTarget<T>& target, Workspaces<T>& workspaces) {
    tbb::parallel_for(
        tbb::blocked_range<std::uint64_t>(0, slices, 1),
        [&](const tbb::blocked_range<std::uint64_t>& range) {
            std::byte* workspace = local_workspace(workspaces);
            for (std::uint64_t s = range.begin(); s != range.end(); ++s) merge(cut, s, target, cut.rank[s], workspace);
        },
        tbb::simple_partitioner());
}

// A stream's slices: each merged straight into a buffer of its own (`tokens` buffers, so as many
// slices at once), then handed on in order.
template <class T>
void merge_slices_in_order(const SliceMerge<T>& merge, const RunSlices& cut, std::uint64_t slices, const MergeTarget<T>& target,
                           const merge_into::Stream& stream, std::size_t tokens, Workspaces<T>& workspaces) {
    const std::size_t entry = merge.runs[0].entry_bytes;
    std::uint64_t largest = 0;
    for (std::uint64_t s = 0; s < slices; ++s) largest = std::max(largest, cut.keys(s));
    tbb::concurrent_queue<std::byte*> free_buffers;
    std::vector<std::unique_ptr<std::byte[]>> buffers;
    for (std::size_t b = 0; b < tokens; ++b) {
        buffers.push_back(std::make_unique_for_overwrite<std::byte[]>(std::max<std::uint64_t>(1, largest * entry)));
        free_buffers.push(buffers.back().get());
    }
    struct Slice {
        std::uint64_t index = 0;
        std::byte* buffer = nullptr;
    };
    std::uint64_t next = 0;
    auto take_slice = [&](tbb::flow_control& fc) -> Slice {
        if (next == slices) {
            fc.stop();
            return {};
        }
        Slice slice{next++, nullptr};
        free_buffers.try_pop(slice.buffer);  // one per token
        return slice;
    };
    auto merge_into_buffer = [&](Slice slice) {
        const MergeTarget<T> to{merge_into::Memory{slice.buffer}, target.restore};
        merge(cut, slice.index, to, 0, local_workspace(workspaces));
        return slice;
    };
    auto hand_on = [&](Slice slice) {
        const std::span<const std::byte> bytes(slice.buffer, cut.keys(slice.index) * entry);
        stream.put(slice.index, cut.rank[slice.index], bytes);
        free_buffers.push(slice.buffer);
    };
    tbb::parallel_pipeline(tokens, tbb::make_filter<void, Slice>(tbb::filter_mode::serial_in_order, take_slice) &
                                       tbb::make_filter<Slice, Slice>(tbb::filter_mode::parallel, merge_into_buffer) &
                                       tbb::make_filter<Slice, void>(tbb::filter_mode::serial_in_order, hand_on));
}

}  // namespace detail

// Merges `runs` (in input order) into `target`, using at most plan.merge_tasks threads.
template <class T>
void merge_runs(std::span<const SortedRun<T>> runs, const MergeTarget<T>& target, const SortPlan& plan) {
    const std::size_t k = runs.size();
    std::uint64_t total = 0;
    for (const auto& run : runs) total += run.size;
    if (total == 0) return;

    const std::size_t entry = runs[0].entry_bytes;
    const auto* stream = std::get_if<merge_into::Stream>(&target.into);
    if (stream && (plan.in_order_slice_bytes == 0 || plan.in_order_slice_buffers == 0))
        throw std::logic_error("merge_runs: the plan has no in-order slices for a sequential output");
    const std::uint64_t slices = detail::slice_count(plan, total, entry, stream != nullptr);
    const std::size_t buffer_entries = static_cast<std::size_t>(std::max<std::uint64_t>(1, merge_buffer_bytes(plan, k) / entry));
    // The next block of each spilled run is read while the one before it is merged: a thread for
    // each task's reads.
    std::unique_ptr<io::ReadAhead> read_ahead;
    if (std::any_of(runs.begin(), runs.end(), [](const SortedRun<T>& run) { return !run.memory; }))
        read_ahead = std::make_unique<io::ReadAhead>(plan.merge_tasks);
    const detail::SliceMerge<T> merge{runs, buffer_entries, read_ahead.get()};

    tbb::task_arena arena(static_cast<int>(plan.merge_tasks));
    arena.execute([&] {
        const RunSlices cut = cut_into_slices<T>(runs, slices);
        const std::size_t workspace_bytes =
            std::max<std::size_t>(1, detail::merge_buffers<T>(runs, target)) * buffer_entries * entry;
        detail::Workspaces<T> workspaces(
            [&] { return std::make_unique_for_overwrite<T[]>((workspace_bytes + sizeof(T) - 1) / sizeof(T)); });
        if (stream)
            detail::merge_slices_in_order<T>(merge, cut, slices, target, *stream, plan.in_order_slice_buffers, workspaces);
        else
            detail::merge_slices_at_once<T>(merge, cut, slices, target, workspaces);
    });
}

// Merges groups of consecutive runs (merge_groups) into new runs (in new temp files in
// tmp_dir) until at most plan.fan_in runs are left. The new runs keep samples at the largest
// stride of the runs (a stream's runs may have thinned theirs). Returns the number of passes.
template <class T>
unsigned merge_to_fan_in(std::vector<SortedRun<T>>& runs, const SortPlan& plan, const std::string& tmp_dir,
                         std::uint64_t& bytes_spilled, ProgressCounters* progress = nullptr) {
    unsigned passes = 0;
    std::uint64_t stride = plan.sample_stride;
    for (const auto& run : runs) stride = std::max(stride, run.sample_stride);
    while (runs.size() > plan.fan_in) {
        ++passes;
        std::vector<SortedRun<T>> next;
        const std::vector<std::pair<std::size_t, std::size_t>> groups = merge_groups(plan, runs.size());
        std::uint64_t pass_keys = 0;
        for (auto [begin, count] : groups)
            for (std::size_t r = begin; r < begin + count; ++r) pass_keys += runs[r].size;
        const std::size_t entry = runs[0].entry_bytes;
        if (progress) progress->start_phase(ProgressPhase::merging, pass_keys * entry);
        auto file = std::make_shared<io::SpillFile>(tmp_dir, plan.spill_files, spill_piece(plan));
        file->allocate(0, pass_keys * entry);
        bytes_spilled += pass_keys * entry;

        std::uint64_t offset = 0;
        std::size_t r = 0;
        for (auto [begin, count] : groups) {
            for (; r < begin; ++r) next.push_back(std::move(runs[r]));
            std::uint64_t size = 0;
            for (std::size_t j = begin; j < begin + count; ++j) size += runs[j].size;
            SortedRun<T> merged = SortedRun<T>::in_file(file, offset, size, stride, entry);
            const MergeTarget<T> target{merge_into::Blocks{sampled<T>(
                merged.samples, stride, entry,
                [&file, offset, entry, progress](std::uint64_t, std::uint64_t rank, std::span<const std::byte> entries) {
                    file->write_at((offset + rank) * entry, entries);
                    if (progress) progress->add(entries.size());
                })}};
            merge_runs<T>(std::span<const SortedRun<T>>(runs).subspan(begin, count), target, plan);
            offset += merged.size;
            next.push_back(std::move(merged));
            r = begin + count;
        }
        for (; r < runs.size(); ++r) next.push_back(std::move(runs[r]));
        runs = std::move(next);  // merged runs are dropped here, closing files no run uses any more
    }
    return passes;
}

}  // namespace gpusort
