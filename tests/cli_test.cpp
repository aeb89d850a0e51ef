// The programs as a user runs them: gpusort-gen makes data, gpusort-file sorts it, and its
// output is compared byte for byte with an in-test std::stable_sort of the input's records, read
// before the sort, under an independent reference order (reference_records.hpp), the input
// compared with those bytes after the sort, and gpusort-check run too; every error case gives one
// "gpusort-file: " line, a non-zero status, no new file at OUTPUT, an untouched existing OUTPUT
// and no temp files.
#include "cli_run.hpp"
#include "reference_order.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

Result sort_cli(const std::vector<std::string>& args, const ScratchDir&) { return run(GPUSORT_FILE_BIN, args); }

// What gpusort-file must write for the records `input` (a file's bytes, read before the sort)
// under the key options (and --unique) `key`: their stable sort by the reference order.
std::string reference_of(const std::string& input, const std::vector<std::string>& key) {
    const ReferenceKey reference = reference_key_of_options(key);
    return reference_record_sort_text(input, reference.spec, reference.unique);
}

}  // namespace

TEST(Cli, SortsGeneratedDataOfSeveralTypes) {
    ScratchDir dir;
    struct Case {
        const char* type;
        const char* dist;
        bool descending;
    };
    for (Case c : {Case{"u64", "uniform", false}, Case{"i16", "zipf", true}, Case{"f32", "normal", false},
                   Case{"f64", "uniform", true}, Case{"u8", "few-unique", false}, Case{"i32", "nearly-sorted", true}}) {
        std::vector<std::string> gen = {"--type", c.type, "--count", "300001", "--dist", c.dist, dir / "in"};
        if (std::string(c.type)[0] == 'f') gen.push_back("--special");
        ASSERT_EQ(run(GPUSORT_GEN_BIN, gen).status(), 0);
        std::vector<std::string> key = {"--type", c.type};
        if (c.descending) key.push_back("--descending");
        // The expectation from the input as it was before the sort.
        const std::string input = read_text(dir / "in");
        const std::string expected = reference_of(input, key);
        std::vector<std::string> args = key;
        args.insert(args.end(), {dir / "in", dir / "out"});
        Result r = sort_cli(args, dir);
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_TRUE(read_text(dir / "out") == expected) << c.type << ": not the reference's bytes";
        EXPECT_TRUE(read_text(dir / "in") == input) << c.type << ": the input changed";
        std::vector<std::string> check = key;
        check.insert(check.end(), {"--input", dir / "in", dir / "out"});
        Result checked = run(GPUSORT_CHECK_BIN, check);
        EXPECT_EQ(checked.status(), 0) << c.type << " " << checked.out << checked.err;
    }
}

TEST(Cli, SpillsRunsAndMergesInSeveralPassesLeavingTmpDirAsItWas) {
    ScratchDir dir;
    ScratchDir tmp;
    write_text(tmp / "unrelated", "stays");
    // 4 Mi keys = 32 MiB with a 1 MiB budget: about 70 runs, more than one merge can take.
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "4M", "--seed", "9", dir / "in"}).status(), 0);
    const auto in = read_keys<std::uint64_t>(dir / "in");  // before the sort
    Result r = sort_cli({"--backend", "cpu", "--memory", "1M", "--tmp-dir", tmp.path(), "--stats", dir / "stats.json",
                         dir / "in", dir / "out"},
                        dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(tmp.entries(), (std::set<std::string>{"unrelated"}));
    const std::string stats = read_text(dir / "stats.json");
    EXPECT_NE(stats.find("\"runs\": 69"), std::string::npos) << stats;
    EXPECT_EQ(stats.find("\"merge_passes\": 1,"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"spill_io\": \"buffered\""), std::string::npos) << stats;  // 64 MiB fit the page cache
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), reference_sort(in, false)));
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "in"), in)) << "the input changed";

    // The same with direct I/O, where the file system has it.
    std::filesystem::remove(dir / "out");
    r = sort_cli({"--backend", "cpu", "--memory", "1M", "--tmp-dir", tmp.path(), "--spill-io", "direct", "--stats",
                  dir / "stats.json", dir / "in", dir / "out"},
                 dir);
    if (r.status() != 0) {
        expect_one_error_line(r, "does not do direct I/O");
        return;
    }
    EXPECT_NE(read_text(dir / "stats.json").find("\"spill_io\": \"direct\""), std::string::npos);
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), reference_sort(in, false)));
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "in"), in)) << "the input changed";
    EXPECT_EQ(tmp.entries(), (std::set<std::string>{"unrelated"}));
}

TEST(Cli, SortsInPlace) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--type", "i64", "--count", "200000", dir / "data"}).status(), 0);
    auto original = read_keys<std::int64_t>(dir / "data");
    Result r = sort_cli({"--type", "i64", "--backend", "cpu", "--memory", "1M", dir / "data", dir / "data"}, dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(same_bytes(read_keys<std::int64_t>(dir / "data"), reference_sort(original, false)));
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"data"}));
}

TEST(Cli, EmptyInputGivesEmptyOutput) {
    ScratchDir dir;
    write_text(dir / "in", "");
    Result r = sort_cli({dir / "in", dir / "out"}, dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(read_text(dir / "out"), "");
}

TEST(Cli, MissingInput) {
    ScratchDir dir;
    write_text(dir / "out", "keep");
    expect_one_error_line(sort_cli({dir / "nope", dir / "out"}, dir), dir / "nope");
    EXPECT_EQ(read_text(dir / "out"), "keep");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"out"}));
}

