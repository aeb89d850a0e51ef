// gpusort-file ended by SIGINT, SIGTERM or SIGHUP mid-sort, in the cases that tests/failure_test.cpp
// (KilledMidSort: file to file) leaves out: a stream OUTPUT, an in-place sort (OUTPUT is INPUT),
// and a file system without O_TMPFILE (played by gpusort-file-faults), where the output and the
// temp files get hidden names. Each time the program must end by that very signal (status 128 +
// the signal in a shell) and leave no OUTPUT that was not there, an old OUTPUT and INPUT byte for
// byte as they were, and no temp or hidden file.
//
// The signal lands where the sort cannot have ended: while it waits for more of a stdin that the
// test feeds and holds open, while it waits for room in a stdout pipe that the test does not read,
// or while the test holds it stopped (SIGSTOP) in the state it waited for. No test depends on how
// fast the machine is.
#include "cli_run.hpp"
#include "fault_hook_log.hpp"
#include "scratch_dir.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <poll.h>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace gpusort::testing;

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::set<std::string> entries_of(const std::string& folder) {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) names.insert(entry.path().filename());
    return names;
}

bool has_hidden_output(const std::string& folder) {
    for (const std::string& name : entries_of(folder))
        if (name.rfind(".gpusort-out-", 0) == 0) return true;
    return false;
}

void make_folder(const std::string& path) {
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << path << ": " << std::strerror(errno);
}

void generate(const std::string& path, const std::string& count) {
    const Result r = run(GPUSORT_GEN_BIN, {"--type", "u64", "--count", count, "--seed", "3", path});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
}

// `count` random u64 keys as bytes.
std::string random_keys(std::size_t count) {
    std::mt19937_64 random(11);
    std::string bytes(count * 8, '\0');
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t key = random();
        std::memcpy(bytes.data() + i * 8, &key, 8);
    }
    return bytes;
}

// A pipe whose ends are closed on exec (the child gets only the end it is given, as its stdin or
// stdout) and here when it goes.
struct Pipe {
    int read = -1, write = -1;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        read = fds[0];
        write = fds[1];
    }
    ~Pipe() {
        close(read);
        close(write);
    }
    static void close(int& fd) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

// How the child starts.
struct Start {
    std::string program = GPUSORT_FILE_BIN;
    int stdin_fd = -1;   // its stdin, where given
    int stdout_fd = -1;  // its stdout, where given
    std::string fault;   // GPUSORT_FAULT_INJECT, where given
};

// In the child before exec: SIGINT, SIGTERM, SIGHUP and SIGPIPE as a shell gives them to a command
// it runs (a test runner may have ignored some, and an ignored signal stays ignored over exec), the
// given stdin and stdout, and the fault setting.
std::function<void()> setup_for(const Start& start) {
    return [start] {
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (start.stdin_fd >= 0) ::dup2(start.stdin_fd, STDIN_FILENO);
        if (start.stdout_fd >= 0) ::dup2(start.stdout_fd, STDOUT_FILENO);
        if (!start.fault.empty()) ::setenv("GPUSORT_FAULT_INJECT", start.fault.c_str(), 1);
    };
}

// Writes `data` into the pipe `fd` (made non-blocking) as fast as the child takes it, until `done`
// holds; false when it does not within kHangBound. A child that ended early makes a write fail
// (EPIPE) rather than end this process: SIGPIPE is ignored here (the children get it back).
bool feed_until(int fd, const std::string& data, const std::function<bool()>& done) {
    ::signal(SIGPIPE, SIG_IGN);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::size_t at = 0;
    return wait_for([&] {
        if (done()) return true;
        while (at < data.size()) {
            const ssize_t n = ::write(fd, data.data() + at, std::min<std::size_t>(data.size() - at, 64 << 10));
            if (n <= 0) break;  // full for now
            at += static_cast<std::size_t>(n);
        }
        return false;
    });
}

// The bytes the process has written with write(2) and its kin (/proc/PID/io "wchar"); nullopt
// where that cannot be read.
std::optional<std::uint64_t> bytes_written(pid_t pid) {
    std::ifstream io("/proc/" + std::to_string(pid) + "/io");
    std::string field;
    std::uint64_t value = 0;
    while (io >> field >> value)
        if (field == "wchar:") return value;
    return std::nullopt;
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// The GPUSORT_FAULT_INJECT setting that plays a file system without O_TMPFILE: every call that
// creates a nameless file (the temp files', the output's) fails with EOPNOTSUPP. The sites come
// from the hook's log of a clean in-place sort in runs; empty when they are not the two expected.
const std::string& no_tmpfile_setting() {
    static const std::string setting = [] {
        ScratchDir dir;
        generate(dir / "in", "1M");
        const Result r = run(GPUSORT_FILE_FAULTS_BIN, {"--backend", "cpu", "--memory", "1M", dir / "in", dir / "in"},
                             [&] { ::setenv("GPUSORT_FAULT_LOG", (dir / "log").c_str(), 1); });
        if (r.exit_code() != 0) return std::string();
        std::string faults;
        int sites = 0;
        for (const Site& site : read_log(dir / "log").sites) {
            if (site.op != "open" || (site.function.find("create_temp_file") == std::string::npos &&
                                      site.function.find("AtomicOutputFile::AtomicOutputFile") == std::string::npos))
                continue;
            faults += (faults.empty() ? "" : ";") + site.op + " " + site.location + " * EOPNOTSUPP";
            ++sites;
        }
        return sites == 2 ? faults : std::string();
    }();
    return setting;
}

std::string shown(int sig) { return std::string("sent ") + ::strsignal(sig); }

}  // namespace

