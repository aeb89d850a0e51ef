// gpusort-mpi under mpirun with 1 to 4 ranks on this host (--oversubscribe), on the CPU backend:
// its OUTPUT is byte-identical to gpusort-file's on the same input for every key type and record
// layout, skewed, all-equal and sorted data, ranks with no data, --unique and --descending;
// --partitioned gives files that concatenate to the same bytes; the parts stay balanced; a rank
// that fails ends every rank with one message, no OUTPUT and no temp file, and one that dies leaves
// none either; its help is its own. On the GPU backend (DistributedGpu, skipped where no GPU can be
// used), 1 to 3 ranks, one GPU each or sharing them, and a CUDA error on one rank in the exchange
// through the GPUs ends every rank. The sample sort's exchange, through shared memory and by
// messages (over TCP too), is tested in distributed_exchange_test.cpp. gpusort-file's output, which
// the ranks' is compared with, is itself compared with an in-test stable sort of the input's
// records (read before the sort) by the reference order, with --unique the first of each key
// (distributed_run.hpp).
#include "cuda_fault_log.hpp"
#include "distributed_run.hpp"
#include "fault_hook_log.hpp"
#include "gpu_skip.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <sched.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace gpusort::testing;

TEST(Distributed, EveryKeyTypeAndRecordLayoutGivesTheBytesOfOneProcess) {
    ScratchDir dir;
    for (const std::string type : {"u8", "i16", "u32", "i64", "f32", "f64"}) {
        std::vector<std::string> args = {"--type", type, "--count", "50000", "--seed", "3", dir / ("in." + type)};
        if (type[0] == 'f') args.push_back("--special");  // NaNs, infinities, signed zeros
        gen(args);
        expect_same_as_one_process(dir, dir / ("in." + type), {"--type", type}, {"--type", type}, type);
        expect_same_as_one_process(dir, dir / ("in." + type), {"--type", type, "--descending"},
                                   {"--type", type, "--descending"}, type + " descending");
    }
    gen({"--format", "gensort", "--count", "30000", "--seed", "4", dir / "in.dat"});
    expect_same_as_one_process(dir, dir / "in.dat", {"--format", "gensort"}, {"--format", "gensort"}, "gensort");
    // 16-byte records by a u16 at byte 2, then bytes 8..11 descending: many equal keys, so the
    // order of equal keys across ranks (input order) shows.
    gen({"--type", "u64", "--count", "40000", "--dist", "few-unique", "--seed", "5", dir / "in.rec"});
    const std::vector<std::string> keys = {"--record-size", "16", "--key", "2:u16", "--key", "8:bytes:4:desc"};
    expect_same_as_one_process(dir, dir / "in.rec", keys, keys, "records");
}

namespace {

// The figures --stats gave of a job of 4 ranks over 200000 8-byte records taken `way` ("shared" or
// "runs"), in rank order: each rank's range, part, backend and steps (the engine's own sort of its
// part within the sort step); what the parts add up to. Returns the parts' records.
std::vector<std::uint64_t> expect_figures_of_four_ranks(const boost::property_tree::ptree& stats, const std::string& way,
                                                        const std::string& what) {
    EXPECT_EQ(stats.get<int>("ranks"), 4);
    EXPECT_EQ(stats.get<std::string>("exchange"), way) << what;
    EXPECT_EQ(stats.get<std::uint64_t>("output_records"), 200000u) << what;
    std::vector<std::uint64_t> parts;
    for (const auto& part : stats.get_child("part_records")) parts.push_back(part.second.get_value<std::uint64_t>());
    EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), std::uint64_t{0}), 200000u) << what;
    std::uint64_t ranges = 0;
    int rank = 0;
    for (const auto& [_, mine] : stats.get_child("per_rank")) {
        EXPECT_EQ(mine.get<int>("rank"), rank);
        EXPECT_EQ(mine.get<std::uint64_t>("part_records"), parts.at(static_cast<std::size_t>(rank)));
        EXPECT_EQ(mine.get<std::string>("backend"), "cpu");
        EXPECT_GE(mine.get<double>("seconds.total"), mine.get<double>("seconds.sort"));
        EXPECT_GT(mine.get<double>("part_sort.seconds.total"), 0) << rank;
        EXPECT_LE(mine.get<double>("part_sort.seconds.total"), mine.get<double>("seconds.sort")) << rank;
        EXPECT_LE(mine.get<double>("part_sort.seconds.sort"), mine.get<double>("part_sort.seconds.total")) << rank;
        EXPECT_EQ(mine.get<double>("part_sort.merge_phases.gather.seconds"), 0) << rank;  // the CPU merges on the host
        ranges += mine.get<std::uint64_t>("range_records");
        ++rank;
    }
    EXPECT_EQ(rank, 4);
    EXPECT_EQ(ranges, 200000u);
    return parts;
}

// The bytes the ranks sent to each other, by --stats.
std::uint64_t bytes_sent(const boost::property_tree::ptree& stats) {
    std::uint64_t sent = 0;
    for (const auto& [_, mine] : stats.get_child("per_rank")) sent += mine.get<std::uint64_t>("exchange_bytes_sent");
    return sent;
}

}  // namespace

// Both ways of one host: the sample sort (--exchange shared), whose splitters break ties by input
// position, and the sort first (--exchange runs, the default), whose parts are cut to the record.
TEST(Distributed, SkewedAllEqualAndSortedInputsStayBalanced) {
    ScratchDir dir;
    for (const std::string dist : {"equal", "sorted", "reversed", "zipf", "few-unique", "uniform"}) {
        gen({"--count", "200000", "--dist", dist, "--seed", "6", dir / "in"});
        expect_same_as_one_process(dir, dir / "in", {}, {}, dist);
        ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
        for (const std::string way : {"shared", "runs"}) {
            const Result r = mpi_sort(4, {"--exchange", way, "--stats", "-", dir / "in", dir / "out"});
            ASSERT_EQ(r.status(), 0) << r.err;
            EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << dist << ", " << way << ": not the same bytes";
            const auto stats = stats_of(r.err);
            const std::vector<std::uint64_t> parts = expect_figures_of_four_ranks(stats, way, dist);
            if (way == "shared") {
                // Each rank keeps about a quarter of its range and sends the rest (8-byte keys).
                if (dist == "uniform") {
                    EXPECT_GT(bytes_sent(stats), 200000u * 8 / 2) << r.err;
                }
                // Ties are broken by input position: even all-equal keys split evenly.
                EXPECT_LT(stats.get<double>("imbalance"), 0.05) << dist << ": " << r.err;
            } else {
                // Nothing is sent, and each part is its range's size: 50000 records.
                EXPECT_EQ(bytes_sent(stats), 0u) << r.err;
                EXPECT_EQ(parts, (std::vector<std::uint64_t>(4, 50000u))) << dist;
                EXPECT_EQ(stats.get<double>("imbalance"), 0) << dist;
            }
            ::unlink((dir / "out").c_str());
        }
        ::unlink((dir / "one").c_str());
    }
}

TEST(Distributed, RanksWithNoDataAndEmptyInputs) {
    ScratchDir dir;
    gen({"--count", "2", "--seed", "7", dir / "two"});  // ranks 0 and 2 of 4 get no records
    expect_same_as_one_process(dir, dir / "two", {}, {}, "two records");
    write_text(dir / "empty", "");
    expect_same_as_one_process(dir, dir / "empty", {}, {}, "empty");
    gen({"--count", "5", "--dist", "equal", "--seed", "7", dir / "five"});
    expect_same_as_one_process(dir, dir / "five", {"--unique"}, {"--unique"}, "five equal, --unique");
}

