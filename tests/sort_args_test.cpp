// GNU sort's command line (src/text/sort_args): bundled short options, long options and their
// abbreviations, options after operands, -S sizes, --check, the refusals of what is not supported,
// and the messages of bad usage, which are held to GNU sort's own where it is installed.
#include "src/text/sort_args.hpp"
#include "tests/gnu_sort.hpp"
#include "tests/scratch_dir.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort {
namespace {

using Args = std::vector<std::string>;

constexpr std::uint64_t kMemory = 1000000;  // the physical memory that -S N% is a share of

SortCommand parse(const Args& args) { return parse_sort_args(args, kMemory); }

std::string error_of(const Args& args) {
    try {
        parse(args);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(SortArgs, NothingGivenSortsStdin) {
    const SortCommand command = parse({});
    EXPECT_EQ(command.inputs, Args{"-"});
    EXPECT_FALSE(command.output || command.buffer_bytes || command.parallel);
    EXPECT_EQ(command.check, CheckMode::none);
    EXPECT_FALSE(command.merge || command.help || command.version);
    EXPECT_TRUE(command.keys.keys.empty());
    EXPECT_FALSE(command.keys.reverse || command.keys.unique || command.keys.stable || command.keys.zero_terminated);
}

TEST(SortArgs, BundledShortOptions) {
    SortCommand command = parse({"-nr"});
    ASSERT_EQ(command.keys.keys.size(), 1u);  // -n makes a key of the whole line
    EXPECT_TRUE(command.keys.keys[0].modifiers.numeric && command.keys.keys[0].modifiers.reverse);
    EXPECT_TRUE(command.keys.reverse);

    command = parse({"-k2,2n", "-suz"});
    ASSERT_EQ(command.keys.keys.size(), 1u);
    EXPECT_EQ(command.keys.keys[0], parse_text_key("2,2n"));
    EXPECT_TRUE(command.keys.stable && command.keys.unique && command.keys.zero_terminated);

    command = parse({"-bfk3", "-k1r"});  // k takes the rest of the cluster; key 3 inherits b and f
    ASSERT_EQ(command.keys.keys.size(), 2u);
    EXPECT_EQ(command.keys.keys[0].start_field, 2u);
    EXPECT_EQ(command.keys.keys[0].modifiers,
              (KeyModifiers{.skip_start_blanks = true, .skip_end_blanks = true, .fold = true}));
    EXPECT_EQ(command.keys.keys[1].modifiers, KeyModifiers{.reverse = true});

    EXPECT_EQ(parse({"-t,"}).keys.separator, ',');
    EXPECT_EQ(parse({"-t", ","}).keys.separator, ',');
    EXPECT_EQ(parse({"-t", "-"}).keys.separator, '-');  // the next argument, even a dash
    EXPECT_EQ(parse({"-t\\0"}).keys.separator, '\0');
    EXPECT_EQ(parse({"-t", ",", "-t,"}).keys.separator, ',');
    EXPECT_EQ(parse({"-mo-"}).output, "-");
    EXPECT_TRUE(parse({"-mo-"}).merge);
}

TEST(SortArgs, LongOptions) {
    const SortCommand command =
        parse({"--key=2,2", "--key", "1n", "--field-separator=:", "--output=out", "--buffer-size=1G",
               "--temporary-directory=/a", "--temporary-directory", "/b", "-T/c", "--parallel=4", "--reverse",
               "--unique", "--stable", "--numeric-sort", "--ignore-leading-blanks", "--ignore-case",
               "--zero-terminated", "--merge"});
    ASSERT_EQ(command.keys.keys.size(), 2u);
    EXPECT_EQ(command.keys.keys[0].end_field, 1u);
    EXPECT_TRUE(command.keys.keys[0].modifiers.numeric && command.keys.keys[0].modifiers.fold &&
                command.keys.keys[0].modifiers.skip_start_blanks && command.keys.keys[0].modifiers.reverse);
    EXPECT_EQ(command.keys.keys[1].modifiers, KeyModifiers{.numeric = true});
    EXPECT_EQ(command.keys.separator, ':');
    EXPECT_EQ(command.output, "out");
    EXPECT_EQ(command.buffer_bytes, std::uint64_t{1} << 30);
    EXPECT_EQ(command.temp_dirs, (Args{"/a", "/b", "/c"}));
    EXPECT_EQ(command.parallel, 4u);
    EXPECT_TRUE(command.keys.reverse && command.keys.unique && command.keys.stable && command.keys.zero_terminated);
    EXPECT_TRUE(command.merge);
}

TEST(SortArgs, LongOptionsAbbreviated) {
    const SortCommand command = parse({"--rev", "--num", "--ke=2", "--zero", "--un", "--out", "o", "--para=3"});
    EXPECT_TRUE(command.keys.reverse && command.keys.zero_terminated && command.keys.unique);
    ASSERT_EQ(command.keys.keys.size(), 1u);
    EXPECT_TRUE(command.keys.keys[0].modifiers.numeric);
    EXPECT_EQ(command.output, "o");
    EXPECT_EQ(command.parallel, 3u);
    EXPECT_TRUE(parse({"--he"}).help);
    EXPECT_TRUE(parse({"--version"}).version);  // exact, though also the start of --version-sort
}

TEST(SortArgs, OptionsAfterOperandsAndDashes) {
    const SortCommand command = parse({"a", "-n", "b", "-", "", "--", "-r", "--key=1"});
    EXPECT_EQ(command.inputs, (Args{"a", "b", "-", "", "-r", "--key=1"}));
    EXPECT_FALSE(command.keys.reverse);
    ASSERT_EQ(command.keys.keys.size(), 1u);
    EXPECT_TRUE(command.keys.keys[0].modifiers.numeric);
    EXPECT_EQ(parse({"+1", "f"}).inputs, (Args{"+1", "f"}));  // +POS alone is a file, as in GNU sort
}

TEST(SortArgs, ArgcArgv) {
    const char* argv[] = {"gpusort-sort", "-k", "2", "in"};
    const SortCommand command = parse_sort_args(4, argv);
    EXPECT_EQ(command.inputs, Args{"in"});
    ASSERT_EQ(command.keys.keys.size(), 1u);
    EXPECT_EQ(command.keys.keys[0].start_field, 1u);
}

TEST(SortArgs, CheckModes) {
    EXPECT_EQ(parse({"-c"}).check, CheckMode::diagnose);
    EXPECT_EQ(parse({"--check"}).check, CheckMode::diagnose);
    EXPECT_EQ(parse({"--check=diagnose-first"}).check, CheckMode::diagnose);
    EXPECT_EQ(parse({"--check=d", "-c"}).check, CheckMode::diagnose);
    EXPECT_EQ(parse({"-C"}).check, CheckMode::quiet);
    EXPECT_EQ(parse({"--check=quiet"}).check, CheckMode::quiet);
    EXPECT_EQ(parse({"--check=silent", "-C"}).check, CheckMode::quiet);
    EXPECT_EQ(parse({"--check=q"}).check, CheckMode::quiet);
    EXPECT_EQ(parse({"--check", "quiet"}).inputs, Args{"quiet"});  // an optional value only after '='
}

TEST(SortArgs, HelpAndVersionStopTheReading) {
    EXPECT_TRUE(parse({"--help", "--no-such-option"}).help);
    EXPECT_TRUE(parse({"-n", "--version", "-g"}).version);
    EXPECT_EQ(error_of({"--no-such-option", "--help"}), "unrecognized option '--no-such-option'");
}

TEST(SortArgs, BufferSizes) {
    const std::vector<std::pair<std::string, std::uint64_t>> sizes = {
        {"10", 10240}, {"0", 0}, {"1b", 1}, {"1k", 1024}, {"1K", 1024}, {"2m", 2 << 20}, {"2M", 2 << 20},
        {"1g", 1 << 30}, {"1G", 1 << 30}, {"1t", std::uint64_t{1} << 40}, {"1T", std::uint64_t{1} << 40},
        {"1P", std::uint64_t{1} << 50}, {"15E", std::uint64_t{15} << 60}, {"k", 1024}, {"M", 1 << 20},
        {" 5", 5120}, {"+5", 5120}, {"10%", 100000}, {"101%", 1010000},
        {"18014398509481983", 18014398509481983ull * 1024}};
    for (const auto& [text, bytes] : sizes) EXPECT_EQ(parse({"-S", text}).buffer_bytes, bytes) << text;
    EXPECT_EQ(parse({"-S1M", "--buffer-size=2K", "-S", "3"}).buffer_bytes, 1u << 20);  // the largest
}

// Command lines GNU sort refuses, with its message (without "sort: ").
const std::vector<std::pair<Args, std::string>> kGnuErrors = {
    {{"-S", "x"}, "invalid -S argument 'x'"},
    {{"-S", ""}, "invalid -S argument ''"},
    {{"-S", "-1"}, "invalid -S argument '-1'"},
    {{"-S", "%"}, "invalid -S argument '%'"},
    {{"-S", "b"}, "invalid -S argument 'b'"},
    {{"-S", "1.5K"}, "invalid suffix in -S argument '1.5K'"},
    {{"-S", "1KB"}, "invalid suffix in -S argument '1KB'"},
    {{"-S", "1kb"}, "invalid suffix in -S argument '1kb'"},
    {{"-S", "1p"}, "invalid suffix in -S argument '1p'"},
    {{"-S", "1e"}, "invalid suffix in -S argument '1e'"},
    {{"-S", "1bb"}, "invalid suffix in -S argument '1bb'"},
    {{"-S", "5%%"}, "invalid suffix in -S argument '5%%'"},
    {{"-S", "1Y"}, "-S argument '1Y' too large"},
    {{"-S", "1Z"}, "-S argument '1Z' too large"},
    {{"-S", "16E"}, "-S argument '16E' too large"},
    {{"-S", "18014398509481984"}, "-S argument '18014398509481984' too large"},
    {{"--buffer-size=1Y"}, "--buffer-size argument '1Y' too large"},
    {{"--parallel=0"}, "number in parallel must be nonzero"},
    {{"--parallel=x"}, "invalid --parallel argument 'x'"},
    {{"--parallel=-1"}, "invalid --parallel argument '-1'"},
    {{"--parallel=4x"}, "invalid suffix in --parallel argument '4x'"},
    {{"-k0"}, "field number is zero: invalid field specification '0'"},
    {{"-k", "1.0"}, "character offset is zero: invalid field specification '1.0'"},
    {{"--key=1,0"}, "field number is zero: invalid field specification '1,0'"},
    {{"-k1x"}, "stray character in field spec: invalid field specification '1x'"},
    {{"-k", "a"}, "invalid number at field start: invalid count at start of 'a'"},
    {{"-k1.x"}, "invalid number after '.': invalid count at start of 'x'"},
    {{"-k1,"}, "invalid number after ',': invalid count at start of ''"},
    {{"--key="}, "invalid number at field start: invalid count at start of ''"},
    {{"-t", "ab"}, "multi-character tab 'ab'"},
    {{"-t", "\\n"}, "multi-character tab '\\\\n'"},
    {{"-t", ",", "-t", ";"}, "incompatible tabs"},
    {{"-t", ""}, "empty tab"},
    {{"-o", "a", "-o", "b"}, "multiple output files specified"},
    {{"-c", "-o", "a"}, "options '-co' are incompatible"},
    {{"-C", "--output=a"}, "options '-Co' are incompatible"},
    {{"-cC"}, "options '-cC' are incompatible"},
    {{"--check=q", "-c"}, "options '-cC' are incompatible"},
    {{"-c", "a", "b"}, "extra operand 'b' not allowed with -c"},
    {{"-C", "a", "b", "c"}, "extra operand 'b' not allowed with -C"},
    {{"--s"}, "option '--s' is ambiguous; possibilities: '--sort' '--stable'"},
    {{"--r"}, "option '--r' is ambiguous; possibilities: '--random-sort' '--random-source' '--reverse'"},
    {{"--versio"}, "option '--versio' is ambiguous; possibilities: '--version-sort' '--version'"},
    {{"--i"}, "option '--i' is ambiguous; possibilities: '--ignore-leading-blanks' '--ignore-case' "
              "'--ignore-nonprinting'"},
    {{"--rev=1"}, "option '--reverse' doesn't allow an argument"},
    {{"--help=x"}, "option '--help' doesn't allow an argument"},
    {{"-k"}, "option requires an argument -- 'k'"},
    {{"-n", "-o"}, "option requires an argument -- 'o'"},
    {{"--key"}, "option '--key' requires an argument"},
    {{"--te"}, "option '--temporary-directory' requires an argument"},
    {{"-Q"}, "invalid option -- 'Q'"},
    {{"-n1"}, "invalid option -- '1'"},
    {{"--foo=bar"}, "unrecognized option '--foo=bar'"},
};

TEST(SortArgs, BadUsageMessages) {
    for (const auto& [args, message] : kGnuErrors) EXPECT_EQ(error_of(args), message) << ::testing::PrintToString(args);
    // GNU's --check messages go on with the valid words over more lines; ours say them in the same one.
    EXPECT_EQ(error_of({"--check=x"}),
              "invalid argument 'x' for '--check' (valid arguments are 'quiet', 'silent' and 'diagnose-first')");
    EXPECT_EQ(error_of({"--check="}),
              "ambiguous argument '' for '--check' (valid arguments are 'quiet', 'silent' and 'diagnose-first')");
}

// Command lines GNU sort accepts (on an empty stdin), and so must we.
const std::vector<Args> kGnuAccepted = {
    {"-nr"}, {"-k2,2n", "-suz"}, {"-bfk3", "-k1r"}, {"-t,"}, {"-t", "-"}, {"-t\\0"}, {"-t", ",", "-t,"},
    {"--rev", "--num", "--ke=2", "--zero", "--un", "--para=3"}, {"a", "-n", "-", "--", "-r"}, {"--check=d", "-c"},
    {"--check=silent", "-C"}, {"-o", "a", "-o", "a"}, {"--parallel=99999999999999999999999"}, {"--parallel= 4"},
    {"-k+2"}, {"-k", " 2"}, {"-k1,1.0"}, {"-S", "k"}, {"-S", " 5"}, {"-S", "+5"}, {"-S", "101%"}, {"-S", "1b"},
    {"-S", "15E"}, {"-S", "18014398509481983"}, {"-S1M", "--buffer-size=2K"}, {"-T", "/tmp", "-T/tmp"}};

// GNU sort run on `args` in `dir` with an empty stdin: the first line it writes on stderr.
std::string gnu_message(const testing::ScratchDir& dir, const Args& args) {
    std::string command = "cd " + testing::shell_quote(dir.path()) + " && LC_ALL=C " + testing::gnu_sort();
    for (const std::string& arg : args) command.append(" ").append(testing::shell_quote(arg));
    return testing::first_output_line(command.append(" </dev/null 2>&1 >/dev/null"));
}

// The same command lines given to GNU sort itself: its first line on stderr is its name, ": " and
// ours; those it accepts, it runs without a word.
TEST(SortArgs, MessagesAreGnuSorts) {
    const std::string& sort = testing::gnu_sort();
    if (sort.empty()) GTEST_SKIP() << "no GNU sort (/usr/bin/sort or sort on PATH) to compare with";
    const testing::ScratchDir dir;  // where GNU sort runs, as it may write an output file
    for (const char* input : {"a", "-r"}) testing::write_text(dir / input, "");  // operands read
    for (const auto& [args, message] : kGnuErrors) EXPECT_EQ(gnu_message(dir, args), sort + ": " + message);
    for (const Args& args : kGnuAccepted) {
        EXPECT_EQ(gnu_message(dir, args), "") << ::testing::PrintToString(args);
        EXPECT_EQ(error_of(args), "(accepted)") << ::testing::PrintToString(args);
    }
    for (const std::string word : {"x", ""}) {
        const std::string gnu = gnu_message(dir, {"--check=" + word});
        const std::string ours = error_of({"--check=" + word});
        EXPECT_EQ(gnu, sort + ": " + ours.substr(0, ours.find(" (valid arguments")));
    }
}

TEST(SortArgs, UnsupportedOptionsAreRefusedByName) {
    const std::vector<std::pair<Args, std::string>> refused = {
        {{"-g"}, "option '-g' (--general-numeric-sort) is not supported"},
        {{"--general-numeric-sort"}, "option '-g' (--general-numeric-sort) is not supported"},
        {{"-nh"}, "option '-h' (--human-numeric-sort) is not supported"},
        {{"-M"}, "option '-M' (--month-sort) is not supported"},
        {{"--vers"}, "option '--vers' is ambiguous; possibilities: '--version-sort' '--version'"},
        {{"--version-s"}, "option '-V' (--version-sort) is not supported"},
        {{"-R"}, "option '-R' (--random-sort) is not supported"},
        {{"-d"}, "option '-d' (--dictionary-order) is not supported"},
        {{"--ignore-non"}, "option '-i' (--ignore-nonprinting) is not supported"},
        {{"--random-source=/dev/zero"}, "option '--random-source' is not supported"},
        {{"--sort=numeric"}, "option '--sort' is not supported"},
        {{"--files0-from=list"}, "option '--files0-from' is not supported"},
        {{"--compress-program", "gzip"}, "option '--compress-program' is not supported"},
        {{"--batch-size=4"}, "option '--batch-size' is not supported"},
        {{"--debug"}, "option '--debug' is not supported"},
        {{"-y0"}, "option '-y' is not supported"},
        {{"+1", "-2"}, "obsolete key syntax '+1 -2' is not supported (use -k)"},
        {{"-k2,2g"}, "key modifier 'g' in key '2,2g' is not supported (only b, f, n and r are)"},
        {{"--key=1V"}, "key modifier 'V' in key '1V' is not supported (only b, f, n and r are)"},
        {{"-k1d"}, "key modifier 'd' in key '1d' is not supported (only b, f, n and r are)"},
        {{"-k1.2i"}, "key modifier 'i' in key '1.2i' is not supported (only b, f, n and r are)"},
        {{"-k1h"}, "key modifier 'h' in key '1h' is not supported (only b, f, n and r are)"},
        {{"-k1,1M"}, "key modifier 'M' in key '1,1M' is not supported (only b, f, n and r are)"},
        {{"-k1R"}, "key modifier 'R' in key '1R' is not supported (only b, f, n and r are)"},
    };
    for (const auto& [args, message] : refused) EXPECT_EQ(error_of(args), message) << ::testing::PrintToString(args);
}

TEST(SortArgs, AcceptedWhereGnuAccepts) {
    EXPECT_EQ(parse({"-o", "a", "-o", "a"}).output, "a");
    EXPECT_EQ(parse({"--parallel=99999999999999999999999"}).parallel, SIZE_MAX);
    EXPECT_EQ(parse({"--parallel= 4"}).parallel, 4u);
    EXPECT_EQ(parse({"-k+2"}).keys.keys.at(0).start_field, 1u);
    EXPECT_EQ(parse({"-k", " 2"}).keys.keys.at(0).start_field, 1u);
    EXPECT_EQ(parse({"-k1,1.0"}).keys.keys.at(0).end_char, 0u);
    EXPECT_EQ(parse({"-c", "a"}).inputs, Args{"a"});
}

}  // namespace
}  // namespace gpusort
