// The benchmarks' programs (tools/bench/): the CPU peer gpusort-bench-ips4o sorts u32, u64 and
// gensort records as gpusort-check confirms against the input, and refuses what it cannot do.
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace gpusort::testing;

TEST(BenchPeer, SortsKeysAndGensortRecordsInOrderWithTheInputsRecords) {
    ScratchDir dir;
    struct Case {
        std::vector<std::string> gen, peer, check;
    };
    const std::vector<Case> cases = {
        {{"--type", "u32", "--count", "300000", "--dist", "zipf"}, {"--type", "u32"}, {"--type", "u32"}},
        {{"--type", "u64", "--count", "300000"}, {"--type", "u64"}, {"--type", "u64"}},
        {{"--format", "gensort", "--count", "50000"}, {"--type", "gensort"}, {"--format", "gensort"}},
    };
    for (const Case& c : cases) {
        std::vector<std::string> gen = c.gen;
        gen.push_back(dir / "in");
        ASSERT_EQ(run(GPUSORT_GEN_BIN, gen).status(), 0);
        for (const std::string threads : {"1", "3"}) {
            std::vector<std::string> peer = c.peer;
            peer.insert(peer.end(), {"--threads", threads, dir / "in", dir / "out"});
            const Result sorted = run(GPUSORT_BENCH_IPS4O_BIN, peer);
            ASSERT_EQ(sorted.status(), 0) << sorted.err;
            EXPECT_NE(sorted.err.find("read "), std::string::npos) << sorted.err;  // its phases
            std::vector<std::string> check = c.check;
            check.insert(check.end(), {"--input", dir / "in", dir / "out"});
            const Result checked = run(GPUSORT_CHECK_BIN, check);
            EXPECT_EQ(checked.status(), 0) << c.peer[1] << ": " << checked.out << checked.err;
        }
    }
    write_text(dir / "odd", std::string(13, 'x'));
    EXPECT_EQ(run(GPUSORT_BENCH_IPS4O_BIN, {"--type", "u64", dir / "odd", dir / "out"}).status(), 1);
    EXPECT_EQ(run(GPUSORT_BENCH_IPS4O_BIN, {"--type", "u16", dir / "odd", dir / "out"}).status(), 2);
    EXPECT_EQ(run(GPUSORT_BENCH_IPS4O_BIN, {"--type", "u64", dir / "odd"}).status(), 2);
}
