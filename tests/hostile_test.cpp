// gpusort-file used in hostile ways: two sorts racing for one OUTPUT; an OUTPUT that is a symbolic
// link, a hard link of INPUT, a FIFO or no file at all; an input that grows, shrinks or is rewritten
// while it is read; a decompression bomb; a limit on the address space; --threads far from the CPUs
// there are; SIGKILL at random moments; absurd option values. Every child runs under a time bound
// (a hang fails the test); every failure must be one "gpusort-file: " line with nothing left
// half-written, and every output is compared with std::sort of the input.
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "task_limit.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <poll.h>
#include <random>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>

using namespace gpusort::testing;

namespace {

// Far above what any sort here takes: only a hang runs into it.
const std::chrono::milliseconds kChildBound = std::chrono::minutes(3) * kSlowdown;

Result bounded(const std::string& program, const std::vector<std::string>& args,
               const std::function<void()>& before_exec = {}) {
    Result r = ChildProcess(program, args, before_exec).wait(kChildBound);
    EXPECT_FALSE(r.timed_out) << program << " hung; stderr: " << r.err;
    return r;
}

Result sort(const std::vector<std::string>& args, const std::function<void()>& before_exec = {}) {
    return bounded(GPUSORT_FILE_BIN, args, before_exec);
}

std::vector<std::string> operator+(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

void generate(const std::string& path, const std::string& count, const std::string& seed = "1") {
    Result r = bounded(GPUSORT_GEN_BIN, {"--type", "u64", "--count", count, "--seed", seed, path});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
}

// The bytes of u64 keys in ascending order: the reference every output is compared with.
std::string sorted_keys(const std::string& bytes) {
    std::vector<std::uint64_t> keys(bytes.size() / 8);
    std::memcpy(keys.data(), bytes.data(), keys.size() * 8);
    std::sort(keys.begin(), keys.end());
    return std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * 8);
}

// Equality of large byte strings that says where they differ instead of printing them.
::testing::AssertionResult identical(const std::string& actual, const std::string& expected) {
    if (actual == expected) return ::testing::AssertionSuccess();
    const std::size_t common = std::min(actual.size(), expected.size());
    const auto end = actual.begin() + static_cast<std::ptrdiff_t>(common);
    const auto at = std::mismatch(actual.begin(), end, expected.begin()).first - actual.begin();
    return ::testing::AssertionFailure() << actual.size() << " bytes where " << expected.size()
                                         << " were expected, the first difference at byte " << at;
}

std::set<std::string> entries_of(const std::string& folder) {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) names.insert(entry.path().filename());
    return names;
}

bool exists(const std::string& path) { return std::filesystem::exists(std::filesystem::symlink_status(path)); }

struct stat status_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path << ": " << std::strerror(errno);
    return st;
}

void make_folder(const std::string& path) {
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << path << ": " << std::strerror(errno);
}

void make_link(const std::string& target, const std::string& path) {
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0) << path << ": " << std::strerror(errno);
}

// A figure of a --stats report ("runs", "merge_passes", ...); -1 when it is missing.
long long stat_figure(const std::string& json, const std::string& name) {
    const std::string key = "\"" + name + "\": ";
    const auto at = json.find(key);
    return at == std::string::npos ? -1 : std::stoll(json.substr(at + key.size()));
}

// ---------------------------------------------------------------------------------------------
// 1. Two sorts of different inputs writing the same OUTPUT at once.

TEST(HostileRace, TwoSortsWritingOneOutputLeaveTheCompleteOutputOfOne) {
    ScratchDir dir;
    generate(dir / "a", "2M", "1");  // 16 MiB each: spilled runs under --memory 2M
    generate(dir / "b", "2M", "2");
    const std::string sorted_a = sorted_keys(read_text(dir / "a"));
    const std::string sorted_b = sorted_keys(read_text(dir / "b"));
    auto args = [&](const std::string& input) {
        return std::vector<std::string>{"--backend", "cpu", "--memory", "2M", input, dir / "out"};
    };
    for (int round = 0; round < 4; ++round) {
        SCOPED_TRACE("round " + std::to_string(round) + (round % 2 ? ", OUTPUT existing" : ", no OUTPUT before"));
        if (round % 2)
            write_text(dir / "out", "the old output");
        else
            std::filesystem::remove(dir / "out");
        ChildProcess first(GPUSORT_FILE_BIN, args(dir / "a"));
        ChildProcess second(GPUSORT_FILE_BIN, args(dir / "b"));
        const Result results[] = {first.wait(kChildBound), second.wait(kChildBound)};
        int succeeded = 0;
        for (const Result& r : results) {
            EXPECT_FALSE(r.timed_out);
            if (r.exited() && r.exit_code() == 0) {
                EXPECT_EQ(r.err, "");
                ++succeeded;
            } else {
                expect_one_error_line(r, dir / "out");
            }
        }
        EXPECT_GE(succeeded, 1);
        const std::string out = read_text(dir / "out");
        EXPECT_TRUE(out == sorted_a || out == sorted_b)
            << "OUTPUT is neither sort's output: " << identical(out, sorted_a).message();
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"a", "b", "out"}));
    }
}

