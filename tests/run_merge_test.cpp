// merge_runs and merge_to_fan_in on runs in host memory and in spill files (mixed), against
// std::sort of all keys: many fan-ins, empty and skewed runs, slices of every size, and samples
// of merged runs that match their keys.
#include "io/temp_file.hpp"
#include "scratch_dir.hpp"
#include "src/run_merge.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

SortPlan small_plan(unsigned tasks, std::size_t fan_in) {
    SortPlan plan;
    plan.record_size = 8;
    plan.threads = tasks;
    plan.merge_tasks = tasks;
    plan.merge_memory = std::uint64_t{tasks} * (fan_in + 1) * kMinMergeBuffer;
    plan.fan_in = fan_in;
    plan.sample_stride = 16;
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
    auto file = std::make_shared<io::File>(io::create_temp_file(dir.path()));
    std::uint64_t file_offset = 0;
    for (std::size_t r = 0; r < k; ++r) {
        std::vector<std::uint64_t> keys(rng() % (max_len + 1));
        for (auto& key : keys) key = skewed ? (k - r) * 1'000'000 + rng() % 1'000'000 : rng() % 5000;
        std::sort(keys.begin(), keys.end());
        set.all.insert(set.all.end(), keys.begin(), keys.end());
        SortedRun<std::uint64_t> run;
        if (r % 2 == 0) {
            auto memory = std::make_shared<std::vector<std::uint64_t>>(keys);
            run = SortedRun<std::uint64_t>::in_memory(memory, memory->data(), 0, keys.size(), 16);
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
            MergeTarget<std::uint64_t> target;
            target.file = &out;
            merge_runs<std::uint64_t>(set.runs, target, small_plan(3, 64));
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
    MergeTarget<std::uint64_t> target;
    target.file = &out;
    merge_runs<std::uint64_t>(set.runs, target, plan);
    EXPECT_EQ(read_all(out, set.all.size()), set.all);
    EXPECT_TRUE(dir.entries().empty());
}
