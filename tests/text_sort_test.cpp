// gpusort-sort against GNU sort itself: both programs run with the same options on the same inputs
// (seeded random lines over small alphabets with fields, numbers, blanks, both cases, empty and
// long lines, inputs without a last terminator, NUL-terminated lines), and their outputs, exit
// statuses and messages compared byte for byte: in one chunk (one large enough for the GPU) and in
// many runs merged in several passes (a small -S), from stdin and from several files, -o onto an
// input, -m, -c and -C; and what only gpusort-sort says: the options it refuses, a line over its
// limit.
#include "tests/gnu_sort.hpp"
#include "tests/scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <unistd.h>
#include <set>
#include <string>
#include <sys/wait.h>
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

class TextSort : public ::testing::Test {
protected:
    void SetUp() override {
        if (gnu_sort().empty()) GTEST_SKIP() << "no GNU sort (/usr/bin/sort or sort on PATH) to compare with";
    }

    // Runs `program` with `args` in the scratch folder, stdin from `input` (a file there; empty:
    // /dev/null).
    Outcome run(const std::string& program, const Args& args, const std::string& input = "") const {
        std::string line = limits + "LC_ALL=C " + program;
        for (const std::string& arg : args) line.append(" ").append(shell_quote(arg));
        line.append(" < ").append(input.empty() ? "/dev/null" : shell_quote(input));
        return testing::run_in(dir.path(), line);
    }
    Outcome ours(const Args& args, const std::string& input = "") const { return run(GPUSORT_SORT_BIN, args, input); }
    Outcome gnu(const Args& args, const std::string& input = "") const { return run(gnu_sort(), args, input); }

    // Both programs on the same command line: the same output and status, and the same messages
    // after the programs' names.
    void expect_like_gnu(const Args& args, const std::string& input = "") const {
        const Outcome expected = gnu(args, input);
        const Outcome got = ours(args, input);
        const std::string what = ::testing::PrintToString(args);
        EXPECT_EQ(got.status, expected.status) << what << "\n" << got.err;
        EXPECT_TRUE(got.out == expected.out) << what << ": the outputs differ (" << got.out.size() << " bytes against "
                                             << expected.out.size() << ")";
        EXPECT_EQ(without_name(got.err, "gpusort-sort: "), without_name(expected.err, gnu_sort() + ": ")) << what;
    }

    static std::string without_name(std::string text, const std::string& name) {
        for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at)) text.erase(at, name.size());
        return text;
    }

    ScratchDir dir;
    std::string limits;  // shell commands before each program's: ulimit
};

// Random text: lines of fields (words over a few letters of both cases, numbers, blanks, the
// separator), some empty, some long, some repeated.
struct TextShape {
    std::size_t lines = 100;
    char end = '\n';
    char separator = ',';
    bool long_lines = true;
};

std::string random_field(std::mt19937_64& random) {
    static const std::string letters = "aAbBzZ_\xe9";
    std::string field;
    switch (random() % 4) {
        case 0: {  // a number
            if (random() % 3 == 0) field += '-';
            for (std::size_t n = random() % 5; n > 0; --n) field += static_cast<char>('0' + random() % 10);
            if (random() % 3 == 0) field += "." + std::to_string(random() % 100);
            break;
        }
        case 1: field = std::string(random() % 3, " \t"[random() % 2]); break;
        default:
            for (std::size_t n = random() % 6; n > 0; --n) field += letters[random() % letters.size()];
    }
    return field;
}

std::string random_text(std::mt19937_64& random, const TextShape& shape) {
    std::vector<std::string> lines;
    const std::string between = std::string(" \t ") + shape.separator;
    for (std::size_t i = 0; i < shape.lines; ++i) {
        if (!lines.empty() && random() % 5 == 0) {
            lines.push_back(lines[random() % lines.size()]);
            continue;
        }
        std::string line;
        for (std::size_t fields = random() % 6; fields > 0; --fields) {
            line += random_field(random);
            line += between[random() % between.size()];
        }
        if (shape.long_lines && random() % 200 == 0) line += std::string(1000 + random() % 5000, "xy"[random() % 2]);
        if (shape.end == '\0' && random() % 4 == 0) line += '\n';
        lines.push_back(line);
    }
    std::string text;
    for (const std::string& line : lines) text += line + shape.end;
    if (!text.empty() && random() % 3 == 0) text.pop_back();  // no last terminator
    return text;
}

