// gpusort-file when things go wrong: killed by a signal mid-sort, a file size limit, a full file
// system, files it may not read or write, paths of the wrong kind. Every failure must give one
// "gpusort-file: " line naming the file and the cause and a non-zero status (a signal: end by that
// signal), and leave no new file at OUTPUT, an existing OUTPUT byte for byte as it was, nothing
// in the output folder or --tmp-dir, and the input untouched. A sort after a killed one writes the
// bytes of an in-test std::sort of the input.
#include "cli_run.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <grp.h>
#include <memory>
#include <optional>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

using namespace gpusort::testing;

namespace {

std::set<std::string> entries_of(const std::string& folder) {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) names.insert(entry.path().filename());
    return names;
}

// Size and a 64-bit FNV-1a hash of a file's bytes, read in pieces; nullopt when it does not exist.
std::optional<std::pair<std::uint64_t, std::uint64_t>> digest(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::uint64_t size = 0, hash = 14695981039346656037ull;
    std::vector<char> buffer(1 << 20);
    while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
        const auto n = static_cast<std::size_t>(in.gcount());
        for (std::size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
        size += n;
    }
    return std::make_pair(size, hash);
}

// What a failed run must leave as it found it: the entries of some folders, OUTPUT (its bytes or
// its absence) and the input's bytes.
class MustStayAsItWas {
public:
    MustStayAsItWas(std::vector<std::string> folders, std::string output, std::string input)
        : folders_(std::move(folders)), output_(std::move(output)), input_(std::move(input)) {
        for (const auto& folder : folders_) entries_.push_back(entries_of(folder));
        output_digest_ = digest(output_);
        input_digest_ = digest(input_);
    }

    void expect_unchanged() const {
        for (std::size_t i = 0; i < folders_.size(); ++i)
            EXPECT_EQ(entries_of(folders_[i]), entries_[i]) << "entries of " << folders_[i];
        if (output_digest_) {
            EXPECT_EQ(digest(output_), output_digest_) << "the existing OUTPUT changed: " << output_;
        } else {
            EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(output_))) << "a new OUTPUT: " << output_;
        }
        ASSERT_TRUE(input_digest_.has_value()) << input_;
        EXPECT_EQ(digest(input_), input_digest_) << "the input changed: " << input_;
    }

private:
    std::vector<std::string> folders_;
    std::vector<std::set<std::string>> entries_;
    std::string output_;
    std::string input_;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> output_digest_;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> input_digest_;
};

void generate(const std::string& path, const std::string& count) {
    Result r = run(GPUSORT_GEN_BIN, {"--type", "u64", "--count", count, "--seed", "7", path});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
}

void make_folder(const std::string& path, mode_t mode = 0755) {
    ASSERT_EQ(::mkdir(path.c_str(), mode), 0) << path << ": " << std::strerror(errno);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;  // whatever the umask
}

// In the child before exec: become "nobody", whom permissions apply to (they do not to root).
void become_nobody() {
    if (::geteuid() != 0) return;
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) {
        const char message[] = "cannot drop to uid 65534\n";
        [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
        ::_exit(126);
    }
}

// ---------------------------------------------------------------------------------------------
// Killed mid-sort. The input (320 MB) is sorted with a 32 MiB budget on one thread, so it spills
// sorted runs into DIR/tmp; the signal is sent once the program has a file open there.

class KilledMidSort : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        input_dir_ = new ScratchDir;
        generate(*input_dir_ / "in", "40000000");
    }
    static void TearDownTestSuite() {
        delete input_dir_;
        input_dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_FALSE(HasFatalFailure());
        make_folder(dir_ / "tmp");
    }

    std::string input() const { return *input_dir_ / "in"; }
    std::string output() const { return dir_ / "out"; }
    std::vector<std::string> sort_args() const {
        return {"--backend", "cpu", "--memory", "32M", "--threads", "1", "--tmp-dir", dir_ / "tmp", input(), output()};
    }

    // Waits until one of the child's descriptors points into DIR/tmp (a nameless temp file shows
    // as "DIR/tmp/#123 (deleted)"); false when the child ended first or it took longer than kHangBound.
    bool wait_until_spilling(const ChildProcess& child) const {
        bool spilling = false;
        wait_for([&] { return child.has_ended() || (spilling = has_file_open_in(child.pid(), dir_ / "tmp")); });
        return spilling;
    }

    // Starts the sort, sends `sig` once it spills, and checks the end and what is left.
    void kill_mid_sort(int sig) {
        MustStayAsItWas state({dir_.path(), dir_ / "tmp"}, output(), input());
        ChildProcess child(GPUSORT_FILE_BIN, sort_args());
        const bool spilling = wait_until_spilling(child);
        if (spilling) ::kill(child.pid(), sig);
        const Result r = child.wait();
        ASSERT_TRUE(spilling) << "never saw a file open in " << dir_ / "tmp" << "; it " << r.how_it_ended() << ": "
                              << r.err;
        EXPECT_TRUE(r.killed_by(sig)) << "sent " << ::strsignal(sig) << ", it " << r.how_it_ended() << ": " << r.err;
        state.expect_unchanged();
    }

    static ScratchDir* input_dir_;
    ScratchDir dir_;
};