// ---------------------------------------------------------------------------------------------
// 2. OUTPUT of unusual kinds.

// A symbolic link is followed to the end: the file it points to is replaced whole (atomically, with
// its permissions), or created when missing; the link stays a link. `sort -o`, `cp` and a shell's >
// also write the file a link points to; they write it in place, where a failure or a kill would
// leave it half-written.
TEST(HostileOutput, SymbolicLinkIsFollowedAndTheFileItPointsToReplacedWhole) {
    ScratchDir dir;
    generate(dir / "in", "1M");  // 8 MiB: spilled runs under --memory 1M
    const std::string original = read_text(dir / "in");
    const std::string expected = sorted_keys(original);
    make_folder(dir / "elsewhere");
    make_link("elsewhere/target", dir / "link");  // relative: to the link's folder
    make_link("link", dir / "link-to-link");
    const std::vector<std::string> sort_in = {"--backend", "cpu", "--memory", "1M", dir / "in"};

    for (const char* name : {"link", "link-to-link"}) {
        SCOPED_TRACE(name);
        write_text(dir / "elsewhere/target", "the old target");
        ASSERT_EQ(::chmod((dir / "elsewhere/target").c_str(), 0640), 0);
        Result r = sort(sort_in + std::vector<std::string>{dir / name});
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_TRUE(identical(read_text(dir / "elsewhere/target"), expected));
        EXPECT_TRUE(S_ISLNK(status_of(dir / "link").st_mode));
        EXPECT_EQ(std::filesystem::read_symlink(dir / "link"), "elsewhere/target");
        EXPECT_EQ(status_of(dir / "elsewhere/target").st_mode & 07777, 0640u);
    }

    // A failed sort leaves the link and its file as they were.
    write_text(dir / "bad", std::string(12, 'x'));
    expect_one_error_line(sort({dir / "bad", dir / "link"}), {dir / "bad", "not a multiple"});
    EXPECT_TRUE(identical(read_text(dir / "elsewhere/target"), expected));

    // A link to nothing: the file it names is created.
    make_link("elsewhere/new", dir / "dangling");
    Result r = sort(sort_in + std::vector<std::string>{dir / "dangling"});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_TRUE(identical(read_text(dir / "elsewhere/new"), expected));
    EXPECT_TRUE(S_ISLNK(status_of(dir / "dangling").st_mode));

    // A link into a missing folder, a loop of links, a link to a folder: errors naming them.
    make_link("missing/file", dir / "into-nothing");
    expect_one_error_line(sort({dir / "in", dir / "into-nothing"}),
                          std::vector<std::string>{"missing/file", "No such file or directory"});
    make_link("loop-b", dir / "loop-a");
    make_link("loop-a", dir / "loop-b");
    expect_one_error_line(sort({dir / "in", dir / "loop-a"}), {dir / "loop-a", "Too many levels of symbolic links"});
    make_link("elsewhere", dir / "folder-link");
    expect_one_error_line(sort({dir / "in", dir / "folder-link"}), std::vector<std::string>{"elsewhere", "directory"});

    // A link to the input: the input is sorted in place.
    make_link("in", dir / "link-to-in");
    r = sort(sort_in + std::vector<std::string>{dir / "link-to-in"});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_TRUE(identical(read_text(dir / "in"), expected));
    EXPECT_TRUE(S_ISLNK(status_of(dir / "link-to-in").st_mode));

    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "bad", "link", "link-to-link", "dangling", "into-nothing",
                                                    "loop-a", "loop-b", "folder-link", "link-to-in", "elsewhere"}));
    EXPECT_EQ(entries_of(dir / "elsewhere"), (std::set<std::string>{"target", "new"}));
}