std::string random_position(std::mt19937_64& random, bool end) {
    std::string position = std::to_string(1 + random() % 4);
    if (random() % 4 == 0) position += "." + std::to_string(end ? random() % 4 : 1 + random() % 3);
    for (const char modifier : std::string("bnfr"))
        if (random() % 6 == 0) position += modifier;
    return position;
}

// Random ordering options: flags of -b -n -f -r -s -u, -t, keys; -z when `zero`.
Args random_options(std::mt19937_64& random, bool zero, char separator) {
    Args args;
    std::string flags = "-";
    for (const char flag : std::string("bnfrsu"))
        if (random() % 4 == 0) flags += flag;
    if (zero) flags += 'z';
    if (flags.size() > 1) args.push_back(flags);
    if (random() % 3 == 0) args.insert(args.end(), {"-t", std::string(1, separator)});
    for (std::size_t keys = random() % 4; keys > 0; --keys) {
        std::string key = random_position(random, false);
        if (random() % 2 == 0) key += "," + random_position(random, true);
        args.insert(args.end(), {"-k", key});
    }
    return args;
}

TEST_F(TextSort, RandomOptionsInOneChunk) {
    std::mt19937_64 random(1201);
    for (int i = 0; i < 60; ++i) {
        const bool zero = random() % 6 == 0;
        const TextShape shape{1 + random() % 400, zero ? '\0' : '\n', ",: "[random() % 3]};
        write_text(dir / "in", random_text(random, shape));
        const Args options = random_options(random, zero, shape.separator);
        Args args = options;
        args.push_back("in");
        SCOPED_TRACE("case " + std::to_string(i));
        expect_like_gnu(args);
        if (HasFailure()) return;
    }
}

// -S 1M: chunks of about 8000 lines, so runs; with 150000 lines more runs than one merge reads
// (fan-in 15 under 1M), so two merge passes.
TEST_F(TextSort, RandomOptionsInRunsAndMergePasses) {
    std::mt19937_64 random(1202);
    const std::vector<std::size_t> sizes = {20000, 150000};
    for (int i = 0; i < 6; ++i) {
        const bool zero = i == 5;
        const TextShape shape{sizes[i % 2], zero ? '\0' : '\n', ':'};
        write_text(dir / "in", random_text(random, shape));
        Args args = i == 0 ? Args{"-u"} : random_options(random, zero, shape.separator);
        args.insert(args.end(), {"-S", "1M", "-T", dir.path(), "in"});
        SCOPED_TRACE("case " + std::to_string(i));
        expect_like_gnu(args);
        EXPECT_EQ(dir.entries(), std::set<std::string>{"in"}) << "temp files were left";
        if (HasFailure()) return;
    }
}

// Few distinct first keys: large groups of lines with equal prefixes, settled by the next keys and
// the last resort (sorted again by their prefixes).
TEST_F(TextSort, FewDistinctKeys) {
    std::mt19937_64 random(1210);
    std::string text;
    for (int i = 0; i < 20000; ++i) {
        text += std::string(1, "abAB"[random() % 4]) + "," + std::to_string(random() % 300) + "." +
                std::to_string(random() % 3) + "," + std::string(random() % 40, "xyz"[random() % 3]) + "\n";
    }
    write_text(dir / "in", text);
    const std::vector<Args> cases = {{"-t,", "-k1,1", "-k2,2n"}, {"-t,", "-k1,1", "-k2,2n", "-s"},
                                     {"-t,", "-k1,1f", "-k2,2nr", "-u"}, {"-k2,2"}, {"-t,", "-k3,3", "-r"},
                                     {"-t,", "-k1,1", "-k3", "-S", "1M"}};
    for (Args args : cases) {
        args.push_back("in");
        expect_like_gnu(args);
    }
}

// A chunk of over a million lines: its entries go to the GPU where one can be used (smaller
// chunks are sorted on the CPU).
TEST_F(TextSort, ChunkLargeEnoughForTheGpu) {
    std::mt19937_64 random(1211);
    write_text(dir / "in", random_text(random, {1100000, '\n', ',', false}));
    expect_like_gnu({"in"});
    expect_like_gnu({"-t,", "-k2,2n", "-k1,1r", "in"});
}

