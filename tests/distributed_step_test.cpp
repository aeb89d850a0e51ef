// A rank's steps (src/distributed/step.hpp): the first failure is kept and stops the work of later
// steps; running out of memory is said in words, with what to change. How a rank spends its memory
// budget in the exchange (src/distributed/exchange_memory.hpp): never more than the budget. The
// ranks' notes (src/distributed/notes.hpp): each said once. The files a rank opens that another made
// (io::File::open_existing): opened as asked, named as the user knows them.
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "scratch_dir.hpp"
#include "src/distributed/exchange_memory.hpp"
#include "src/distributed/host_share.hpp"
#include "src/distributed/notes.hpp"
#include "src/distributed/step.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpusort::distributed {
namespace {

TEST(DistributedStep, KeepsTheFirstFailureAndSkipsTheStepsAfterIt) {
    Step step;
    int ran = 0;
    step([&] { ++ran; });
    EXPECT_EQ(step.failure(), "");
    step([&] { throw std::runtime_error("cannot read 'in': Input/output error"); });
    step([&] { ++ran; });
    step([&] { throw std::runtime_error("a later failure"); });
    EXPECT_EQ(ran, 1);
    EXPECT_EQ(step.failure(), "cannot read 'in': Input/output error");
}

TEST(DistributedStep, OutOfMemoryIsSaidInWordsWithWhatToChange) {
    Step step;
    step([] { throw std::bad_alloc(); });
    EXPECT_EQ(step.failure(), "out of memory (try a smaller --memory)");
}

TEST(DistributedStep, AFailureWithoutWordsIsStillAFailure) {
    struct Silent : std::exception {
        const char* what() const noexcept override { return ""; }
    };
    Step step;
    step([] { throw Silent(); });
    EXPECT_EQ(step.failure(), "unknown error");
}

constexpr std::uint64_t MiB = std::uint64_t{1} << 20, GiB = std::uint64_t{1} << 30;

// Whatever the budget, range, record size, ranks and part: a part received in memory fits beside
// what the exchange holds, within the budget, and leaves its sort half of it; a kept range leaves
// room for a part of its own size and a tenth more (where that is within half the budget).
TEST(ExchangeMemory, TheExchangeHoldsAtMostTheBudget) {
    for (const std::uint64_t budget : {8 * MiB, 100 * MiB, 3 * GiB, 60 * GiB})
        for (const std::size_t width : {std::size_t{1}, std::size_t{8}, std::size_t{100}})
            for (const std::uint64_t range : {std::uint64_t{0}, MiB, budget / 8, budget / 3, budget, 4 * budget})
                for (const int ranks : {1, 2, 7, 64})
                    for (const bool mapped : {false, true}) {
                        const ExchangeMemory plan = plan_exchange_memory(budget, range / width, width, ranks, mapped);
                        const std::uint64_t range_bytes = range / width * width;
                        EXPECT_EQ(plan.range_bytes, range_bytes);
                        EXPECT_EQ(plan.range_mapped, mapped);
                        EXPECT_EQ(plan.block % width, 0u);
                        EXPECT_GE(plan.block, std::max<std::uint64_t>(width, MiB / width * width));
                        EXPECT_LE(plan.block, 256 * MiB);
                        EXPECT_EQ(plan.keep_parts, range / width * 2 <= budget / 4);
                        if (mapped) {
                            EXPECT_FALSE(plan.keep_range);
                        }
                        if (plan.keep_range) {
                            const std::uint64_t expected = std::min(range_bytes + range_bytes / 10, budget / 2);
                            EXPECT_TRUE(plan.part_in_memory(expected)) << budget << " " << range << " " << width << " " << ranks;
                        }
                        for (const std::uint64_t part : {std::uint64_t{0}, range_bytes, range_bytes * 2, budget / 2, budget})
                            if (plan.part_in_memory(part)) {
                                EXPECT_LE(part, budget / 2);
                                EXPECT_LE(plan.held() + part, budget) << budget << " " << range << " " << width << " " << ranks;
                            }
                    }
}

// The cases the tests of gpusort-mpi run into, and the one the old rule of a quarter of the budget
// missed: 16 GiB of u64 per rank in a budget of 60 GiB, kept (INPUT read once) with its part in
// memory.
TEST(ExchangeMemory, WhatIsKeptForSomeRanges) {
    ExchangeMemory plan = plan_exchange_memory(60 * GiB, 2 * GiB, 8, 2, false);
    EXPECT_TRUE(plan.keep_parts);
    EXPECT_TRUE(plan.keep_range);
    EXPECT_EQ(plan.block, 256 * MiB);
    EXPECT_TRUE(plan.part_in_memory(16 * GiB + 16 * GiB / 20));  // 5% above an even share
    EXPECT_FALSE(plan.part_in_memory(31 * GiB));                  // beyond half the budget
    // 8.8 MB of u64 on one rank in 8 MiB: nothing kept (the parts alone, 2 bytes a record, take more
    // than a quarter), the part in a temp file; a block of an eighth of the budget (two rounds' send
    // areas, the block read, and what a round may bring besides).
    plan = plan_exchange_memory(8 * MiB, 1100003, 8, 1, false);
    EXPECT_FALSE(plan.keep_parts);
    EXPECT_FALSE(plan.keep_range);
    EXPECT_EQ(plan.block, MiB);
    EXPECT_EQ(plan.held(), 3 * MiB);
    EXPECT_FALSE(plan.part_in_memory(8800024));
    // 3.2 MB on each of 3 ranks: the parts kept, and the part in memory; the range is not kept
    // (beside two send areas of 1 MiB, the parts and the part expected it would take 9.6 MB), and
    // is within 16 MiB.
    plan = plan_exchange_memory(8 * MiB, 400003, 8, 3, false);
    EXPECT_TRUE(plan.keep_parts);
    EXPECT_FALSE(plan.keep_range);
    EXPECT_EQ(plan.held(), 3 * MiB + 400003 * 2);
    EXPECT_TRUE(plan.part_in_memory(400003 * 8));
    plan = plan_exchange_memory(16 * MiB, 400003, 8, 3, false);
    EXPECT_TRUE(plan.keep_range);
    EXPECT_EQ(plan.held(), 2 * plan.block + 400003 * 10);
    EXPECT_TRUE(plan.part_in_memory(400003 * 8));
    // The same range mapped from INPUT: neither kept nor read into a block, it takes none of the
    // budget, so that the part fits in memory beside two send areas and the parts.
    plan = plan_exchange_memory(8 * MiB, 400003, 8, 3, true);
    EXPECT_TRUE(plan.keep_parts);
    EXPECT_FALSE(plan.keep_range);
    EXPECT_EQ(plan.held(), 2 * MiB + 400003 * 2);
    EXPECT_TRUE(plan.part_in_memory(400003 * 8));
    // 100-byte records: blocks of whole records.
    plan = plan_exchange_memory(8 * MiB, 60001, 100, 4, false);
    EXPECT_EQ(plan.block, MiB / 100 * 100);
}

// Rank r of a host takes GPU r mod the GPUs; the ranks that share one GPU, counted by hand.
TEST(GpuShare, RanksOfAHostShareItsGpusInTurn) {
    EXPECT_EQ(device_of(0, 2), 0);
    EXPECT_EQ(device_of(3, 2), 1);
    EXPECT_EQ(device_of(5, 0), 0);  // no GPU
    EXPECT_EQ(ranks_sharing_device(0, 1, 1), 1);
    EXPECT_EQ(ranks_sharing_device(1, 2, 1), 2);  // two ranks on one GPU
    EXPECT_EQ(ranks_sharing_device(1, 2, 2), 1);  // one rank per GPU
    EXPECT_EQ(ranks_sharing_device(0, 3, 2), 2);  // ranks 0 and 2 on GPU 0
    EXPECT_EQ(ranks_sharing_device(1, 3, 2), 1);  // rank 1 alone on GPU 1
    EXPECT_EQ(ranks_sharing_device(2, 8, 3), 2);  // ranks 2 and 5 on GPU 2
    EXPECT_EQ(ranks_sharing_device(0, 8, 3), 3);  // ranks 0, 3 and 6 on GPU 0
    EXPECT_EQ(ranks_sharing_device(1, 4, 8), 1);  // more GPUs than ranks
    EXPECT_EQ(ranks_sharing_device(2, 4, 0), 4);  // no GPU: all of them
}

// Unbound ranks (each on all of the host's CPUs) take an equal share of them; ranks bound to CPUs
// of their own take all of theirs, and leave the rest idle. Counted by hand.
TEST(CpuShare, UnboundRanksOfAHostShareItsCpus) {
    EXPECT_EQ(rank_threads(32, 32, 1), 32u);  // one rank: every CPU
    EXPECT_EQ(rank_threads(32, 32, 2), 16u);  // two unbound ranks on 32 CPUs
    EXPECT_EQ(rank_threads(32, 32, 3), 10u);
    EXPECT_EQ(rank_threads(2, 2, 4), 1u);     // more ranks than CPUs: one thread each
    EXPECT_EQ(rank_threads(16, 32, 2), 16u);  // bound to a socket each
    EXPECT_EQ(rank_threads(1, 32, 2), 1u);    // bound to a core each
    EXPECT_EQ(rank_threads(8, 64, 4), 8u);
    EXPECT_EQ(rank_threads(24, 32, 2), 16u);  // overlapping bindings: the share, within the rank's CPUs
    EXPECT_EQ(rank_threads(8, 64, 16), 4u);   // 16 ranks on CPUs of 8 overlapping in pairs
    EXPECT_EQ(rank_threads(0, 0, 0), 1u);
    EXPECT_TRUE(leaves_cpus_idle(1, 32, 2));
    EXPECT_FALSE(leaves_cpus_idle(16, 32, 2));
    EXPECT_FALSE(leaves_cpus_idle(32, 32, 2));
    EXPECT_FALSE(leaves_cpus_idle(2, 2, 4));
}

// Each note once: rank 0's were said as they came, so only the others' that rank 0 did not have are
// said at the end, with the ranks that had them, as runs; a rank's own repeats are kept once.
TEST(DistributedNotes, EachNoteOfTheOtherRanksIsSaidOnceWithItsRanks) {
    EXPECT_EQ(rank_list({2}), "2");
    EXPECT_EQ(rank_list({1, 2, 3}), "1-3");
    EXPECT_EQ(rank_list({0, 2, 5, 6, 7, 9}), "0, 2, 5-7, 9");
    const std::string cpu = "--device-memory is not used: the sort runs on the CPU (--backend cpu)";
    const std::string gpu = "the GPU cannot be used (out of memory); sorting on the CPU";
    const std::string threads = "only 2 of the 8 threads could be started";
    // Every rank had the same note: rank 0 said it.
    EXPECT_EQ(unsaid_notes({{cpu}, {cpu}, {cpu}, {cpu}}), std::vector<std::string>{});
    EXPECT_EQ(unsaid_notes({{}}), std::vector<std::string>{});
    EXPECT_EQ(unsaid_notes({{cpu}, {cpu, gpu}, {cpu}, {gpu, threads}, {gpu}}),
              (std::vector<std::string>{"gpusort-mpi: ranks 1, 3-4: note: " + gpu, "gpusort-mpi: rank 3: note: " + threads}));
    EXPECT_EQ(unsaid_notes({{}, {threads}}), (std::vector<std::string>{"gpusort-mpi: rank 1: note: " + threads}));

    // Kept from many threads at once, each note once, each one line.
    Notes notes;
    std::vector<std::thread> threads_saying;
    for (int t = 0; t < 4; ++t)
        threads_saying.emplace_back([&] {
            for (int i = 0; i < 100; ++i) notes.add(i % 2 ? cpu : "two\nlines");
        });
    for (std::thread& t : threads_saying) t.join();
    EXPECT_EQ(notes.kept(), (std::vector<std::string>{"two lines", cpu}));
}

}  // namespace
// OUTPUT at rank 0's hidden name, which every rank opens to read and write (its runs are mapped for
// writing), and another rank's runs, opened read only: the File is named as the user knows the file,
// and a failure says so in the words given. Checked against the file's bytes as read back by a stream.
TEST(RankFiles, AFileAnotherRankMadeIsOpenedAsAskedAndNamedAsTheUserKnowsIt) {
    testing::ScratchDir dir;
    const std::string hidden = dir / ".out.hidden";
    testing::write_text(hidden, "abcd");
    {
        const io::File both = io::File::open_existing(hidden, true, "cannot write", "out");
        EXPECT_EQ(both.path(), "out");
        const std::string xy = "XY";
        both.write_at(1, std::as_bytes(std::span(xy)));
        std::string back(2, '\0');
        both.read_at(2, std::as_writable_bytes(std::span(back)));
        EXPECT_EQ(back, "Yd");
    }
    EXPECT_EQ(testing::read_text(hidden), "aXYd");
    const io::File runs = io::File::open_existing(hidden, false, "cannot open another rank's runs", hidden);
    EXPECT_EQ(runs.size(), 4u);
    const std::string z = "z";
    EXPECT_THROW(runs.write_at(0, std::as_bytes(std::span(z))), io::IoError);  // read only
    EXPECT_EQ(testing::read_text(hidden), "aXYd");
    try {
        io::File::open_existing(dir / "gone", true, "cannot write", "out");
        ADD_FAILURE() << "a missing file was opened";
    } catch (const io::IoError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("cannot write 'out': No such file or directory", 0), 0u) << e.what();
    }
}

}  // namespace gpusort::distributed
