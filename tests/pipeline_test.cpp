// gpusort-file inside pipelines, as a shell runs it: stdin and stdout (pipes both ways, in one
// chunk and spilled in runs), every compression format in and out and mixed (checked with the
// system's own gzip, bzip2, xz and zstd), forced formats for pipes, a stream that ends inside a
// record, a reader of stdout that goes away early (| head), --verify, --stats parsed as JSON, the
// progress line drawn in a pseudo-terminal, and output to a device (/dev/full).
#include "reference_order.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

struct Result {
    int status = -1;
    std::string err;
};

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

const std::string kSort = quote(GPUSORT_FILE_BIN);
const std::string kGen = quote(GPUSORT_GEN_BIN);
const std::string kCheck = quote(GPUSORT_CHECK_BIN);

// Runs a bash command line (with pipefail); stderr of the whole line is captured.
Result shell(const std::string& command, const ScratchDir& dir) {
    const std::string err_path = dir / ".stderr";
    const std::string line = "set -o pipefail; " + command;
    const std::string full = "bash -c " + quote(line) + " 2>" + quote(err_path);
    const int status = std::system(full.c_str());
    Result r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = read_text(err_path);
    std::remove(err_path.c_str());
    return r;
}

bool have_tool(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

struct Format {
    const char* ending;  // file name ending
    const char* name;    // --input-compression / --output-compression
    const char* tool;    // the system's compressor
};
const Format kFormats[] = {{".gz", "gz", "gzip"}, {".bz2", "bz2", "bzip2"}, {".xz", "xz", "xz"}, {".zst", "zst", "zstd"}};

void expect_sorted_u64(const ScratchDir& dir, const std::string& input, const std::string& output) {
    auto in = read_keys<std::uint64_t>(input);
    auto out = read_keys<std::uint64_t>(output);
    ASSERT_EQ(out.size(), in.size());
    EXPECT_TRUE(same_bytes(out, reference_sort(in, false)));
    (void)dir;
}

boost::property_tree::ptree parse_json(const std::string& text) {
    std::istringstream in(text);
    boost::property_tree::ptree tree;
    boost::property_tree::read_json(in, tree);
    return tree;
}

class Pipeline : public ::testing::Test {
protected:
    void SetUp() override {
        // 2.4 MB of random u64, and 1 MB of gensort records.
        ASSERT_EQ(shell(kGen + " --count 300001 --seed 5 " + quote(dir / "in"), dir).status, 0);
    }
    ScratchDir dir;
};

}  // namespace