// Chunks of over a million lines in turn share one GPU sorter, set up for the largest chunk so
// far: with -S 230M, a first chunk of about a million long lines, a second of about 1.5 million
// short ones (more lines than the first: set up again), and a last of fewer than a million
// (sorted on the CPU).
TEST_F(TextSort, ChunksOfChangingSizesShareTheGpu) {
    std::mt19937_64 random(1212);
    std::string text = random_text(random, {1000000, '\n', ',', false});
    std::string padded;
    for (std::size_t from = 0, to; (to = text.find('\n', from)) != std::string::npos; from = to + 1)
        padded.append(text, from, to - from).append(",").append(std::string(60, "pq"[random() % 2])).append("\n");
    write_text(dir / "in", padded + random_text(random, {2000000, '\n', ',', false}));
    expect_like_gnu({"-S", "230M", "in"});
    expect_like_gnu({"-S", "230M", "-t,", "-k2,2n", "-k1,1r", "in"});
}

// A single input in the page cache is mapped rather than read: its last line given a terminator
// after the file's bytes (on a page of its own where the file ends on a page's end), and the map
// read from as the input where its lines do not fit one chunk (-S 1M); stdin that is a regular
// file, from where an earlier reader of it left off.
TEST_F(TextSort, InputsMappedFromThePageCache) {
    std::mt19937_64 random(1214);
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    for (const std::size_t size : {page, 3 * page, 3 * page + 5, std::size_t{300000}}) {
        std::string text = random_text(random, {size / 8, '\n', ',', false});
        text.resize(size, 'x');
        for (const char last : {'\n', 'y'}) {
            text.back() = last;
            write_text(dir / "in", text);
            expect_like_gnu({"in"});
            expect_like_gnu({"-S", "1M", "-k2n", "in"});
        }
    }
    write_text(dir / "in", random_text(random, {5000}));
    auto after_head = [&](const std::string& program) {
        return testing::run_in(dir.path(), "{ head -c 1000 > /dev/null; LC_ALL=C " + program + " -r; } < in");
    };
    const Outcome expected = after_head(gnu_sort());
    const Outcome got = after_head(GPUSORT_SORT_BIN);
    EXPECT_EQ(got.status, 0) << got.err;
    EXPECT_TRUE(got.out == expected.out) << "after head: the outputs differ";
    EXPECT_GT(expected.out.size(), 0u);
}

// Outputs large enough to be written at once (-o): one chunk through a map of the file, its pages
// faulted in while it is sorted; and many runs merged in parts on all threads, each written at its
// place.
TEST_F(TextSort, LargeOutputsAreWrittenInPlace) {
    std::mt19937_64 random(1213);
    std::string text;
    while (text.size() < (std::size_t{68} << 20)) text += random_text(random, {100000});
    write_text(dir / "in", text);
    for (const Args& options : {Args{}, Args{"-S", "24M", "-t,", "-k2,2n", "-r"}}) {
        Args args = options;
        args.insert(args.end(), {"-o", "out", "in"});
        ASSERT_EQ(gnu(args).status, 0);
        const std::string expected = read_text(dir / "out");
        const Outcome got = ours(args);
        EXPECT_EQ(got.status, 0) << got.err;
        EXPECT_TRUE(read_text(dir / "out") == expected) << ::testing::PrintToString(options);
    }
}

TEST_F(TextSort, StdinToStdout) {
    std::mt19937_64 random(1203);
    write_text(dir / "in", random_text(random, {5000}));
    expect_like_gnu({}, dir / "in");
    expect_like_gnu({"-", "-nr"}, dir / "in");
    expect_like_gnu({"-S", "1M", "-k2"}, dir / "in");
    write_text(dir / "in", "");
    expect_like_gnu({}, dir / "in");
    write_text(dir / "in", "no terminator");
    expect_like_gnu({"-z"}, dir / "in");
    expect_like_gnu({}, dir / "in");
}

TEST_F(TextSort, SeveralInputs) {
    std::mt19937_64 random(1204);
    write_text(dir / "a", random_text(random, {300}));
    write_text(dir / "b", "last line without a terminator");
    write_text(dir / "c", "");
    write_text(dir / "d", random_text(random, {3000}));
    write_text(dir / "stdin", "from stdin\nb\n");
    expect_like_gnu({"a", "b", "c", "-", "d"}, dir / "stdin");
    expect_like_gnu({"-u", "b", "a", "b", "d"});
    expect_like_gnu({"-S", "1M", "-k1,1", "-s", "d", "a", "d", "b"});
}