TEST(Cli, InputSizeNotAMultipleOfTheRecordSize) {
    ScratchDir dir;
    write_text(dir / "in", std::string(12, 'x'));
    expect_one_error_line(sort_cli({"--type", "u64", dir / "in", dir / "out"}, dir), "not a multiple of the record size 8");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));
    EXPECT_EQ(read_text(dir / "in"), std::string(12, 'x'));
}

TEST(Cli, UnwritableOutput) {
    ScratchDir dir;
    write_text(dir / "in", std::string(16, 'x'));
    expect_one_error_line(sort_cli({dir / "in", dir / "no/such/folder/out"}, dir), "no/such/folder");
    ::mkdir((dir / "sub").c_str(), 0755);
    expect_one_error_line(sort_cli({dir / "in", dir / "sub"}, dir), "is a directory");
    // A read-only file system: refused even to root.
    expect_one_error_line(sort_cli({dir / "in", "/proc/gpusort-out"}, dir), "/proc/gpusort-out");
    if (::geteuid() != 0) {
        ::mkdir((dir / "locked").c_str(), 0555);
        expect_one_error_line(sort_cli({dir / "in", dir / "locked/out"}, dir), "locked/out");
        EXPECT_TRUE(std::filesystem::is_empty(dir / "locked"));
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "sub"}));
}

TEST(Cli, UnusableTmpDir) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "1M", dir / "in"}).status(), 0);
    write_text(dir / "out", "keep");
    expect_one_error_line(sort_cli({"--memory", "1M", "--tmp-dir", dir / "missing", dir / "in", dir / "out"}, dir),
                          dir / "missing");
    expect_one_error_line(sort_cli({"--memory", "1M", "--tmp-dir", dir / "in", dir / "in", dir / "out"}, dir),
                          "not a directory");
    expect_one_error_line(sort_cli({"--memory", "1M", "--tmp-dir", "/proc", dir / "in", dir / "out"}, dir),
                          "cannot create a temp file in '/proc': no file can be created there");
    // Refused even when the input is small enough not to need it.
    expect_one_error_line(sort_cli({"--tmp-dir", dir / "missing", dir / "in", dir / "out"}, dir), dir / "missing");
    EXPECT_EQ(read_text(dir / "out"), "keep");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
}

TEST(Cli, BadCommandLines) {
    ScratchDir dir;
    write_text(dir / "in", std::string(16, 'x'));
    expect_one_error_line(sort_cli({"--type", "u128", dir / "in", dir / "out"}, dir), "u128", kBadCommandLine);
    expect_one_error_line(sort_cli({"--memory", "lots", dir / "in", dir / "out"}, dir), "--memory", kBadCommandLine);
    expect_one_error_line(sort_cli({"--memory", "100K", dir / "in", dir / "out"}, dir), "--memory", kBadCommandLine);
    expect_one_error_line(sort_cli({"--threads", "0", dir / "in", dir / "out"}, dir), "--threads", kBadCommandLine);
    expect_one_error_line(sort_cli({"--spill-io", "fast", dir / "in", dir / "out"}, dir), "--spill-io", kBadCommandLine);
    expect_one_error_line(sort_cli({dir / "in"}, dir), "expected INPUT and OUTPUT, got only '" + (dir / "in") + "'",
                          kBadCommandLine);
    expect_one_error_line(sort_cli({}, dir), "expected INPUT and OUTPUT (see --help)", kBadCommandLine);
    // A forgotten key spec: the key is blamed, not a missing OUTPUT.
    expect_one_error_line(sort_cli({"--key", dir / "in", dir / "out"}, dir), "--key", kBadCommandLine);
    // An option's value taken from the next word, which is an option: the sort would have lost the
    // record size (and written its report to a file named "--record-size=16").
    expect_one_error_line(sort_cli({"--stats", "--record-size=16", dir / "in", dir / "out"}, dir),
                          "--stats: its value is missing ('--record-size=16' looks like an option)", kBadCommandLine);
    expect_one_error_line(sort_cli({"--tmp-dir", "--descending", dir / "in", dir / "out"}, dir),
                          "--tmp-dir: its value is missing ('--descending' looks like an option)", kBadCommandLine);
    expect_one_error_line(sort_cli({"--no-such-option", dir / "in", dir / "out"}, dir),
                          std::vector<std::string>{"no-such-option", "(see --help)"}, kBadCommandLine);
    expect_one_error_line(sort_cli({dir / "in", dir / "out", dir / "more"}, dir),
                          "too many operands: expected INPUT and OUTPUT (see --help)", kBadCommandLine);
    // The level's range is that of the format in use only.
    expect_one_error_line(sort_cli({"--compression-level", "99", dir / "in", dir / "out.zst"}, dir),
                          "--compression-level: compression level 99 is out of range for zst (1-19)", kBadCommandLine);
    expect_one_error_line(sort_cli({"--compression-level", "12", dir / "in", dir / "out.gz"}, dir),
                          "--compression-level: compression level 12 is out of range for gz (0-9)", kBadCommandLine);
    expect_one_error_line(sort_cli({"--compression-level", "99", dir / "in", dir / "out"}, dir),
                          "--compression-level: must be between 0 and 19 (OUTPUT is not compressed", kBadCommandLine);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));
    // --help: the options, "-" for stdin and stdout, the exit statuses and examples, for each program.
    for (const std::string program : {GPUSORT_FILE_BIN, GPUSORT_GEN_BIN, GPUSORT_CHECK_BIN}) {
        Result help = run(program, {"--help"});
        EXPECT_EQ(help.status(), 0) << program;
        for (const char* part : {"Usage: ", "--help", "--version", "\nExit status:\n  0  ", "\n  2  a bad command line",
                                 "\nExamples:\n  gpusort-"})
            EXPECT_NE(help.out.find(part), std::string::npos) << program << " --help lacks '" << part << "':\n" << help.out;
    }
    Result help = sort_cli({"--help"}, dir);
    EXPECT_NE(help.out.find("--memory"), std::string::npos);
    EXPECT_NE(help.out.find("INPUT and OUTPUT may be - for standard input and output"), std::string::npos);
}