// stdin to stdout: the test feeds stdin until the sort has spilled a run, then holds it open and
// sends the signal while the sort waits for the rest. Nothing can have reached stdout yet (the
// merge waits for the end of the input).
TEST(SignalMidSort, StdinToStdoutWhileTheSortWaitsForInput) {
    const std::string keys = random_keys(1 << 20);  // 8 MiB, far more than a 1 MiB budget takes before it spills
    for (int sig : kSignals) {
        SCOPED_TRACE(shown(sig));
        ScratchDir dir;
        make_folder(dir / "tmp");
        Pipe in, out;
        Start start;
        start.stdin_fd = in.read;
        start.stdout_fd = out.write;
        ChildProcess child(GPUSORT_FILE_BIN,
                           {"--backend", "cpu", "--memory", "1M", "--threads", "1", "--tmp-dir", dir / "tmp", "-", "-"},
                           setup_for(start));
        Pipe::close(in.read);
        Pipe::close(out.write);
        const bool spilled = feed_until(in.write, keys, [&] { return has_file_open_in(child.pid(), dir / "tmp"); });
        if (spilled) ::kill(child.pid(), sig);
        const Result r = child.wait(kHangBound);
        ASSERT_TRUE(spilled) << "no run was seen spilled; it " << r.how_it_ended() << ": " << r.err;
        EXPECT_TRUE(r.killed_by(sig)) << "it " << r.how_it_ended() << ": " << r.err;
        std::string written;
        char buffer[4096];
        for (ssize_t n; (n = ::read(out.read, buffer, sizeof buffer)) > 0;)
            written.append(buffer, static_cast<std::size_t>(n));
        EXPECT_EQ(written.size(), 0u) << "output before the input ended";
        EXPECT_EQ(entries_of(dir / "tmp"), std::set<std::string>{});
        EXPECT_EQ(dir.entries(), std::set<std::string>{"tmp"});
    }
}

// A file to a stdout pipe that the test reads one byte of and then leaves full: the merge is writing
// the output, with its runs open, and cannot go on until the pipe is read.
TEST(SignalMidSort, FileToAStdoutPipeThatIsNotRead) {
    ScratchDir data;
    generate(data / "in", "2M");  // 16 MiB of output, far more than a pipe holds (the program asks for 1 MiB)
    const std::string input = read_text(data / "in");
    for (int sig : kSignals) {
        SCOPED_TRACE(shown(sig));
        ScratchDir dir;
        make_folder(dir / "tmp");
        Pipe out;
        Start start;
        start.stdout_fd = out.write;
        ChildProcess child(GPUSORT_FILE_BIN,
                           {"--backend", "cpu", "--memory", "1M", "--threads", "1", "--tmp-dir", dir / "tmp",
                            data / "in", "-"},
                           setup_for(start));
        Pipe::close(out.write);
        const bool writing = wait_for([&] {  // until the output has begun
            pollfd p{out.read, POLLIN, 0};
            char byte = 0;
            return ::poll(&p, 1, 0) == 1 && ::read(out.read, &byte, 1) == 1;
        });
        const bool runs_open = writing && has_file_open_in(child.pid(), dir / "tmp");
        if (writing) ::kill(child.pid(), sig);
        const Result r = child.wait(kHangBound);
        ASSERT_TRUE(writing) << "no output came; it " << r.how_it_ended() << ": " << r.err;
        EXPECT_TRUE(runs_open) << "the merge had no run open in " << dir / "tmp";
        EXPECT_TRUE(r.killed_by(sig)) << "it " << r.how_it_ended() << ": " << r.err;
        EXPECT_EQ(entries_of(dir / "tmp"), std::set<std::string>{});
        EXPECT_EQ(dir.entries(), std::set<std::string>{"tmp"});
        EXPECT_EQ(read_text(data / "in"), input);
    }
}

