// merge_runs and merge_to_fan_in on runs in host memory and in spill files (mixed), against
// std::sort of all keys: many fan-ins, empty and skewed runs, slices of every size, and samples
// of merged runs that match their keys; a restore step with parallel work of its own.
#include "io/spill_file.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/plan/merge_plan.hpp"
#include "io/temp_file.hpp"
#include "scratch_dir.hpp"
#include "src/keys/key_normalization.hpp"
#include "src/keys/record_layout.hpp"
#include "src/merge/run_merge.hpp"
#include "src/merge/slice_merge.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

SortPlan small_plan(unsigned tasks, std::size_t fan_in) {
    SortPlan plan;
    plan.entry_bytes = 8;
    plan.threads = tasks;
    plan.merge_tasks = tasks;
    plan.merge_memory = std::uint64_t{tasks} * (fan_in + 1) * kMinMergeBuffer;
    plan.fan_in = fan_in;
    plan.sample_stride = 16;
    plan.spill_files = 3;
    return plan;
}

struct RunSet {
    std::vector<SortedRun<std::uint64_t>> runs;
    std::vector<std::uint64_t> all;
};

// Runs alternate between host memory and one spill file; `skewed` puts every run wholly below
// the one before it.
RunSet make_runs(const ScratchDir& dir, std::size_t k, std::size_t max_len, bool skewed, std::mt19937_64& rng) {
    RunSet set;
    auto file = std::make_shared<io::SpillFile>(dir.path(), 3, 0);
    std::uint64_t file_offset = 0;
    for (std::size_t r = 0; r < k; ++r) {
        std::vector<std::uint64_t> keys(rng() % (max_len + 1));
        for (auto& key : keys) key = skewed ? (k - r) * 1'000'000 + rng() % 1'000'000 : rng() % 5000;
        std::sort(keys.begin(), keys.end());
        set.all.insert(set.all.end(), keys.begin(), keys.end());
        SortedRun<std::uint64_t> run;
        if (r % 2 == 0) {
            auto memory = std::make_shared<std::vector<std::uint64_t>>(keys);
            run = SortedRun<std::uint64_t>::in_memory(memory, reinterpret_cast<const std::byte*>(memory->data()), 0, keys.size(), 16);
        } else {
            file->write_at(file_offset * 8, std::as_bytes(std::span<const std::uint64_t>(keys)));
            run = SortedRun<std::uint64_t>::in_file(file, file_offset, keys.size(), 16);
            file_offset += keys.size();
        }
        take_samples<std::uint64_t>(keys, 0, 16, run.samples);
        set.runs.push_back(std::move(run));
    }
    std::sort(set.all.begin(), set.all.end());
    return set;
}

std::vector<std::uint64_t> read_all(const io::File& file, std::size_t n) {
    std::vector<std::uint64_t> keys(n);
    file.read_at(0, std::as_writable_bytes(std::span<std::uint64_t>(keys)));
    return keys;
}

}  // namespace