namespace {

// One line on stderr starting with "PROGRAM: " (the program's name) and holding `text`, nothing
// on stdout, and exit status 2: a malformed command line.
void expect_bad_command_line(const Result& r, const std::string& program, const std::string& text) {
    EXPECT_EQ(r.status(), kBadCommandLine) << r.how_it_ended() << "; stderr: " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind(program + ": ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << "missing '" << text << "' in: " << r.err;
}

}  // namespace

// A value that looks like an option is a missing value, however many operands follow: the word
// after it was not taken as one more operand.
TEST(Cli, AnOptionAsTheValueOfAnotherIsAMissingValueInEveryProgram) {
    ScratchDir dir;
    write_text(dir / "in", std::string(16, 'x'));
    struct Case {
        const char* program;
        const char* name;
        std::vector<std::string> args;
        std::string message;
    };
    const std::string in = dir / "in", out = dir / "out";
    for (const Case& c : std::vector<Case>{
             {GPUSORT_FILE_BIN, "gpusort-file", {"--stats", "--type", "u32", in, out}, "--stats: its value is missing ('--type'"},
             {GPUSORT_FILE_BIN, "gpusort-file", {"--memory", "--type", "u32", in, out}, "--memory: its value is missing ('--type'"},
             {GPUSORT_FILE_BIN, "gpusort-file", {"--tmp-dir", "--memory", "64M", in, out},
              "--tmp-dir: its value is missing ('--memory'"},
             {GPUSORT_GEN_BIN, "gpusort-gen", {"--count", "--type", "u32", out}, "--count: its value is missing ('--type'"},
             {GPUSORT_GEN_BIN, "gpusort-gen", {"--seed", "--count", "10", out}, "--seed: its value is missing ('--count'"},
             {GPUSORT_CHECK_BIN, "gpusort-check", {"--input", "--type", "u32", in}, "--input: its value is missing ('--type'"},
             {GPUSORT_GEN_BIN, "gpusort-gen", {"--count", "10", out, out}, "too many operands: expected one OUTPUT"},
             {GPUSORT_CHECK_BIN, "gpusort-check", {in, in}, "too many operands: expected one FILE"},
         }) {
        expect_bad_command_line(run(c.program, c.args), c.name, c.message);
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));
}

// gpusort-gen and gpusort-check show their version as gpusort-file does: "NAME VERSION".
TEST(Tools, GenAndCheckShowTheirVersionAsGpusortFileDoes) {
    const Result file = run(GPUSORT_FILE_BIN, {"--version"});
    ASSERT_EQ(file.status(), 0);
    ASSERT_EQ(file.out.rfind("gpusort-file ", 0), 0u) << file.out;
    const std::string version = file.out.substr(std::string("gpusort-file ").size());
    EXPECT_FALSE(version.empty() || version == "\n") << file.out;
    for (const std::string name : {"gpusort-gen", "gpusort-check"}) {
        const Result r = run(name == "gpusort-gen" ? GPUSORT_GEN_BIN : GPUSORT_CHECK_BIN, {"--version"});
        EXPECT_EQ(r.status(), 0) << r.err;
        EXPECT_EQ(r.out, name + " " + version);
        EXPECT_EQ(r.err, "");
    }
}

// An unknown --type or --dist of gpusort-gen is refused with the names that it takes.
TEST(Tools, GenListsTheTypesAndDistributionsItTakes) {
    ScratchDir dir;
    expect_bad_command_line(run(GPUSORT_GEN_BIN, {"--type", "u128", "--count", "10", dir / "out"}), "gpusort-gen",
                            "unknown --type 'u128' (one of: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64)");
    expect_bad_command_line(
        run(GPUSORT_GEN_BIN, {"--dist", "gauss", "--count", "10", dir / "out"}), "gpusort-gen",
        "unknown --dist 'gauss' (one of: uniform sorted reversed equal few-unique nearly-sorted zipf normal)");
    EXPECT_TRUE(dir.entries().empty());
}

// The --help of each program as help2man reads it for the manual page: each option at least two
// spaces from its description, the exit statuses under a heading of their own, every example
// with its description, and nothing that names a source file.
TEST(Tools, HelpIsLaidOutForTheManualPage) {
    for (const std::string program : {GPUSORT_FILE_BIN, GPUSORT_GEN_BIN, GPUSORT_CHECK_BIN}) {
        const Result help = run(program, {"--help"});
        ASSERT_EQ(help.status(), 0) << program;
        std::istringstream lines(help.out);
        std::string section;
        std::vector<std::string> examples;
        for (std::string line; std::getline(lines, line);) {
            if (!line.empty() && line[0] != ' ') section = line;
            else if (section == "Options:" && line.rfind("  -", 0) == 0 && line.find("  ", 2) == std::string::npos)
                ADD_FAILURE() << program << ": an option runs into its description: " << line;
            else if (section == "Examples:") examples.push_back(line);
        }
        EXPECT_NE(help.out.find("\nExit status:\n  0  "), std::string::npos) << help.out;
        // Each example: "  COMMAND  DESCRIPTION", or a long COMMAND and its description on the next line.
        for (std::size_t i = 0; i < examples.size(); ++i) {
            const bool described = examples[i].find("  ", 2) != std::string::npos ||
                                   (i + 1 < examples.size() && examples[i + 1].rfind("          ", 0) == 0);
            EXPECT_TRUE(described || examples[i].rfind("          ", 0) == 0) << program << ": " << examples[i];
        }
        EXPECT_EQ(help.out.find(".hpp"), std::string::npos) << program << " --help names a source file";
    }
}