TEST_F(TextSort, OutputOntoAnInput) {
    std::mt19937_64 random(1205);
    const std::string text = random_text(random, {20000});
    for (const Args& options : {Args{}, Args{"-S", "1M", "-n"}}) {
        write_text(dir / "in", text);
        Args args = options;
        args.insert(args.end(), {"-o", "in", "in"});
        ASSERT_EQ(gnu(args).status, 0);
        const std::string expected = read_text(dir / "in");
        write_text(dir / "in", text);
        const Outcome got = ours(args);
        EXPECT_EQ(got.status, 0) << got.err;
        EXPECT_TRUE(read_text(dir / "in") == expected);
        EXPECT_EQ(got.out, "");
        EXPECT_EQ(dir.entries(), std::set<std::string>{"in"});
    }
}

TEST_F(TextSort, MergeSortedInputs) {
    std::mt19937_64 random(1206);
    for (int i = 0; i < 8; ++i) {
        const bool zero = i == 7;
        const Args options = random_options(random, zero, ',');
        // 20 inputs, each sorted by GNU sort with the options; under -S 1M one merge reads 15 of them.
        Args args = options;
        for (int f = 0; f < 20; ++f) {
            const std::string name = "in" + std::to_string(f);
            write_text(dir / name, random_text(random, {random() % 500, zero ? '\0' : '\n', ','}));
            Args sort_args = options;
            sort_args.insert(sort_args.end(), {"-o", name, name});
            ASSERT_EQ(gnu(sort_args).status, 0);
            args.push_back(name);
        }
        args.push_back("-m");
        if (i % 2 == 1) args.insert(args.end(), {"-S", "1M"});
        SCOPED_TRACE("case " + std::to_string(i));
        expect_like_gnu(args);
        if (HasFailure()) return;
    }
}

// More inputs than may be open at once (ulimit -n 64): read one after another by the sort, merged
// in groups by -m.
TEST_F(TextSort, MoreInputsThanOpenFiles) {
    std::mt19937_64 random(1209);
    limits = "ulimit -n 64 && ";
    Args args;
    for (int f = 0; f < 150; ++f) {
        const std::string name = "in" + std::to_string(f);
        write_text(dir / name, random_text(random, {random() % 20}));
        ASSERT_EQ(gnu({"-o", name, name}).status, 0);
        args.push_back(name);
    }
    expect_like_gnu(args);
    args.push_back("-m");
    expect_like_gnu(args);
}

TEST_F(TextSort, CheckSortedAndUnsorted) {
    std::mt19937_64 random(1207);
    for (int i = 0; i < 16; ++i) {
        const Args options = random_options(random, false, ',');
        write_text(dir / "in", random_text(random, {2 + random() % 300}));
        Args sorted = options;
        sorted.insert(sorted.end(), {"-o", "sorted", "in"});
        ASSERT_EQ(gnu(sorted).status, 0);
        SCOPED_TRACE("case " + std::to_string(i));
        for (const char* check : {"-c", "-C", "--check=quiet"}) {
            for (const char* input : {"in", "sorted"}) {
                Args args = options;
                args.insert(args.end(), {check, input});
                expect_like_gnu(args);
                args.push_back("-u");
                expect_like_gnu(args);
            }
        }
        if (HasFailure()) return;
    }
    write_text(dir / "in", "b\na\n");
    expect_like_gnu({"-c"}, dir / "in");
    expect_like_gnu({"-cz", "in"});
}

TEST_F(TextSort, RefusedOptions) {
    write_text(dir / "in", "b\na\n");
    const std::vector<std::pair<Args, std::string>> refused = {
        {{"-g", "in"}, "'-g' (--general-numeric-sort)"}, {{"-M", "in"}, "'-M' (--month-sort)"},
        {{"-k1,1h", "in"}, "modifier 'h'"},               {{"--debug", "in"}, "'--debug'"},
        {{"--batch-size=4", "in"}, "'--batch-size'"},     {{"-R", "in"}, "'-R' (--random-sort)"}};
    for (const auto& [args, option] : refused) {
        const Outcome got = ours(args);
        EXPECT_EQ(got.status, 2);
        EXPECT_EQ(got.out, "");
        EXPECT_TRUE(got.err.starts_with("gpusort-sort: ") && got.err.find(option) != std::string::npos) << got.err;
    }
    const Outcome help = ours({"--help"});
    EXPECT_EQ(help.status, 0);
    EXPECT_TRUE(help.out.starts_with("Usage: gpusort-sort"));
    EXPECT_EQ(ours({"--version"}).status, 0);
}