ScratchDir* KilledMidSort::input_dir_ = nullptr;

TEST_F(KilledMidSort, BySigint) { kill_mid_sort(SIGINT); }

TEST_F(KilledMidSort, BySigtermKeepingAnExistingOutput) {
    write_text(output(), "the old output, kept as it is");
    kill_mid_sort(SIGTERM);
}

TEST_F(KilledMidSort, BySighup) { kill_mid_sort(SIGHUP); }

// The sort that follows writes the reference's bytes: the input's keys, read before it, sorted by
// std::sort (u64: every order of equal keys gives the same bytes), and leaves the input as it was.
TEST_F(KilledMidSort, BySigkillThenTheSameCommandSucceeds) {
    kill_mid_sort(SIGKILL);
    const auto input_digest = digest(input());
    const std::vector<std::uint64_t> expected = reference_sort(read_keys<std::uint64_t>(input()), false);
    Result r = run(GPUSORT_FILE_BIN, sort_args());
    ASSERT_EQ(r.exit_code(), 0) << r.how_it_ended() << ": " << r.err;
    EXPECT_EQ(entries_of(dir_ / "tmp"), std::set<std::string>{});
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(output()), expected)) << "not the reference's bytes";
    EXPECT_EQ(digest(input()), input_digest) << "the input changed";
    Result checked = run(GPUSORT_CHECK_BIN, {"--type", "u64", "--input", input(), output()});
    EXPECT_EQ(checked.exit_code(), 0) << checked.out << checked.err;
}

// ---------------------------------------------------------------------------------------------
// A file size limit (RLIMIT_FSIZE): without SIGXFSZ ignored the program would be killed by it.

TEST(FileSizeLimit, ReportsFileTooLargeNamingTheOutput) {
    ScratchDir dir;
    generate(dir / "in", "2M");  // 16 MiB
    auto limit_file_size = [] {
        const rlimit no_core{0, 0};
        const rlimit one_megabyte{1 << 20, 1 << 20};
        if (::setrlimit(RLIMIT_CORE, &no_core) != 0 || ::setrlimit(RLIMIT_FSIZE, &one_megabyte) != 0) ::_exit(126);
    };
    for (bool existing_output : {false, true}) {
        if (existing_output) write_text(dir / "out", "the old output");
        MustStayAsItWas state({dir.path()}, dir / "out", dir / "in");
        Result r = run(GPUSORT_FILE_BIN, {dir / "in", dir / "out"}, limit_file_size);
        expect_one_error_line(r, {dir / "out", "File too large"});
        state.expect_unchanged();
    }
}

// ---------------------------------------------------------------------------------------------
// A full file system: a 4 MiB tmpfs (mounting needs root; skipped elsewhere).

class SmallFileSystem : public ::testing::Test {
protected:
    void SetUp() override {
        make_folder(small_);
        if (::mount("tmpfs", small_.c_str(), "tmpfs", 0, "size=4m") != 0)
            GTEST_SKIP() << "cannot mount a 4 MiB tmpfs at " << small_ << ": " << std::strerror(errno)
                         << " (FileSizeLimit covers running out of room instead)";
        mounted_ = true;
        generate(dir_ / "in", "2M");  // 16 MiB
    }
    void TearDown() override {
        if (mounted_) {
            EXPECT_EQ(::umount(small_.c_str()), 0) << small_ << ": " << std::strerror(errno);
        }
    }

    ScratchDir dir_;
    const std::string small_ = dir_ / "small";
    bool mounted_ = false;
};

TEST_F(SmallFileSystem, OutputThereFailsNamingTheOutput) {
    for (bool existing_output : {false, true}) {
        if (existing_output) write_text(small_ + "/out", "the old output");
        MustStayAsItWas state({dir_.path(), small_}, small_ + "/out", dir_ / "in");
        Result r = run(GPUSORT_FILE_BIN, {dir_ / "in", small_ + "/out"});
        // "No space left on device", or a message about the space needed, checked up front.
        expect_one_error_line(r, {small_ + "/out", "space"});
        state.expect_unchanged();
    }
}