// Without a GPU and its driver, the summary and --stats say that no GPU was found; the advice to
// install or update the driver is for a GPU whose driver is too old.
TEST(Cli, WithoutAGpuTheSummarySaysNoneWasFound) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "1000", dir / "in"}).status(), 0);
    const Result r = sort_cli({"--progress", "--stats", dir / "stats", dir / "in", dir / "out"}, dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    const std::string stats = read_text(dir / "stats");
    if (stats.find("\"backend\": \"gpu\"") != std::string::npos) GTEST_SKIP() << "a GPU was used";
    if (stats.find("built without CUDA") != std::string::npos) GTEST_SKIP() << "built without CUDA";
    if (void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY)) {
        ::dlclose(driver);
        GTEST_SKIP() << "an NVIDIA driver is installed";
    }
    const std::string reason = "no usable GPU: no GPU was found, and no NVIDIA driver is installed";
    EXPECT_NE(r.err.find("backend cpu (" + reason + ")"), std::string::npos) << r.err;
    EXPECT_NE(stats.find("\"backend_reason\": \"" + reason + "\""), std::string::npos) << stats;
    EXPECT_EQ(r.err.find("install or update"), std::string::npos) << r.err;
}

TEST(Cli, ADeviceBudgetForASortOnTheCpuIsNotedNotSilentlyIgnored) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "1000", dir / "in"}).status(), 0);
    Result r = sort_cli({"--backend", "cpu", "--device-memory", "1G", dir / "in", dir / "out"}, dir);
    EXPECT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "gpusort-file: note: --device-memory is not used: the sort runs on the CPU (--backend cpu)\n");
    r = sort_cli({"--backend", "cpu", "--quiet", "--device-memory", "1G", dir / "in", dir / "out2"}, dir);
    EXPECT_EQ(r.status(), 0) << r.err;
    EXPECT_EQ(r.err, "");
}

TEST(Tools, GenIsDeterministicPerSeed) {
    ScratchDir dir;
    for (const char* dist : {"uniform", "sorted", "reversed", "equal", "few-unique", "nearly-sorted", "zipf", "normal"}) {
        ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--type", "i32", "--count", "5000", "--dist", dist, "--seed", "4", dir / "a"}).status(), 0);
        ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--type", "i32", "--count", "5000", "--dist", dist, "--seed", "4", dir / "b"}).status(), 0);
        EXPECT_EQ(read_text(dir / "a"), read_text(dir / "b")) << dist;
        EXPECT_EQ(read_text(dir / "a").size(), 20000u) << dist;
        auto keys = read_keys<std::int32_t>(dir / "a");
        if (std::string(dist) == "sorted") {
            EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
        }
        if (std::string(dist) == "reversed") {
            EXPECT_TRUE(std::is_sorted(keys.rbegin(), keys.rend()));
        }
        if (std::string(dist) == "equal") {
            EXPECT_EQ(std::count(keys.begin(), keys.end(), keys[0]), 5000);
        }
    }
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "1000", "--seed", "5", dir / "c"}).status(), 0);
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "1000", "--seed", "6", dir / "d"}).status(), 0);
    EXPECT_NE(read_text(dir / "c"), read_text(dir / "d"));
}

TEST(Tools, CheckFindsDisorderAndMissingRecords) {
    ScratchDir dir;
    std::vector<std::uint32_t> keys = {1, 2, 3, 3, 9};
    auto write = [&](const std::string& name, const std::vector<std::uint32_t>& k) {
        write_text(dir / name, std::string(reinterpret_cast<const char*>(k.data()), k.size() * 4));
    };
    write("sorted", keys);
    write("unsorted", {1, 3, 2, 3, 9});
    write("changed", {1, 2, 3, 4, 9});
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--type", "u32", "--input", dir / "unsorted", dir / "sorted"}).status(), 0);
    Result disorder = run(GPUSORT_CHECK_BIN, {"--type", "u32", dir / "unsorted"});
    EXPECT_EQ(disorder.status(), 1);
    EXPECT_NE(disorder.out.find("record 2 (counted from 0; at byte 8) is smaller than the one before it"),
              std::string::npos)
        << disorder.out;
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--type", "u32", "--input", dir / "unsorted", dir / "changed"}).status(), 1);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--type", "u32", "--descending", dir / "sorted"}).status(), 1);
    // "--input --type=u32": refused, not a check of u64 keys against an ORIGINAL named "--type=u32".
    Result swallowed = run(GPUSORT_CHECK_BIN, {"--input", "--type=u32", dir / "sorted"});
    EXPECT_EQ(swallowed.status(), 2);
    EXPECT_NE(swallowed.err.find("gpusort-check: --input: its value is missing ('--type=u32' looks like an option)"),
              std::string::npos)
        << swallowed.err;
    Result gen = run(GPUSORT_GEN_BIN, {"--type", "--format=gensort", dir / "generated"});
    EXPECT_EQ(gen.status(), 2);
    EXPECT_NE(gen.err.find("gpusort-gen: --type: its value is missing ('--format=gensort' looks like an option)"),
              std::string::npos)
        << gen.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "generated"));
}