TEST_F(Pipeline, StdinToFileAndFileToStdout) {
    Result r = shell(kSort + " --backend cpu - " + quote(dir / "a") + " < " + quote(dir / "in"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    expect_sorted_u64(dir, dir / "in", dir / "a");
    r = shell(kSort + " --backend cpu " + quote(dir / "in") + " - > " + quote(dir / "b"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    expect_sorted_u64(dir, dir / "in", dir / "b");
}

TEST_F(Pipeline, PipesBothWaysInOneChunkAndInSpilledRuns) {
    for (const char* memory : {"", " --memory 1M", " --memory 1M --threads 1", " --memory 1M --threads 3"}) {
        SCOPED_TRACE(memory);
        Result r = shell("cat " + quote(dir / "in") + " | " + kSort + " --backend cpu" + memory + " --stats " +
                             quote(dir / "stats") + " - - | cat > " + quote(dir / "out"),
                         dir);
        ASSERT_EQ(r.status, 0) << r.err;
        expect_sorted_u64(dir, dir / "in", dir / "out");
        auto stats = parse_json(read_text(dir / "stats"));
        EXPECT_TRUE(stats.get<bool>("input_streamed"));
        EXPECT_TRUE(stats.get<bool>("output_streamed"));
        EXPECT_EQ(stats.get<std::uint64_t>("input_records"), 300001u);
        EXPECT_EQ(stats.get<std::uint64_t>("output_bytes"), 300001u * 8);
        if (*memory) {
            EXPECT_GT(stats.get<std::uint64_t>("runs"), 4u);
        } else {
            EXPECT_EQ(stats.get<std::uint64_t>("runs"), 1u);
        }
    }
}

TEST_F(Pipeline, RecordsFromAPipeInSeveralMergePassesWithUniqueToAPipe) {
    // 12-byte records keyed by a big-endian u16 at offset 3: many duplicates.
    ASSERT_EQ(shell(kGen + " --type u32 --count 600000 --seed 8 " + quote(dir / "rec"), dir).status, 0);
    // One thread: a chunk may be done before the next starts; three: chunks finish out of order.
    for (auto [unique, threads] : {std::pair{false, "1"}, std::pair{true, "1"}, std::pair{false, "3"}, std::pair{true, "3"}}) {
        SCOPED_TRACE(std::string(unique ? "unique, threads " : "threads ") + threads);
        Result r = shell("cat " + quote(dir / "rec") + " | " + kSort + " --backend cpu --threads " + threads +
                             " --memory 1M --record-size 12 --key 3:u16:be" + (unique ? " --unique" : "") +
                             " --stats " + quote(dir / "stats") + " - - > " + quote(dir / "out"),
                         dir);
        ASSERT_EQ(r.status, 0) << r.err;
        auto bytes = [](const std::string& text) {
            std::vector<std::byte> b(text.size());
            std::memcpy(b.data(), text.data(), text.size());
            return b;
        };
        KeySpec spec;
        spec.record_size = 12;
        spec.fields.push_back(parse_key_field("3:u16:be"));
        const std::vector<std::byte> expected = reference_record_sort(bytes(read_text(dir / "rec")), spec, unique);
        const std::vector<std::byte> out = bytes(read_text(dir / "out"));
        EXPECT_EQ(out.size(), expected.size());
        EXPECT_TRUE(out == expected);
        auto stats = parse_json(read_text(dir / "stats"));
        EXPECT_GT(stats.get<std::uint64_t>("runs"), 4u);
    }
}

TEST_F(Pipeline, EveryCompressionFormatInAndOut) {
    for (const Format& f : kFormats) {
        SCOPED_TRACE(f.name);
        if (!have_tool(f.tool)) GTEST_SKIP() << f.tool << " is not installed";
        const std::string packed = dir / (std::string("in.bin") + f.ending);
        ASSERT_EQ(shell(std::string(f.tool) + " -c " + quote(dir / "in") + " > " + quote(packed), dir).status, 0);
        // Compressed in, plain out (in one chunk, and in runs).
        for (const char* memory : {"", " --memory 1M"}) {
            Result r = shell(kSort + " --backend cpu" + memory + " " + quote(packed) + " " + quote(dir / "plain"), dir);
            ASSERT_EQ(r.status, 0) << r.err;
            expect_sorted_u64(dir, dir / "in", dir / "plain");
        }
        // Plain in, compressed out: the system's tool reads it back.
        const std::string out = dir / (std::string("out.bin") + f.ending);
        Result r = shell(kSort + " --backend cpu --verify " + quote(dir / "in") + " " + quote(out), dir);
        ASSERT_EQ(r.status, 0) << r.err;
        ASSERT_EQ(shell(std::string(f.tool) + " -dc " + quote(out) + " > " + quote(dir / "unpacked"), dir).status, 0);
        expect_sorted_u64(dir, dir / "in", dir / "unpacked");
    }
}

TEST_F(Pipeline, MixedFormatsAndForcedFormatsOnPipes) {
    for (const char* tool : {"gzip", "xz", "zstd", "bzip2"})
        if (!have_tool(tool)) GTEST_SKIP() << tool << " is not installed";
    ASSERT_EQ(shell("gzip -c " + quote(dir / "in") + " > " + quote(dir / "in.gz"), dir).status, 0);
    // .gz in, .xz out, spilled in runs.
    Result r = shell(kSort + " --backend cpu --memory 1M --verify " + quote(dir / "in.gz") + " " + quote(dir / "out.xz"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(shell("xz -dc " + quote(dir / "out.xz") + " > " + quote(dir / "a"), dir).status, 0);
    expect_sorted_u64(dir, dir / "in", dir / "a");
    // Pipes carry no name: the formats are forced.
    r = shell("gzip -c " + quote(dir / "in") + " | " + kSort +
                  " --backend cpu --input-compression gz --output-compression zst - - | zstd -dc > " + quote(dir / "b"),
              dir);
    ASSERT_EQ(r.status, 0) << r.err;
    expect_sorted_u64(dir, dir / "in", dir / "b");
    // A forced format overrides the name: .bin written as bzip2.
    r = shell(kSort + " --backend cpu --output-compression bz2 " + quote(dir / "in.gz") + " " + quote(dir / "c.bin"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(shell("bzip2 -dc " + quote(dir / "c.bin") + " > " + quote(dir / "c"), dir).status, 0);
    expect_sorted_u64(dir, dir / "in", dir / "c");
}

TEST_F(Pipeline, CorruptCompressedInputFailsAndKeepsTheOutput) {
    ASSERT_EQ(shell("gzip -c " + quote(dir / "in") + " > " + quote(dir / "in.gz"), dir).status, 0);
    ASSERT_EQ(shell("head -c 100000 " + quote(dir / "in.gz") + " > " + quote(dir / "cut.gz"), dir).status, 0);
    write_text(dir / "out", "keep");
    Result r = shell(kSort + " --backend cpu " + quote(dir / "cut.gz") + " " + quote(dir / "out"), dir);
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.err.rfind("gpusort-file: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("cut.gz"), std::string::npos) << r.err;
    EXPECT_EQ(read_text(dir / "out"), "keep");
}

// A stream that ends inside a record (8 * N + 3 bytes of u64 keys): stdin sorted in one chunk and
// in runs, into a file and to stdout, and compressed files whose data end so, read by name and
// from a pipe. One line naming the stream, status 1, no new OUTPUT, an old one as it was, no temp
// file.
TEST_F(Pipeline, StreamEndingInsideARecordIsAnError) {
    write_text(dir / "odd", read_text(dir / "in") + "abc");
    const std::string size = std::to_string(300001 * 8 + 3);
    const std::string message =
        "' ends in the middle of a record: " + size + " bytes are not a multiple of the record size 8\n";
    ASSERT_EQ(::mkdir((dir / "tmp").c_str(), 0755), 0);
    const std::string runs = " --memory 1M --tmp-dir " + quote(dir / "tmp");
    struct Case {
        std::string command;  // up to OUTPUT
        std::string name;     // the stream as the message names it
    };
    std::vector<Case> cases = {
        {"cat " + quote(dir / "odd") + " | " + kSort + " --backend cpu -", "standard input"},
        {"cat " + quote(dir / "odd") + " | " + kSort + " --backend cpu" + runs + " -", "standard input"},
        {"gzip -c " + quote(dir / "odd") + " | " + kSort + " --backend cpu --input-compression gz" + runs + " -",
         "standard input"},
    };
    ASSERT_EQ(shell("gzip -c " + quote(dir / "odd") + " > " + quote(dir / "odd.gz"), dir).status, 0);
    cases.push_back({kSort + " --backend cpu " + quote(dir / "odd.gz"), dir / "odd.gz"});
    cases.push_back({kSort + " --backend cpu" + runs + " " + quote(dir / "odd.gz"), dir / "odd.gz"});
    if (have_tool("zstd")) {
        ASSERT_EQ(shell("zstd -q -c " + quote(dir / "odd") + " > " + quote(dir / "odd.zst"), dir).status, 0);
        cases.push_back({kSort + " --backend cpu" + runs + " " + quote(dir / "odd.zst"), dir / "odd.zst"});
    }
    for (const Case& c : cases) {
        SCOPED_TRACE(c.command);
        // Into a new file, over an old one, and to stdout.
        for (const std::string& output :
             {quote(dir / "out"), quote(dir / "old"), std::string("- > ") + quote(dir / "stdout")}) {
            write_text(dir / "old", "the old output");
            Result r = shell(c.command + " " + output, dir);
            EXPECT_EQ(r.status, 1) << r.err;
            EXPECT_EQ(r.err, "gpusort-file: '" + c.name + message);
            EXPECT_FALSE(std::filesystem::exists(dir / "out"));
            EXPECT_TRUE(read_text(dir / "old") == "the old output") << "the old OUTPUT was replaced";
            EXPECT_TRUE(std::filesystem::is_empty(dir / "tmp"));
        }
    }
}

namespace {

// How a sort writing to stdout ended when its reader went away early.
struct EarlyReaderResult {
    int wait_status = -1;
    std::string err;      // its stderr
    std::size_t got = 0;  // bytes the reader took
    bool hung = false;    // it did not end within kHangBound (then killed)
};

// Reads up to `bytes` from `fd` into `into`, waiting at most until `deadline`; stops at the end.
void read_some(int fd, std::string& into, std::size_t bytes, std::chrono::steady_clock::time_point deadline) {
    char buffer[4096];
    while (into.size() < bytes) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{fd, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000))) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (p.revents == 0) continue;
        const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, bytes - into.size()));
        if (n == 0 || (n < 0 && errno != EINTR)) return;
        if (n > 0) into.append(buffer, static_cast<std::size_t>(n));
    }
}

// gpusort-file with `args`, its stdout a pipe that the test reads `take` bytes of and then closes,
// as `gpusort-file IN - | head -c 100` does; the program gets SIGPIPE as a shell gives it (not
// ignored, not blocked), so only the program itself keeps it from ending by it.
EarlyReaderResult sort_into_a_reader_that_leaves(const std::vector<std::string>& args, std::size_t take) {
    EarlyReaderResult result;
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> argv_strings = {GPUSORT_FILE_BIN};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        ::execv(GPUSORT_FILE_BIN, argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    const auto deadline = std::chrono::steady_clock::now() + kHangBound;
    std::string taken;
    read_some(out[0], taken, take, deadline);
    result.got = taken.size();
    ::close(out[0]);  // the reader goes away
    read_some(err[0], result.err, std::string::npos, deadline);
    ::close(err[0]);
    if (!wait_for([&] { return ::waitpid(pid, &result.wait_status, WNOHANG) == pid; })) {
        result.hung = true;
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &result.wait_status, 0) < 0 && errno == EINTR) {
        }
    }
    return result;
}

}  // namespace

// `gpusort-file IN - | head -c 100`: the reader goes away with most of the output still to come (8
// MB, far more than a pipe holds: the program asks for 1 MiB). The program must not be killed by
// SIGPIPE but end with status 1 and one line, and leave no temp file: sorted in one chunk, in
// runs merged to stdout, and compressed on the way out.
TEST_F(Pipeline, AReaderThatGoesAwayEndsTheSortWithBrokenPipeAndStatus1) {
    ASSERT_EQ(shell(kGen + " --count 1M --seed 6 " + quote(dir / "big"), dir).status, 0);
    ASSERT_EQ(::mkdir((dir / "tmp").c_str(), 0755), 0);
    const std::vector<std::string> runs = {"--memory", "1M", "--tmp-dir", dir / "tmp"};
    std::vector<std::string> zst = runs;
    zst.insert(zst.end(), {"--output-compression", "zst"});
    for (const std::vector<std::string>& options : {std::vector<std::string>{}, runs, zst}) {
        std::vector<std::string> args = {"--backend", "cpu"};
        std::string shown;
        for (const auto& o : options) {
            args.push_back(o);
            shown += o + " ";
        }
        SCOPED_TRACE(shown);
        args.insert(args.end(), {dir / "big", "-"});
        const EarlyReaderResult r = sort_into_a_reader_that_leaves(args, 100);
        EXPECT_FALSE(r.hung);
        EXPECT_EQ(r.got, 100u);
        EXPECT_TRUE(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 1)
            << (WIFSIGNALED(r.wait_status) ? std::string("killed by ") + ::strsignal(WTERMSIG(r.wait_status))
                                           : "exited with " + std::to_string(WEXITSTATUS(r.wait_status)));
        EXPECT_EQ(r.err, "gpusort-file: cannot write 'standard output': Broken pipe\n");
        EXPECT_TRUE(std::filesystem::is_empty(dir / "tmp"));
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "big", "tmp"}));
    }
}