// OUTPUT a hard link of INPUT (the same file under another name): the name OUTPUT gets a new file
// holding the sorted records, as for any existing OUTPUT; the input's name keeps the original
// records, untouched (the link between the two names is broken, as an editor's safe save does).
TEST(HostileOutput, HardLinkOfTheInputGetsANewFileAndTheInputKeepsItsRecords) {
    ScratchDir dir;
    generate(dir / "in", "1M");
    const std::string original = read_text(dir / "in");
    const std::string expected = sorted_keys(original);
    for (const char* memory : {"1M", "64M"}) {  // spilled runs; one chunk
        SCOPED_TRACE(memory);
        std::filesystem::remove(dir / "out");
        ASSERT_EQ(::link((dir / "in").c_str(), (dir / "out").c_str()), 0) << std::strerror(errno);
        Result r = sort({"--backend", "cpu", "--memory", memory, dir / "in", dir / "out"});
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_TRUE(identical(read_text(dir / "out"), expected));
        EXPECT_TRUE(identical(read_text(dir / "in"), original));
        EXPECT_NE(status_of(dir / "in").st_ino, status_of(dir / "out").st_ino);
        EXPECT_EQ(status_of(dir / "in").st_nlink, 1u);
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
}

// Reads a FIFO on a thread of its own until its writer has come and gone, for at most kChildBound.
// Opened without blocking, so that a writer that never comes cannot hang the test.
class FifoReader {
public:
    explicit FifoReader(const std::string& path) : thread_([this, path] { read_all(path); }) {}
    ~FifoReader() {
        if (thread_.joinable()) thread_.join();
    }
    FifoReader(const FifoReader&) = delete;
    FifoReader& operator=(const FifoReader&) = delete;

    // Everything read, once the writer closed its end (nullopt when it did not within the bound).
    std::optional<std::string> take() {
        thread_.join();
        if (!ended_) return std::nullopt;
        return std::move(data_);
    }

private:
    void read_all(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return;
        const auto deadline = std::chrono::steady_clock::now() + kChildBound;
        std::vector<char> buffer(1 << 16);
        while (std::chrono::steady_clock::now() < deadline) {
            // Until a writer has opened the FIFO, poll reports nothing; once it has closed it, POLLHUP.
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            const ssize_t n = ::read(fd, buffer.data(), buffer.size());
            if (n > 0) {
                data_.append(buffer.data(), static_cast<std::size_t>(n));
            } else if (n == 0) {
                ended_ = true;
                break;
            } else if (errno != EAGAIN && errno != EINTR) {
                break;
            }
        }
        ::close(fd);
    }

    std::string data_;
    bool ended_ = false;
    std::thread thread_;
};

TEST(HostileOutput, FifoIsWrittenInOrderAsAStream) {
    ScratchDir dir;
    generate(dir / "in", "1M");
    const std::string expected = sorted_keys(read_text(dir / "in"));
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0) << std::strerror(errno);
    for (const char* memory : {"1M", "64M"}) {  // a merge of spilled runs; one chunk
        SCOPED_TRACE(memory);
        FifoReader reader(dir / "fifo");
        Result r = sort({"--backend", "cpu", "--memory", memory, "--verify", dir / "in", dir / "fifo"});
        const std::optional<std::string> data = reader.take();
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        ASSERT_TRUE(data.has_value()) << "the FIFO was never closed by its writer";
        EXPECT_TRUE(identical(*data, expected));
        EXPECT_TRUE(S_ISFIFO(status_of(dir / "fifo").st_mode));
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "fifo"}));
}

// A folder, a path through a regular file: clear errors (a plain folder as OUTPUT is covered by
// the failure tests).
TEST(HostileOutput, PathsThatCannotBeAFile) {
    ScratchDir dir;
    generate(dir / "in", "1000");
    make_folder(dir / "folder");
    expect_one_error_line(sort({dir / "in", dir / "folder/"}), {dir / "folder", "directory"});
    expect_one_error_line(sort({dir / "in", dir / "in/out"}), {dir / "in/out", "Not a directory"});
    expect_one_error_line(sort({dir / "in", dir / "in/"}), {dir / "in/", "Not a directory"});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "folder"}));
    EXPECT_TRUE(entries_of(dir / "folder").empty());
}

// ---------------------------------------------------------------------------------------------
// 3. An input that changes while it is being sorted. docs/guarantees.md promises that INPUT that grows,
// shrinks or is rewritten fails the sort with an error naming it: its size and modification time
// are checked at the end, after the output is written and before it is put in place. Each of the
// four changes below is one of those, and each is made while the sort is held stopped (SIGSTOP)
// with a run of it open in --tmp-dir: the runs are closed before that check, so the change comes
// before it and must be caught every time: one line naming INPUT, status 1, no OUTPUT, no temp
// file. (A change in the moment between that check and the rename is not caught, which "checked
// at the end" allows; the output is then the sort of what INPUT held. No test places one there.)