// The first record out of order is described as what it is under the order asked for: larger
// than the one before it in a descending order, smaller in an ascending one, and "before it"
// where the key fields go both ways.
TEST(Tools, CheckDescribesTheViolationOfTheOrderAskedFor) {
    ScratchDir dir;
    write_keys<std::uint64_t>(dir / "rising", {1, 2, 3, 4});
    write_keys<std::uint64_t>(dir / "falling", {4, 3, 2, 1});
    const Result descending = run(GPUSORT_CHECK_BIN, {"--descending", dir / "rising"});
    EXPECT_EQ(descending.status(), 1);
    EXPECT_EQ(descending.out, "gpusort-check: '" + (dir / "rising") +
                                  "' is not in order: record 1 (counted from 0; at byte 8) is larger than the one before it\n");
    const Result ascending = run(GPUSORT_CHECK_BIN, {dir / "falling"});
    EXPECT_EQ(ascending.status(), 1);
    EXPECT_EQ(ascending.out, "gpusort-check: '" + (dir / "falling") +
                                 "' is not in order: record 1 (counted from 0; at byte 8) is smaller than the one before it\n");
    // 8-byte records by the u32 at 0 ascending, then the u32 at 4 descending: the third breaks it
    // by its second field, which is larger than the one before it.
    write_keys<std::uint32_t>(dir / "mixed", {1, 9, 2, 5, 2, 7});
    const Result mixed = run(GPUSORT_CHECK_BIN, {"--key", "0:u32", "--key", "4:u32:desc", dir / "mixed"});
    EXPECT_EQ(mixed.status(), 1);
    EXPECT_NE(mixed.out.find("record 2 (counted from 0; at byte 16) belongs before the one before it"), std::string::npos)
        << mixed.out;
}

// --size: as many whole records as fit; exactly one of --count and --size.
TEST(Tools, GenTakesASizeOrACount) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--size", "1M", "--seed", "3", dir / "by-size"}).status(), 0);
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--count", "128K", "--seed", "3", dir / "by-count"}).status(), 0);
    EXPECT_EQ(std::filesystem::file_size(dir / "by-size"), 1u << 20);
    EXPECT_TRUE(read_text(dir / "by-size") == read_text(dir / "by-count"));
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--size", "1M", "--format", "gensort", dir / "records"}).status(), 0);
    EXPECT_EQ(std::filesystem::file_size(dir / "records"), (1u << 20) / 100 * 100);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--count", "3", "--size", "24", dir / "x"},
                                                 std::vector<std::string>{dir / "x"},
                                                 std::vector<std::string>{"--size", "1Q", dir / "x"},
                                                 std::vector<std::string>{"--count", "3"},
                                                 std::vector<std::string>{"--count", "3", dir / "x", dir / "y"}}) {
        Result r = run(GPUSORT_GEN_BIN, args);
        EXPECT_EQ(r.status(), 2) << r.err;
        EXPECT_EQ(r.err.rfind("gpusort-gen: ", 0), 0u) << r.err;
    }
    EXPECT_EQ(run(GPUSORT_GEN_BIN, {"--count", "3", dir / "x", dir / "y"}).err,
              "gpusort-gen: too many operands: expected one OUTPUT (see --help)\n");
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {dir / "x", dir / "y"}).err,
              "gpusort-check: too many operands: expected one FILE (see --help)\n");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"by-size", "by-count", "records"}));
}

// --lines KIND: whole text lines up to --size, the same bytes in a file and on standard output,
// NULs with --zero-terminated and none after the last line with --no-final-newline; an unknown
// kind, --lines with --type, and --zero-terminated without --lines are bad command lines.
TEST(Tools, GenWritesTextLines) {
    ScratchDir dir;
    const std::vector<std::string> csv = {"--lines", "csv", "--size", "1M", "--seed", "3"};
    std::vector<std::string> to_file = csv;
    to_file.push_back(dir / "lines.csv");
    ASSERT_EQ(run(GPUSORT_GEN_BIN, to_file).status(), 0);
    const std::string lines = read_text(dir / "lines.csv");
    EXPECT_LE(lines.size(), 1u << 20);
    EXPECT_GT(lines.size(), (1u << 20) - 200);
    EXPECT_EQ(lines.back(), '\n');
    std::vector<std::string> to_stdout = csv;
    to_stdout.push_back("-");
    const Result out = run(GPUSORT_GEN_BIN, to_stdout);
    EXPECT_EQ(out.status(), 0) << out.err;
    EXPECT_TRUE(out.out == lines);
    const Result nuls = run(GPUSORT_GEN_BIN, {"--lines", "words", "--count", "1000", "--zero-terminated", "--no-final-newline", "-"});
    EXPECT_EQ(nuls.status(), 0) << nuls.err;
    EXPECT_EQ(std::count(nuls.out.begin(), nuls.out.end(), '\0'), 999);
    EXPECT_EQ(nuls.out.find('\n'), std::string::npos);
    expect_bad_command_line(run(GPUSORT_GEN_BIN, {"--lines", "poem", "--count", "10", dir / "x"}), "gpusort-gen",
                            "unknown --lines 'poem' (one of: fixed words log csv long mixed)");
    expect_bad_command_line(run(GPUSORT_GEN_BIN, {"--lines", "log", "--type", "u32", "--count", "10", dir / "x"}),
                            "gpusort-gen", "--lines and --type exclude each other");
    expect_bad_command_line(run(GPUSORT_GEN_BIN, {"--zero-terminated", "--count", "10", dir / "x"}), "gpusort-gen",
                            "--zero-terminated needs --lines KIND");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"lines.csv"}));
}

