// gpusort-file --lines against GNU sort itself: the same random lines sorted by both with
// matching options (gpusort-file's spelling of GNU's keys), in one chunk and in runs under a
// small --memory; compressed input and output (.gz, .zst, and as forced for pipes), stdin and
// stdout; the figures of --stats, --plan writing nothing, --verify, the refusal of binary
// records' options, and a missing input that leaves no output.
#include "tests/gnu_sort.hpp"
#include "tests/scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <vector>

namespace gpusort {
namespace {

using testing::gnu_sort;
using testing::Outcome;
using testing::read_text;
using testing::ScratchDir;
using testing::shell_quote;
using testing::write_text;
using Args = std::vector<std::string>;

// Lines of comma-separated fields: words over a few letters of both cases, signed decimals,
// blanks; some repeated, some empty.
std::string random_lines(std::mt19937_64& random, std::size_t count) {
    static const std::string letters = "aAbBz_ ";
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < count; ++i) {
        if (!lines.empty() && random() % 5 == 0) {
            lines.push_back(lines[random() % lines.size()]);
            continue;
        }
        std::string line;
        for (std::size_t fields = random() % 5; fields > 0; --fields) {
            if (random() % 2 == 0) {
                line += (random() % 3 == 0 ? "-" : "") + std::to_string(random() % 1000) + "." + std::to_string(random() % 10);
            } else {
                for (std::size_t n = random() % 6; n > 0; --n) line += letters[random() % letters.size()];
            }
            line += ',';
        }
        lines.push_back(line);
    }
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    return text;
}

bool have(const std::string& program) { return std::system(("command -v " + program + " > /dev/null 2>&1").c_str()) == 0; }

class TextFile : public ::testing::Test {
protected:
    void SetUp() override {
        if (gnu_sort().empty()) GTEST_SKIP() << "no GNU sort (/usr/bin/sort or sort on PATH) to compare with";
    }

    // A shell command line run in the scratch folder; its stdout and stderr kept.
    Outcome shell(const std::string& line) const { return testing::run_in(dir.path(), line); }
    static std::string words(const std::string& program, const Args& args) {
        std::string line = program;
        for (const std::string& arg : args) line += " " + shell_quote(arg);
        return line;
    }
    Outcome ours(const Args& args, const std::string& stdin_from = "/dev/null") const {
        return shell(words(GPUSORT_FILE_BIN, args) + " < " + stdin_from);
    }
    // GNU sort's output of `file` with `args`.
    std::string gnu(const Args& args, const std::string& file) const {
        Args all = args;
        all.push_back(file);
        const Outcome got = shell("LC_ALL=C " + words(gnu_sort(), all));
        EXPECT_EQ(got.status, 0) << got.err;
        return got.out;
    }