TEST(HostileInput, EachChangeWhileItIsSortedFailsTheSortNamingIt) {
    struct Change {
        const char* what;
        std::function<void(const std::string&)> apply;
    };
    const std::vector<Change> changes = {
        {"appended to",  // grows
         [](const std::string& path) { std::ofstream(path, std::ios::app) << std::string(1 << 20, 'a'); }},
        {"cut to half", [](const std::string& path) { std::filesystem::resize_file(path, 16 << 20); }},  // shrinks
        {"emptied", [](const std::string& path) { std::filesystem::resize_file(path, 0); }},           // shrinks
        {"overwritten in place", [](const std::string& path) {  // rewritten: the same size, a new time
             std::fstream(path, std::ios::in | std::ios::out | std::ios::binary) << std::string(1 << 20, 'z');
         }},
    };
    for (const Change& change : changes) {
        SCOPED_TRACE(change.what);
        ScratchDir dir;
        make_folder(dir / "tmp");
        generate(dir / "in", "4M");  // 32 MiB under a 1 MiB budget on one thread: runs open for most of it
        // An hour old: a rewrite gives it a modification time of its own however coarse the clock.
        const auto generated = std::filesystem::last_write_time(dir / "in");
        std::filesystem::last_write_time(dir / "in", generated - std::chrono::hours(1));
        ChildProcess child(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "1M", "--threads", "1", "--tmp-dir",
                                              dir / "tmp", dir / "in", dir / "out"});
        const bool stopped = stop_when(child, [&] { return has_file_open_in(child.pid(), dir / "tmp"); });
        if (stopped) {
            change.apply(dir / "in");
            ::kill(child.pid(), SIGCONT);
        }
        const Result r = child.wait(kChildBound);
        ASSERT_TRUE(stopped) << "the sort was never seen with a run open; it " << r.how_it_ended() << ": " << r.err;
        ASSERT_FALSE(r.timed_out);
        expect_one_error_line(r, {dir / "in", "changed"});
        EXPECT_FALSE(exists(dir / "out"));
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "tmp"}));
        EXPECT_TRUE(entries_of(dir / "tmp").empty());
    }
}

// ---------------------------------------------------------------------------------------------
// 4. A decompression bomb: a few MB of gzip that expand to GiBs of zeros, sorted under --memory 64M.

constexpr std::uint64_t kMiB = 1 << 20;

// `mebibytes` MiB of zeros as that many gzip members of one MiB each (4.5 KB apiece), one after
// the other, compressed by the system's gzip.
void write_bomb(const std::string& path, std::uint64_t mebibytes) {
    Result member = bounded("/bin/sh", {"-c", "head -c 1048576 /dev/zero | gzip -1"});
    ASSERT_EQ(member.exit_code(), 0) << member.err;
    ASSERT_GT(member.out.size(), 10u);
    std::ofstream out(path, std::ios::binary);
    for (std::uint64_t i = 0; i < mebibytes; ++i) out << member.out;
    ASSERT_TRUE(out.flush());
}

// Peak resident memory of a finished child.
std::uint64_t peak_memory(const Result& r) { return static_cast<std::uint64_t>(r.usage.ru_maxrss) * 1024; }

// The budget plus what the program takes besides it (code, libraries, thread stacks, stream
// buffers): not proportional to the input.
constexpr std::uint64_t kBombBudget = 64 * kMiB;
constexpr std::uint64_t kMemoryBound = kBombBudget + 96 * kMiB;

// The peak resident memory of the sort stays within the budget plus a fixed overhead. Not under a
// sanitizer: its shadow memory and freed-memory quarantine add hundreds of MiB of their own (the
// release build of the default suite checks it).
void expect_peak_within_bound(const Result& r) {
    if (kHugeShadowMemory) return;
    EXPECT_LE(peak_memory(r), kMemoryBound) << "peak " << peak_memory(r) / kMiB << " MiB";
}

// Sorts `mebibytes` MiB of zeros from a bomb into /dev/null with --verify (the records are checked
// on their way out: order, count, checksum) and checks the peak memory and the report.
void sort_bomb(std::uint64_t mebibytes) {
    ScratchDir dir;
    const std::uint64_t bytes = mebibytes * kMiB;
    const std::uint64_t free = std::filesystem::space(dir.path()).available;
    if (free < bytes + 512 * kMiB)
        GTEST_SKIP() << dir.path() << " has " << free / kMiB << " MiB free; the spilled runs need " << mebibytes
                     << " MiB";
    write_bomb(dir / "bomb.gz", mebibytes);
    ASSERT_LT(std::filesystem::file_size(dir / "bomb.gz"), bytes / 100);
    Result r = sort({"--backend", "cpu", "--memory", "64M", "--threads", "2", "--verify", "--stats", dir / "stats",
                     "--tmp-dir", dir.path(), dir / "bomb.gz", "/dev/null"});
    ASSERT_EQ(r.exit_code(), 0) << r.how_it_ended() << ": " << r.err;
    expect_peak_within_bound(r);
    const std::string stats = read_text(dir / "stats");
    EXPECT_EQ(stat_figure(stats, "input_bytes"), static_cast<long long>(bytes)) << stats;
    EXPECT_EQ(stat_figure(stats, "output_records"), static_cast<long long>(bytes / 8)) << stats;
    EXPECT_GT(stat_figure(stats, "runs"), 1) << stats;
    EXPECT_NE(stats.find("\"verified\": true"), std::string::npos) << stats;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"bomb.gz", "stats"}));
}

TEST(HostileBomb, HalfAGibibyteOfZerosIsSortedWithinTheBudget) { sort_bomb(512); }

