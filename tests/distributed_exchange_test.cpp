// The sample sort's exchange of gpusort-mpi (--exchange shared and messages) under mpirun on 1 to 3
// ranks of this host, on the CPU backend: through shared memory between the ranks of a host, by MPI
// messages (also over TCP alone, as between hosts), with the parts received in memory and in temp
// files; one rank alone, no room for the shared-memory windows, and --exchange values that are not
// ways. Each sort gives the bytes of gpusort-file on the same input, which are themselves checked
// against an in-test stable sort of the input's records (distributed_run.hpp).
#include "distributed_run.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gpusort::testing;

namespace {

// 1000003 u64 keys of a zipf distribution (8 MB) at dir/in; returns gpusort-file's sort of them,
// checked against the reference.
std::string zipf_input(const ScratchDir& dir) {
    gen({"--count", "1000003", "--dist", "zipf", "--seed", "17", dir / "in"});
    const Result one = file_sort_checked({}, dir / "in", dir / "one");
    EXPECT_EQ(one.status(), 0) << one.err;
    return read_text(dir / "one");
}

// gpusort-mpi on 3 ranks from dir/in to dir/many under `options` (--stats - added), with mpirun's
// own `launcher` options: the bytes must be `expected`, and --stats must say the records went by
// `exchange` ("shared": every byte sent through shared memory; "messages": none), each rank sending
// about two thirds of its third of 8 MB in several rounds, reading its range through a map of INPUT.
void expect_exchange(const ScratchDir& dir, const std::string& expected, const std::vector<std::string>& options,
                     const std::string& exchange, const std::vector<std::string>& launcher = {}) {
    std::string what;
    for (const std::string& option : launcher) what += option + " ";
    for (const std::string& option : options) what += option + " ";
    std::vector<std::string> args = options;
    args.insert(args.end(), {"--stats", "-", dir / "in", dir / "many"});
    const Result r = mpi_sort(3, args, "cpu", launcher);
    ASSERT_EQ(r.status(), 0) << what << r.err;
    EXPECT_TRUE(read_text(dir / "many") == expected) << what << "not the same bytes";
    ::unlink((dir / "many").c_str());
    const auto stats = stats_of(r.err);
    EXPECT_EQ(stats.get<std::string>("exchange"), exchange) << what;
    int ranks = 0;
    for (const auto& [_, rank] : stats.get_child("per_rank")) {
        const auto sent = rank.get<std::uint64_t>("exchange_bytes_sent");
        const auto shared = rank.get<std::uint64_t>("shared_bytes_sent");
        EXPECT_GT(sent, 1000000u) << what;  // about two thirds of a third of 8 MB
        EXPECT_GE(rank.get<std::uint64_t>("exchange_rounds"), 3u) << what;  // 2.7 MB in blocks of at most 1 MiB
        EXPECT_EQ(rank.get<std::string>("range_read"), "map") << what;  // one INPUT file
        EXPECT_EQ(shared, exchange == "shared" ? sent : 0u) << what;
        ++ranks;
    }
    EXPECT_EQ(ranks, 3) << what;
}

}  // namespace

// The ranks of one host exchange records through shared memory (each lays its pieces out in its
// send area, each receiver copies its own out); with --exchange messages, by MPI messages. 8 MB of
// records on 3 ranks: a part of about 2.7 MB, in memory within 8 MiB (half of it) and in a temp
// file within 4 MiB; rounds of at most 1 MiB blocks.
TEST(Distributed, SharedMemoryAndMessagesGiveTheBytesOfOneProcess) {
    ScratchDir dir;
    const std::string expected = zipf_input(dir);
    expect_exchange(dir, expected, {"--memory", "8M", "--exchange", "shared"}, "shared");
    expect_exchange(dir, expected, {"--memory", "8M", "--exchange", "messages"}, "messages");
    expect_exchange(dir, expected, {"--memory", "4M", "--exchange", "shared"}, "shared");
    expect_exchange(dir, expected, {"--memory", "4M", "--exchange=messages"}, "messages");
}