    ScratchDir dir;
};

// GNU sort's options beside gpusort-file's spelling of them.
struct Case {
    Args gnu;
    Args ours;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> all = {
        {{}, {}},
        {{"-r"}, {"--descending"}},
        {{"-u"}, {"--unique"}},
        {{"-t,", "-k2,2n", "-k1,1"}, {"--field-separator", ",", "--line-key", "2,2n", "--line-key", "1,1"}},
        {{"-t,", "-k1,1f", "-s"}, {"--field-separator=,", "--line-key", "1,1f", "--stable"}},
        {{"-n", "-r", "-u"}, {"--numeric", "--descending", "--unique"}},
        {{"-f", "-b", "-k2"}, {"--ignore-case", "--ignore-leading-blanks", "--line-key", "2"}},
        {{"-t,", "-k3,3nr", "-k1.2,1.3b"}, {"--field-separator", ",", "--line-key", "3,3nr", "--line-key", "1.2,1.3b"}},
    };
    return all;
}

TEST_F(TextFile, BesideGnuSortInOneChunkAndInRuns) {
    std::mt19937_64 random(2301);
    for (const std::size_t lines : {std::size_t{3000}, std::size_t{60000}}) {
        write_text(dir / "in", random_lines(random, lines));
        for (const Case& c : cases()) {
            Args args = {"--lines"};
            args.insert(args.end(), c.ours.begin(), c.ours.end());
            if (lines > 3000) args.insert(args.end(), {"--memory", "1M"});  // chunks of about 8000 lines: runs
            args.insert(args.end(), {"in", "out"});
            const Outcome got = ours(args);
            ASSERT_EQ(got.status, 0) << got.err;
            EXPECT_TRUE(read_text(dir / "out") == gnu(c.gnu, "in")) << ::testing::PrintToString(args);
        }
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"})) << "temp files were left";
}

TEST_F(TextFile, ZeroTerminatedLines) {
    const std::string text("b\nx\0a\0c c\0a\0", 12);
    write_text(dir / "in", text);
    ASSERT_EQ(ours({"--lines", "--zero-terminated", "in", "out"}).status, 0);
    EXPECT_EQ(read_text(dir / "out"), gnu({"-z"}, "in"));
}

TEST_F(TextFile, CompressedInputAndOutput) {
    if (!have("gzip") || !have("zstd")) GTEST_SKIP() << "no gzip or zstd to compare with";
    std::mt19937_64 random(2302);
    write_text(dir / "in", random_lines(random, 40000));
    const std::string expected = gnu({"-t,", "-k2,2n"}, "in");
    const Args keys = {"--lines", "--field-separator", ",", "--line-key", "2,2n"};
    ASSERT_EQ(shell("gzip -c in > in.gz && zstd -q -c in > in.zst").status, 0);
    for (const auto& [from, to, unpack] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"in.gz", "out.zst", "zstd -dc out.zst"}, {"in.zst", "out.gz", "gzip -dc out.gz"}, {"in.gz", "out", "cat out"}}) {
        for (const char* memory : {"64M", "1M"}) {
            Args args = keys;
            args.insert(args.end(), {"--memory", memory, "--verify", from, to});
            const Outcome got = ours(args);
            ASSERT_EQ(got.status, 0) << got.err;
            const Outcome unpacked = shell(unpack);
            EXPECT_EQ(unpacked.status, 0) << unpacked.err;
            EXPECT_TRUE(unpacked.out == expected) << from << " -> " << to << " under " << memory;
        }
    }
    // Pipes, which have no name: the formats forced.
    const Outcome piped = shell(words(GPUSORT_FILE_BIN, {"--lines", "--field-separator", ",", "--line-key", "2,2n",
                                                         "--input-compression", "gz", "--output-compression", "zst",
                                                         "--compression-level", "5", "-", "-"}) +
                                " < in.gz | zstd -dc");
    EXPECT_EQ(piped.status, 0) << piped.err;
    EXPECT_TRUE(piped.out == expected);
}

TEST_F(TextFile, StdinAndStdout) {
    std::mt19937_64 random(2303);
    write_text(dir / "in", random_lines(random, 20000));
    for (const Case& c : {cases()[3], cases()[5]}) {
        for (const char* memory : {"64M", "1M"}) {
            Args args = {"--lines", "--memory", memory, "--verify"};
            args.insert(args.end(), c.ours.begin(), c.ours.end());
            args.insert(args.end(), {"-", "-"});
            const Outcome got = ours(args, "in");
            ASSERT_EQ(got.status, 0) << got.err;
            EXPECT_TRUE(got.out == gnu(c.gnu, "in")) << ::testing::PrintToString(args);
        }
    }
    write_text(dir / "empty", "");
    const Outcome empty = ours({"--lines", "-", "-"}, "empty");
    EXPECT_EQ(empty.status, 0);
    EXPECT_EQ(empty.out, "");
    write_text(dir / "unended", "b\na");
    EXPECT_EQ(ours({"--lines", "-", "-"}, "unended").out, "a\nb\n");
}

// A number field of the --stats report.
std::uint64_t stat(const std::string& json, const std::string& name) {
    const std::size_t at = json.find("\"" + name + "\": ");
    if (at == std::string::npos) return UINT64_MAX;
    return std::stoull(json.substr(at + name.size() + 4));
}

TEST_F(TextFile, StatsFiguresUnderASmallBudget) {
    std::mt19937_64 random(2304);
    const std::string text = random_lines(random, 60000);
    write_text(dir / "in", text);
    const Outcome got = ours({"--lines", "--unique", "--memory", "1M", "--verify", "--stats", "stats.json", "in", "out"});
    ASSERT_EQ(got.status, 0) << got.err;
    const std::string json = read_text(dir / "stats.json");
    const std::string output = read_text(dir / "out");
    EXPECT_TRUE(output == gnu({"-u"}, "in"));
    const auto lines = [](const std::string& s) { return static_cast<std::uint64_t>(std::count(s.begin(), s.end(), '\n')); };
    EXPECT_EQ(stat(json, "input_bytes"), text.size());
    EXPECT_EQ(stat(json, "input_lines"), lines(text));
    EXPECT_EQ(stat(json, "output_bytes"), output.size());
    EXPECT_EQ(stat(json, "output_lines"), lines(output));
    EXPECT_EQ(stat(json, "output_stored_bytes"), output.size());
    EXPECT_GT(stat(json, "runs"), 1u);
    EXPECT_EQ(stat(json, "merge_passes"), 1u);
    EXPECT_GE(stat(json, "bytes_spilled"), output.size());  // the runs, each without its own duplicates
    EXPECT_LE(stat(json, "bytes_spilled"), text.size());
    EXPECT_EQ(stat(json, "memory"), std::uint64_t{1} << 20);
    for (const char* field : {"\"verified\": true", "\"lines\": true", "\"read\": ", "\"sort\": ", "\"ties\": ", "\"runs\": ",
                              "\"merge\": ", "\"write\": ", "\"flush\": ", "\"verify\": ", "\"plan\": {"})
        EXPECT_NE(json.find(field), std::string::npos) << field;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out", "stats.json"}));
}