TEST(RunMerge, MemoryAndFileRunsManyFanInsAndSkews) {
    std::mt19937_64 rng(8);
    ScratchDir dir;
    for (std::size_t k : {1u, 2u, 3u, 7u, 16u, 33u})
        for (bool skewed : {false, true}) {
            RunSet set = make_runs(dir, k, 200'000, skewed, rng);
            io::File out = io::create_temp_file(dir.path());
            merge_runs<std::uint64_t>(set.runs, {merge_into::File{&out}}, small_plan(3, 64));
            ASSERT_EQ(read_all(out, set.all.size()), set.all) << "k=" << k << " skewed=" << skewed;
        }
}

TEST(RunMerge, PassesDownToTheFanInKeepKeysAndSamples) {
    std::mt19937_64 rng(9);
    ScratchDir dir;
    RunSet set = make_runs(dir, 23, 50'000, false, rng);
    const SortPlan plan = small_plan(2, 4);
    std::uint64_t spilled = 0;
    const unsigned passes = merge_to_fan_in<std::uint64_t>(set.runs, plan, dir.path(), spilled);
    EXPECT_EQ(passes, 2u);  // 23 -> 6 -> 4
    EXPECT_LE(set.runs.size(), plan.fan_in);
    EXPECT_GT(spilled, 0u);
    for (const auto& run : set.runs) {
        ASSERT_EQ(run.samples.size(), (run.size + 15) / 16);
        for (std::size_t s = 0; s < run.samples.size(); ++s) ASSERT_EQ(run.samples[s], run.read_at(s * 16));
    }
    io::File out = io::create_temp_file(dir.path());
    merge_runs<std::uint64_t>(set.runs, {merge_into::File{&out}}, plan);
    EXPECT_EQ(read_all(out, set.all.size()), set.all);
    EXPECT_TRUE(dir.entries().empty());
}

namespace {
thread_local int restore_depth = 0;  // restore calls on this thread's stack
}  // namespace

// A restore step that runs parallel work of its own (as mapping keys back does) and waits for it:
// the waiting thread must not start another slice meanwhile. (It once did, and that slice took the
// same thread's workspace, overwriting the read buffers of the one it interrupted: the output of
// a 16-thread merge of float keys came out of order.)
TEST(RunMerge, ParallelWorkInRestoreStartsNoOtherSlice) {
    std::mt19937_64 rng(12);
    ScratchDir dir;
    RunSet set = make_runs(dir, 8, 2'000'000, false, rng);  // about 64 MiB: more slices than threads
    const SortPlan plan = small_plan(8, 8);                  // 64 KiB buffers: many flushes, each calling restore
    ASSERT_GE(merge_slices(plan, set.all.size()), 12u);
    // Eight threads for the merge's eight tasks however few cores there are.
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 9);
    std::atomic<bool> reentered{false};
    std::atomic<int> calls{0};
    MergeTarget<std::uint64_t> target{merge_into::File{nullptr}};
    target.restore = [&](std::span<std::uint64_t> keys) {
        if (++restore_depth > 1) reentered = true;
        ++calls;
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, keys.size(), 1024), [](const auto&) {
            std::this_thread::sleep_for(std::chrono::microseconds(20));  // long enough for the waiting thread to look for work
        });
        --restore_depth;
    };
    // Whether a waiting thread finds another slice to start depends on timing: a second try makes
    // it all but certain that it would.
    for (int attempt = 0; attempt < 2 && !reentered; ++attempt) {
        io::File out = io::create_temp_file(dir.path());
        target.into = merge_into::File{&out};
        merge_runs<std::uint64_t>(set.runs, target, plan);
        EXPECT_EQ(read_all(out, set.all.size()), set.all);
    }
    EXPECT_GT(calls.load(), 100);
    EXPECT_FALSE(reentered.load()) << "a thread waiting in one slice's restore ran another slice";
}

namespace {

// A slice sorter for the test: pulls and pushes keys in pieces of 7 (so pieces straddle the
// parts of different runs), maps i64 keys back from normalised form, sorts with std::sort.
class PieceSorter final : public SliceSorter {
public:
    PhaseTimes sort_slice(std::size_t, std::uint64_t keys, const ChunkIo& io) override {
        EXPECT_LE(keys, 1000u);
        std::vector<std::uint64_t> chunk(keys);
        for (std::uint64_t first = 0; first < keys; first += 7) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(7, keys - first));
            io.read(first, std::as_writable_bytes(std::span<std::uint64_t>(chunk.data() + first, n)));
        }
        std::sort(chunk.begin(), chunk.end());
        for (auto& key : chunk) key = from_normalized<std::uint64_t>(key, KeyKind::signed_int, true);
        for (std::uint64_t first = 0; first < keys; first += 7) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(7, keys - first));
            io.write(first, std::as_bytes(std::span<const std::uint64_t>(chunk.data() + first, n)));
        }
        ++chunks;
        return {};
    }
    std::size_t slice_width() const override { return 8; }
    std::atomic<int> chunks = 0;  // the merge sorts in two slots at once
};

// A record: its key (few distinct values, so that runs share keys), its run and its place there.
struct TaggedRecord {
    std::uint32_t key, run, pos;
    bool operator==(const TaggedRecord&) const = default;
};

// A slice sorter of such records for the test: they must come without their entries' key words;
// sorted stably by key with std::stable_sort.
class RecordPieceSorter final : public SliceSorter {
public:
    PhaseTimes sort_slice(std::size_t, std::uint64_t count, const ChunkIo& io) override {
        std::vector<TaggedRecord> chunk(count);
        for (std::uint64_t first = 0; first < count; first += 7) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(7, count - first));
            io.read(first, std::as_writable_bytes(std::span<TaggedRecord>(chunk.data() + first, n)));
        }
        std::stable_sort(chunk.begin(), chunk.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
        io.write(0, std::as_bytes(std::span<const TaggedRecord>(chunk)));
        return {};
    }
    std::size_t slice_width() const override { return sizeof(TaggedRecord); }
};

}  // namespace