// One rank sorts INPUT straight from its file, as gpusort-file does: no samples, no counting pass,
// no exchange; an --input-list, which may join several files, still goes the way of many ranks.
TEST(Distributed, OneRankSortsInputStraightFromItsFile) {
    ScratchDir dir;
    gen({"--count", "100000", "--seed", "19", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const std::string expected = read_text(dir / "one");
    const Result r = mpi_sort(1, {"--stats", "-", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == expected);
    const auto stats = stats_of(r.err);
    const auto& mine = stats.get_child("per_rank").begin()->second;
    EXPECT_EQ(stats.get<int>("splitters"), 0);
    EXPECT_EQ(mine.get<std::uint64_t>("part_records"), 100000u);
    EXPECT_EQ(mine.get<std::string>("range_read"), "sort");
    EXPECT_EQ(mine.get<double>("seconds.samples"), 0);
    EXPECT_EQ(mine.get<double>("seconds.counting"), 0);
    EXPECT_EQ(mine.get<double>("seconds.exchange"), 0);
    EXPECT_GT(mine.get<double>("part_sort.seconds.total"), 0);
    write_text(dir / "list", dir / "in" + "\n");
    const Result listed = mpi_sort(1, {"--input-list", dir / "list", "--stats", "-", dir / "listed"});
    ASSERT_EQ(listed.status(), 0) << listed.err;
    EXPECT_TRUE(read_text(dir / "listed") == expected);
    const auto listed_stats = stats_of(listed.err);
    const auto& listed_rank = listed_stats.get_child("per_rank").begin()->second;
    EXPECT_EQ(listed_stats.get<std::string>("exchange"), "runs");  // its runs merged as a rank's of many
    EXPECT_EQ(listed_rank.get<std::string>("range_read"), "map");
    EXPECT_EQ(stats.get<std::string>("exchange"), "none");
    const Result counted = mpi_sort(1, {"--exchange", "shared", "--input-list", dir / "list", "--stats", "-", dir / "counted"});
    ASSERT_EQ(counted.status(), 0) << counted.err;
    EXPECT_TRUE(read_text(dir / "counted") == expected);
    EXPECT_GT(stats_of(counted.err).get_child("per_rank").begin()->second.get<double>("seconds.counting"), 0);
}

TEST(Distributed, UniqueKeepsTheFirstOfEachKeyAcrossRanks) {
    ScratchDir dir;
    // 100-byte records with 300 distinct keys: the first of each in input order is kept, wherever
    // its group falls between ranks.
    gen({"--format", "gensort", "--count", "20000", "--seed", "8", dir / "in"});
    const std::vector<std::string> key = {"--record-size", "100", "--key", "0:u8"};
    expect_same_as_one_process(dir, dir / "in", {"--record-size", "100", "--key", "0:u8", "--unique"},
                               {"--record-size", "100", "--key", "0:u8", "--unique"}, "gensort by one byte, --unique");
    gen({"--count", "100000", "--dist", "few-unique", "--seed", "9", dir / "keys"});
    expect_same_as_one_process(dir, dir / "keys", {"--unique"}, {"--unique"}, "few-unique u64, --unique");
}

TEST(Distributed, PartitionedOutputsConcatenateToTheSortedWhole) {
    ScratchDir dir;
    gen({"--count", "100000", "--dist", "zipf", "--seed", "10", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    for (int ranks = 1; ranks <= 4; ++ranks) {
        const Result r = mpi_sort(ranks, {"--partitioned", dir / "in", dir / "part"});
        ASSERT_EQ(r.status(), 0) << r.err;
        std::string whole;
        for (int rank = 0; rank < ranks; ++rank) {
            char suffix[16];
            std::snprintf(suffix, sizeof suffix, ".%05d", rank);
            const std::string name = dir / ("part" + std::string(suffix));
            const Result check = run(GPUSORT_CHECK_BIN, {name});
            EXPECT_EQ(check.status(), 0) << name << ": " << check.out << check.err;
            whole += read_text(name);
            ::unlink(name.c_str());
        }
        EXPECT_TRUE(whole == read_text(dir / "one")) << ranks << " ranks";
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "one"})) << ranks << " ranks";
    }
}

TEST(Distributed, AFailingRankEndsEveryRankWithNoOutputAndNoTempFiles) {
    ScratchDir dir, tmp;
    gen({"--count", "100000", "--seed", "11", dir / "in"});
    write_text(dir / "out", "keep me");
    // Rank 1 of 2 is given a temp folder that does not exist (MPMD: each rank its own options).
    // --threads keeps the note on CPUs left idle away, as in mpi_sort.
    const Result r = run(GPUSORT_MPIEXEC,
                         {"--oversubscribe", "-n", "1", GPUSORT_MPI_BIN, "--backend", "cpu", "--threads", "1", "--tmp-dir",
                          tmp.path(), dir / "in", dir / "out", ":", "-n", "1", GPUSORT_MPI_BIN, "--backend", "cpu", "--threads",
                          "1", "--tmp-dir", dir / "missing", dir / "in", dir / "out"},
                         allow_mpirun);
    EXPECT_EQ(r.status(), 1) << r.err;
    // One line of ours (mpirun adds its own report of the status after it).
    EXPECT_EQ(r.err.rfind("gpusort-mpi: rank 1: cannot use temp folder '" + (dir / "missing") + "'", 0), 0u) << r.err;
    EXPECT_EQ(count_lines_from_us(r.err), 1) << r.err;
    EXPECT_EQ(read_text(dir / "out"), "keep me");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
    EXPECT_TRUE(tmp.entries().empty());

    // A bad input fails on every rank: one line, from rank 0, and nothing written.
    write_text(dir / "odd", std::string(13, 'x'));
    const Result odd = mpi_sort(3, {dir / "odd", dir / "out"});
    EXPECT_EQ(odd.status(), 1) << odd.err;
    EXPECT_EQ(odd.err.rfind("gpusort-mpi: rank 0: ", 0), 0u) << odd.err;
    EXPECT_EQ(count_lines_from_us(odd.err), 1) << odd.err;
    EXPECT_NE(odd.err.find("not a multiple of the record size 8"), std::string::npos) << odd.err;
    EXPECT_EQ(read_text(dir / "out"), "keep me");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "odd", "out"}));

    // OUTPUT in a folder that does not exist: the words of gpusort-file, whichever way the ranks go.
    for (const std::string way : {"runs", "shared"}) {
        const Result nowhere = mpi_sort(2, {"--exchange", way, dir / "in", dir / "missing/out"});
        EXPECT_EQ(nowhere.status(), 1) << way << ": " << nowhere.err;
        EXPECT_EQ(nowhere.err.rfind("gpusort-mpi: rank 0: cannot write '" + (dir / "missing/out") + "'", 0), 0u)
            << way << ": " << nowhere.err;
        EXPECT_EQ(count_lines_from_us(nowhere.err), 1) << way << ": " << nowhere.err;
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "odd", "out"}));

    // A command line that cannot be run: status 2, one line.
    const Result bad = mpi_sort(2, {"--memory", "lots", dir / "in", dir / "out"});
    EXPECT_EQ(bad.status(), 2) << bad.err;
    EXPECT_EQ(bad.err.rfind("gpusort-mpi: --memory", 0), 0u) << bad.err;
    EXPECT_EQ(count_lines_from_us(bad.err), 1) << bad.err;
    const Result piped = mpi_sort(2, {dir / "in", dir / "out.zst"});
    EXPECT_EQ(piped.status(), 1) << piped.err;
    EXPECT_NE(piped.err.find("must be an uncompressed file"), std::string::npos) << piped.err;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "odd", "out"}));
}