TEST(HostileBombLong, EightGibibytesOfZerosAreSortedWithinTheBudget) { sort_bomb(8192); }

// No room for the spilled runs (a 64 MiB file size limit stands in for a small disk): a clean
// error naming the temp folder, within the same memory, and nothing left.
TEST(HostileBomb, NoRoomForTheSpilledRunsFailsCleanly) {
    ScratchDir dir;
    write_bomb(dir / "bomb.gz", 4096);  // 4 GiB of zeros in 18 MB
    auto limit_file_size = [] {
        const rlimit limit{64 << 20, 64 << 20};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(126);
    };
    Result r = sort({"--backend", "cpu", "--memory", "64M", "--threads", "2", "--tmp-dir", dir.path(), dir / "bomb.gz",
                     dir / "out"},
                    limit_file_size);
    expect_one_error_line(r, {dir.path(), "File too large"});
    expect_peak_within_bound(r);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"bomb.gz"}));
}

// ---------------------------------------------------------------------------------------------
// 5. A limit on the address space (RLIMIT_AS) near what the budget needs.

std::function<void()> limit_address_space(std::uint64_t bytes) {
    return [bytes] {
        const rlimit limit{bytes, bytes};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
    };
}

TEST(HostileLimits, AddressSpaceLimitNearTheBudget) {
    if (kHugeShadowMemory)
        GTEST_SKIP() << "the sanitizer's shadow memory reserves terabytes of address space: RLIMIT_AS cannot be tested";
    ScratchDir dir;
    generate(dir / "tiny", "1000");
    generate(dir / "in", "6M");  // 48 MiB: spilled runs under --memory 32M
    const std::string original = read_text(dir / "in");
    const std::string expected = sorted_keys(original);

    // What the program needs to start: the least limit (to 4 MiB) under which it sorts a tiny file.
    std::uint64_t low = 4 * kMiB, high = 2048 * kMiB;
    auto starts = [&](std::uint64_t limit) {
        return sort({"--threads", "2", "--memory", "1M", dir / "tiny", dir / "tiny-out"}, limit_address_space(limit))
                   .exit_code() == 0;
    };
    ASSERT_TRUE(starts(high));
    while (high - low > 4 * kMiB) {
        const std::uint64_t middle = (low + high) / 2;
        (starts(middle) ? high : low) = middle;
    }
    const std::uint64_t start = high;
    std::cout << "gpusort-file needs " << start / kMiB << " MiB of address space to start\n";

    const std::vector<std::string> options = {"--backend", "cpu", "--threads", "2", "--memory", "32M", dir / "in"};
    const std::vector<std::string> args = options + std::vector<std::string>{dir / "out"};
    // A few hundred MiB above the budget: the sort succeeds.
    Result r = sort(args, limit_address_space(start + 32 * kMiB + 256 * kMiB));
    ASSERT_EQ(r.exit_code(), 0) << r.how_it_ended() << ": " << r.err;
    EXPECT_TRUE(identical(read_text(dir / "out"), expected));
    std::filesystem::remove(dir / "out");

    // Below what the budget needs: out of memory, said clearly, before any work.
    r = sort(args, limit_address_space(start + 16 * kMiB));
    expect_one_error_line(r, {dir / "in", "out of memory"});

    // In between, in steps: success, or one line and nothing left; never a crash.
    for (std::uint64_t limit = start; limit <= start + 256 * kMiB; limit += 64 * kMiB) {
        SCOPED_TRACE("limit " + std::to_string(limit / kMiB) + " MiB");
        for (const std::string& output : {dir / "out", dir / "out.zst"}) {
            r = sort(options + std::vector<std::string>{output}, limit_address_space(limit));
            ASSERT_TRUE(r.exited()) << r.how_it_ended() << ": " << r.err;
            if (r.exit_code() == 0) {
                if (output == dir / "out") {
                    EXPECT_TRUE(identical(read_text(output), expected));
                }
                std::filesystem::remove(output);
            } else {
                expect_one_error_line(r, std::vector<std::string>{});
            }
            EXPECT_EQ(dir.entries(), (std::set<std::string>{"tiny", "tiny-out", "in"}));
        }
    }
    EXPECT_TRUE(identical(read_text(dir / "in"), original));
}

// ---------------------------------------------------------------------------------------------
// 6. One thread, and 64 on a machine of few CPUs.

