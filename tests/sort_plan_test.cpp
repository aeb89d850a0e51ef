// plan_sort: every size follows the budgets, the input and the sorter's capacity, and the host
// memory of every planned buffer together stays within the budget.
#include "gpusort/sort_plan.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/plan/merge_plan.hpp"
#include "io/file.hpp"
#include "src/keys/record_layout.hpp"
#include "src/sorters/cpu_chunk_sorter.hpp"
#include "src/sorters/cpu_record_sorter.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace gpusort;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// A CPU sorter's capacity: its host memory split among the slots, `bytes_per_record` each.
ChunkCapacity cpu_capacity(std::size_t bytes_per_record) {
    return {[bytes_per_record](std::size_t slots, const ChunkMemory& memory) {
                return memory.host_bytes / slots / bytes_per_record;
            },
            std::nullopt};
}

// A GPU sorter's capacity: its device memory split among the slots, 3 bytes per byte of record.
// A sorter of plain keys merges by sorting slices; one of records does not.
ChunkCapacity gpu_capacity(std::uint64_t free_bytes, std::size_t record_size, bool records = false) {
    return {[record_size](std::size_t slots, const ChunkMemory& memory) {
                return memory.device_bytes / slots / (3 * record_size);
            },
            DeviceCapacity{"test GPU", free_bytes, 64 * kMiB}, !records};
}

PlanInput file_of(std::uint64_t records, std::size_t record_size = 8) {
    PlanInput input;
    input.records = records;
    input.record_size = record_size;
    input.entry_bytes = record_size;
    input.output_name = "out";
    input.output_folder = "/data";
    input.tmp_dir = "/tmp";
    return input;
}

PlanInput stream_of(std::size_t record_size = 8) {
    PlanInput input = file_of(0, record_size);
    input.records.reset();
    input.input_streamed = true;
    input.output_streamed = true;
    input.output_folder.clear();
    return input;
}

SortPlan plan_cpu(std::uint64_t records, std::size_t record_size, Budgets budgets) {
    return plan_sort(file_of(records, record_size), budgets, cpu_capacity(record_size));
}

Budgets budgets(std::uint64_t memory, unsigned threads) {
    Budgets b;
    b.memory_bytes = memory;
    b.threads = threads;
    return b;
}

// A real sorter's capacity, as sort_file gives it to the plan.
ChunkCapacity capacity_of(const ChunkSorter& sorter) {
    return {[&sorter](std::size_t slots, const ChunkMemory& memory) { return sorter.capacity(slots, memory); },
            std::nullopt};
}

}  // namespace

TEST(SortPlan, FitsInMemoryMeansOneRun) {
    SortPlan plan = plan_cpu(1000, 8, budgets(64 << 20, 4));
    EXPECT_TRUE(plan.one_chunk);
    EXPECT_EQ(plan.run_records, 1000u);
    EXPECT_EQ(plan.runs, 1u);
    EXPECT_EQ(plan.merge_passes, 0u);
}

TEST(SortPlan, LargeInputIsCutIntoRunsThatFitTwiceInTheBudget) {
    const std::uint64_t budget = 64 << 20;
    SortPlan plan = plan_cpu(100'000'000, 8, budgets(budget, 4));
    EXPECT_FALSE(plan.one_chunk);
    EXPECT_GT(plan.run_records, 0u);
    EXPECT_LE(2 * plan.run_records * 8, budget);
    EXPECT_EQ(plan.runs, (plan.records + plan.run_records - 1) / plan.run_records);
    EXPECT_GE(plan.fan_in, 2u);
    EXPECT_GE(plan.sample_stride, 1024u);
    // Every concurrent merge task with a full fan-in stays within the merge memory.
    EXPECT_LE(plan.merge_tasks * (plan.fan_in + 1) * merge_buffer_bytes(plan, plan.fan_in), plan.merge_memory);
    EXPECT_LE(plan.merge_memory, budget);
    EXPECT_GE(merge_slices(plan, plan.records), plan.merge_tasks);
    EXPECT_EQ(plan.merge_passes, 1u);
}