// The way between hosts: MPI messages that cross by TCP. Open MPI is held to its TCP transport (and
// the point-to-point layer that uses it: ob1, not UCX), so that no message between the ranks goes
// through shared memory; the parts are received in memory and in temp files.
TEST(Distributed, MessagesOverTcpGiveTheBytesOfOneProcess) {
    ScratchDir dir;
    const std::string expected = zipf_input(dir);
    const std::vector<std::string> tcp = {"--mca", "pml", "ob1", "--mca", "btl", "self,tcp"};
    expect_exchange(dir, expected, {"--memory", "8M", "--exchange", "messages"}, "messages", tcp);
    expect_exchange(dir, expected, {"--memory", "4M", "--exchange", "messages"}, "messages", tcp);
    // Held to no transport but a rank's own, the ranks cannot reach each other: what they sent above
    // crossed by TCP. Open MPI says so ("unable to reach each other"), or, on a busy machine where
    // its help system fails to send that text, only that MPI_Init failed, or only that its help
    // system failed (its show_help.c; seen about once in 30 runs on 2 cores).
    const Result none = mpi_sort(3, {"--exchange", "messages", dir / "in", dir / "many"}, "cpu", {"--mca", "pml", "ob1", "--mca", "btl", "self"});
    EXPECT_NE(none.status(), 0) << none.err;
    EXPECT_TRUE(none.err.find("unable to reach each other") != std::string::npos || none.err.find("MPI_Init") != std::string::npos ||
                none.err.find("show_help") != std::string::npos) << none.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "many"));
}

// One rank alone on its host (here of an --input-list, which it does not sort straight from its
// file) has no one to share memory with: messages, and nothing said.
TEST(Distributed, ARankAloneOnItsHostSendsMessagesSayingNothing) {
    ScratchDir dir;
    const std::string expected = zipf_input(dir);
    write_text(dir / "list", dir / "in" + "\n");
    const Result alone = mpi_sort(1, {"--memory", "8M", "--exchange", "shared", "--input-list", dir / "list", "--stats", "-",
                                      dir / "many"});
    ASSERT_EQ(alone.status(), 0) << alone.err;
    EXPECT_EQ(count_lines_from_us(alone.err), 0) << alone.err;
    EXPECT_EQ(stats_of(alone.err).get<std::string>("exchange"), "messages");
    EXPECT_TRUE(read_text(dir / "many") == expected) << "one rank: not the same bytes";
}

// Where Open MPI's windows would not fit (here: their folder is missing), the ranks say so and send
// messages instead; an Open MPI that tried would leave all ranks but one waiting for ever.
TEST(Distributed, WithNoRoomForTheWindowsTheRanksSaySoAndSendMessages) {
    ScratchDir dir;
    const std::string expected = zipf_input(dir);
    const std::string missing = dir / "missing";
    const Result no_room = run(GPUSORT_MPIEXEC,
                               {"--oversubscribe", "-n", "3", GPUSORT_MPI_BIN, "--backend", "cpu", "--threads", "1", "--memory",
                                "8M", "--exchange", "shared", "--stats", "-", dir / "in", dir / "many"},
                               [&] {
                                   allow_mpirun();
                                   ::setenv("OMPI_MCA_osc_sm_backing_directory", missing.c_str(), 1);
                               });
    ASSERT_EQ(no_room.status(), 0) << no_room.err;
    EXPECT_NE(no_room.err.find("gpusort-mpi: rank 0: note: the ranks could not share memory (cannot read the free space of '" +
                               missing + "'"),
              std::string::npos)
        << no_room.err;
    EXPECT_EQ(count_lines_from_us(no_room.err), 1) << no_room.err;
    EXPECT_EQ(stats_of(no_room.err.substr(no_room.err.find('{'))).get<std::string>("exchange"), "messages");
    EXPECT_TRUE(read_text(dir / "many") == expected) << "no room: not the same bytes";
}

// A way that is none of them, or a value that is the next option (refused, as by gpusort-file), is
// a bad command line: status 2, and no OUTPUT.
TEST(Distributed, AnExchangeThatIsNoWayIsABadCommandLine) {
    ScratchDir dir;
    gen({"--count", "1000", "--seed", "17", dir / "in"});
    const Result r = mpi_sort(2, {"--exchange", "carrier-pigeon", dir / "in", dir / "many"});
    EXPECT_EQ(r.status(), 2) << r.err;
    EXPECT_NE(r.err.find("--exchange takes auto, gpu, runs, shared or messages, not 'carrier-pigeon'"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "many"));
    const Result swallowed = mpi_sort(2, {"--exchange", "--stats=-", dir / "in", dir / "many"});
    EXPECT_EQ(swallowed.status(), 2) << swallowed.err;
    EXPECT_NE(swallowed.err.find("--exchange: its value is missing ('--stats=-' looks like an option)"), std::string::npos)
        << swallowed.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "many"));
}