TEST(HostileLimits, OneThreadAndSixtyFourThreads) {
    ScratchDir dir;
    generate(dir / "in", "1M");
    const std::string expected = sorted_keys(read_text(dir / "in"));
    auto input_on_stdin = [&] {
        const int fd = ::open((dir / "in").c_str(), O_RDONLY);
        if (fd < 0 || ::dup2(fd, STDIN_FILENO) < 0) ::_exit(126);
    };
    for (const char* threads : {"1", "64"}) {
        SCOPED_TRACE(std::string("--threads ") + threads);
        const std::vector<std::string> options = {"--backend", "cpu", "--threads", threads, "--memory", "1M"};
        // File to file, spilled runs.
        Result r = sort(options + std::vector<std::string>{"--stats", dir / "stats", dir / "in", dir / "out"});
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_TRUE(identical(read_text(dir / "out"), expected));
        EXPECT_GT(stat_figure(read_text(dir / "stats"), "runs"), 1);
        // stdin to stdout.
        r = sort(options + std::vector<std::string>{"-", "-"}, input_on_stdin);
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_TRUE(identical(r.out, expected));
        // To a compressed file, compressed on that many threads; read back by the system's gzip.
        r = sort(options + std::vector<std::string>{dir / "in", dir / "out.gz"});
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        Result unzipped = bounded("/bin/sh", {"-c", "gzip -dc < '" + dir / "out.gz" + "'"});
        ASSERT_EQ(unzipped.exit_code(), 0) << unzipped.err;
        EXPECT_TRUE(identical(unzipped.out, expected));
    }
}

// Under a limit on tasks (ulimit -u, a container's): the sort runs on the threads it can start and
// says so, or, where none can start, fails with one line; never the end of the program that a
// thread TBB or IPS4o cannot start would bring.
TEST(HostileLimits, ALimitOnTasks) {
    ScratchDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);  // for the user the child may become
    generate(dir / "in", "1M");
    ASSERT_EQ(::chmod((dir / "in").c_str(), 0644), 0);
    const std::string expected = sorted_keys(read_text(dir / "in"));
    auto with_threads = [](int more) {
        return [more] {
            // LeakSanitizer checks at exit on a thread of its own, which the limit may not allow.
            if (kAddressSanitizer) {
                const char* options = std::getenv("ASAN_OPTIONS");
                ::setenv("ASAN_OPTIONS", (std::string(options ? options : "") + ":detect_leaks=0").c_str(), 1);
            }
            limit_threads_in_child(more);
        };
    };
    const std::vector<std::string> options = {"--backend", "cpu", "--threads", "8", "--memory", "1M", dir / "in"};

    Result r = sort(options + std::vector<std::string>{dir / "out"}, with_threads(0));
    expect_one_error_line(r, {dir / "in", "no thread can be started", "ulimit -u"});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));

    if (!tasks_can_be_counted()) GTEST_SKIP() << "only root can give a child a user of its own, so that it may start exactly 9 threads";
    // 9 threads: enough for --threads 2 (8), not for 8 (26).
    for (const std::string& output : {dir / "out", dir / "out.gz"}) {
        SCOPED_TRACE(output);
        r = sort(options + std::vector<std::string>{"--stats", dir / "stats", output}, with_threads(9));
        ASSERT_EQ(r.exit_code(), 0) << r.how_it_ended() << ": " << r.err;
        EXPECT_NE(r.err.find("note: only 9 of the 26 threads that --threads 8 needs can be started"), std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("sorting with --threads 2"), std::string::npos) << r.err;
        EXPECT_GT(stat_figure(read_text(dir / "stats"), "runs"), 1);
        std::string sorted = read_text(output);
        if (output == dir / "out.gz") {
            Result unzipped = bounded("/bin/sh", {"-c", "gzip -dc < '" + output + "'"});
            ASSERT_EQ(unzipped.exit_code(), 0) << unzipped.err;
            sorted = unzipped.out;
        }
        EXPECT_TRUE(identical(sorted, expected));
        std::filesystem::remove(output);
    }
}

// ---------------------------------------------------------------------------------------------
// 7. SIGKILL at random moments of a sort with several runs and merge passes.

class KilledAtRandom : public ::testing::Test {
protected:
    static constexpr std::uint64_t kSeed = 20240611;
    static constexpr int kKills = 100;
    static constexpr int kMaxAttempts = 2 * kKills;

    void SetUp() override {
        make_folder(dir_ / "tmp");
        generate(dir_ / "in", "600000");  // 4.8 MB under --memory 1M: 10 runs, 2 merge passes
        original_ = read_text(dir_ / "in");
        expected_ = sorted_keys(original_);
    }

    std::vector<std::string> args(const std::string& output) const {
        return {"--backend", "cpu", "--memory", "1M", "--threads", "2", "--tmp-dir", dir_ / "tmp", dir_ / "in", output};
    }

    // The sort makes several runs and merge passes, and how long it takes when left alone.
    std::chrono::microseconds normal_duration(const std::string& output) {
        Result r = sort(args(output) + std::vector<std::string>{"--stats", "-"});
        EXPECT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_GT(stat_figure(r.err, "runs"), 1) << r.err;
        EXPECT_GT(stat_figure(r.err, "merge_passes"), 1) << r.err;
        std::vector<std::chrono::microseconds> times;
        for (int i = 0; i < 3; ++i) {
            const auto start = std::chrono::steady_clock::now();
            EXPECT_EQ(sort(args(output)).exit_code(), 0);
            const auto took = std::chrono::steady_clock::now() - start;
            times.push_back(std::chrono::duration_cast<std::chrono::microseconds>(took));
        }
        std::sort(times.begin(), times.end());
        return times[1];
    }