// A write that fails while a round of the exchange moves (on its own thread) ends every rank as any
// failure does. gpusort-mpi-faults is gpusort-mpi with the fault hook of io/syscalls.hpp: a run of one
// rank logs the sites of its calls; then the first pwrite of every rank fails with ENOSPC. Nothing is
// written before the exchange, whose rounds write the part each rank receives into a temp file here
// (--memory 4M), so that write is the one that fails.
TEST(Distributed, AWriteFailingInTheExchangeEndsEveryRankWithNoOutputAndNoTempFiles) {
    ScratchDir dir, tmp;
    gen({"--count", "1000003", "--seed", "19", dir / "in"});
    auto faulty = [&](int ranks, const std::string& log, const std::string& fault) {
        return run(GPUSORT_MPIEXEC,
                   {"--oversubscribe", "-n", std::to_string(ranks), GPUSORT_MPI_FAULTS_BIN, "--backend", "cpu", "--threads",
                    "1", "--memory", "4M", "--tmp-dir", tmp.path(), dir / "in", dir / "out"},
                   [&] {
                       allow_mpirun();
                       if (!log.empty()) ::setenv("GPUSORT_FAULT_LOG", log.c_str(), 1);
                       if (!fault.empty()) ::setenv("GPUSORT_FAULT_INJECT", fault.c_str(), 1);
                   });
    };
    const std::string log = tmp / "sites";
    const Result logged = faulty(1, log, "");
    ASSERT_EQ(logged.status(), 0) << logged.err;
    std::string site;  // "pwrite FILE:LINE" of the first site of pwrite in the log
    for (const Site& reached : read_log(log).sites)
        if (site.empty() && reached.op == "pwrite") site = reached.op + " " + reached.location;
    ::unlink(log.c_str());
    ASSERT_FALSE(site.empty()) << "no pwrite in the log";
    write_text(dir / "out", "keep me");
    const Result r = faulty(3, "", site + " 1 ENOSPC");
    EXPECT_EQ(r.status(), 1) << r.err;
    EXPECT_EQ(r.err.rfind("gpusort-mpi: rank 0: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_EQ(count_lines_from_us(r.err), 1) << r.err;
    EXPECT_EQ(read_text(dir / "out"), "keep me");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
    EXPECT_TRUE(tmp.entries().empty());
}

namespace {

// 3 ranks of gpusort-mpi-faults from dir/in to dir/out on the CPU, with temp files in `tmp` and the
// options `extra`: rank `dying` with `env` (its own environment), the others with none.
Result three_faulty_ranks(const ScratchDir& dir, const ScratchDir& tmp, int dying, const std::string& env,
                          const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--oversubscribe"};
    for (int r = 0; r < 3; ++r) {
        if (r > 0) args.push_back(":");
        args.insert(args.end(), {"-n", "1"});
        if (r == dying) args.insert(args.end(), {"env", env});
        args.insert(args.end(), {GPUSORT_MPI_FAULTS_BIN, "--backend", "cpu", "--threads", "1", "--tmp-dir", tmp.path()});
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), {dir / "in", dir / "out"});
    }
    return run(GPUSORT_MPIEXEC, args, allow_mpirun);
}

// The sites that rank 0 of a run of three_faulty_ranks() with `extra` reached (its log); the files
// the run made are removed.
std::vector<Site> sites_of_rank_zero(const ScratchDir& dir, const ScratchDir& tmp, const std::vector<std::string>& extra) {
    const std::string log = tmp / "sites";
    const Result logged = three_faulty_ranks(dir, tmp, 0, "GPUSORT_FAULT_LOG=" + log, extra);
    EXPECT_EQ(logged.status(), 0) << logged.err;
    std::vector<Site> sites = read_log(log).sites;
    ::unlink(log.c_str());
    for (const char* name : {"out", "out.00000", "out.00001", "out.00002"}) ::unlink((dir / name).c_str());
    return sites;
}

// "OP FILE:LINE" of the first site of `op` among `sites` (or with `last`, the last) whose function
// names `function` (any, where empty); empty where there is none.
std::string site_of(const std::vector<Site>& sites, const std::string& op, const std::string& function, bool last = false) {
    std::string found;
    for (const Site& reached : sites)
        if (reached.op == op && reached.function.find(function) != std::string::npos && (last || found.empty()))
            found = reached.op + " " + reached.location;
    return found;
}

// Rank `dying` of 3 killed (SIGKILL) at the first call of `site`, under the options `extra`: the job
// fails within the bound that tells done from hung (scaled for sanitizers: wait_bounds.hpp), an old
// OUTPUT stays as it was, and nothing else is left in dir or tmp.
void expect_a_death_leaves_nothing(const ScratchDir& dir, const ScratchDir& tmp, int dying, const std::string& site,
                                   const std::vector<std::string>& extra) {
    const std::string what = "rank " + std::to_string(dying) + " killed at " + site;
    write_text(dir / "out", "keep me");
    const auto start = std::chrono::steady_clock::now();
    const Result r = three_faulty_ranks(dir, tmp, dying, "GPUSORT_FAULT_INJECT=" + site + " 1 SIGKILL", extra);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_NE(r.status(), 0) << what << ": " << r.err;
    EXPECT_LT(took, 2 * kHangBound) << what << ": took " << std::chrono::duration<double>(took).count() << " s";
    EXPECT_EQ(read_text(dir / "out"), "keep me") << what;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"})) << what;
    EXPECT_TRUE(tmp.entries().empty()) << what;
}

}  // namespace

// A rank that dies (SIGKILL: the kernel's out-of-memory killer, a lost node) can clean nothing up.
// The launcher then ends the others (SIGTERM), and they remove what the dead rank named: nothing
// appears at OUTPUT, an old OUTPUT stays, no temp file is left, and no rank waits for the dead one.
// gpusort-mpi-faults kills itself at a chosen call (io/syscalls.hpp), found in the log of a run. In
// the sample sort (--memory 4M): rank 0 as it moves the finished OUTPUT into place (its hidden file
// complete), rank 1 at its first write in the exchange, and with --partitioned rank 2 as its file
// goes into place.
TEST(Distributed, ARankThatDiesInTheSampleSortLeavesNoOutputNoTempFileAndNoRankWaiting) {
    ScratchDir dir, tmp;
    gen({"--count", "1000003", "--seed", "23", dir / "in"});
    const std::vector<Site> sites = sites_of_rank_zero(dir, tmp, {"--memory", "4M"});
    const std::string commit = site_of(sites, "fchmod", "AtomicOutputFile::commit", true);  // as OUTPUT goes into place
    const std::string write = site_of(sites, "pwrite", "");
    ASSERT_FALSE(commit.empty()) << "no fchmod of the commit in the log";
    ASSERT_FALSE(write.empty()) << "no pwrite in the log";
    expect_a_death_leaves_nothing(dir, tmp, 0, commit, {"--memory", "4M"});
    expect_a_death_leaves_nothing(dir, tmp, 1, write, {"--memory", "4M"});
    expect_a_death_leaves_nothing(dir, tmp, 2, commit, {"--memory", "4M", "--partitioned"});
}

// Where the ranks sort first (no --memory: the default --exchange runs): rank 1 as it reserves its
// region of OUTPUT for its runs (its first fallocate), with --sync rank 2 as it flushes its part,
// copied over its runs (its first fdatasync), and rank 0 as it sizes OUTPUT's hidden file, made but
// not yet opened by the others (its only ftruncate).
TEST(Distributed, ARankThatDiesSortingFirstLeavesNoOutputNoTempFileAndNoRankWaiting) {
    ScratchDir dir, tmp;
    gen({"--count", "1000003", "--seed", "23", dir / "in"});
    const std::vector<Site> sites = sites_of_rank_zero(dir, tmp, {"--sync"});
    const std::string reserve = site_of(sites, "fallocate", ""), sync = site_of(sites, "fdatasync", "");
    const std::string size = site_of(sites, "ftruncate", "", true);
    ASSERT_FALSE(reserve.empty()) << "no fallocate of the runs' region in the log";
    ASSERT_FALSE(sync.empty()) << "no fdatasync in the log";
    ASSERT_FALSE(size.empty()) << "no ftruncate in the log";
    expect_a_death_leaves_nothing(dir, tmp, 1, reserve, {});
    expect_a_death_leaves_nothing(dir, tmp, 2, sync, {"--sync"});
    expect_a_death_leaves_nothing(dir, tmp, 0, size, {});
}

