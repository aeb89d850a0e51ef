// form_runs_from_stream: a stream of many chunks becomes runs whose samples stay within the plan's
// sample memory (the stride doubles and the runs already formed are thinned out), every sample
// still the key at its place, and the runs merge into the sorted input.
#include "io/temp_file.hpp"
#include "src/plan/plan_sort.hpp"
#include "scratch_dir.hpp"
#include "src/merge/run_merge.hpp"
#include "src/runs/run_formation.hpp"
#include "src/sorters/cpu_chunk_sorter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace gpusort;
using namespace gpusort::testing;

TEST(StreamRuns, SamplesOfAGrowingStreamStayWithinThePlanAndStillGuideTheMerge) {
    constexpr std::uint64_t kChunk = 1000;
    std::mt19937_64 rng(21);
    std::vector<std::uint64_t> keys(123'457);  // 124 chunks, the last one short
    for (auto& key : keys) key = rng();
    const std::span<const std::byte> input = std::as_bytes(std::span<const std::uint64_t>(keys));

    SortPlan plan;
    plan.entry_bytes = 8;
    plan.record_size = 8;
    plan.threads = 2;
    plan.merge_tasks = 2;
    plan.run_records = kChunk;
    plan.sample_stride = 16;
    plan.spill_files = 2;
    plan.sample_memory = 4096;  // 512 samples: less than a sixth of what stride 16 would take
    plan.chunk_memory.host_bytes = 2 * kChunk * 8;
    plan.fan_in = 200;
    plan.merge_memory = std::uint64_t{2} * (plan.fan_in + 1) * kMinMergeBuffer;

    CpuChunkSorter sorter(KeyOrder{KeyType::u64, false}, 2);
    ScratchDir dir;
    std::size_t read = 0;
    auto read_next = [&](std::span<std::byte> bytes) {
        const std::size_t n = std::min(bytes.size(), input.size() - read);
        std::memcpy(bytes.data(), input.data() + read, n);
        read += n;
        return n;
    };
    StreamChunks chunks(8, kChunk);
    chunks.fill(0, read_next);
    chunks.fill(1, read_next);
    PhaseTimes times;
    std::vector<SortedRun<std::uint64_t>> runs =
        form_runs_from_stream<std::uint64_t>(chunks, 2, read_next, plan, sorter, nullptr, dir.path(), times);
    ASSERT_EQ(runs.size(), 124u);

    std::uint64_t sample_bytes = 0, largest_stride = 0;
    for (const auto& run : runs) {
        sample_bytes += run.samples.size() * 8;
        largest_stride = std::max(largest_stride, run.sample_stride);
        ASSERT_EQ(run.sample_stride & (run.sample_stride - 1), 0u) << "a stride that is no power of two";
        ASSERT_EQ(run.samples.size(), (run.size + run.sample_stride - 1) / run.sample_stride);
        for (std::size_t s = 0; s < run.samples.size(); ++s) ASSERT_EQ(run.samples[s], run.read_at(s * run.sample_stride));
    }
    EXPECT_GT(largest_stride, plan.sample_stride) << "the samples were never thinned out";
    // Within the plan, but for the run that was sorted while the stride last doubled.
    EXPECT_LE(sample_bytes, plan.sample_memory + (kChunk / plan.sample_stride + 1) * 8);

    io::File out = io::create_temp_file(dir.path());
    merge_runs<std::uint64_t>(runs, {merge_into::File{&out}}, plan);
    std::vector<std::uint64_t> merged(keys.size());
    out.read_at(0, std::as_writable_bytes(std::span<std::uint64_t>(merged)));
    std::sort(keys.begin(), keys.end());
    EXPECT_TRUE(merged == keys);
}