TEST_F(Pipeline, VerifyPassesOnFilesAndStreams) {
    for (const std::string& to : {quote(dir / "out"), std::string("- > ") + quote(dir / "out")}) {
        Result r = shell(kSort + " --backend cpu --memory 1M --verify --stats " + quote(dir / "stats") + " " +
                             quote(dir / "in") + " " + to,
                         dir);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_TRUE(parse_json(read_text(dir / "stats")).get<bool>("verified"));
        expect_sorted_u64(dir, dir / "in", dir / "out");
    }
}

TEST_F(Pipeline, StatsFileIsJsonWithEveryFigure) {
    Result r = shell(kSort + " --backend cpu --memory 1M --threads 2 --stats " + quote(dir / "stats") + " " +
                         quote(dir / "in") + " " + quote(dir / "out.zst"),
                     dir);
    ASSERT_EQ(r.status, 0) << r.err;
    auto s = parse_json(read_text(dir / "stats"));
    EXPECT_EQ(s.get<std::string>("backend"), "cpu");
    EXPECT_EQ(s.get<std::string>("device"), "null");
    EXPECT_EQ(s.get<std::uint64_t>("input_bytes"), 300001u * 8);
    EXPECT_EQ(s.get<std::uint64_t>("input_records"), 300001u);
    EXPECT_EQ(s.get<std::uint64_t>("output_records"), 300001u);
    EXPECT_EQ(s.get<std::uint64_t>("output_stored_bytes"), std::filesystem::file_size(dir / "out.zst"));
    EXPECT_EQ(s.get<std::string>("output_compression"), "zst");
    EXPECT_GT(s.get<std::uint64_t>("runs"), 1u);
    EXPECT_GE(s.get<unsigned>("merge_passes"), 1u);
    EXPECT_GE(s.get<std::uint64_t>("bytes_spilled"), 300001u * 8);
    EXPECT_GT(s.get<std::uint64_t>("bytes_spilled"), 0u);
    EXPECT_EQ(s.get<std::uint64_t>("budgets.memory"), 1u << 20);
    EXPECT_EQ(s.get<unsigned>("budgets.threads"), 2u);
    EXPECT_GT(s.get<double>("seconds.total"), 0.0);
    // Runs were merged: the merge took time, within the whole sort's.
    EXPECT_GT(s.get<double>("seconds.merge"), 0.0);
    EXPECT_LE(s.get<double>("seconds.merge"), s.get<double>("seconds.total"));
    // The host merge moves every entry once per pass; nothing goes through a device.
    EXPECT_EQ(s.get<std::uint64_t>("merge_phases.host.bytes"), s.get<unsigned>("merge_passes") * 300001u * 8);
    EXPECT_GT(s.get<double>("merge_phases.host.seconds"), 0.0);
    EXPECT_EQ(s.get<std::uint64_t>("merge_phases.copy_in.bytes"), 0u);
    EXPECT_GT(s.get<double>("throughput_mb_per_s"), 0.0);
    // To stderr with '-', nothing else there.
    r = shell(kSort + " --backend cpu --stats - " + quote(dir / "in") + " " + quote(dir / "out"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(parse_json(r.err).get<std::uint64_t>("input_records"), 300001u);
}

// The promise for every failure (docs/cli.md): "no file at OUTPUT that was not there before, an existing
// OUTPUT unchanged". A --stats FILE that cannot be written fails the run with status 1 and one line
// before the sort (a regression test: the report was written only after OUTPUT was in place, which
// was then created or replaced all the same).
TEST_F(Pipeline, AStatsFileThatCannotBeWrittenLeavesOutputAsItWas) {
    const std::string stats = dir / "no/such/folder/stats";
    for (bool existing : {false, true}) {
        SCOPED_TRACE(existing ? "over an old OUTPUT" : "a new OUTPUT");
        if (existing) write_text(dir / "out", "the old output");
        Result r = shell(
            kSort + " --backend cpu --stats " + quote(stats) + " " + quote(dir / "in") + " " + quote(dir / "out"), dir);
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_EQ(r.err, "gpusort-file: cannot write the stats file '" + stats + "'\n");
        if (existing) {
            EXPECT_TRUE(read_text(dir / "out") == "the old output") << "the old OUTPUT was replaced";
        } else {
            EXPECT_FALSE(std::filesystem::exists(dir / "out")) << "a new OUTPUT";
        }
    }
}

TEST_F(Pipeline, OutputToDevFullFailsNamingItAndLeavesTheDeviceAlone) {
    struct stat before {};
    ASSERT_EQ(::stat("/dev/full", &before), 0);
    ASSERT_TRUE(S_ISCHR(before.st_mode));
    for (const char* extra : {"", " --output-compression gz"}) {
        Result r = shell(kSort + " --backend cpu" + extra + " " + quote(dir / "in") + " /dev/full", dir);
        EXPECT_EQ(r.status, 1);
        EXPECT_EQ(r.err.rfind("gpusort-file: ", 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    }
    struct stat after {};
    ASSERT_EQ(::stat("/dev/full", &after), 0);
    EXPECT_TRUE(S_ISCHR(after.st_mode));
    EXPECT_EQ(after.st_rdev, before.st_rdev);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));
}

TEST_F(Pipeline, DevNullAsInputGivesAnEmptyOutput) {
    Result r = shell(kSort + " --backend cpu /dev/null " + quote(dir / "out"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir / "out"));
    EXPECT_EQ(std::filesystem::file_size(dir / "out"), 0u);
}

namespace {

// Runs `program` (gpusort-file unless told) with stdin, stdout and stderr on a pseudo-terminal and
// returns what the terminal showed.
std::string run_on_terminal(const std::vector<std::string>& args, int& exit_status,
                            const char* program = GPUSORT_FILE_BIN) {
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) return "forkpty failed";
    if (pid == 0) {
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(program));
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(program, argv.data());
        ::_exit(127);
    }
    std::string seen;
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n <= 0) break;  // EIO once the child has closed the terminal
        seen.append(buffer, static_cast<std::size_t>(n));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return seen;
}

}  // namespace