namespace {

// The moments of an in-place sort at which it is stopped and signalled.
enum class Moment { reading, merging };

const char* name_of(Moment moment) { return moment == Moment::reading ? "while reading INPUT" : "while merging"; }

// Sorts a copy of `original` in place (OUTPUT is INPUT) with `start`, stops it at `moment` with a
// run open in DIR/tmp and INPUT not yet replaced (and, with `hidden_output`, its output under a
// hidden name beside INPUT), sends `sig` and lets it go on: it must end by the signal and leave
// INPUT byte for byte as it was and nothing else in DIR or DIR/tmp.
void signal_in_place(const std::string& original, const Start& start, int sig, Moment moment, bool hidden_output) {
    SCOPED_TRACE(shown(sig) + " " + name_of(moment));
    ScratchDir dir;
    make_folder(dir / "tmp");
    write_text(dir / "in", original);
    const ino_t input_inode = inode_of(dir / "in");
    ChildProcess child(start.program,
                       {"--backend", "cpu", "--memory", "1M", "--threads", "1", "--tmp-dir", dir / "tmp", dir / "in",
                        dir / "in"},
                       setup_for(start));
    const bool stopped = stop_when(child, [&] {
        if (!has_file_open_in(child.pid(), dir / "tmp") || inode_of(dir / "in") != input_inode) return false;
        if (hidden_output && !has_hidden_output(dir.path())) return false;
        // Merging: every run written (the runs alone are as large as INPUT).
        return moment == Moment::reading || bytes_written(child.pid()).value_or(0) >= original.size();
    });
    if (stopped) {
        ::kill(child.pid(), sig);
        ::kill(child.pid(), SIGCONT);
    }
    const Result r = child.wait(kHangBound);
    ASSERT_TRUE(stopped) << "the sort was never seen " << name_of(moment) << "; it " << r.how_it_ended() << ": "
                         << r.err;
    EXPECT_TRUE(r.killed_by(sig)) << "it " << r.how_it_ended() << ": " << r.err;
    EXPECT_TRUE(read_text(dir / "in") == original) << "INPUT changed";
    EXPECT_EQ(entries_of(dir / "tmp"), std::set<std::string>{});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "tmp"}));
}

class SignalInPlace : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        ScratchDir dir;
        generate(dir / "in", "4M");  // 32 MiB under a 1 MiB budget: runs, and two merge passes
        original_ = new std::string(read_text(dir / "in"));
    }
    static void TearDownTestSuite() {
        delete original_;
        original_ = nullptr;
    }
    void SetUp() override {
        ASSERT_TRUE(original_ && original_->size() == 4u << 23);
        ASSERT_TRUE(bytes_written(::getpid()).has_value()) << "/proc/self/io cannot be read";
    }
    static std::string* original_;
};

std::string* SignalInPlace::original_ = nullptr;

}  // namespace

TEST_F(SignalInPlace, LeavesInputAsItWas) {
    for (int sig : kSignals)
        for (Moment moment : {Moment::reading, Moment::merging})
            signal_in_place(*original_, Start{}, sig, moment, false);
}

// Without O_TMPFILE the output is written under a hidden name beside INPUT for the whole sort: the
// signal's cleanup must remove it.
TEST_F(SignalInPlace, WithoutOTmpfileLeavesInputAsItWasAndNoHiddenFile) {
    Start start;
    start.program = GPUSORT_FILE_FAULTS_BIN;
    start.fault = no_tmpfile_setting();
    ASSERT_FALSE(start.fault.empty()) << "the calls that create nameless files were not found";
    for (int sig : kSignals)
        for (Moment moment : {Moment::reading, Moment::merging}) signal_in_place(*original_, start, sig, moment, true);
}

// stdin to a file, without O_TMPFILE: the output's hidden file exists from the start (and the
// temp files had names for a moment each); the test feeds stdin until a run is spilled, then
// signals while the sort waits for the rest. Into a new OUTPUT and over an old one.
TEST(SignalWithoutOTmpfile, StdinToAFileLeavesNoHiddenFile) {
    Start start;
    start.program = GPUSORT_FILE_FAULTS_BIN;
    start.fault = no_tmpfile_setting();
    ASSERT_FALSE(start.fault.empty()) << "the calls that create nameless files were not found";
    const std::string keys = random_keys(1 << 20);
    for (int sig : kSignals) {
        for (bool old_output : {false, true}) {
            SCOPED_TRACE(shown(sig) + (old_output ? ", over an old OUTPUT" : ", a new OUTPUT"));
            ScratchDir dir;
            make_folder(dir / "tmp");
            if (old_output) write_text(dir / "out", "the old output");
            Pipe in;
            Start with_stdin = start;
            with_stdin.stdin_fd = in.read;
            ChildProcess child(start.program,
                               {"--backend", "cpu", "--memory", "1M", "--threads", "1", "--tmp-dir", dir / "tmp", "-",
                                dir / "out"},
                               setup_for(with_stdin));
            Pipe::close(in.read);
            const bool spilled = feed_until(in.write, keys, [&] {
                return has_hidden_output(dir.path()) && has_file_open_in(child.pid(), dir / "tmp");
            });
            if (spilled) ::kill(child.pid(), sig);
            const Result r = child.wait(kHangBound);
            ASSERT_TRUE(spilled) << "no hidden output and spilled run were seen; it " << r.how_it_ended() << ": "
                                 << r.err;
            EXPECT_TRUE(r.killed_by(sig)) << "it " << r.how_it_ended() << ": " << r.err;
            EXPECT_EQ(entries_of(dir / "tmp"), std::set<std::string>{});
            if (old_output) {
                EXPECT_EQ(dir.entries(), (std::set<std::string>{"out", "tmp"}));
                EXPECT_EQ(read_text(dir / "out"), "the old output");
            } else {
                EXPECT_EQ(dir.entries(), std::set<std::string>{"tmp"});
            }
        }
    }
}