    // Sorts into `output` until kKills sorts were killed while they ran, each kill after a random
    // time up to how long a sort takes; `check(result, attempt)` looks at what each left. A sort that
    // ends before its kill shows that sorts are faster now than when they were timed: the later
    // delays are drawn below that one, so that the kills land on any machine, busy or idle.
    void kill_repeatedly(const std::string& output, const std::function<void(const Result&, int)>& check) {
        long long longest_us = normal_duration(output).count();
        std::mt19937_64 rng(kSeed);
        int killed = 0, attempt = 0;
        for (; killed < kKills && attempt < kMaxAttempts && !HasFailure(); ++attempt) {
            const long long wait_us = std::uniform_int_distribution<long long>(0, longest_us)(rng);
            SCOPED_TRACE("attempt " + std::to_string(attempt) + ": kill after " + std::to_string(wait_us) +
                         " us of a sort of up to " + std::to_string(longest_us) + " us (seed " +
                         std::to_string(kSeed) + ")");
            prepare_(attempt);
            ChildProcess child(GPUSORT_FILE_BIN, args(output));
            std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
            ::kill(child.pid(), SIGKILL);
            const Result r = child.wait(kChildBound);
            ASSERT_FALSE(r.timed_out);
            ASSERT_TRUE(r.killed_by(SIGKILL) || r.exit_code() == 0) << r.how_it_ended() << ": " << r.err;
            if (r.killed_by(SIGKILL)) ++killed;
            else longest_us = std::max(wait_us, 1LL);
            EXPECT_TRUE(entries_of(dir_ / "tmp").empty());
            check(r, attempt);
        }
        std::cout << killed << " of " << attempt << " sorts killed while they ran; " << linked_not_renamed_
                  << " kills between linking the finished output and renaming it over the old one\n";
        EXPECT_EQ(killed, kKills) << "too few kills landed while the sort ran, in " << attempt << " attempts";
    }

    // The one thing a kill may leave: a kill between linking the finished output under a hidden
    // name and renaming it over an existing OUTPUT (two system calls; a new OUTPUT is linked at its
    // name at once) leaves that name, holding the complete sorted output, beside the old OUTPUT.
    // The next sort into the folder removes it (KilledAtTheWorstMoment below); here it is checked
    // and removed, so that each kill is judged alone. True when there was one.
    bool linked_not_renamed(const std::set<std::string>& expected_entries) {
        for (const std::string& name : dir_.entries()) {
            if (expected_entries.count(name)) continue;
            EXPECT_EQ(name.rfind(".gpusort-out-", 0), 0u) << "left behind: " << name;
            EXPECT_TRUE(identical(read_text(dir_ / name), expected_)) << name;
            std::filesystem::remove(dir_ / name);
            ++linked_not_renamed_;
            return true;
        }
        return false;
    }

    ScratchDir dir_;
    std::string original_, expected_;
    std::function<void(int)> prepare_;
    int linked_not_renamed_ = 0;
};

TEST_F(KilledAtRandom, FileToFileLeavesNoOutputOrAWholeOneAndTheInputIntact) {
    const std::string old_output = "the old output";
    bool existed = false;
    prepare_ = [&](int kill) {
        existed = kill % 2 == 1;
        if (existed)
            write_text(dir_ / "out", old_output);
        else
            std::filesystem::remove(dir_ / "out");
    };
    kill_repeatedly(dir_ / "out", [&](const Result&, int) {
        ASSERT_TRUE(identical(read_text(dir_ / "in"), original_));
        const bool present = exists(dir_ / "out");
        const std::string out = present ? read_text(dir_ / "out") : std::string();
        if (existed) {
            ASSERT_TRUE(present);
            EXPECT_TRUE(out == old_output || identical(out, expected_)) << identical(out, expected_).message();
            if (linked_not_renamed({"in", "tmp", "out"})) {
                EXPECT_EQ(out, old_output);
            }
        } else {
            if (present) {
                EXPECT_TRUE(identical(out, expected_));
            }
            const std::set<std::string> expected_entries =
                present ? std::set<std::string>{"in", "tmp", "out"} : std::set<std::string>{"in", "tmp"};
            EXPECT_EQ(dir_.entries(), expected_entries);
        }
    });
}

TEST_F(KilledAtRandom, InPlaceLeavesTheInputWholeAndEitherOriginalOrSorted) {
    bool sorted = false;
    prepare_ = [&](int) {
        if (sorted) write_text(dir_ / "in", original_);
    };
    kill_repeatedly(dir_ / "in", [&](const Result&, int) {
        const std::string in = read_text(dir_ / "in");
        sorted = in == expected_;
        EXPECT_TRUE(sorted || in == original_) << identical(in, original_).message();
        if (linked_not_renamed({"in", "tmp"})) {
            EXPECT_EQ(in, original_);
        }
    });
}