// With --partitioned --sync, rank 2 once its file is in place (as it flushes OUTPUT's folder): the
// others remove it. Partition names that are symbolic links: each file goes to its link's target, and
// that is where the ranks remove a file in place; the links stay.
TEST(Distributed, ARankThatDiesOnceItsFileIsInPlaceLeavesNoPartitionFile) {
    ScratchDir dir, tmp;
    gen({"--count", "1000003", "--seed", "23", dir / "in"});
    const std::string placed = site_of(sites_of_rank_zero(dir, tmp, {"--partitioned", "--sync"}), "open", "flush_folder", true);
    ASSERT_FALSE(placed.empty()) << "no flush of the folder in the log";
    expect_a_death_leaves_nothing(dir, tmp, 2, placed, {"--partitioned", "--sync"});
    ScratchDir targets;
    for (const char* name : {"00000", "00001", "00002"})
        ASSERT_EQ(::symlink((targets / (std::string("t") + name)).c_str(), (dir / (std::string("out.") + name)).c_str()), 0);
    const Result linked = three_faulty_ranks(dir, tmp, 2, "GPUSORT_FAULT_INJECT=" + placed + " 1 SIGKILL", {"--partitioned", "--sync"});
    EXPECT_NE(linked.status(), 0) << linked.err;
    EXPECT_TRUE(targets.entries().empty()) << "a partition file was left at its link's target";
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out", "out.00000", "out.00001", "out.00002"}));
    EXPECT_TRUE(tmp.entries().empty());
}

// Sorting first writes the runs through maps of OUTPUT, on space reserved first. Where OUTPUT's file
// system cannot reserve space (every File::allocate answered EOPNOTSUPP by the fault hook of
// gpusort-mpi-faults, as on a file system without fallocate), the ranks take the sample sort, with
// the bytes of one process, and leave nothing behind. The site is rank 0's first fallocate in the
// log of a run: its question to OUTPUT's folder.
TEST(Distributed, AFileSystemThatCannotReserveSpaceTakesTheSampleSort) {
    ScratchDir dir, tmp;
    gen({"--count", "300007", "--seed", "29", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const std::string log = tmp / "sites";
    // rank 0 with `env` (its own environment), ranks 1 and 2 with `others`.
    auto job = [&](const std::string& env, const std::string& others) {
        std::vector<std::string> args = {"--oversubscribe"};
        for (int r = 0; r < 3; ++r) {
            if (r > 0) args.push_back(":");
            args.insert(args.end(), {"-n", "1"});
            if (!(r == 0 ? env : others).empty()) args.insert(args.end(), {"env", r == 0 ? env : others});
            args.insert(args.end(), {GPUSORT_MPI_FAULTS_BIN, "--backend", "cpu", "--threads", "1", "--stats", "-",
                                     dir / "in", dir / "out"});
        }
        return run(GPUSORT_MPIEXEC, args, allow_mpirun);
    };
    const Result logged = job("GPUSORT_FAULT_LOG=" + log, "");
    ASSERT_EQ(logged.status(), 0) << logged.err;
    EXPECT_EQ(stats_of(logged.err).get<std::string>("exchange"), "runs");
    std::string reserve;  // "fallocate FILE:LINE"
    for (const Site& reached : read_log(log).sites)
        if (reserve.empty() && reached.op == "fallocate") reserve = reached.op + " " + reached.location;
    ::unlink(log.c_str());
    ::unlink((dir / "out").c_str());
    ASSERT_FALSE(reserve.empty()) << "no fallocate in the log";

    const std::string cannot = "GPUSORT_FAULT_INJECT=" + reserve + " * EOPNOTSUPP";
    const Result r = job(cannot, cannot);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(stats_of(r.err).get<std::string>("exchange"), "shared");
    EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << "not the same bytes";
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "one", "out"}));
    EXPECT_TRUE(tmp.entries().empty());
}

// --input-list: the listed files, one after the other, are INPUT. The files are cut at uneven
// record boundaries (two of them empty), and the keys repeat, so the order of equal keys across
// files and ranks shows; the output is gpusort-file's on the concatenation.
TEST(Distributed, InputListSortsTheFilesAsOneInput) {
    ScratchDir dir;
    // 60000 records of 24 bytes: three u64 keys each, with few distinct values.
    gen({"--type", "u64", "--count", "180000", "--dist", "few-unique", "--seed", "12", dir / "whole"});
    const std::string whole = read_text(dir / "whole");
    const std::vector<std::size_t> cuts = {0, 24 * 1, 24 * 1, 24 * 17000, 24 * 41234, whole.size()};
    std::string list = "\n";  // an empty line is skipped
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const std::string name = dir / ("piece" + std::to_string(i));
        write_text(name, whole.substr(cuts[i], cuts[i + 1] - cuts[i]));
        list += name + (i == 2 ? "\r\n" : "\n");
    }
    write_text(dir / "list", list);
    const std::vector<std::string> keys = {"--record-size", "24", "--key", "4:u16", "--key", "16:u8:desc"};
    ASSERT_EQ(file_sort_checked(keys, dir / "whole", dir / "one").status(), 0);
    const std::string expected = read_text(dir / "one");
    for (int ranks = 1; ranks <= 4; ++ranks) {
        for (const bool joined : {false, true}) {
            std::vector<std::string> mpi_args = keys;
            if (joined)
                mpi_args.push_back("--input-list=" + (dir / "list"));
            else
                mpi_args.insert(mpi_args.end(), {"--input-list", dir / "list"});
            mpi_args.push_back(dir / "many");
            const Result r = mpi_sort(ranks, mpi_args);
            ASSERT_EQ(r.status(), 0) << ranks << " ranks: " << r.err;
            EXPECT_TRUE(read_text(dir / "many") == expected) << ranks << " ranks: not the bytes of gpusort-file";
            ::unlink((dir / "many").c_str());
        }
    }

    // A listed file that is missing, or not whole records: one line naming it, no OUTPUT.
    write_text(dir / "bad-list", dir / "piece0" + "\n" + dir / "gone" + "\n");
    Result r = mpi_sort(2, {"--input-list", dir / "bad-list", dir / "many"});
    EXPECT_EQ(r.status(), 1) << r.err;
    EXPECT_EQ(count_lines_from_us(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("'" + (dir / "gone") + "'"), std::string::npos) << r.err;
    write_text(dir / "odd", std::string(13, 'x'));
    write_text(dir / "odd-list", dir / "odd" + "\n");
    r = mpi_sort(2, {"--record-size", "24", "--input-list", dir / "odd-list", dir / "many"});
    EXPECT_EQ(r.status(), 1) << r.err;
    EXPECT_NE(r.err.find("'" + (dir / "odd") + "' is 13 bytes long"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "many"));
    // The list stands for INPUT: an INPUT beside it, or two lists, is a bad command line.
    r = mpi_sort(1, {"--input-list", dir / "list", dir / "whole", dir / "many"});
    EXPECT_EQ(r.status(), 2) << r.err;
    EXPECT_NE(r.err.find("give OUTPUT alone"), std::string::npos) << r.err;
    r = mpi_sort(1, {"--input-list", dir / "list", "--input-list", dir / "list", dir / "many"});
    EXPECT_EQ(r.status(), 2) << r.err;
    EXPECT_NE(r.err.find("more than once"), std::string::npos) << r.err;
}