TEST_F(Pipeline, RefusesToWriteRecordsToATerminal) {
    int status = -1;
    const std::string seen = run_on_terminal({"--backend", "cpu", dir / "in", "-"}, status);
    EXPECT_EQ(status, 1) << seen;
    EXPECT_NE(seen.find("gpusort-file: refusing to write binary records to a terminal"), std::string::npos) << seen;
}

// gpusort-gen refuses binary data for a terminal as gpusort-file does; text lines it shows.
TEST_F(Pipeline, GenRefusesToWriteBinaryRecordsToATerminal) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--count", "10", "-"},
                                                 std::vector<std::string>{"--format", "gensort", "--count", "10", "-"}}) {
        int status = -1;
        const std::string seen = run_on_terminal(args, status, GPUSORT_GEN_BIN);
        EXPECT_EQ(status, 1) << args[1] << ": " << seen;
        EXPECT_EQ(seen, "gpusort-gen: refusing to write binary records to a terminal: redirect standard output or name "
                        "an OUTPUT file\r\n");
    }
    int status = -1;
    const std::string seen = run_on_terminal({"--format", "gensort-text", "--count", "3", "-"}, status, GPUSORT_GEN_BIN);
    EXPECT_EQ(status, 0) << seen;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), '\n'), 3) << seen;  // three lines of 99 characters
    EXPECT_EQ(seen.size(), 3u * 101) << seen;                            // and the terminal's "\r" before each "\n"
}