// What a kill between the hidden name and the rename leaves (a hidden file that no running sort
// holds locked) is removed by the next sort into the folder. (That the hidden file of a sort still
// running is kept: tests/io_test.cpp, AtomicOutputFile.RemovesTheHiddenLeftoversOfEndedSortsOnly.)
TEST(KilledAtTheWorstMoment, TheNextSortIntoTheFolderRemovesWhatWasLeft) {
    ScratchDir dir;
    generate(dir / "in", "300000");
    const std::string expected = sorted_keys(read_text(dir / "in"));
    write_text(dir / ".gpusort-out-3xq9w0p1m2n4", expected);  // as a killed sort leaves it
    write_text(dir / "out", "the old output");
    Result r = sort({"--backend", "cpu", dir / "in", dir / "out"});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_TRUE(identical(read_text(dir / "out"), expected));
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
}

// ---------------------------------------------------------------------------------------------
// 8. Absurd option values: status 2 and one line naming the option, or a sort with a documented
// meaning; never a crash, a hang or a huge allocation. (tests/cli_test.cpp covers --memory lots
// and 100K, --threads 0, --record-size 0 with --key, and malformed --key specs.)

TEST(HostileOptions, AbsurdValuesAreRefusedNamingTheOption) {
    ScratchDir dir;
    generate(dir / "in", "1000");
    write_text(dir / "out", "keep");
    struct Case {
        std::vector<std::string> args;
        std::string option;
    };
    std::vector<Case> cases;
    for (const char* size :
         {"0", "1E", "-1", "-5G", "99999999999999999999", "1.5.5G", "1e3", "18E", "1P", "0.5K", " 64M"}) {
        cases.push_back({{"--memory", size}, "--memory"});
        cases.push_back({{"--device-memory", size}, "--device-memory"});
    }
    for (const char* count : {"0", "-1", "1048577", "99999999999999999999999", "1e3", ""})
        cases.push_back({{"--record-size", count}, "--record-size"});
    for (const char* count : {"-1", "1025", "100000", "4294967295", "4294967296", "99999999999", "2x"})
        cases.push_back({{"--threads", count}, "--threads"});
    for (const char* level : {"-1", "99", "20", "99999999999"})
        cases.push_back({{"--compression-level", level, "--output-compression", "zst"}, "--compression-level"});
    cases.push_back({{"--compression-level", "0", "--output-compression", "zst"}, "--compression-level"});
    cases.push_back({{"--compression-level", "10", "--output-compression", "gz"}, "--compression-level"});
    cases.push_back({{"--compression-level", "0", "--output-compression", "bz2"}, "--compression-level"});
    for (const char* key : {"18446744073709551615:u64", "18446744073709551610:bytes:10", "1048576:u8",
                            "0:bytes:1048577", "0:bytes:18446744073709551615", "99999999999999999999999:u8", "-1:u8"})
        cases.push_back({{"--key", key}, "--key"});
    cases.push_back({{"--record-size", "8", "--key", "4:u64"}, "--key"});
    for (const char* device : {"-1", "2147483648", "99999999999"}) cases.push_back({{"--device", device}, "--device"});

    for (const Case& c : cases) {
        std::string shown;
        for (const auto& a : c.args) shown += a + " ";
        SCOPED_TRACE(shown);
        Result r = sort(c.args + std::vector<std::string>{dir / "in", dir / "out"});
        EXPECT_EQ(r.exit_code(), 2) << r.how_it_ended() << ": " << r.err;
        expect_one_error_line(r, c.option, kBadCommandLine);
        EXPECT_TRUE(read_text(dir / "out") == "keep") << "OUTPUT was replaced";
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
    }
}

TEST(HostileOptions, ExtremeButMeaningfulValuesSort) {
    ScratchDir dir;
    generate(dir / "in", "100000");
    const std::string expected = sorted_keys(read_text(dir / "in"));
    // --device is only read by the GPU backend; the budget is an upper bound (memory is taken for
    // the input, not for the budget); sizes in any case, with B or iB; the most threads accepted.
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"--backend", "cpu", "--device", "99"},
             {"--memory", "16T"},
             {"--memory", "1.5m"},
             {"--memory", "64MiB"},
             {"--memory", "64mb"},
             {"--threads", "1024"},
             {"--compression-level", "9"},
         }) {
        SCOPED_TRACE(args[0] + " " + args[1]);
        Result r = sort(args + std::vector<std::string>{dir / "in", dir / "out"});
        ASSERT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_TRUE(identical(read_text(dir / "out"), expected));
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
    }
}

}  // namespace