// --progress: rank 0 alone draws the line, which ends with the job's summary; with --unique it says
// how many records were kept (as many as gpusort-file keeps).
TEST(Distributed, ProgressLineFromRankZeroEndsWithTheJobsSummary) {
    ScratchDir dir;
    gen({"--count", "200000", "--dist", "few-unique", "--seed", "13", dir / "in"});
    Result r = mpi_sort(3, {"--progress", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    const std::string summary = "sorted 200000 records (1.53 MiB) on 3 ranks in ";
    ASSERT_NE(r.err.find(summary), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(summary), r.err.rfind(summary)) << "one line, from rank 0: " << r.err;
    EXPECT_NE(r.err.find('\r'), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("of even"), std::string::npos) << r.err;

    ASSERT_EQ(file_sort_checked({"--unique"}, dir / "in", dir / "one").status(), 0);
    const std::uint64_t kept = read_text(dir / "one").size() / 8;
    ASSERT_LT(kept, 200000u);
    ::unlink((dir / "out").c_str());
    r = mpi_sort(2, {"--progress", "--unique", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_NE(r.err.find("sorted 200000 records, " + std::to_string(kept) + " kept ("), std::string::npos) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one"));
    // Without --progress, and not on a terminal: no line.
    ::unlink((dir / "out").c_str());
    r = mpi_sort(2, {dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err.find("sorted "), std::string::npos) << r.err;
}

// A rank bound to fewer CPUs than the host's ranks could use says so once, and how to free them;
// unbound, or with --threads given, it says nothing.
TEST(Distributed, RanksBoundToFewCpusSayHowToUseThemAll) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0 || CPU_COUNT(&cpus) < 2)
        GTEST_SKIP() << "one CPU: a bound rank leaves none idle";
    ScratchDir dir;
    gen({"--count", "20000", "--seed", "14", dir / "in"});
    auto sort_bound = [&](const std::string& binding, const std::vector<std::string>& options) {
        std::vector<std::string> all = {"--oversubscribe", "--bind-to", binding, "-n", "1", GPUSORT_MPI_BIN, "--backend", "cpu"};
        all.insert(all.end(), options.begin(), options.end());
        all.insert(all.end(), {dir / "in", dir / "out"});
        ::unlink((dir / "out").c_str());
        return run(GPUSORT_MPIEXEC, all, allow_mpirun);
    };
    Result r = sort_bound("core", {});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err.rfind("gpusort-mpi: rank 0: note: this rank may run on 1 of the host's ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("--bind-to none"), std::string::npos) << r.err;
    EXPECT_EQ(count_lines_from_us(r.err), 1) << r.err;
    r = sort_bound("none", {});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "");
    r = sort_bound("core", {"--threads", "1"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "");
}

// Unbound ranks of a host, each of which may run on all of its CPUs, take an equal share of them
// (at least one thread); one rank takes them all; --threads is taken as given.
TEST(Distributed, UnboundRanksShareTheHostsCpus) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    ASSERT_EQ(::sched_getaffinity(0, sizeof cpus, &cpus), 0);
    const int host = CPU_COUNT(&cpus);  // mpirun, started from here, may run on these
    ScratchDir dir;
    gen({"--count", "30000", "--seed", "15", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const std::string expected = read_text(dir / "one");
    auto threads_of_ranks = [&](int n, const std::vector<std::string>& options) {
        std::vector<std::string> all = {"--oversubscribe", "--bind-to", "none", "-n", std::to_string(n), GPUSORT_MPI_BIN,
                                        "--backend", "cpu", "--stats", "-"};
        all.insert(all.end(), options.begin(), options.end());
        all.insert(all.end(), {dir / "in", dir / "out"});
        ::unlink((dir / "out").c_str());
        const Result r = run(GPUSORT_MPIEXEC, all, allow_mpirun);
        EXPECT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_text(dir / "out") == expected) << n << " ranks";
        const auto stats = stats_of(r.err);
        std::vector<int> threads;
        for (const auto& [_, rank] : stats.get_child("per_rank")) threads.push_back(rank.get<int>("threads"));
        return threads;
    };
    EXPECT_EQ(threads_of_ranks(1, {}), std::vector<int>{host});
    EXPECT_EQ(threads_of_ranks(2, {}), std::vector<int>(2, std::max(1, host / 2)));
    EXPECT_EQ(threads_of_ranks(3, {}), std::vector<int>(3, std::max(1, host / 3)));
    EXPECT_EQ(threads_of_ranks(2, {"--threads", "3"}), std::vector<int>(2, 3));
}

// A small --memory cuts the exchange into many rounds (blocks of 1 to 2 MiB), whose buffers are
// reused from round to round; the ranks' ranges are uneven in records, so they end their rounds
// apart. A range that lies in one file is read through a map of it, and the records' parts (2
// bytes each) are kept from the counting pass; the records received stay in memory or go to a temp
// file as the 8 MiB allow (exchange_memory.hpp). One rank sorts INPUT straight from its file. An
// --input-list cut inside a range makes that rank keep its range, or read it twice.
TEST(Distributed, ManyRoundsOfTheExchangeGiveTheBytesOfOneProcess) {
    ScratchDir dir;
    gen({"--count", "1000003", "--dist", "few-unique", "--seed", "15", dir / "in"});
    expect_same_as_one_process(dir, dir / "in", {"--memory", "8M"}, {}, "8 MiB of memory");
    // gensort records: 100-byte records, blocks that are not a power of two.
    gen({"--format", "gensort", "--count", "60001", "--seed", "16", dir / "in.dat"});
    expect_same_as_one_process(dir, dir / "in.dat", {"--format", "gensort", "--memory", "8M"}, {"--format", "gensort"},
                               "gensort in 8 MiB");
    // The u64 records as two files of an --input-list, cut at record 123457: a range that lies in
    // one of them is mapped; one across both is read into memory once where the budget holds it,
    // else block by block, twice (within 8 MiB).
    const std::string whole = read_text(dir / "in");
    write_text(dir / "a", whole.substr(0, 8 * 123457));
    write_text(dir / "b", whole.substr(8 * 123457));
    write_text(dir / "list", dir / "a" + "\n" + dir / "b" + "\n");
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const std::string expected = read_text(dir / "one");
    for (const bool small : {false, true}) {
        std::vector<std::string> args = {"--input-list", dir / "list", "--stats", "-", dir / "many"};
        if (small) args.insert(args.begin(), {"--memory", "8M"});
        const Result r = mpi_sort(2, args);
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_text(dir / "many") == expected) << small;
        ::unlink((dir / "many").c_str());
        const auto stats = stats_of(r.err);
        std::vector<std::string> read;
        for (const auto& [_, rank] : stats.get_child("per_rank")) read.push_back(rank.get<std::string>("range_read"));
        EXPECT_EQ(read, (std::vector<std::string>{small ? "twice" : "kept", "map"})) << small;
    }
}

// --exchange gpu where a rank has no GPU to exchange through (here the CPU backend): the ranks sort
// first as with --exchange runs, and rank 0 says why, once. By default (--exchange auto), they sort
// first without a word.
TEST(Distributed, TheExchangeThroughTheGpusWithoutOneSortsFirstAndSaysWhy) {
    ScratchDir dir;
    gen({"--count", "200001", "--seed", "33", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const Result r = mpi_sort(2, {"--exchange", "gpu", "--stats", dir / "stats.json", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << "not the same bytes";
    // Why: the CPU backend, or a build without GPUs, which says so first.
    const std::string said = "gpusort-mpi: rank 0: note: the exchange through the GPUs cannot be used (rank 0: ";
    const std::string then = "): the ranks sort first as with --exchange runs\n";
    EXPECT_TRUE(r.err == said + "--backend cpu" + then || r.err == said + "this build has no GPU support" + then) << r.err;
    EXPECT_EQ(stats_of(read_text(dir / "stats.json")).get<std::string>("exchange"), "runs");
    for (const bool named : {false, true}) {
        ::unlink((dir / "out").c_str());
        std::vector<std::string> args = {"--stats", dir / "stats.json", dir / "in", dir / "out"};
        if (named) args.insert(args.begin(), {"--exchange", "auto"});
        const Result quiet = mpi_sort(2, args);
        ASSERT_EQ(quiet.status(), 0) << quiet.err;
        EXPECT_EQ(quiet.err, "") << named;
        EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << named << ": not the same bytes";
        EXPECT_EQ(stats_of(read_text(dir / "stats.json")).get<std::string>("exchange"), "runs") << named;
    }
}

// The ranks of one host sort first (--exchange runs; by default where the GPUs cannot be used, as
// on the CPU backend here): each forms its runs in its region of OUTPUT, and merges its part of
// every rank's runs, cut to the record, where they lie. Under --memory of 2.5 times its range (its
// part takes half) each rank forms several runs (the CPU sorter's chunks take the rest); ranges of
// uneven sizes (1000003 records) give parts of the same sizes. The bytes are gpusort-file's, and
// nothing is sent: each rank's merge reads from the other ranks' runs the records of its part that
// lie in their ranges (counted here from INPUT, equal keys in input order, as the runs' order gives
// them).
TEST(Distributed, RanksOfAHostMergeEachOthersRunsWhereTheyLie) {
    ScratchDir dir;
    gen({"--count", "1000003", "--seed", "25", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const std::string expected = read_text(dir / "one");
    // Input positions in sorted order.
    std::vector<std::uint64_t> values(1000003);
    const std::string input = read_text(dir / "in");
    ASSERT_EQ(input.size(), values.size() * 8);
    std::memcpy(values.data(), input.data(), input.size());
    std::vector<std::uint64_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return values[a] < values[b]; });
    for (int ranks = 2; ranks <= 4; ++ranks) {
        const std::string memory = std::to_string(1000003 * 8 * 5 / 2 / ranks / 1024 + 1) + "K";
        const Result r = mpi_sort(ranks, {"--memory", memory, "--stats", "-", dir / "in", dir / "many"});
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_text(dir / "many") == expected) << ranks << " ranks: not the same bytes";
        ::unlink((dir / "many").c_str());
        const auto stats = stats_of(r.err);
        EXPECT_EQ(stats.get<std::string>("exchange"), "runs") << ranks;
        EXPECT_EQ(stats.get<int>("splitters"), 0);
        int rank = 0;
        for (const auto& [_, mine] : stats.get_child("per_rank")) {
            const std::uint64_t first = 1000003ull * rank / ranks, next = 1000003ull * (rank + 1) / ranks;
            EXPECT_EQ(mine.get<std::uint64_t>("range_records"), next - first) << ranks;
            EXPECT_EQ(mine.get<std::uint64_t>("part_records"), next - first) << ranks;
            EXPECT_EQ(mine.get<std::uint64_t>("exchange_bytes_sent"), 0u) << ranks;
            const auto from_others = std::count_if(order.begin() + static_cast<std::ptrdiff_t>(first),
                                                   order.begin() + static_cast<std::ptrdiff_t>(next),
                                                   [&](std::uint64_t at) { return at < first || at >= next; });
            EXPECT_GT(from_others, 0) << ranks;
            EXPECT_EQ(mine.get<std::uint64_t>("peer_bytes_read"), static_cast<std::uint64_t>(from_others) * 8) << ranks;
            EXPECT_GT(mine.get<std::uint64_t>("runs"), 1u) << ranks;
            EXPECT_EQ(mine.get<std::string>("range_read"), "map");
            ++rank;
        }
        EXPECT_EQ(rank, ranks);
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "one"}));
}

// Where the sort first cannot go (a part beyond half the budget, --verify, a range across files of
// an --input-list, records with a key, --unique), the ranks take the sample sort, with the bytes of
// one process.
TEST(Distributed, WhereSortingFirstCannotGoTheRanksTakeTheSampleSort) {
    ScratchDir dir;
    gen({"--count", "1000003", "--seed", "25", dir / "in"});
    ASSERT_EQ(file_sort_checked({}, dir / "in", dir / "one").status(), 0);
    const std::string expected = read_text(dir / "one");
    const std::string whole = read_text(dir / "in");
    write_text(dir / "a", whole.substr(0, 8 * 400000));  // rank 0 of 2 has records 0..500000: both files
    write_text(dir / "b", whole.substr(8 * 400000));
    write_text(dir / "list", dir / "a" + "\n" + dir / "b" + "\n");
    struct Case {
        std::vector<std::string> options;
        std::string why;
    };
    for (const Case& c : {Case{{"--memory", "6M", dir / "in"}, "a part beyond half the budget"},
                          Case{{"--verify", dir / "in"}, "--verify"},
                          Case{{"--input-list", dir / "list"}, "a range across two files"}}) {
        std::vector<std::string> args = c.options;
        args.insert(args.end(), {"--stats", "-", dir / "many"});
        const Result r = mpi_sort(2, args);
        ASSERT_EQ(r.status(), 0) << c.why << ": " << r.err;
        EXPECT_TRUE(read_text(dir / "many") == expected) << c.why << ": not the same bytes";
        ::unlink((dir / "many").c_str());
        EXPECT_EQ(stats_of(r.err).get<std::string>("exchange"), "shared") << c.why;
    }
    // Records with a key, and --unique, go the sample sort's way too.
    gen({"--count", "300000", "--dist", "few-unique", "--seed", "26", dir / "rec"});
    const std::vector<std::string> keys = {"--record-size", "16", "--key", "2:u16"};
    expect_same_as_one_process(dir, dir / "rec", keys, keys, "records");
    expect_same_as_one_process(dir, dir / "rec", {"--unique"}, {"--unique"}, "--unique");
    for (const std::vector<std::string>& options : {keys, std::vector<std::string>{"--unique"}}) {
        std::vector<std::string> args = options;
        args.insert(args.end(), {"--stats", "-", dir / "rec", dir / "many"});
        const Result r = mpi_sort(2, args);
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_EQ(stats_of(r.err).get<std::string>("exchange"), "shared") << options.front();
        ::unlink((dir / "many").c_str());
    }
}

// Without --memory, the ranks of a host share its default memory budget (they run at once), so that
// four ranks do not take four times what one would; with --memory, each rank has what it says.
TEST(Distributed, RanksOfAHostShareTheDefaultMemoryBudget) {
    ScratchDir dir;
    gen({"--count", "100000", "--seed", "18", dir / "in"});
    auto budgets = [&](int ranks, const std::vector<std::string>& options) {
        std::vector<std::string> args = options;
        args.insert(args.end(), {"--stats", "-", dir / "in", dir / "out"});
        const Result r = mpi_sort(ranks, args);
        EXPECT_EQ(r.status(), 0) << r.err;
        ::unlink((dir / "out").c_str());
        std::vector<std::uint64_t> all;
        if (r.status() != 0) return all;
        const auto stats = stats_of(r.err);
        for (const auto& [_, rank] : stats.get_child("per_rank")) {
            all.push_back(rank.get<std::uint64_t>("memory_budget"));
            EXPECT_EQ(rank.get<std::uint64_t>("device_memory_budget"), 0u);  // the CPU backend has none
        }
        return all;
    };
    const std::vector<std::uint64_t> one = budgets(1, {});
    ASSERT_EQ(one.size(), 1u);
    const std::vector<std::uint64_t> four = budgets(4, {});
    ASSERT_EQ(four.size(), 4u);
    // A quarter each, give or take what the host's free memory does between the runs.
    for (const std::uint64_t budget : four) {
        EXPECT_GT(budget, 0u);
        EXPECT_LT(budget, one[0] / 2) << "one rank alone: " << one[0];
    }
    for (const std::uint64_t budget : budgets(3, {"--memory", "8M"})) EXPECT_EQ(budget, std::uint64_t{8} << 20);
}

// A note that every rank has (here: --device-memory, which the CPU backend does not use) is said
// once, by rank 0, not once per rank; --quiet says none.
TEST(Distributed, ANoteOfEveryRankIsSaidOnce) {
    ScratchDir dir;
    gen({"--count", "10000", "--seed", "25", dir / "in"});
    Result r = mpi_sort(3, {"--device-memory", "4M", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "gpusort-mpi: rank 0: note: --device-memory is not used: the sort runs on the CPU (--backend cpu)\n");
    ::unlink((dir / "out").c_str());
    r = mpi_sort(3, {"--quiet", "--device-memory", "4M", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "");
}

// gpusort-mpi's --help is its own, said once however many ranks: its usage under mpirun, its
// options, what it refuses, its exit statuses and examples under mpirun (as root with
// --allow-run-as-root). It offers none of what it refuses: standard input or output, compressed
// files, --plan.
TEST(Distributed, HelpIsGpusortMpisOwnAndOffersNoStreamOrCompressedFile) {
    const Result r = run(GPUSORT_MPIEXEC, {"--oversubscribe", "-n", "2", GPUSORT_MPI_BIN, "--help"}, allow_mpirun);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "");
    const std::string usage = "Usage: mpirun -n N gpusort-mpi [OPTIONS] INPUT OUTPUT\n";
    EXPECT_EQ(r.out.rfind(usage, 0), 0u) << r.out;
    EXPECT_EQ(r.out.find(usage, 1), std::string::npos) << "said more than once: " << r.out;
    for (const std::string said : {"--input-list FILE OUTPUT", "--partitioned", "--exchange WAY", "Exit status:\n  0  sorted",
                                   "  1  the sort failed on some rank", "  2  a bad command line", "mpirun --allow-run-as-root"})
        EXPECT_NE(r.out.find(said), std::string::npos) << said << " not in: " << r.out;
    EXPECT_EQ(r.out.find("gpusort-file [OPTIONS]"), std::string::npos) << "gpusort-file's usage: " << r.out;
    EXPECT_EQ(r.out.find("may be - for standard input"), std::string::npos) << r.out;
    // Its option lines ("  --NAME ...") and examples ("  mpirun ..."): none that chooses a
    // compression or plans, none that reads a pipe or writes a compressed file.
    std::istringstream lines(r.out);
    int options = 0, examples = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("  --", 0) == 0) {
            ++options;
            for (const std::string refused : {"--input-compression", "--output-compression", "--compression-level", "--plan"})
                EXPECT_NE(line.rfind("  " + refused, 0), 0u) << line;
        }
        if (line.rfind("  mpirun ", 0) == 0) {
            ++examples;
            EXPECT_NE(line.find("gpusort-mpi "), std::string::npos) << line;
            for (const std::string stream : {"|", " - ", ".gz", ".bz2", ".xz", ".zst"}) EXPECT_EQ(line.find(stream), std::string::npos) << line;
        }
    }
    EXPECT_GT(options, 10) << r.out;
    EXPECT_GE(examples, 3) << r.out;
}

// Columns (--values, --index-out, --gather) are gpusort-file's alone for now: gpusort-mpi refuses
// them in one line, as a bad command line, and writes nothing.
TEST(Distributed, ColumnsAreRefusedInOneLine) {
    ScratchDir dir;
    gen({"--count", "1000", "--seed", "3", dir / "in"});
    gen({"--count", "1000", "--seed", "4", dir / "v"});
    const std::vector<std::vector<std::string>> asks = {
        {dir / "in", dir / "out", "--values", dir / "v" + ":" + dir / "vo"},
        {dir / "in", dir / "out", "--index-out", dir / "i"},
        {"--gather", dir / "in", dir / "v", dir / "vo"}};
    for (const std::vector<std::string>& ask : asks) {
        std::vector<std::string> args = {"--oversubscribe", "-n", "2", GPUSORT_MPI_BIN};
        args.insert(args.end(), ask.begin(), ask.end());
        const Result r = run(GPUSORT_MPIEXEC, args, allow_mpirun);
        EXPECT_EQ(r.status(), 2) << ask[2] << ": " << r.err;
        EXPECT_NE(r.err.find("gpusort-mpi: --values, --index-out and --gather are not supported by gpusort-mpi yet"),
                  std::string::npos) << r.err;
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "v"})) << ask[2];
    }
}