namespace {

// The frames of a progress line as drawn: the text between each "\r" and its "\x1b[K" (the
// terminal's own "\r" before a "\n" aside).
std::vector<std::string> frames_of(std::string shown) {
    for (std::size_t at = shown.find("\r\n"); at != std::string::npos; at = shown.find("\r\n", at)) shown.erase(at, 1);
    std::vector<std::string> frames;
    for (std::size_t at = shown.find('\r'); at != std::string::npos; at = shown.find('\r', at + 1)) {
        const std::size_t end = shown.find("\x1b[K", at);
        frames.push_back(shown.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1));
    }
    return frames;
}

}  // namespace

TEST_F(Pipeline, ProgressLineIsDrawnOnATerminalByDefaultAndSilencedByQuiet) {
    // 160 MB in runs on one thread: long enough for several redraws.
    ASSERT_EQ(shell(kGen + " --count 20M --seed 2 " + quote(dir / "big"), dir).status, 0);
    int status = -1;
    const std::string shown = run_on_terminal(
        {"--backend", "cpu", "--threads", "1", "--memory", "2M", dir / "big", dir / "out"}, status);
    ASSERT_EQ(status, 0) << shown;
    const std::vector<std::string> frames = frames_of(shown);
    ASSERT_GE(frames.size(), 3u) << shown;
    EXPECT_NE(shown.find("sorting   "), std::string::npos) << shown;
    EXPECT_NE(shown.find(" of 160.00 MiB  "), std::string::npos) << shown;
    EXPECT_NE(shown.find("B/s"), std::string::npos) << shown;  // a rate, in whatever unit a busy machine gives
    EXPECT_NE(shown.find(" left"), std::string::npos) << shown;
    // The phases come in the order the sort takes them, and no time left says 0:00. A redraw may
    // catch the sort done just before the summary replaces the line (seen under AddressSanitizer).
    const std::vector<std::string> order = {"starting", "reading",   "sorting",   "merging",
                                            "writing",  "flushing",  "verifying", "done"};
    std::size_t last = 0;
    for (std::size_t f = 0; f + 1 < frames.size(); ++f) {
        const std::string name = frames[f].substr(0, frames[f].find(' '));
        const auto at = std::find(order.begin(), order.end(), name);
        ASSERT_NE(at, order.end()) << frames[f];
        const auto index = static_cast<std::size_t>(at - order.begin());
        EXPECT_GE(index, last) << frames[f] << " after " << order[last];
        last = index;
        EXPECT_EQ(frames[f].find("0:00 left"), std::string::npos) << frames[f];
    }
    // It ends with one summary line in place of the progress.
    EXPECT_EQ(frames.back().rfind("sorted 20971520 records (160.00 MiB) in ", 0), 0u) << frames.back();
    EXPECT_NE(frames.back().find(" runs, "), std::string::npos) << frames.back();
    EXPECT_NE(frames.back().find("merge pass"), std::string::npos) << frames.back();
    EXPECT_NE(frames.back().find("; backend cpu (--backend cpu)"), std::string::npos) << frames.back();
    EXPECT_EQ(shown.back(), '\n') << shown;
    EXPECT_EQ(std::count(shown.begin(), shown.end(), '\n'), 1) << shown;

    const std::string quiet = run_on_terminal({"--backend", "cpu", "--quiet", dir / "big", dir / "out"}, status);
    ASSERT_EQ(status, 0) << quiet;
    EXPECT_EQ(quiet, "");
}

TEST_F(Pipeline, ProgressOnRequestWhenStderrIsNotATerminal) {
    Result r = shell(kSort + " --backend cpu --progress " + quote(dir / "in") + " " + quote(dir / "out"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("\rsorted "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.back(), '\n');
    // Without --progress, nothing (stderr is a file here).
    r = shell(kSort + " --backend cpu " + quote(dir / "in") + " " + quote(dir / "out"), dir);
    EXPECT_EQ(r.err, "");
    EXPECT_NE(shell(kSort + " --progress --quiet " + quote(dir / "in") + " " + quote(dir / "out"), dir).status, 0);
}