TEST(SortPlan, SamplesStayWithinAThirtySecondOfTheBudget) {
    const std::uint64_t budget = 16 << 20;
    SortPlan plan = plan_cpu(std::uint64_t{1} << 36, 8, budgets(budget, 2));  // 512 GiB of keys
    EXPECT_LE((plan.records / plan.sample_stride + 1) * 8, budget / 32);
    EXPECT_EQ(plan.sample_memory, (plan.records / plan.sample_stride + 1) * 8);
}

TEST(SortPlan, TinyBudgetsStillMergeOrAreRefused) {
    SortPlan plan = plan_cpu(10'000'000, 8, budgets(kMinMemoryBudget, 16));
    EXPECT_GE(plan.fan_in, 2u);
    EXPECT_GE(plan.merge_tasks, 1u);
    EXPECT_LE(plan.merge_tasks * (plan.fan_in + 1) * kMinMergeBuffer, plan.merge_memory);
    EXPECT_THROW(plan_cpu(1000, 8, budgets(kMinMemoryBudget - 1, 1)), std::invalid_argument);
}

TEST(SortPlan, RunsFollowTheSortersCapacity) {
    // A device budget far smaller than the host budget: the chunk is the device's, not the host's.
    const ChunkCapacity device{[](std::size_t slots, const ChunkMemory&) -> std::uint64_t {
                                   return slots == 1 ? 1'000'000 : 400'000;
                               },
                               DeviceCapacity{"test GPU", 8 * kGiB, 64 * kMiB}};
    SortPlan plan = plan_sort(file_of(10'000'000), budgets(kGiB, 4), device);
    EXPECT_FALSE(plan.one_chunk);
    EXPECT_EQ(plan.run_records, 400'000u);
    EXPECT_EQ(plan.runs, 25u);
    SortPlan fits = plan_sort(file_of(900'000), budgets(kGiB, 4), device);
    EXPECT_TRUE(fits.one_chunk);
    const ChunkCapacity none{[](std::size_t, const ChunkMemory&) -> std::uint64_t { return 0; }, std::nullopt};
    EXPECT_THROW(plan_sort(file_of(10'000'000), budgets(kGiB, 4), none), std::invalid_argument);
}

TEST(SortPlan, SmallMergesUseFewSlices) {
    SortPlan plan = plan_cpu(100'000'000, 8, budgets(64 << 20, 8));
    EXPECT_EQ(merge_slices(plan, 10), 1u);
    EXPECT_EQ(merge_slices(plan, plan.records), 4u * plan.merge_tasks);
}

// Sorts of every shape (file or stream in and out, compressed or not, keys or records, CPU or GPU)
// under budgets from the smallest to large ones: the planned host memory stays within the budget
// at every phase, and the merge fits its own share.
TEST(SortPlan, EveryPlannedBufferStaysWithinTheBudget) {
    for (std::uint64_t memory : {kMinMemoryBudget, 4 * kMiB, 64 * kMiB, kGiB, 48 * kGiB}) {
        for (unsigned threads : {1u, 2u, 16u}) {
            for (Compression out : {Compression::none, Compression::zstd, Compression::xz}) {
                for (bool stream_in : {false, true}) {
                    for (bool records : {false, true}) {
                        for (bool gpu : {false, true}) {
                            const std::size_t record_size = records ? 100 : 8;
                            PlanInput input = stream_in ? stream_of(record_size) : file_of(4 * memory / record_size, record_size);
                            input.output_compression = out;
                            input.output_streamed = stream_in || out != Compression::none;
                            if (input.output_streamed) input.output_folder.clear();
                            input.entries_hold_records = records;
                            input.entry_bytes = records ? record_size + 16 : record_size;
                            const ChunkCapacity capacity =
                                gpu ? gpu_capacity(16 * kGiB, record_size, records) : cpu_capacity(input.entry_bytes + 16);
                            const std::string what = std::to_string(memory) + " bytes, " + std::to_string(threads) +
                                                     " threads, " + compression_name(out) + (stream_in ? ", stream" : "") +
                                                     (records ? ", records" : "") + (gpu ? ", gpu" : "");
                            const SortPlan plan = plan_sort(input, budgets(memory, threads), capacity);
                            // Only an encoder larger than the writer's share (xz's) may take more.
                            const std::uint64_t usable = memory - memory / 16;
                            const std::uint64_t beyond = plan.writer.encoder_bytes > usable / 4 ? plan.writer.encoder_bytes : 0;
                            EXPECT_LE(plan.host.peak(), memory + beyond) << what;
                            EXPECT_LE(plan.verify_block_bytes + plan.reader.memory(), memory) << what;
                            EXPECT_EQ(plan.host.writer, plan.writer.memory()) << what;
                            // Four times the budget is sorted in runs on the CPU (it may fit the
                            // device); in runs, a GPU sorter of keys merges on the device, and the
                            // others on the host, whose share is checked below.
                            EXPECT_TRUE(gpu || !plan.one_chunk) << what;
                            EXPECT_EQ(plan.merge_on_device, gpu && !records && !plan.one_chunk) << what;
                            if (plan.one_chunk || plan.merge_on_device) continue;
                            EXPECT_LE(plan.merge_tasks * (plan.fan_in + 1 + plan.extra_buffers) *
                                          merge_buffer_bytes(plan, plan.fan_in),
                                      plan.merge_memory)
                                << what;
                            EXPECT_EQ(plan.in_order_slice_buffers, input.output_streamed ? 2u * plan.merge_tasks : 0u) << what;
                        }
                    }
                }
            }
        }
    }
}

TEST(SortPlan, LargeBudgetsKeepTheDefaultSizesOfStreamsStagingAndSlices) {
    PlanInput input = stream_of();
    input.output_compression = Compression::zstd;
    const SortPlan plan = plan_sort(input, budgets(32 * kGiB, 16), gpu_capacity(80 * kGiB, 8));
    EXPECT_EQ(plan.reader.block_bytes, 8 * kMiB);
    EXPECT_EQ(plan.reader.queued_blocks, 4u);
    EXPECT_EQ(plan.writer.block_bytes, 8 * kMiB);
    EXPECT_EQ(plan.writer.compressing_threads, 16u);
    EXPECT_EQ(plan.writer.blocks_in_flight, 32u);
    ASSERT_TRUE(plan.device);
    EXPECT_EQ(plan.device->staging_bytes, 64 * kMiB);
    EXPECT_EQ(plan.chunk_memory.staging_bytes, 64 * kMiB);
    PlanInput records = file_of(kGiB, 100);
    records.output_streamed = true;
    records.output_folder.clear();
    records.entries_hold_records = true;
    records.entry_bytes = 116;
    const SortPlan merge = plan_sort(records, budgets(32 * kGiB, 16), cpu_capacity(140));
    EXPECT_EQ(merge.in_order_slice_bytes, 16 * kMiB);
    EXPECT_EQ(merge_buffer_bytes(merge, merge.runs), std::uint64_t{4 << 20} / 116 * 116);
}

TEST(SortPlan, SmallBudgetsShrinkTheStreamQueuesIntoTheirShares) {
    PlanInput input = stream_of();
    input.output_compression = Compression::zstd;
    const std::uint64_t memory = 64 * kMiB, usable = memory - memory / 16;
    const SortPlan plan = plan_sort(input, budgets(memory, 16), cpu_capacity(8));
    EXPECT_LE(plan.reader.memory(), usable / 8);
    EXPECT_GE(plan.reader.memory(), usable / 8 - 6 * 4096);
    EXPECT_EQ(plan.host.reader, plan.reader.memory());
    EXPECT_LE(plan.writer.memory(), usable / 4);
    EXPECT_EQ(plan.writer.compressing_threads, 1u);
    EXPECT_LT(plan.writer.block_bytes, 8 * kMiB);
    // xz takes few encoders whatever the threads: at most 10 at its default level (94 MiB each).
    input.output_compression = Compression::xz;
    EXPECT_LE(plan_sort(input, budgets(64 * kGiB, 64), cpu_capacity(8)).writer.compressing_threads, 10u);
}

TEST(SortPlan, AStreamIsReadIntoTwoChunkBuffersBesideTheSorter) {
    const std::uint64_t memory = 64 * kMiB;
    const SortPlan plan = plan_sort(stream_of(), budgets(memory, 2), cpu_capacity(8));
    EXPECT_FALSE(plan.size_known);
    EXPECT_FALSE(plan.one_chunk);
    EXPECT_EQ(plan.runs, 0u);
    EXPECT_EQ(plan.stream_chunk_bytes, plan.run_records * 8);
    EXPECT_EQ(plan.host.stream_chunks, 2 * plan.stream_chunk_bytes);
    EXPECT_EQ(plan.chunk_memory.host_bytes, plan.host.sorter);
    EXPECT_LE(plan.host.stream_chunks, plan.chunk_memory.host_bytes);
    EXPECT_LE(plan.one_chunk_records, 2 * plan.run_records);
    EXPECT_GT(plan.fan_in, 2u);
    EXPECT_GT(plan.in_order_slice_bytes, 0u);
    EXPECT_TRUE(plan.disk.empty());
    // A stream smaller than a record of the budget is refused.
    EXPECT_THROW(plan_sort(stream_of(kMinMemoryBudget), budgets(kMinMemoryBudget, 1), cpu_capacity(kMinMemoryBudget)),
                 std::invalid_argument);
}

// An input far smaller than the budget: the CPU sorter's slots are planned, and allocated, for the
// records there are (--plan once said "sorter 15.0 GiB" under --memory 16G for 200 MiB of input).
// The plan's chunk memory is exactly what the sorter allocates: one record more is refused.
TEST(SortPlan, ASmallInputPlansAndAllocatesItsOwnSizeNotTheBudget) {
    const std::uint64_t keys = 1'000'000;  // 8 MB of u64
    CpuChunkSorter key_sorter(KeyOrder{KeyType::u64, false}, 1);
    const SortPlan plan = plan_sort(file_of(keys), budgets(16 * kGiB, 4), capacity_of(key_sorter));
    ASSERT_TRUE(plan.one_chunk);
    EXPECT_EQ(plan.host.sorter, keys * 8);
    EXPECT_EQ(plan.chunk_memory.host_bytes, keys * 8);
    EXPECT_EQ(plan.host.peak(), keys * 8);  // a file to a file: nothing else is held
    EXPECT_NO_THROW(key_sorter.prepare(1, keys, plan.chunk_memory));
    EXPECT_THROW(key_sorter.prepare(1, keys + 1, plan.chunk_memory), std::logic_error);

    // Records: the slots hold the records, their tags and a gather buffer, all sized by the records.
    const KeySpec gensort = gensort_key();
    const auto record_sorter = make_cpu_record_sorter(gensort, 1);
    PlanInput records = file_of(100'000, 100);  // 10 MB
    records.entry_bytes = entry_bytes(gensort);
    records.entries_hold_records = true;
    const SortPlan of_records = plan_sort(records, budgets(16 * kGiB, 4), capacity_of(*record_sorter));
    ASSERT_TRUE(of_records.one_chunk);
    EXPECT_GT(of_records.host.sorter, 100'000u * 100);
    EXPECT_LT(of_records.host.sorter, 2 * 100'000u * 100);
    EXPECT_NO_THROW(record_sorter->prepare(1, 100'000, of_records.chunk_memory));
    EXPECT_THROW(record_sorter->prepare(1, 100'001, of_records.chunk_memory), std::logic_error);

    // In runs: two slots of one run each, within the budget, and again exactly what they take.
    const SortPlan in_runs = plan_sort(file_of(100'000'000), budgets(64 * kMiB, 4), capacity_of(key_sorter));
    ASSERT_FALSE(in_runs.one_chunk);
    EXPECT_EQ(in_runs.host.sorter, 2 * in_runs.run_records * 8);
    EXPECT_NO_THROW(key_sorter.prepare(2, in_runs.run_records, in_runs.chunk_memory));
    EXPECT_THROW(key_sorter.prepare(2, in_runs.run_records + 1, in_runs.chunk_memory), std::logic_error);
    key_sorter.prepare(0, 0, in_runs.chunk_memory);

    // A stream's size is not known: its sorter keeps half of what the reader leaves, as before.
    const SortPlan stream = plan_sort(stream_of(), budgets(16 * kGiB, 4), capacity_of(key_sorter));
    const std::uint64_t usable = 16 * kGiB - kGiB;
    EXPECT_EQ(stream.host.sorter, (usable - stream.reader.memory()) / 2);
    EXPECT_EQ(stream.chunk_memory.host_bytes, stream.host.sorter);
}

TEST(SortPlan, TheDeviceBudgetIsTheFreeMemoryLessAReserveAtMost) {
    Budgets b = budgets(4 * kGiB, 4);
    SortPlan plan = plan_sort(file_of(kGiB), b, gpu_capacity(80 * kGiB, 8));
    ASSERT_TRUE(plan.device);
    EXPECT_EQ(plan.device->reserve_bytes, 4 * kGiB);
    EXPECT_EQ(plan.device->budget_bytes, 76 * kGiB);
    EXPECT_EQ(plan.chunk_memory.device_bytes, 76 * kGiB);
    EXPECT_EQ(plan.device->name, "test GPU");
    b.device_memory_bytes = 64 * kGiB * 1024;  // 64T: shrinks to what can be had
    EXPECT_EQ(plan_sort(file_of(kGiB), b, gpu_capacity(80 * kGiB, 8)).device->budget_bytes, 76 * kGiB);
    b.device_memory_bytes = 2 * kGiB;
    plan = plan_sort(file_of(kGiB), b, gpu_capacity(80 * kGiB, 8));
    EXPECT_EQ(plan.device->budget_bytes, 2 * kGiB);
    EXPECT_EQ(plan.run_records, 2 * kGiB / 2 / 24);
    EXPECT_TRUE(plan.merge_on_device);
    EXPECT_EQ(plan.merge_passes, 1u);
    EXPECT_EQ(plan.device_merge_slots, 2u);
    // A small device keeps at least 256 MiB back.
    EXPECT_EQ(plan_sort(file_of(kGiB), budgets(4 * kGiB, 4), gpu_capacity(kGiB, 8)).device->reserve_bytes, 256 * kMiB);
    // Pinned staging comes out of a small host budget.
    const SortPlan small = plan_sort(file_of(kGiB), budgets(64 * kMiB, 4), gpu_capacity(80 * kGiB, 8));
    EXPECT_LT(small.device->staging_bytes, 64 * kMiB);
    EXPECT_LE(small.host.peak(), 64 * kMiB);
}

TEST(SortPlan, MergePassesAndGroupsFollowTheFanIn) {
    PlanInput input = file_of(9000);
    input.max_run_records = 1000;
    input.max_fan_in = 2;
    const SortPlan plan = plan_sort(input, budgets(64 * kMiB, 2), cpu_capacity(8));
    EXPECT_EQ(plan.runs, 9u);
    EXPECT_EQ(plan.fan_in, 2u);
    // 9 runs -> 5 -> 3 -> 2, then the last pass.
    EXPECT_EQ(plan.merge_passes, 4u);
    const auto groups = merge_groups(plan, 9);
    ASSERT_EQ(groups.size(), 4u);
    for (std::size_t g = 0; g < groups.size(); ++g) EXPECT_EQ(groups[g], std::make_pair(2 * g, std::size_t{2}));
    EXPECT_TRUE(merge_groups(plan, 2).empty());
    // Spilled runs need twice their size while an intermediate pass runs, the output its own.
    ASSERT_EQ(plan.disk.size(), 2u);
    EXPECT_EQ(plan.disk[0].folder, "/data");
    EXPECT_EQ(plan.disk[0].bytes, 9000u * 8);
    EXPECT_EQ(plan.disk[0].what, "the output 'out'");
    EXPECT_EQ(plan.disk[1].folder, "/tmp");
    EXPECT_EQ(plan.disk[1].bytes, 2 * 9000u * 8);
    input.max_fan_in.reset();
    const SortPlan one_pass = plan_sort(input, budgets(64 * kMiB, 2), cpu_capacity(8));
    EXPECT_EQ(one_pass.merge_passes, 1u);
    EXPECT_EQ(one_pass.disk[1].bytes, 9000u * 8);
}

// Whatever is spilled is striped over one file per thread, up to kMaxSpillFiles: runs, and the
// runs that intermediate merge passes write even where the first runs are kept in host memory
// (a GPU sorter's records under a tiny device budget with a small fan-in: a temp file of no
// stripes was refused there). One chunk spills nothing.
TEST(SortPlan, SpillsAreStripedOverOneFilePerThread) {
    EXPECT_EQ(plan_cpu(100'000'000, 8, budgets(64 * kMiB, 4)).spill_files, 4u);
    EXPECT_EQ(plan_cpu(100'000'000, 8, budgets(64 * kMiB, 40)).spill_files, kMaxSpillFiles);
    EXPECT_EQ(plan_cpu(1000, 8, budgets(64 * kMiB, 4)).spill_files, 0u);
    PlanInput records = file_of(200'000, 100);
    records.entry_bytes = 116;
    records.entries_hold_records = true;
    records.max_fan_in = 2;
    Budgets small = budgets(256 * kMiB, 3);
    small.device_memory_bytes = kMiB;
    const SortPlan kept = plan_sort(records, small, gpu_capacity(kGiB, 100, true));
    ASSERT_TRUE(kept.runs_kept_in_memory);
    ASSERT_GT(kept.merge_passes, 1u);
    EXPECT_EQ(kept.spill_files, 3u);
}

// Spilled runs go through the page cache unless direct I/O is asked for, or (automatic) the page
// cache could not hold them beside the output; runs that are not spilled take neither.
TEST(SortPlan, DirectIoModeWhereAskedOrWhereThePageCacheCouldNotHoldTheRuns) {
    const std::uint64_t records = 100'000'000;  // 800 MB of u64, against a 64 MiB budget: spilled
    auto plan_with = [&](IoMode io, bool possible, std::optional<std::uint64_t> cache, PlanInput input) {
        input.spill_io = io;
        input.direct_io_possible = possible;
        input.page_cache_bytes = cache;
        return plan_sort(input, budgets(64 << 20, 4), cpu_capacity(8));
    };
    const PlanInput file = file_of(records);
    const std::uint64_t both = 2 * records * 8;  // the runs and the output
    const SortPlan direct = plan_with(IoMode::direct, true, std::nullopt, file);
    EXPECT_TRUE(direct.spill_direct);
    // A bounce buffer per thread, within half the sixteenth of the budget kept back.
    EXPECT_EQ(direct.direct_io_piece, 512u << 10);
    EXPECT_EQ(direct.host.direct_io, 4 * direct.direct_io_piece);
    EXPECT_LE(direct.host.direct_io, direct.memory_bytes / 32);
    const SortPlan tiny = plan_sort([&] {
        PlanInput in = file_of(1'000'000);
        in.spill_io = IoMode::direct;
        in.direct_io_possible = true;
        return in;
    }(), budgets(1 << 20, 3), cpu_capacity(8));
    EXPECT_EQ(tiny.direct_io_piece, io::kDirectIoAlignment * 2);  // 1 MiB / 32 / 3 threads, in whole blocks
    const SortPlan buffered = plan_with(IoMode::buffered, true, 0, file);
    EXPECT_FALSE(buffered.spill_direct);
    EXPECT_EQ(buffered.direct_io_piece, 0u);
    EXPECT_EQ(buffered.host.direct_io, 0u);
    EXPECT_FALSE(plan_with(IoMode::automatic, true, both, file).spill_direct);
    EXPECT_TRUE(plan_with(IoMode::automatic, true, both - 1, file).spill_direct);
    EXPECT_FALSE(plan_with(IoMode::automatic, false, 0, file).spill_direct);
    EXPECT_FALSE(plan_with(IoMode::automatic, true, std::nullopt, file).spill_direct);
    // Several passes keep a second copy of the runs in the page cache for a while.
    PlanInput passes = file;
    passes.max_fan_in = 2;
    const SortPlan two_copies = plan_with(IoMode::automatic, true, both, passes);
    ASSERT_GT(two_copies.merge_passes, 1u);
    EXPECT_TRUE(two_copies.spill_direct);
    // A stream's size is not known: direct only when asked for.
    EXPECT_FALSE(plan_with(IoMode::automatic, true, 0, stream_of()).spill_direct);
    EXPECT_TRUE(plan_with(IoMode::direct, true, std::nullopt, stream_of()).spill_direct);
    // Nothing spilled, nothing direct.
    EXPECT_FALSE(plan_with(IoMode::direct, true, 0, file_of(1000)).spill_direct);
    // Asked for where the file system has none: refused, naming the folder.
    try {
        plan_with(IoMode::direct, false, std::nullopt, file);
        ADD_FAILURE() << "direct I/O planned without it";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'/tmp'"), std::string::npos) << e.what();
    }
}

// INPUT is read with direct I/O where asked for, or (automatic) where less than half of it is
// cached or it is larger than the page cache may hold; OUTPUT is written so where asked for, or
// where it is larger than the page cache may hold. Never where the file cannot take direct I/O.
TEST(SortPlan, InputAndOutputGoDirectWhereAskedOrWhereColdOrLargerThanThePageCache) {
    const std::uint64_t records = 1'000'000;  // 8 MB of u64
    const std::uint64_t bytes = records * 8;
    struct Case {
        IoMode input_io, output_io;
        bool possible;
        std::optional<std::uint64_t> resident, cache;
        bool input_direct, output_direct;
    };
    const Case cases[] = {
        {IoMode::automatic, IoMode::automatic, true, bytes, 4 * bytes, false, false},       // warm, fits
        {IoMode::automatic, IoMode::automatic, true, bytes / 2, 4 * bytes, false, false},   // half cached
        {IoMode::automatic, IoMode::automatic, true, bytes / 2 - 1, 4 * bytes, true, false},  // cold
        {IoMode::automatic, IoMode::automatic, true, bytes, bytes - 1, true, true},         // larger than the cache
        {IoMode::automatic, IoMode::automatic, true, bytes, bytes, false, false},
        {IoMode::automatic, IoMode::automatic, true, std::nullopt, std::nullopt, false, false},  // nothing known
        {IoMode::automatic, IoMode::automatic, false, 0, 0, false, false},                  // no direct I/O there
        {IoMode::direct, IoMode::direct, true, bytes, 4 * bytes, true, true},
        {IoMode::direct, IoMode::direct, false, bytes, 4 * bytes, false, false},
        {IoMode::buffered, IoMode::buffered, true, 0, 0, false, false},
        {IoMode::buffered, IoMode::direct, true, 0, 4 * bytes, false, true},
    };
    for (const Case& c : cases) {
        PlanInput input = file_of(records);
        input.input_io = c.input_io;
        input.output_io = c.output_io;
        input.input_direct_possible = input.output_direct_possible = c.possible;
        input.input_resident_bytes = c.resident;
        input.page_cache_bytes = c.cache;
        const SortPlan plan = plan_sort(input, budgets(64 << 20, 4), cpu_capacity(8));
        const std::string what = "case " + std::to_string(&c - cases);
        EXPECT_EQ(plan.input_direct, c.input_direct) << what;
        EXPECT_EQ(plan.output_direct, c.output_direct) << what;
        EXPECT_EQ(plan.direct_io_piece > 0, c.input_direct || c.output_direct || plan.spill_direct) << what;
        EXPECT_EQ(plan.host.direct_io, plan.threads * plan.direct_io_piece) << what;
    }
    // A stream is written in order: never with direct I/O.
    PlanInput streamed = file_of(records);
    streamed.output_streamed = true;
    streamed.output_io = IoMode::direct;
    streamed.output_direct_possible = true;
    EXPECT_FALSE(plan_sort(streamed, budgets(64 << 20, 4), cpu_capacity(8)).output_direct);
    // An output written with direct I/O leaves the page cache to the spilled runs.
    PlanInput spilled = file_of(100'000'000);  // 800 MB against a 64 MiB budget
    spilled.direct_io_possible = spilled.output_direct_possible = true;
    spilled.output_io = IoMode::direct;
    spilled.page_cache_bytes = 100'000'000 * 8;
    const SortPlan runs_cached = plan_sort(spilled, budgets(64 << 20, 4), cpu_capacity(8));
    EXPECT_TRUE(runs_cached.output_direct);
    EXPECT_FALSE(runs_cached.spill_direct);
    spilled.output_io = IoMode::buffered;
    EXPECT_TRUE(plan_sort(spilled, budgets(64 << 20, 4), cpu_capacity(8)).spill_direct);
}