// Text lines (--lines) are gpusort-file's and gpusort-sort's alone: gpusort-mpi once took the option
// and sorted the text as u64 keys; it refuses it in one line and writes nothing.
TEST(Distributed, LinesAreRefusedInOneLine) {
    ScratchDir dir;
    std::ofstream(dir / "in") << "b\na\nc\n";
    const Result r = run(GPUSORT_MPIEXEC, {"--oversubscribe", "-n", "2", GPUSORT_MPI_BIN, "--lines", dir / "in", dir / "out"},
                         allow_mpirun);
    EXPECT_EQ(r.status(), 2) << r.err;
    EXPECT_NE(r.err.find("gpusort-mpi: --lines is not supported by gpusort-mpi yet"), std::string::npos) << r.err;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));
}

// On the GPU (skipped where none can be used): every rank sorts its part on GPU rank mod the GPUs of
// its host (3 ranks on 2 GPUs share one; on one GPU all share it and, without --device-memory, its
// memory), in one chunk and in many under a small --device-memory (merged on the device): the same
// bytes as gpusort-file on the CPU, for whole-record keys of both orders, floats with NaNs and
// infinities, records with key fields, gensort records and --unique.
// --exchange gpu: each rank copies its pieces of every rank's sorted chunks from that rank's GPU
// (gpu/peer_exchange.hpp). Small --device-memory budgets give many chunks and, where a rank receives
// more than a chunk at once (two sorted copies of the same keys, one in each half of INPUT), several
// runs from one chunk. Every key width, both orders, NaNs, skewed and equal keys: the bytes of
// gpusort-file, parts within 5% of each other, and what crossed between the ranks counted.
TEST(DistributedGpu, TheExchangeThroughTheGpusGivesTheBytesOfOneProcess) {
    SKIP_WITHOUT_GPU();
    ScratchDir dir;
    struct Case {
        std::string type, dist, device_memory;
        bool descending;
    };
    const std::vector<Case> cases = {{"u64", "uniform", "2M", false},  {"u64", "zipf", "1M", true},
                                     {"u64", "equal", "1M", false},    {"u64", "sorted", "1M", false},
                                     {"u8", "uniform", "1M", false},   {"u16", "few-unique", "1M", true},
                                     {"i32", "normal", "1M", true},    {"f32", "uniform", "1M", false},
                                     {"f64", "uniform", "2M", true}};
    for (const Case& c : cases) {
        const std::string what = c.type + " " + c.dist + (c.descending ? " descending" : "") + " under --device-memory " + c.device_memory;
        std::vector<std::string> g = {"--type", c.type, "--count", "1000003", "--dist", c.dist, "--seed", "31", dir / "in"};
        if (c.type[0] == 'f') g.insert(g.begin(), "--special");
        gen(g);
        std::vector<std::string> key = {"--type", c.type};
        if (c.descending) key.push_back("--descending");
        ASSERT_EQ(file_sort_checked(key, dir / "in", dir / "one").status(), 0) << what;
        for (int ranks = 2; ranks <= 3; ++ranks) {
            std::vector<std::string> args = key;
            args.insert(args.end(), {"--exchange", "gpu", "--device-memory", c.device_memory, "--stats", "-", dir / "in", dir / "out"});
            const Result r = mpi_sort(ranks, args, "gpu");
            ASSERT_EQ(r.status(), 0) << what << " on " << ranks << " ranks: " << r.err;
            EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << what << " on " << ranks << " ranks: not the same bytes";
            const auto stats = stats_of(r.err);
            EXPECT_EQ(stats.get<std::string>("exchange"), "gpu") << what;
            EXPECT_LT(stats.get<double>("imbalance"), 0.05) << what << " on " << ranks << " ranks";
            std::uint64_t crossed = 0, sent = 0;
            for (const auto& [_, mine] : stats.get_child("per_rank")) {
                crossed += mine.get<std::uint64_t>("peer_bytes_read");
                sent += mine.get<std::uint64_t>("exchange_bytes_sent");
                // Random keys bring a rank about a chunk a round: one run each, none split off
                // (the receive buffer's margin).
                if (c.dist == "uniform") {
                    EXPECT_GT(mine.get<std::uint64_t>("exchange_rounds"), 2u) << what << ": several chunks";
                    EXPECT_EQ(mine.get<std::uint64_t>("runs"), mine.get<std::uint64_t>("exchange_rounds"))
                        << what << " on " << ranks << " ranks: one run per round";
                }
            }
            EXPECT_EQ(crossed, sent) << what << ": what the ranks copied is what the others' chunks gave";
            if (c.dist == "uniform") {
                EXPECT_GT(crossed, 0u) << what;
            }
            ::unlink((dir / "out").c_str());
        }
        ::unlink((dir / "one").c_str());
    }

    // Two sorted copies of the same keys, one in each half: every rank's chunk falls in one part at
    // a time, so a rank receives two chunks' worth at once and forms several runs of them.
    gen({"--type", "u32", "--count", "500000", "--dist", "sorted", "--seed", "32", dir / "half"});
    {
        const std::string half = read_text(dir / "half");
        std::ofstream(dir / "in", std::ios::binary) << half << half;
    }
    ASSERT_EQ(file_sort_checked({"--type", "u32"}, dir / "in", dir / "one").status(), 0);
    const Result r = mpi_sort(2, {"--type", "u32", "--exchange", "gpu", "--device-memory", "1M", "--stats", "-", dir / "in", dir / "out"}, "gpu");
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << "two sorted copies: not the same bytes";
    const auto stats = stats_of(r.err);
    EXPECT_LT(stats.get<double>("imbalance"), 0.05);
    std::uint64_t runs = 0, rounds = 0;
    for (const auto& [_, mine] : stats.get_child("per_rank")) {
        runs += mine.get<std::uint64_t>("runs");
        rounds += mine.get<std::uint64_t>("exchange_rounds");
    }
    EXPECT_GT(runs, rounds) << "two sorted copies: a rank that receives two chunks at once forms more than a run";
}