// The selections of a cut run in parallel, and each reads windows of entries of a run in a file
// with a parallel read (a read across a block boundary is two reads) into scratch buffers of its
// thread. A thread waiting for such a read once started another selection, which took the same
// scratch buffers from under the first: wrong splits, and heap corruption when a buffer grew (found
// by the soak on the GPU machine: a stable sort of records through a sequential output on 16
// threads came out unstable, once with glibc's "corrupted size vs. prev_size"). Runs of 16-byte
// entries (a key and a payload) with a stride of 2^16 make every window a 1 MiB read; the splits
// must equal those of the same keys held in memory.
TEST(RunSlices, ASelectionWaitingForItsReadsStartsNoOtherSelection) {
    ScratchDir dir;
    std::mt19937_64 rng(21);
    constexpr std::uint64_t kStride = std::uint64_t{1} << 16;
    constexpr std::size_t kEntry = 16;
    auto file = std::make_shared<io::SpillFile>(dir.path(), 3, 0);
    std::vector<std::vector<std::uint64_t>> keys(4);
    std::vector<SortedRun<std::uint64_t>> runs;
    std::uint64_t offset = 0;
    for (auto& run_keys : keys) {
        run_keys.resize(12 * kStride + rng() % kStride);
        for (auto& key : run_keys) key = rng() % 100;  // long stretches of equal keys
        std::sort(run_keys.begin(), run_keys.end());
        std::vector<std::byte> entries(run_keys.size() * kEntry);
        for (std::size_t i = 0; i < run_keys.size(); ++i) std::memcpy(entries.data() + i * kEntry, &run_keys[i], 8);
        file->write_at(offset * kEntry, entries);
        runs.push_back(SortedRun<std::uint64_t>::in_file(file, offset, run_keys.size(), kStride, kEntry));
        take_samples<std::uint64_t>(entries, kEntry, 0, kStride, runs.back().samples);
        offset += run_keys.size();
    }
    std::vector<SpanSequence<std::uint64_t>> in_memory;
    for (const auto& run_keys : keys) in_memory.emplace_back(std::span<const std::uint64_t>(run_keys));
    const std::uint64_t slices = 2000;
    tbb::task_arena arena(8);  // more threads than cores: many waits
    for (int attempt = 0; attempt < 3; ++attempt) {
        const RunSlices cut = arena.execute([&] { return cut_into_slices<std::uint64_t>(runs, slices); });
        for (std::uint64_t s = 0; s <= slices; ++s)
            ASSERT_EQ(cut.split[s], multiway_select<SpanSequence<std::uint64_t>>(in_memory, cut.rank[s])) << "slice " << s;
    }
}

TEST(SliceMerge, SlicesOfAllRunsSortedAsChunksGiveTheMergedOutput) {
    std::mt19937_64 rng(10);
    ScratchDir dir;
    // i64 keys sorted descending: runs hold normalised keys; the output must hold raw ones.
    for (bool skewed : {false, true}) {
        RunSet set = make_runs(dir, 9, 3000, skewed, rng);  // keys < 2^63: as i64 all non-negative
        auto file = std::make_shared<io::SpillFile>(dir.path(), 3, 0);
        for (std::size_t r = 0; r < set.runs.size(); ++r) {
            auto& run = set.runs[r];
            std::vector<std::uint64_t> keys(run.size);
            run.read_range(0, keys);
            for (auto& key : keys) key = to_normalized<std::uint64_t>(key, KeyKind::signed_int, true);
            std::sort(keys.begin(), keys.end());
            if (r % 2 == 0) {  // runs in memory and in a file, as in make_runs
                auto memory = std::make_shared<std::vector<std::uint64_t>>(keys);
                run = SortedRun<std::uint64_t>::in_memory(memory, reinterpret_cast<const std::byte*>(memory->data()), 0, keys.size(), 16);
            } else {
                file->write_at(r * 4000 * 8, std::as_bytes(std::span<const std::uint64_t>(keys)));
                run = SortedRun<std::uint64_t>::in_file(file, r * 4000, keys.size(), 16);
            }
            take_samples<std::uint64_t>(keys, 0, 16, run.samples);
        }
        std::vector<std::uint64_t> expected = set.all;
        std::sort(expected.begin(), expected.end(), [](std::uint64_t a, std::uint64_t b) {
            return static_cast<std::int64_t>(a) > static_cast<std::int64_t>(b);
        });
        std::vector<std::uint64_t> out(expected.size(), 0xdeadbeef);
        PieceSorter sorter;
        MergeTimes times;
        merge_by_sorting_slices<std::uint64_t>(set.runs, sorter, 1000, 2,
                                               [&](std::uint64_t first, std::span<const std::byte> bytes) {
                                                   std::memcpy(out.data() + first, bytes.data(), bytes.size());
                                               },
                                               times);
        EXPECT_EQ(out, expected) << "skewed=" << skewed;
        EXPECT_EQ(sorter.chunks.load(), static_cast<int>((expected.size() + 999) / 1000));
        // Every key is counted once in each step of the merge, and nothing on the host's merge.
        const std::uint64_t bytes = expected.size() * 8;
        for (const MergePhase* phase : {&times.gather, &times.copy_in, &times.copy_out, &times.write})
            EXPECT_EQ(phase->bytes, bytes) << "skewed=" << skewed;
        EXPECT_EQ(times.host.bytes, 0u);
    }
}

