// plan_sort: sizes follow the budgets and stay inside them.
#include "gpusort/sort_plan.hpp"

#include <gtest/gtest.h>

using namespace gpusort;

namespace {
// The CPU sorter's capacities: the chunk memory, whole or halved.
SortPlan plan_cpu(std::uint64_t records, std::size_t record_size, Budgets budgets) {
    const std::uint64_t memory = chunk_memory(budgets.memory_bytes);
    return plan_sort(records, record_size, budgets, {memory / record_size, memory / 2 / record_size});
}
}  // namespace

TEST(SortPlan, FitsInMemoryMeansOneRun) {
    SortPlan plan = plan_cpu(1000, 8, Budgets{64 << 20, 4});
    EXPECT_TRUE(plan.in_memory);
    EXPECT_EQ(plan.run_records, 1000u);
}

TEST(SortPlan, LargeInputIsCutIntoRunsThatFitTwiceInTheBudget) {
    const std::uint64_t budget = 64 << 20;
    SortPlan plan = plan_cpu(100'000'000, 8, Budgets{budget, 4});
    EXPECT_FALSE(plan.in_memory);
    EXPECT_GT(plan.run_records, 0u);
    EXPECT_LE(2 * plan.run_records * 8, budget);
    EXPECT_GE(plan.fan_in, 2u);
    EXPECT_GE(plan.sample_stride, 1024u);
    // Every concurrent merge task with a full fan-in stays within the merge memory.
    EXPECT_LE(plan.merge_tasks * (plan.fan_in + 1) * plan.merge_buffer_bytes(plan.fan_in), plan.merge_memory);
    EXPECT_LE(plan.merge_memory, budget);
    EXPECT_GE(plan.merge_slices(plan.records), plan.merge_tasks);
}

TEST(SortPlan, SamplesStayWithinAThirtySecondOfTheBudget) {
    const std::uint64_t budget = 16 << 20;
    SortPlan plan = plan_cpu(std::uint64_t{1} << 36, 8, Budgets{budget, 2});  // 512 GiB of keys
    EXPECT_LE((plan.records / plan.sample_stride + 1) * 8, budget / 32);
}

TEST(SortPlan, TinyBudgetsStillMergeOrAreRefused) {
    SortPlan plan = plan_cpu(10'000'000, 8, Budgets{kMinMemoryBudget, 16});
    EXPECT_GE(plan.fan_in, 2u);
    EXPECT_GE(plan.merge_tasks, 1u);
    EXPECT_LE(plan.merge_tasks * (plan.fan_in + 1) * kMinMergeBuffer, plan.merge_memory);
    EXPECT_THROW(plan_cpu(1000, 8, Budgets{kMinMemoryBudget - 1, 1}), std::invalid_argument);
}

TEST(SortPlan, RunsFollowTheSortersCapacity) {
    // A device budget far smaller than the host budget: the chunk is the device's, not the host's.
    SortPlan plan = plan_sort(10'000'000, 8, Budgets{std::uint64_t{1} << 30, 4}, {1'000'000, 400'000});
    EXPECT_FALSE(plan.in_memory);
    EXPECT_EQ(plan.run_records, 400'000u);
    SortPlan fits = plan_sort(900'000, 8, Budgets{std::uint64_t{1} << 30, 4}, {1'000'000, 400'000});
    EXPECT_TRUE(fits.in_memory);
    EXPECT_THROW(plan_sort(10'000'000, 8, Budgets{std::uint64_t{1} << 30, 4}, {0, 0}), std::invalid_argument);
}

TEST(SortPlan, SmallMergesUseFewSlices) {
    SortPlan plan = plan_cpu(100'000'000, 8, Budgets{64 << 20, 8});
    EXPECT_EQ(plan.merge_slices(10), 1u);
    EXPECT_EQ(plan.merge_slices(plan.records), 4u * plan.merge_tasks);
}