// A CUDA error on one rank in the middle of the exchange through the GPUs (gpusort-mpi-faults: the
// test-only CUDA fault injector of gpu/cuda_result.cpp, on rank 1 alone) ends every rank: rank 1
// says why in one line, status 1, an old OUTPUT is kept and no file is left. The points: a logged
// run of rank 1 numbers its checked CUDA results; the second copy of a piece from a GPU (on the
// job's thread) and the second copy of a run to the host (on the thread that copies runs out) fail.
// Those threads run side by side, so a run may number them a little differently: whichever result
// the number falls on, it lies among the rounds of the exchange.
TEST(DistributedGpu, ACudaErrorOnOneRankInTheExchangeThroughTheGpusEndsEveryRank) {
    SKIP_WITHOUT_GPU();
    ScratchDir dir, tmp;
    gen({"--count", "1000003", "--seed", "33", dir / "in"});
    const std::vector<std::string> options = {"--backend", "gpu", "--threads", "4", "--exchange", "gpu", "--device-memory", "1M",
                                              "--tmp-dir", tmp.path(), dir / "in", dir / "out"};
    auto job = [&](const std::string& env) {
        std::vector<std::string> args = {"--oversubscribe", "-n", "1", GPUSORT_MPI_FAULTS_BIN};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {":", "-n", "1", "env", env, GPUSORT_MPI_FAULTS_BIN});
        args.insert(args.end(), options.begin(), options.end());
        return run(GPUSORT_MPIEXEC, args, allow_mpirun);
    };
    const std::string log = tmp / "cuda";
    const Result logged = job("GPUSORT_CUDA_FAULT_LOG=" + log);
    ASSERT_EQ(logged.status(), 0) << logged.err;
    std::map<std::string, std::vector<std::uint64_t>> points = read_cuda_fault_log(log).points;
    ::unlink(log.c_str());
    ::unlink((dir / "out").c_str());
    for (const std::string operation : {"cudaMemcpyAsync (a piece of a rank's sorted chunk)", "cudaMemcpyAsync (a run to the host)"}) {
        ASSERT_GE(points[operation].size(), 3u) << operation << ": not reached in several rounds";
        const std::uint64_t at = points[operation][1];
        write_text(dir / "out", "keep me");
        const Result r = job("GPUSORT_CUDA_FAULT=" + std::to_string(at));
        EXPECT_EQ(r.status(), 1) << operation << " (" << at << "): " << r.err;
        EXPECT_EQ(r.err.rfind("gpusort-mpi: rank 1: ", 0), 0u) << operation << ": " << r.err;
        EXPECT_NE(r.err.find("[cudaErrorLaunchFailure]"), std::string::npos) << operation << ": " << r.err;
        EXPECT_EQ(count_lines_from_us(r.err), 1) << operation << ": " << r.err;
        EXPECT_EQ(read_text(dir / "out"), "keep me") << operation;
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"})) << operation;
        EXPECT_TRUE(tmp.entries().empty()) << operation;
    }
}

