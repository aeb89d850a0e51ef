// The budget is a promise: gpusort-file, run as a child with --memory 64M on inputs that force many
// runs, keeps its peak private memory within the budget plus kOverhead, sorting file to file,
// stdin to stdout, into a .zst file, from a .zst file and records; its --plan, which creates
// nothing, plans no more than the budget. Private memory is the resident anonymous memory
// (RssAnon of /proc/PID/status: the output's memory map and the page cache are not in it),
// sampled every millisecond or so; where nothing is mapped, the kernel's own peak of the resident
// set (ru_maxrss, which also holds the program's code) bounds it too. Every output is compared
// byte for byte with an in-test stable sort of the input by the reference order, and the input with
// a copy, both written to files before the sorts: the test holds no data while a sort runs (the
// ru_maxrss of a child counts what it had from the test before its exec).
#include "cli_run.hpp"
#include "reference_order.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>

using namespace gpusort::testing;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kBudget = 64 * kMiB;
// What the program takes besides its budget: thread stacks, malloc's arenas, TBB, the state of the
// compression libraries, the loader's data. Measured: at most 5 MiB above the budget (69 MiB under
// --memory 64M, stdin to stdout with 16 threads, on 2 cores; 66 MiB on the 16-core GPU machine).
constexpr std::uint64_t kOverhead = 16 * kMiB;
// The code and libraries mapped from files, which ru_maxrss counts as well.
constexpr std::uint64_t kCode = 16 * kMiB;

// The child's resident anonymous memory now, in bytes; 0 once it is gone.
std::uint64_t resident_anonymous(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8)) * 1024;
    return 0;
}

struct Measured {
    Result result;
    std::uint64_t peak_anonymous = 0;
    std::uint64_t peak_resident() const { return static_cast<std::uint64_t>(result.usage.ru_maxrss) * 1024; }
};

// Runs gpusort-file with `args`, stdin and stdout from and to the files given (if any), sampling
// its private memory until it ends.
Measured sort_measured(const std::vector<std::string>& args, const std::string& stdin_path = "",
                       const std::string& stdout_path = "") {
    auto redirect = [stdin_path, stdout_path] {
        if (!stdin_path.empty()) {
            const int in = ::open(stdin_path.c_str(), O_RDONLY);
            if (in < 0 || ::dup2(in, STDIN_FILENO) < 0) ::_exit(126);
        }
        if (!stdout_path.empty()) {
            const int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (out < 0 || ::dup2(out, STDOUT_FILENO) < 0) ::_exit(126);
        }
    };
    ChildProcess child(GPUSORT_FILE_BIN, args, redirect);
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> peak{0};
    std::thread sampler([&] {
        while (!done.load()) {
            peak = std::max(peak.load(), resident_anonymous(child.pid()));
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
    });
    Measured measured;
    measured.result = child.wait(std::chrono::minutes(10));
    done = true;
    sampler.join();
    measured.peak_anonymous = peak;
    return measured;
}

// The host memory the --plan of `args` plans at its peak ("peak" in its JSON).
std::uint64_t planned_peak(std::vector<std::string> args, const ScratchDir& dir) {
    const std::set<std::string> before = dir.entries();
    args.insert(args.begin(), {"--plan", "--stats", "-"});
    const Result r = run(GPUSORT_FILE_BIN, args);
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_EQ(dir.entries(), before) << "--plan created something";
    const auto at = r.out.find("\"peak\": ");
    if (at == std::string::npos) {
        ADD_FAILURE() << "no planned peak in: " << r.out;
        return 0;
    }
    return std::stoull(r.out.substr(at + 8));
}

void expect_within_budget(const Measured& m, const std::string& what, bool mapped_output) {
    ASSERT_EQ(m.result.exit_code(), 0) << what << ": " << m.result.how_it_ended() << ": " << m.result.err;
    EXPECT_GT(m.peak_anonymous, kBudget / 2) << what << ": the sampling saw too little to be trusted";
    EXPECT_LE(m.peak_anonymous, kBudget + kOverhead) << what << ": peak private memory " << m.peak_anonymous / kMiB << " MiB";
    if (!mapped_output) {
        EXPECT_LE(m.peak_resident(), kBudget + kOverhead + kCode) << what << ": peak resident " << m.peak_resident() / kMiB << " MiB";
    }
    std::cerr << what << ": peak private memory " << m.peak_anonymous / kMiB << " MiB, resident " << m.peak_resident() / kMiB
              << " MiB\n";
}

}  // namespace

// Under a sanitizer the program's shadow memory and quarantine take hundreds of MiB of their own.
#define SKIP_UNDER_SANITIZERS() \
    if (kHugeShadowMemory) GTEST_SKIP() << "a sanitizer's own memory is far larger than the budget"