TEST_F(TextSort, MissingInputChangesNothing) {
    write_text(dir / "in", "b\na\n");
    expect_like_gnu({"in", "missing"});
    expect_like_gnu({"-m", "in", "missing"});
    expect_like_gnu({"-c", "missing"});
    Outcome got = ours({"in", "missing", "-o", "out"});
    EXPECT_EQ(got.status, 2);
    EXPECT_EQ(got.err, "gpusort-sort: cannot read: missing: No such file or directory\n");
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
    write_text(dir / "out", "kept\n");
    got = ours({"in", "-o", "out", "missing"});
    EXPECT_EQ(got.status, 2);
    EXPECT_EQ(read_text(dir / "out"), "kept\n");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
    expect_like_gnu({"in", "-o", "no-such-folder/out"});
    expect_like_gnu({"-S", "1M", "-T", "no-such-folder", "in"});
}

TEST_F(TextSort, UnusableTempFolderWhenRunsSpill) {
    std::mt19937_64 random(1208);
    write_text(dir / "in", random_text(random, {30000}));
    expect_like_gnu({"-S", "1M", "-T", "no-such-folder", "in"});
}

// Groups of lines with equal keys found in parallel blocks while other groups were being sorted
// again by their next key (their prefixes rewritten): a block that began inside such a group saw
// its bounds move, sorted part of it at once with its owner, and the output came out of order,
// about once in a hundred runs, or the program crashed. The same sort many times over (groups
// of equal first and second keys across many blocks): each run's output must be GNU sort's.
TEST_F(TextSort, LargeGroupsOfEqualKeysAcrossBlocksEveryTime) {
    std::mt19937_64 random(1209);
    write_text(dir / "in", random_text(random, {60000, '\n', ',', false}));
    const Args args = {"-t,", "-k2,2n", "-k1,1", "in"};
    const Outcome expected = gnu(args);
    ASSERT_EQ(expected.status, 0);
    for (int run = 0; run < 30; ++run) {
        const Outcome got = ours(args);
        ASSERT_EQ(got.status, 0) << "run " << run << ": " << got.err;
        ASSERT_TRUE(got.out == expected.out) << "run " << run << ": the output differs from GNU sort's";
    }
}

TEST_F(TextSort, LinesOfAboutAMebibyte) {
    // An entry holds a line's length below 1 MiB - 1 bytes; longer lines' lengths are looked up
    // among the chunk's line ends. Lines about that long, all with the same first 64 bytes (their
    // order found past the entries' windows), some twice, among short lines.
    std::mt19937_64 random(4801);
    const std::size_t mib = std::size_t{1} << 20;
    std::vector<std::string> lines;
    for (const std::size_t length : {mib - 2, mib - 1, mib, mib + 1, 2 * mib, mib - 1, mib + 1, std::size_t{70}, std::size_t{64}}) {
        std::string line = std::string(64, 'h');
        while (line.size() < length) line += "ab"[random() % 2];
        lines.push_back(line);
        if (random() % 2 == 0) lines.push_back(line);
        lines.push_back(std::to_string(random() % 100));
    }
    std::shuffle(lines.begin(), lines.end(), random);
    std::string text;
    for (const std::string& line : lines) text += line + '\n';
    write_text(dir / "in", text);
    for (const Args& args : {Args{"in"}, Args{"-r", "in"}, Args{"-s", "-k1.1,1.64", "in"}, Args{"-u", "in"}, Args{"-S", "10M", "in"}})
        expect_like_gnu(args);
}

TEST_F(TextSort, LineOverTheLimit) {
    // Under -S 1M the longest line is 256 KiB: one of 300 KB is refused, naming it.
    write_text(dir / "in", "a\nb\n" + std::string(300000, 'x') + "\nc\n");
    const Outcome got = ours({"-S", "1M", "in", "-o", "out"});
    EXPECT_EQ(got.status, 2);
    EXPECT_TRUE(got.err.starts_with("gpusort-sort: in:3: line too long")) << got.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out"));
    expect_like_gnu({"-S", "2M", "in"});  // 512 KiB lines: sorted as GNU sorts them
}

}  // namespace
}  // namespace gpusort