TEST(DistributedGpu, EveryRankSortsItsPartOnAGpuGivingTheBytesOfOneProcess) {
    SKIP_WITHOUT_GPU();
    ScratchDir dir;
    gen({"--count", "2000003", "--seed", "21", dir / "u64"});
    expect_same_as_one_process(dir, dir / "u64", {}, {}, "u64 on the GPU", "gpu", 3);
    expect_same_as_one_process(dir, dir / "u64", {"--device-memory", "2M", "--descending"}, {"--descending"},
                               "u64 descending under --device-memory 2M", "gpu", 3);
    gen({"--type", "f32", "--count", "1000001", "--special", "--seed", "22", dir / "f32"});
    expect_same_as_one_process(dir, dir / "f32", {"--type", "f32", "--device-memory", "1M"}, {"--type", "f32"},
                               "f32 with NaNs under --device-memory 1M", "gpu", 3);
    gen({"--count", "600000", "--dist", "few-unique", "--seed", "23", dir / "rec"});
    const std::vector<std::string> keys = {"--record-size", "16", "--key", "2:u16", "--key", "8:bytes:4:desc"};
    std::vector<std::string> small = keys;
    small.insert(small.end(), {"--device-memory", "1M"});
    expect_same_as_one_process(dir, dir / "rec", small, keys, "records under --device-memory 1M", "gpu", 3);
    gen({"--format", "gensort", "--count", "200001", "--seed", "24", dir / "gensort"});
    expect_same_as_one_process(dir, dir / "gensort", {"--format", "gensort", "--device-memory", "4M"},
                               {"--format", "gensort"}, "gensort under --device-memory 4M", "gpu", 3);
    expect_same_as_one_process(dir, dir / "rec", {"--unique"}, {"--unique"}, "few-unique u64, --unique", "gpu", 3);

    // The sample sort on the GPU too (--exchange shared): the same bytes as gpusort-file's.
    ASSERT_EQ(file_sort_checked({}, dir / "u64", dir / "one").status(), 0);
    for (int ranks = 2; ranks <= 3; ++ranks) {
        const Result shared = mpi_sort(ranks, {"--device-memory", "2M", "--exchange", "shared", dir / "u64", dir / "out"}, "gpu");
        ASSERT_EQ(shared.status(), 0) << shared.err;
        EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << ranks << " ranks, the sample sort: not the same bytes";
        ::unlink((dir / "out").c_str());
    }

    // Each rank says which GPU sorted its part, and took the --device-memory given; the whole-record
    // keys went through the GPUs by default, and the way of shared runs with --exchange runs, their
    // runs merged on the GPU (slices of every rank's runs).
    for (const std::string way : {"gpu", "runs"}) {
        std::vector<std::string> args = {"--device-memory", "2M", "--stats", "-", dir / "u64", dir / "out"};
        if (way == "runs") args.insert(args.begin(), {"--exchange", "runs"});
        const Result r = mpi_sort(2, args, "gpu");
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "one")) << way << ": not the same bytes";
        ::unlink((dir / "out").c_str());
        const auto stats = stats_of(r.err);
        EXPECT_EQ(stats.get<std::string>("exchange"), way);
        int ranks = 0;
        for (const auto& [_, mine] : stats.get_child("per_rank")) {
            EXPECT_NE(mine.get<std::string>("backend"), "cpu") << r.err;
            EXPECT_EQ(mine.get<std::uint64_t>("device_memory_budget"), std::uint64_t{2} << 20) << r.err;
            EXPECT_GT(mine.get<std::uint64_t>("runs"), 1u) << r.err;
            EXPECT_EQ(mine.get<std::uint64_t>("part_sort.merge_phases.gather.bytes"), mine.get<std::uint64_t>("part_records") * 8)
                << r.err;
            ++ranks;
        }
        EXPECT_EQ(ranks, 2) << way;
    }
}