TEST_F(TextFile, PlanWritesNothing) {
    std::mt19937_64 random(2305);
    write_text(dir / "in", random_lines(random, 60000));
    const Outcome text = ours({"--lines", "--plan", "--memory", "1M", "in", "out"});
    EXPECT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("runs, spilled to"), std::string::npos) << text.out;
    const Outcome json = ours({"--lines", "--plan", "--stats", "-", "--memory", "1M", "in", "out"});
    EXPECT_EQ(json.status, 0) << json.err;
    EXPECT_GT(stat(json.out, "runs"), 1u);
    EXPECT_EQ(stat(json.out, "merge_passes"), 1u);
    EXPECT_EQ(dir.entries(), std::set<std::string>{"in"});
}

TEST_F(TextFile, VerifyPasses) {
    std::mt19937_64 random(2306);
    write_text(dir / "in", random_lines(random, 20000));
    for (const Case& c : cases()) {
        Args args = {"--lines", "--verify", "--stats", "-", "--memory", "1M"};
        args.insert(args.end(), c.ours.begin(), c.ours.end());
        args.insert(args.end(), {"in", "in"});  // onto its input
        const std::string expected = gnu(c.gnu, "in");
        const Outcome got = ours(args);
        ASSERT_EQ(got.status, 0) << got.err;
        EXPECT_NE(got.err.find("\"verified\": true"), std::string::npos);
        EXPECT_TRUE(read_text(dir / "in") == expected) << ::testing::PrintToString(args);
    }
}

TEST_F(TextFile, BinaryOptionsRefused) {
    write_text(dir / "in", "b\na\n");
    const std::vector<Args> refused = {{"--type", "u32"}, {"--key", "0:u32"}, {"--record-size", "8"}, {"--format", "gensort"},
                                       {"--values", "v:w"}, {"--index-out", "idx"}, {"--gather", "idx"}, {"--backend", "cpu"}};
    for (const Args& option : refused) {
        Args args = {"--lines"};
        args.insert(args.end(), option.begin(), option.end());
        args.insert(args.end(), {"in", "out"});
        const Outcome got = ours(args);
        EXPECT_EQ(got.status, 2);
        EXPECT_EQ(got.err, "gpusort-file: --lines excludes " + option[0] + ", an option of binary records (see --help)\n");
    }
    const Outcome without = ours({"--line-key", "2", "in", "out"});
    EXPECT_EQ(without.status, 2);
    EXPECT_EQ(without.err, "gpusort-file: --line-key is for --lines (see --help)\n");
    const Outcome bad_key = ours({"--lines", "--line-key", "0", "in", "out"});
    EXPECT_EQ(bad_key.status, 2);
    EXPECT_EQ(bad_key.err, "gpusort-file: --line-key: field number is zero: invalid field specification '0'\n");
    const Outcome bad_separator = ours({"--lines", "--field-separator", "ab", "in", "out"});
    EXPECT_EQ(bad_separator.status, 2);
    EXPECT_EQ(dir.entries(), std::set<std::string>{"in"});
}

TEST_F(TextFile, MissingInputLeavesNoOutput) {
    Outcome got = ours({"--lines", "missing", "out"});
    EXPECT_EQ(got.status, 1);
    EXPECT_EQ(got.err, "gpusort-file: cannot open 'missing': No such file or directory\n");
    EXPECT_TRUE(dir.entries().empty());
    write_text(dir / "out", "kept\n");
    got = ours({"--lines", "--stats", "stats.json", "missing.gz", "out"});
    EXPECT_EQ(got.status, 1);
    EXPECT_EQ(read_text(dir / "out"), "kept\n");
    EXPECT_EQ(dir.entries(), std::set<std::string>{"out"});
}

}  // namespace
}  // namespace gpusort
