// gpusort-file --plan: it prints every part of the plan (as text, or as JSON with --stats -), reads
// no stream, opens and creates nothing, and the plan it prints is the one the sort then uses.
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace gpusort::testing;

namespace {

// The "plan" object of a report (--plan's JSON or --stats), as written.
std::string plan_object(const std::string& json) {
    const auto start = json.find("\"plan\": {");
    if (start == std::string::npos) return "";
    const auto end = json.find("\n  }", start);
    return end == std::string::npos ? "" : json.substr(start, end - start);
}

class PlanCli : public ::testing::Test {
protected:
    void SetUp() override {
        // 8 MB of keys: many runs under --memory 1M.
        ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "1M", "--seed", "5", dir / "in"}).status(), 0);
        make_folder(dir / "tmp");
    }
    static void make_folder(const std::string& path) { ASSERT_EQ(::mkdir(path.c_str(), 0700), 0) << path; }
    std::vector<std::string> args(std::vector<std::string> more) const {
        std::vector<std::string> all = {"--backend", "cpu", "--memory", "1M", "--threads", "2", "--tmp-dir", dir / "tmp"};
        all.insert(all.end(), more.begin(), more.end());
        return all;
    }
    ScratchDir dir;
};

}  // namespace

TEST_F(PlanCli, PrintsEveryPartAndCreatesNothing) {
    const std::set<std::string> before = dir.entries();
    const Result r = run(GPUSORT_FILE_BIN, args({"--plan", dir / "in", dir / "out"}));
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_EQ(r.err, "");
    for (const char* part : {"input:        1048576 records of 8 bytes", "budgets:      host memory 1.0 MiB, 2 threads",
                             "device:       none", "chunks:       runs of ", "samples:", "merge:", "host memory:  at most ",
                             "disk:         8.0 MiB in '"})
        EXPECT_NE(r.out.find(part), std::string::npos) << "no '" << part << "' in:\n" << r.out;
    EXPECT_EQ(dir.entries(), before);
    EXPECT_TRUE(std::filesystem::is_empty(dir / "tmp"));
}

TEST_F(PlanCli, PrintsThePlanThatTheSortThenUses) {
    const Result plan = run(GPUSORT_FILE_BIN, args({"--plan", "--stats", "-", dir / "in", dir / "out"}));
    ASSERT_EQ(plan.exit_code(), 0) << plan.err;
    EXPECT_EQ(plan.out.rfind("{\n  \"input\": ", 0), 0u) << plan.out;
    const std::string planned = plan_object(plan.out);
    ASSERT_NE(planned, "") << plan.out;
    EXPECT_NE(planned.find("\"size_known\": true, \"records\": 1048576"), std::string::npos) << planned;
    EXPECT_NE(planned.find("\"host_memory\": {"), std::string::npos) << planned;
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));

    const Result sorted = run(GPUSORT_FILE_BIN, args({"--stats", dir / "stats", dir / "in", dir / "out"}));
    ASSERT_EQ(sorted.exit_code(), 0) << sorted.err;
    EXPECT_EQ(plan_object(read_text(dir / "stats")), planned);
}

TEST_F(PlanCli, WritesJsonToAStatsFileBesideTheText) {
    const Result r = run(GPUSORT_FILE_BIN, args({"--plan", "--stats", dir / "plan.json", dir / "in", dir / "out"}));
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("host memory:"), std::string::npos) << r.out;
    EXPECT_NE(plan_object(read_text(dir / "plan.json")), "");
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
}

TEST_F(PlanCli, ReadsNoStream) {
    // A pipe that never ends: --plan must not wait for it.
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    const int read_end = fds[0];
    ChildProcess child(GPUSORT_FILE_BIN, args({"--plan", "-", "-"}), [read_end] {
        if (::dup2(read_end, STDIN_FILENO) < 0) ::_exit(126);
    });
    const Result r = child.wait(std::chrono::seconds(60));
    ::close(fds[0]);
    ::close(fds[1]);
    ASSERT_FALSE(r.timed_out) << "--plan read standard input";
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("a stream of records of 8 bytes"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("one chunk if the stream holds at most "), std::string::npos) << r.out;
}

// 8 MB of keys under --memory 16G: the plan, and so --plan and --stats, gives the sorter what the
// one chunk takes (8 MiB), not the budget's share (it once said "sorter 15.0 GiB"); a stream, whose
// size is not known, is still planned with the share. The sort then runs by that plan.
TEST_F(PlanCli, ASmallInputUnderALargeBudgetPlansItsOwnSize) {
    const std::vector<std::string> large = {"--backend", "cpu", "--memory", "16G", "--threads", "2", "--tmp-dir", dir / "tmp"};
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), large.begin(), large.end());
        return more;
    };
    const Result text = run(GPUSORT_FILE_BIN, with({"--plan", dir / "in", dir / "out"}));
    ASSERT_EQ(text.exit_code(), 0) << text.err;
    EXPECT_NE(text.out.find("host memory:  at most 8.0 MiB of 16.0 GiB: while sorting 8.0 MiB (sorter 8.0 MiB)"),
              std::string::npos)
        << text.out;
    const Result json = run(GPUSORT_FILE_BIN, with({"--plan", "--stats", "-", dir / "in", dir / "out"}));
    ASSERT_EQ(json.exit_code(), 0) << json.err;
    const std::string planned = plan_object(json.out);
    EXPECT_NE(planned.find("\"host_memory\": {\"sorter\": 8388608, "), std::string::npos) << planned;
    EXPECT_NE(planned.find("\"peak\": 8388608}"), std::string::npos) << planned;
    const Result sorted = run(GPUSORT_FILE_BIN, with({"--stats", dir / "stats", dir / "in", dir / "out"}));
    ASSERT_EQ(sorted.exit_code(), 0) << sorted.err;
    EXPECT_EQ(plan_object(read_text(dir / "stats")), planned);

    const Result stream = run(GPUSORT_FILE_BIN, with({"--plan", "--stats", "-", "-", "-"}));
    ASSERT_EQ(stream.exit_code(), 0) << stream.err;
    const std::string streamed = plan_object(stream.out);
    const std::string sorter = "\"host_memory\": {\"sorter\": ";
    const auto at = streamed.find(sorter);
    ASSERT_NE(at, std::string::npos) << streamed;
    EXPECT_GT(std::stoull(streamed.substr(at + sorter.size())), std::uint64_t{7} << 30) << streamed;
}

TEST_F(PlanCli, ABudgetTooSmallIsAnErrorBeforeAnythingIsRead) {
    const Result r = run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "1M", "--record-size", "1048576", "--plan",
                                            "-", "-"});
    expect_one_error_line(r, "memory budget");
    EXPECT_EQ(r.out, "");
}
