// The benchmarks' programs (tools/bench/): the CPU peers gpusort-bench-ips4o and (where STXXL is
// built) gpusort-bench-stxxl sort u32, u64 and gensort records into the bytes of an in-test
// stable sort of the input by the reference order (the order of records with equal keys aside:
// the peers do not promise stability), leave the input as it was, and refuse what they cannot do.
#include "cli_run.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

struct Case {
    std::vector<std::string> gen, peer, check;  // check: the key options of gpusort-check and the reference
};

// Runs `peer` (with `options`) on each case, with 1 and 3 threads, and checks its output.
void expect_sorts(const std::string& peer_bin, const std::vector<Case>& cases, const std::vector<std::string>& options) {
    ScratchDir dir;
    for (const Case& c : cases) {
        std::vector<std::string> gen = c.gen;
        gen.push_back(dir / "in");
        ASSERT_EQ(run(GPUSORT_GEN_BIN, gen).status(), 0);
        const std::string input = read_text(dir / "in");
        const KeySpec spec = reference_key_of_options(c.check).spec;
        const std::string expected = with_ties_in_byte_order(reference_record_sort_text(input, spec, false), spec);
        for (const std::string threads : {"1", "3"}) {
            std::vector<std::string> peer = c.peer;
            peer.insert(peer.end(), options.begin(), options.end());
            peer.insert(peer.end(), {"--threads", threads, dir / "in", dir / "out"});
            const Result sorted = run(peer_bin, peer);
            ASSERT_EQ(sorted.status(), 0) << sorted.err;
            EXPECT_NE(sorted.err.find(" s, "), std::string::npos) << sorted.err;  // its phases
            EXPECT_TRUE(with_ties_in_byte_order(read_text(dir / "out"), spec) == expected)
                << c.peer[1] << " with " << threads << " threads: not the reference's records in its order";
            EXPECT_TRUE(read_text(dir / "in") == input) << c.peer[1] << ": the input changed";
            std::vector<std::string> check = c.check;
            check.insert(check.end(), {"--input", dir / "in", dir / "out"});
            const Result checked = run(GPUSORT_CHECK_BIN, check);
            EXPECT_EQ(checked.status(), 0) << c.peer[1] << ": " << checked.out << checked.err;
        }
    }
    write_text(dir / "odd", std::string(13, 'x'));
    std::filesystem::remove(dir / "out");
    EXPECT_EQ(run(peer_bin, {"--type", "u64", dir / "odd", dir / "out"}).status(), 1);
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));  // a failed sort leaves no OUTPUT
    EXPECT_EQ(run(peer_bin, {"--type", "u16", dir / "odd", dir / "out"}).status(), 2);
    EXPECT_EQ(run(peer_bin, {"--type", "u64", dir / "odd"}).status(), 2);
}

}  // namespace

TEST(BenchPeer, Ips4oSortsKeysAndGensortRecordsInOrderWithTheInputsRecords) {
    expect_sorts(GPUSORT_BENCH_IPS4O_BIN,
                 {
                     {{"--type", "u32", "--count", "300000", "--dist", "zipf"}, {"--type", "u32"}, {"--type", "u32"}},
                     {{"--type", "u64", "--count", "300000"}, {"--type", "u64"}, {"--type", "u64"}},
                     {{"--format", "gensort", "--count", "50000"}, {"--type", "gensort"}, {"--format", "gensort"}},
                 },
                 {});
}

// Under a budget of 16 MiB each case is several runs that STXXL spills and merges.
TEST(BenchPeer, StxxlSortsKeysAndGensortRecordsInOrderWithTheInputsRecords) {
#ifndef GPUSORT_BENCH_STXXL_BIN
    GTEST_SKIP() << "gpusort-bench-stxxl is not built here (no libstxxl-dev or OpenMP)";
#else
    expect_sorts(GPUSORT_BENCH_STXXL_BIN,
                 {
                     {{"--type", "u32", "--count", "12M", "--dist", "zipf"}, {"--type", "u32"}, {"--type", "u32"}},
                     {{"--type", "u64", "--count", "6M"}, {"--type", "u64"}, {"--type", "u64"}},
                     {{"--format", "gensort", "--count", "500K"}, {"--type", "gensort"}, {"--format", "gensort"}},
                 },
                 {"--memory", "16"});
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--type", "u64", "--count", "1000", dir / "in"}).status(), 0);
    EXPECT_EQ(run(GPUSORT_BENCH_STXXL_BIN, {"--type", "u64", "--memory", "0", dir / "in", dir / "out"}).status(), 2);
#endif
}