// gpusort-gen writes as gpusort-file does: a file appears only once it is whole, an existing one
// stays until then, the free space is checked before anything is written, and a failure to write
// is status 1 with one line.
TEST(Tools, GenLeavesNoPartialFile) {
    ScratchDir dir;
    write_text(dir / "old", "the old data");
    // A file size limit of 1 MiB for 8 MiB of keys.
    auto limit_file_size = [] {
        const rlimit one_megabyte{1 << 20, 1 << 20};
        if (::setrlimit(RLIMIT_FSIZE, &one_megabyte) != 0) ::_exit(126);
    };
    for (const std::string& output : {dir / "new", dir / "old"}) {
        Result r = run(GPUSORT_GEN_BIN, {"--count", "1M", output}, limit_file_size);
        EXPECT_EQ(r.status(), 1) << r.err;
        EXPECT_EQ(r.err, "gpusort-gen: cannot write '" + output + "': File too large (the file size limit was reached)\n");
    }
    // More than any disk holds: refused at once.
    Result r = run(GPUSORT_GEN_BIN, {"--count", "2000000000000", dir / "new"});
    EXPECT_EQ(r.status(), 1) << r.err;
    EXPECT_NE(r.err.find("not enough free space in '" + dir.path() + "': '" + dir / "new" + "' needs"), std::string::npos)
        << r.err;
    // A folder that is not there.
    r = run(GPUSORT_GEN_BIN, {"--count", "10", dir / "missing/new"});
    EXPECT_EQ(r.status(), 1) << r.err;
    // Killed while it writes 1 GiB.
    ChildProcess child(GPUSORT_GEN_BIN, {"--count", "128M", dir / "old"});
    ASSERT_TRUE(wait_for([&] { return has_file_open_in(child.pid(), dir.path()); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(child.pid(), SIGKILL);
    EXPECT_TRUE(child.wait().killed_by(SIGKILL));
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"old"}));
    EXPECT_EQ(read_text(dir / "old"), "the old data");
}

TEST(Tools, GenWritesGensortRecordsThatSayWhereTheyCameFrom) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--count", "5000", "--seed", "3", dir / "a"}).status(), 0);
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--count", "5000", "--seed", "3", dir / "b"}).status(), 0);
    const std::string a = read_text(dir / "a");
    ASSERT_EQ(a.size(), 500000u);
    EXPECT_EQ(a, read_text(dir / "b"));
    std::set<std::string> keys;
    for (std::uint64_t i = 0; i < 5000; ++i) {
        std::uint64_t index;
        std::memcpy(&index, a.data() + i * 100 + 10, 8);
        ASSERT_EQ(index, i);
        keys.insert(a.substr(i * 100, 10));
    }
    EXPECT_GT(keys.size(), 4990u);  // uniformly random 10-byte keys hardly ever repeat
    EXPECT_NE(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--type", "u32", "--count", "5", dir / "c"}).status(), 0);
}

TEST(Tools, CheckUnderstandsGensortAndKeySpecs) {
    ScratchDir dir;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--count", "3000", dir / "in"}).status(), 0);
    std::string data = read_text(dir / "in");
    std::vector<std::string> records;
    for (std::size_t i = 0; i < 3000; ++i) records.push_back(data.substr(i * 100, 100));
    std::stable_sort(records.begin(), records.end(),
                     [](const std::string& x, const std::string& y) { return x.compare(0, 10, y, 0, 10) < 0; });
    std::string sorted;
    for (const auto& r : records) sorted += r;
    write_text(dir / "sorted", sorted);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--format", "gensort", "--input", dir / "in", dir / "sorted"}).status(), 0);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--key", "0:bytes:10", "--record-size", "100", dir / "sorted"}).status(), 0);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--format", "gensort", dir / "in"}).status(), 1);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--format", "gensort", "--descending", dir / "sorted"}).status(), 1);
    std::string changed = sorted;
    changed[50] ^= 1;  // a payload byte: order intact, records no longer the same
    write_text(dir / "changed", changed);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--format", "gensort", "--input", dir / "in", dir / "changed"}).status(), 1);

    // 13-byte records ordered by a big-endian u32 at offset 3, then a descending i16 at offset 0.
    std::vector<std::array<unsigned char, 13>> recs(2000);
    std::mt19937 rng(4);
    for (auto& r : recs)
        for (auto& b : r) b = static_cast<unsigned char>(rng() % 3);
    auto field_u32 = [](const std::array<unsigned char, 13>& r) {
        return (std::uint32_t(r[3]) << 24) | (std::uint32_t(r[4]) << 16) | (std::uint32_t(r[5]) << 8) | r[6];
    };
    auto field_i16 = [](const std::array<unsigned char, 13>& r) { return std::int16_t(r[0] | (r[1] << 8)); };
    std::sort(recs.begin(), recs.end(), [&](const auto& x, const auto& y) {
        if (field_u32(x) != field_u32(y)) return field_u32(x) < field_u32(y);
        return field_i16(x) > field_i16(y);
    });
    write_text(dir / "recs", std::string(reinterpret_cast<const char*>(recs.data()), recs.size() * 13));
    const std::vector<std::string> spec = {"--key", "3:u32:be", "--key", "0:i16:desc", "--record-size", "13"};
    std::vector<std::string> args = spec;
    args.push_back(dir / "recs");
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, args).status(), 0);
    std::swap(recs[10], recs[1990]);
    write_text(dir / "recs", std::string(reinterpret_cast<const char*>(recs.data()), recs.size() * 13));
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, args).status(), 1);
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--key", "12:u32", "--record-size", "13", dir / "recs"}).status(), 2);
}