TEST(MemoryBudget, KeysFromFilesStreamsAndCompressedFilesStayWithinTheBudget) {
    SKIP_UNDER_SANITIZERS();
    ScratchDir dir;
    // 128 MiB of keys: 5 runs from a file under 64M, 10 from a stream.
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "16M", "--seed", "3", dir / "in"}).status(), 0);
    {
        const std::vector<std::uint64_t> input = read_keys<std::uint64_t>(dir / "in");
        write_keys(dir / "in.before", input);
        write_keys(dir / "expected", reference_sort(input, false));
    }
    const std::vector<std::string> common = {"--backend", "cpu", "--memory", "64M", "--tmp-dir", dir.path()};
    auto with = [&](std::vector<std::string> args) {
        args.insert(args.begin(), common.begin(), common.end());
        return args;
    };

    EXPECT_LE(planned_peak(with({dir / "in", dir / "out"}), dir), kBudget);
    Measured file = sort_measured(with({"--stats", dir / "file.json", dir / "in", dir / "file"}));
    expect_within_budget(file, "file to file", true);
    EXPECT_NE(read_text(dir / "file.json").find("\"runs\": 5"), std::string::npos) << read_text(dir / "file.json");
    EXPECT_TRUE(read_text(dir / "file") == read_text(dir / "expected")) << "file to file: not the reference's bytes";

    EXPECT_LE(planned_peak(with({"--threads", "16", "-", "-"}), dir), kBudget);
    Measured stream = sort_measured(with({"--threads", "16", "-", "-"}), dir / "in", dir / "stream");
    expect_within_budget(stream, "stdin to stdout, 16 threads", false);
    EXPECT_TRUE(read_text(dir / "stream") == read_text(dir / "file"));

    // Descending into .zst, so that sorting it back forms runs of their own.
    EXPECT_LE(planned_peak(with({"--threads", "16", "--descending", dir / "in", dir / "desc.zst"}), dir), kBudget);
    Measured zst_out = sort_measured(with({"--threads", "16", "--descending", dir / "in", dir / "desc.zst"}));
    expect_within_budget(zst_out, "file to .zst, 16 threads", false);

    EXPECT_LE(planned_peak(with({dir / "desc.zst", dir / "from_zst"}), dir), kBudget);
    Measured zst_in = sort_measured(with({"--stats", dir / "zst.json", dir / "desc.zst", dir / "from_zst"}));
    expect_within_budget(zst_in, ".zst to file", true);
    EXPECT_TRUE(read_text(dir / "from_zst") == read_text(dir / "file"));
    EXPECT_EQ(read_text(dir / "zst.json").find("\"runs\": 1,"), std::string::npos) << read_text(dir / "zst.json");
    EXPECT_TRUE(read_text(dir / "in") == read_text(dir / "in.before")) << "the input changed";
}

TEST(MemoryBudget, RecordsStayWithinTheBudget) {
    SKIP_UNDER_SANITIZERS();
    ScratchDir dir;
    // 100 MB of gensort records.
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--count", "1M", "--seed", "4", dir / "in"}).status(), 0);
    {
        const std::string input = read_text(dir / "in");
        write_text(dir / "in.before", input);
        write_text(dir / "expected",
                   reference_record_sort_text(input, reference_key_of_options({"--format", "gensort"}).spec, false));
    }
    const std::vector<std::string> args = {"--backend", "cpu", "--memory", "64M", "--tmp-dir", dir.path(),
                                           "--format",  "gensort"};
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), args.begin(), args.end());
        return more;
    };
    EXPECT_LE(planned_peak(with({dir / "in", dir / "out"}), dir), kBudget);
    Measured file = sort_measured(with({"--stats", dir / "stats.json", dir / "in", dir / "out"}));
    expect_within_budget(file, "records, file to file", true);
    EXPECT_EQ(read_text(dir / "stats.json").find("\"runs\": 1,"), std::string::npos) << read_text(dir / "stats.json");
    EXPECT_TRUE(read_text(dir / "out") == read_text(dir / "expected")) << "records, file to file: not the reference's bytes";
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--format", "gensort", "--input", dir / "in", dir / "out"}).status(), 0);

    EXPECT_LE(planned_peak(with({"--threads", "16", "-", "-"}), dir), kBudget);
    Measured stream = sort_measured(with({"--threads", "16", "-", "-"}), dir / "in", dir / "stream");
    expect_within_budget(stream, "records, stdin to stdout, 16 threads", false);
    EXPECT_TRUE(read_text(dir / "stream") == read_text(dir / "out"));
    EXPECT_TRUE(read_text(dir / "in") == read_text(dir / "in.before")) << "the input changed";
}