TEST_F(SmallFileSystem, TmpDirThereFailsNamingTheTmpDir) {
    MustStayAsItWas state({dir_.path(), small_}, dir_ / "out", dir_ / "in");
    Result r = run(GPUSORT_FILE_BIN,
                   {"--backend", "cpu", "--memory", "2M", "--tmp-dir", small_, dir_ / "in", dir_ / "out"});
    expect_one_error_line(r, {small_, "space"});
    state.expect_unchanged();
}

// ---------------------------------------------------------------------------------------------
// Permissions, as uid 65534 (permissions do not stop root).

TEST(Permissions, UnreadableInput) {
    ScratchDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
    generate(dir / "in", "100000");
    ASSERT_EQ(::chmod((dir / "in").c_str(), 0), 0);
    MustStayAsItWas state({dir.path()}, dir / "out", dir / "in");
    Result r = run(GPUSORT_FILE_BIN, {dir / "in", dir / "out"}, become_nobody);
    expect_one_error_line(r, {dir / "in", "Permission denied"});
    state.expect_unchanged();
}

TEST(Permissions, UnwritableOutputFolder) {
    ScratchDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
    generate(dir / "in", "100000");
    ASSERT_EQ(::chmod((dir / "in").c_str(), 0644), 0);
    make_folder(dir / "locked", 0555);
    MustStayAsItWas state({dir.path(), dir / "locked"}, dir / "locked/out", dir / "in");
    Result r = run(GPUSORT_FILE_BIN, {dir / "in", dir / "locked/out"}, become_nobody);
    expect_one_error_line(r, {dir / "locked/out", "Permission denied"});
    state.expect_unchanged();
}

// ---------------------------------------------------------------------------------------------
// Paths that are missing or of the wrong kind.

class WrongPaths : public ::testing::Test {
protected:
    void SetUp() override {
        generate(dir_ / "in", "1M");  // 8 MiB, more than --memory 1M
        write_text(dir_ / "out", "the old output");
        make_folder(dir_ / "folder");
    }
    ScratchDir dir_;
};

TEST_F(WrongPaths, MissingInput) {
    MustStayAsItWas state({dir_.path()}, dir_ / "out", dir_ / "in");
    expect_one_error_line(run(GPUSORT_FILE_BIN, {dir_ / "missing", dir_ / "out"}),
                          {dir_ / "missing", "No such file or directory"});
    expect_one_error_line(run(GPUSORT_FILE_BIN, {dir_ / "missing", dir_ / "new"}),
                          {dir_ / "missing", "No such file or directory"});
    state.expect_unchanged();
}

TEST_F(WrongPaths, InputIsADirectory) {
    MustStayAsItWas state({dir_.path(), dir_ / "folder"}, dir_ / "out", dir_ / "in");
    expect_one_error_line(run(GPUSORT_FILE_BIN, {dir_ / "folder", dir_ / "out"}), {dir_ / "folder", "directory"});
    expect_one_error_line(run(GPUSORT_FILE_BIN, {dir_ / "folder", dir_ / "new"}), {dir_ / "folder", "directory"});
    state.expect_unchanged();
}

TEST_F(WrongPaths, OutputIsADirectory) {
    write_text(dir_ / "folder/inside", "stays");
    MustStayAsItWas state({dir_.path(), dir_ / "folder"}, dir_ / "out", dir_ / "in");
    expect_one_error_line(run(GPUSORT_FILE_BIN, {dir_ / "in", dir_ / "folder"}), {dir_ / "folder", "directory"});
    expect_one_error_line(run(GPUSORT_FILE_BIN, {"--memory", "1M", dir_ / "in", dir_ / "folder"}),
                          {dir_ / "folder", "directory"});
    state.expect_unchanged();
    EXPECT_EQ(read_text(dir_ / "folder/inside"), "stays");
}

TEST_F(WrongPaths, TmpDirIsNotADirectory) {
    MustStayAsItWas state({dir_.path()}, dir_ / "out", dir_ / "in");
    for (const std::string& output : {dir_ / "out", dir_ / "new"}) {
        expect_one_error_line(
            run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "1M", "--tmp-dir", dir_ / "in", dir_ / "in", output}),
            {dir_ / "in", "not a directory"});
        expect_one_error_line(run(GPUSORT_FILE_BIN,
                                  {"--backend", "cpu", "--memory", "1M", "--tmp-dir", dir_ / "missing", dir_ / "in", output}),
                              {dir_ / "missing", "No such file or directory"});
    }
    state.expect_unchanged();
}

}  // namespace