// gpusort-check takes the key options of gpusort-file with the same rules (one parser): the
// record size is inferred from the --key fields, or from --type, when --record-size is not given.
TEST(Tools, CheckInfersTheRecordSizeLikeTheSorter) {
    ScratchDir dir;
    auto joined = [](std::vector<std::string> first, const std::vector<std::string>& then) {
        first.insert(first.end(), then.begin(), then.end());
        return first;
    };
    // 6-byte records keyed by a big-endian u32 at offset 2, then a descending i8 at offset 0.
    std::string records(6 * 5000, '\0');
    std::mt19937 rng(8);
    for (auto& c : records) c = static_cast<char>(rng() % 4);
    write_text(dir / "in", records);
    const std::vector<std::string> key = {"--key", "2:u32:be", "--key", "0:i8:desc"};
    Result sorted = sort_cli(joined(key, {"--backend", "cpu", dir / "in", dir / "out"}), dir);
    ASSERT_EQ(sorted.status(), 0) << sorted.err;
    EXPECT_TRUE(read_text(dir / "out") == reference_of(records, key)) << "not the reference's bytes";
    EXPECT_TRUE(read_text(dir / "in") == records) << "the input changed";
    Result ok = run(GPUSORT_CHECK_BIN, joined(key, {"--input", dir / "in", dir / "out"}));
    EXPECT_EQ(ok.status(), 0) << ok.out << ok.err;
    EXPECT_EQ(ok.out, "ok: 5000 records in order, same records as the input\n");
    Result disorder = run(GPUSORT_CHECK_BIN, joined(key, {dir / "in"}));
    EXPECT_EQ(disorder.status(), 1) << disorder.out << disorder.err;
    // A file that is not a whole number of the inferred records is refused, as the sorter refuses it.
    write_text(dir / "odd", records.substr(0, 6 * 100 + 3));
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, joined(key, {dir / "odd"})).status(), 2);
    EXPECT_NE(sort_cli(joined(key, {"--backend", "cpu", dir / "odd", dir / "out2"}), dir).status(), 0);
    // The same messages for the same mistakes.
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--type", "u32", "--key", "0:u32"},
                                               std::vector<std::string>{"--format", "csv"},
                                               std::vector<std::string>{"--record-size", "2", "--type", "u32"}}) {
        Result by_check = run(GPUSORT_CHECK_BIN, joined(bad, {dir / "in"}));
        Result by_sorter = sort_cli(joined(bad, {dir / "in", dir / "out3"}), dir);
        EXPECT_EQ(by_check.status(), 2);
        EXPECT_EQ(by_sorter.status(), 2);
        EXPECT_EQ(by_check.err.substr(by_check.err.find(':')), by_sorter.err.substr(by_sorter.err.find(':')))
            << by_check.err;
    }
}

// Records of the largest size (1 MiB): gpusort-check reads them a few at a time (it once asked
// for a million records' worth of memory at once, a TiB, and failed with std::bad_alloc).
TEST(Tools, CheckReadsTheLargestRecords) {
    ScratchDir dir;
    constexpr std::size_t record = std::size_t{1} << 20;
    std::string in(3 * record, 'x'), sorted = in;
    for (std::size_t i = 0; i < 3; ++i) in[i * record + 5] = static_cast<char>('c' - i);  // c, b, a at byte 5
    for (std::size_t i = 0; i < 3; ++i) sorted[i * record + 5] = static_cast<char>('a' + i);
    write_text(dir / "in", in);
    write_text(dir / "sorted", sorted);
    const std::vector<std::string> spec = {"--key", "4:bytes:2", "--record-size", std::to_string(record)};
    auto check = [&](std::vector<std::string> args) {
        args.insert(args.begin(), spec.begin(), spec.end());
        return run(GPUSORT_CHECK_BIN, args);
    };
    Result ok = check({"--input", dir / "in", dir / "sorted"});
    EXPECT_EQ(ok.status(), 0) << ok.out << ok.err;
    EXPECT_EQ(ok.out, "ok: 3 records in order, same records as the input\n");
    Result disorder = check({dir / "in"});
    EXPECT_EQ(disorder.status(), 1) << disorder.out << disorder.err;
    EXPECT_NE(disorder.out.find("record 1 (counted from 0; at byte 1048576) is smaller"), std::string::npos) << disorder.out;
}

TEST(Tools, GenWritesGensortTextLinesWithTheSameKeysAsHex) {
    ScratchDir dir;
    constexpr std::size_t n = 4000;
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--count", "4000", "--seed", "7", dir / "bin"}).status(), 0);
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort-text", "--count", "4000", "--seed", "7", dir / "txt"}).status(), 0);
    const std::string bin = read_text(dir / "bin");
    const std::string txt = read_text(dir / "txt");
    ASSERT_EQ(bin.size(), 100 * n);
    ASSERT_EQ(txt.size(), 100 * n);
    constexpr char kHex[] = "0123456789abcdef";
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < n; ++i) {
        const std::string line = txt.substr(i * 100, 100);
        ASSERT_EQ(line[99], '\n') << "line " << i;
        for (std::size_t c = 0; c < 99; ++c)
            ASSERT_TRUE(line[c] >= 0x20 && line[c] < 0x7f) << "line " << i << " char " << c;
        std::string hex;
        for (std::size_t b = 0; b < 10; ++b) {
            const auto byte = static_cast<unsigned char>(bin[i * 100 + b]);
            hex += kHex[byte >> 4];
            hex += kHex[byte & 15];
        }
        ASSERT_EQ(line.substr(0, 20), hex) << "line " << i;
        lines.push_back(line);
    }
    // Lines identify their record, and text order is the binary key order.
    EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), n);
    std::vector<std::size_t> by_text(n), by_key(n);
    for (std::size_t i = 0; i < n; ++i) by_text[i] = by_key[i] = i;
    std::stable_sort(by_text.begin(), by_text.end(), [&](std::size_t x, std::size_t y) {
        return lines[x].compare(0, 20, lines[y], 0, 20) < 0;
    });
    std::stable_sort(by_key.begin(), by_key.end(), [&](std::size_t x, std::size_t y) {
        return bin.compare(x * 100, 10, bin, y * 100, 10) < 0;
    });
    EXPECT_EQ(by_text, by_key);
    EXPECT_NE(run(GPUSORT_GEN_BIN, {"--format", "gensort-text", "--type", "u32", "--count", "5", dir / "c"}).status(), 0);
}