// Runs of records hold entries (key word, then the record), or the bare records keyed by a spec:
// the slice sorter gets the records alone, and the merge is stable, runs in memory and in a file
// alike: equal keys in the runs' order.
class SliceMergeOfRecords : public ::testing::TestWithParam<bool> {};

TEST_P(SliceMergeOfRecords, GivesTheRecordsWithoutKeyWordsInStableOrder) {
    const bool bare = GetParam();
    KeySpec spec;
    spec.record_size = sizeof(TaggedRecord);
    spec.fields.push_back(parse_key_field("0:u32"));
    const FixedKeySpec record_keys = fixed_key_spec(spec);
    std::mt19937_64 rng(12);
    ScratchDir dir;
    const std::size_t key_bytes = bare ? 0 : 8;
    const std::size_t kEntry = key_bytes + sizeof(TaggedRecord);
    auto file = std::make_shared<io::SpillFile>(dir.path(), 3, 0);
    std::vector<SortedRun<RecordKey<1>>> runs;
    std::vector<TaggedRecord> all;
    std::uint64_t file_offset = 0;
    for (std::uint32_t r = 0; r < 7; ++r) {
        std::vector<TaggedRecord> records(rng() % 2000);
        for (std::uint32_t i = 0; i < records.size(); ++i) records[i] = {static_cast<std::uint32_t>(rng() % 50), r, i};
        std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
        all.insert(all.end(), records.begin(), records.end());
        auto entries = std::make_shared<std::vector<std::byte>>(records.size() * kEntry);
        for (std::size_t i = 0; i < records.size(); ++i) {
            const std::uint64_t word = std::uint64_t{records[i].key} << 32;  // the key's 4 bytes, word 0 high first
            std::memcpy(entries->data() + i * kEntry, &word, key_bytes);
            std::memcpy(entries->data() + i * kEntry + key_bytes, &records[i], sizeof(TaggedRecord));
        }
        SortedRun<RecordKey<1>> run;
        if (r % 2 == 0) {
            run = SortedRun<RecordKey<1>>::in_memory(entries, entries->data(), 0, records.size(), 16, kEntry);
        } else {
            file->write_at(file_offset * kEntry, *entries);
            run = SortedRun<RecordKey<1>>::in_file(file, file_offset, records.size(), 16, kEntry);
            file_offset += records.size();
        }
        run.record_keys = bare ? &record_keys : nullptr;
        take_samples<RecordKey<1>>(*entries, kEntry, 0, 16, run.samples, run.record_keys);
        runs.push_back(std::move(run));
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    std::vector<TaggedRecord> out(all.size(), TaggedRecord{~0u, ~0u, ~0u});
    RecordPieceSorter sorter;
    MergeTimes times;
    merge_by_sorting_slices<RecordKey<1>>(runs, sorter, 500, 2,
                                          [&](std::uint64_t first, std::span<const std::byte> bytes) {
                                              std::memcpy(out.data() + first, bytes.data(), bytes.size());
                                          },
                                          times);
    ASSERT_EQ(out.size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(out[i], all[i]) << "at " << i;
    EXPECT_EQ(times.gather.bytes, all.size() * sizeof(TaggedRecord));
}

INSTANTIATE_TEST_SUITE_P(EntriesAndBareRecords, SliceMergeOfRecords, ::testing::Bool());