TEST(Cli, SortsRecordsByKeySpecsAndGensortFiles) {
    ScratchDir dir;
    // Sort Benchmark records, in memory and spilled as many runs; compared with the reference
    // (built from the input read before the sorts, which must leave it as it was) and checked by
    // gpusort-check.
    ASSERT_EQ(run(GPUSORT_GEN_BIN, {"--format", "gensort", "--count", "50000", dir / "in"}).status(), 0);
    const std::string input = read_text(dir / "in");
    for (const char* memory : {"1G", "1M"}) {
        Result r = sort_cli({"--backend", "cpu", "--memory", memory, "--format", "gensort", dir / "in", dir / "out"}, dir);
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_text(dir / "out") == reference_of(input, {"--format", "gensort"})) << memory;
        Result checked = run(GPUSORT_CHECK_BIN, {"--format", "gensort", "--input", dir / "in", dir / "out"});
        EXPECT_EQ(checked.status(), 0) << memory << " " << checked.out << checked.err;
    }
    // --descending reverses the key; the same records read as 25 u32 fields, keyed by two of them.
    Result r = sort_cli({"--backend", "cpu", "--format", "gensort", "--descending", dir / "in", dir / "out"}, dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == reference_of(input, {"--format", "gensort", "--descending"}));
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, {"--format", "gensort", "--descending", "--input", dir / "in", dir / "out"}).status(), 0);
    const std::vector<std::string> spec = {"--record-size", "100", "--key", "20:u32:be:desc", "--key", "1:i64"};
    std::vector<std::string> args = spec;
    args.insert(args.end(), {"--backend", "cpu", "--stable", dir / "in", dir / "out"});
    r = sort_cli(args, dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == reference_of(input, spec)) << "--key 20:u32:be:desc --key 1:i64";
    args = spec;
    args.insert(args.end(), {"--input", dir / "in", dir / "out"});
    EXPECT_EQ(run(GPUSORT_CHECK_BIN, args).status(), 0);
    // --type with a larger --record-size: a little-endian key of that type at offset 0.
    r = sort_cli({"--backend", "cpu", "--type", "u16", "--record-size", "100", "--unique", "--stats", dir / "stats",
                  dir / "in", dir / "out"},
                 dir);
    ASSERT_EQ(r.status(), 0) << r.err;
    const std::string out = read_text(dir / "out");
    EXPECT_TRUE(out == reference_of(input, {"--type", "u16", "--record-size", "100", "--unique"}))
        << "not the first record of each u16 key";
    EXPECT_TRUE(read_text(dir / "in") == input) << "the input changed";
    ASSERT_EQ(out.size() % 100, 0u);
    ASSERT_LE(out.size(), 65536u * 100);
    for (std::size_t i = 100; i < out.size(); i += 100) {
        const auto key = [&](std::size_t at) { return std::uint16_t(std::uint8_t(out[at]) | std::uint8_t(out[at + 1]) << 8); };
        ASSERT_LT(key(i - 100), key(i)) << "record " << i / 100;
    }
    EXPECT_NE(read_text(dir / "stats").find("\"output_records\": " + std::to_string(out.size() / 100)), std::string::npos);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out", "stats"}));
}

TEST(Cli, RefusesNonsenseRecordOptions) {
    ScratchDir dir;
    write_text(dir / "in", std::string(26, 'x'));
    write_text(dir / "out", "keep");
    struct Case {
        std::vector<std::string> args;
        const char* message;
        int status = kBadCommandLine;
    };
    for (const Case& c : std::vector<Case>{
             {{"--record-size", "13", "--key", "12:u32"}, "beyond the 13-byte record"},
             {{"--record-size", "13", "--key", "0:u24"}, "unknown type 'u24'"},
             {{"--record-size", "13", "--key", "0:bytes:0"}, "'0:bytes:0'"},
             {{"--record-size", "13", "--key", "0:u32:sideways"}, "'0:u32:sideways'"},
             {{"--record-size", "13", "--key", "zero:u32"}, "'zero:u32'"},
             {{"--record-size", "40", "--key", "0:bytes:30", "--key", "30:u32"}, "at most 32"},
             {{"--record-size", "0", "--key", "0:u8"}, "--record-size"},
             {{"--type", "u32", "--key", "0:u32"}, "--key replaces --type"},
             {{"--format", "gensort", "--key", "0:u32"}, "--format gensort"},
             {{"--format", "csv"}, "unknown format 'csv'"},
             {{"--record-size", "2", "--type", "u32"}, "records of 2 bytes cannot hold the key, a u32 (--type u32)"},
             {{"--record-size", "4"}, "records of 4 bytes cannot hold the default key, a u64 (--type): give --type or --key"},
             {{"--record-size", "2M", "--key", "0:u8"}, "--record-size: at most 1048576 bytes (1M) are supported"},
             {{"--record-size", "1.3", "--key", "0:u8"}, "--record-size: '1.3' is not a whole number of bytes"},
             {{"--record-size", "4", "--key", "0:u8"}, "not a multiple of the record size 4", kFailed},
         }) {
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {dir / "in", dir / "out"});
        expect_one_error_line(sort_cli(args, dir), c.message, c.status);
        EXPECT_EQ(read_text(dir / "out"), "keep");
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
    }
}
