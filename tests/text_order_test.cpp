// The order of text lines (src/text/line_order) against GNU sort itself: hand-written tricky cases
// and seeded random inputs with random options, each sorted here (std::stable_sort by
// compare_lines; -u keeps the first line of each run of equal keys) and by `LC_ALL=C sort` with
// the same options, compared byte for byte; and key_prefix() checked against compare_lines() on
// every pair of lines. Also parse_text_key()'s positions and GNU's messages.
#include "src/text/line_order.hpp"
#include "src/text/text_keys.hpp"
#include "tests/gnu_sort.hpp"
#include "tests/scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort {
namespace {

using testing::gnu_sort;
using testing::ScratchDir;
using testing::shell_quote;

// The order of a case's options, read here by a few lines of its own (not by parse_sort_args) from
// separate arguments: "-k" SPEC, "-t" SEP ("\0" for NUL), and flags of "bnfrsuz".
TextKeys keys_of(const std::vector<std::string>& args) {
    TextOptions options;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-k") {
            options.keys.push_back(parse_text_key(args.at(++i)));
        } else if (args[i] == "-t") {
            const std::string& separator = args.at(++i);
            options.separator = separator == "\\0" ? '\0' : separator.at(0);
        } else {
            for (const char flag : args[i].substr(1)) {
                switch (flag) {
                    case 'b': options.global.skip_start_blanks = options.global.skip_end_blanks = true; break;
                    case 'n': options.global.numeric = true; break;
                    case 'f': options.global.fold = true; break;
                    case 'r': options.global.reverse = true; break;
                    case 's': options.stable = true; break;
                    case 'u': options.unique = true; break;
                    case 'z': options.zero_terminated = true; break;
                    default: throw std::invalid_argument("the test reads no option " + args[i]);
                }
            }
        }
    }
    return make_text_keys(options);
}

std::string join(const std::vector<std::string>& lines, char end) {
    std::string text;
    for (const std::string& line : lines) text += line + end;
    return text;
}

std::string sort_here(std::vector<std::string> lines, const TextKeys& keys) {
    std::stable_sort(lines.begin(), lines.end(),
                     [&](const std::string& a, const std::string& b) { return compare_lines(a, b, keys) < 0; });
    if (keys.unique) {
        const auto last = std::unique(lines.begin(), lines.end(),
                                      [&](const std::string& a, const std::string& b) { return equal_keys(a, b, keys); });
        lines.erase(last, lines.end());
    }
    return join(lines, keys.line_end());
}

std::string sort_by_gnu(const ScratchDir& dir, const std::string& input, const std::vector<std::string>& args) {
    testing::write_text(dir / "in", input);
    std::string command = "LC_ALL=C " + gnu_sort();
    for (const std::string& arg : args) command.append(" ").append(shell_quote(arg));
    command.append(" ").append(shell_quote(dir / "in")).append(" > ").append(shell_quote(dir / "out"));
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
    return testing::read_text(dir / "out");
}

// The bytes of a text as C escapes, for messages.
std::string escaped(const std::string& text) {
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f && c != '\\') {
            out += c;
        } else {
            char code[8];
            std::snprintf(code, sizeof code, "\\x%02x", byte);
            out += code;
        }
    }
    return out;
}

std::string describe(const std::vector<std::string>& args, const std::vector<std::string>& lines, char end) {
    std::string text = "sort";
    for (const std::string& arg : args) text.append(" ").append(shell_quote(arg));
    return text.append(" of \"").append(escaped(join(lines, end))).append("\"");
}

int sign(int value) { return (value > 0) - (value < 0); }

// A line's whole sort code, read through key_prefix() in windows of `size` bytes until one holds
// its end.
std::vector<std::byte> sort_code(const std::string& line, const TextKeys& keys, std::size_t size) {
    std::vector<std::byte> code;
    for (bool complete = false; !complete;) {
        code.resize(code.size() + size);
        complete = key_prefix(line, keys, std::span(code).last(size), code.size() - size);
    }
    return code;
}

// The bytes that follow a padded line in the padded checks: each a trap for a code that reads
// past the line's end (digits, zeros, blanks, separators, a decimal point, NUL bytes).
const std::vector<std::string> kPaddings = {std::string(kLinePadding, '9'), std::string(kLinePadding, '0'),
                                            std::string(kLinePadding, '\0'), std::string(kLinePadding, ' '),
                                            std::string(kLinePadding, ','), ".5 \t,x\n0:1\0" + std::string(kLinePadding, '7')};

// The first window of key_prefix() for the line read as padded, each of kPaddings after it, is the
// window read without padding, and so is whether the code ends in it.
void expect_padded_prefix_same(const std::string& line, const TextKeys& keys, const std::string& what) {
    std::vector<std::byte> expected(kPaddedWindow + 1, std::byte{0x5a});
    const bool complete = key_prefix(line, keys, std::span(expected).first(kPaddedWindow));
    for (const std::string& padding : kPaddings) {
        const std::string text = line + padding;
        std::vector<std::byte> padded(kPaddedWindow + 1, std::byte{0x5a});
        const bool padded_complete = key_prefix(std::string_view(text).substr(0, line.size()), keys,
                                                std::span(padded).first(kPaddedWindow), 0, true);
        ASSERT_EQ(padded, expected) << "the padded prefix of \"" << escaped(line) << "\" followed by \"" << escaped(padding)
                                    << "\", " << what;
        ASSERT_EQ(padded_complete, complete) << "whether the code of \"" << escaped(line) << "\" ends, padded, " << what;
    }
}

// key_prefix() on every pair: the first window of `size` bytes never against compare_lines() and
// equal for lines that compare equal; the whole codes (all windows) in the order of compare_lines().
// And the first window of each line read as padded, against it read without padding.
void expect_prefixes_consistent(const std::vector<std::string>& lines, const TextKeys& keys, std::size_t size,
                                const std::string& what) {
    std::vector<std::vector<std::byte>> prefixes, codes;
    for (const std::string& line : lines) {
        prefixes.emplace_back(size + 1, std::byte{0x5a});
        key_prefix(line, keys, std::span(prefixes.back()).first(size));
        ASSERT_EQ(prefixes.back()[size], std::byte{0x5a}) << "key_prefix wrote past its end, " << what;
        codes.push_back(sort_code(line, keys, size));
        expect_padded_prefix_same(line, keys, what);
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
        for (std::size_t j = 0; j < lines.size(); ++j) {
            const int order = compare_lines(lines[i], lines[j], keys);
            const int prefix_order = sign(std::memcmp(prefixes[i].data(), prefixes[j].data(), size));
            ASSERT_TRUE(order == 0 ? prefix_order == 0 : prefix_order == 0 || prefix_order == order)
                << "prefixes of " << size << " bytes order \"" << escaped(lines[i]) << "\" and \"" << escaped(lines[j])
                << "\" against compare_lines, " << what;
            const int code_order = codes[i] < codes[j] ? -1 : codes[j] < codes[i] ? 1 : 0;
            ASSERT_EQ(code_order, order) << "the sort codes (windows of " << size << " bytes) of \"" << escaped(lines[i])
                                         << "\" and \"" << escaped(lines[j]) << "\" against compare_lines, " << what;
        }
    }
}

// Sorts `lines` here and by GNU sort with `args`, expecting the same bytes, then checks prefixes.
void expect_like_gnu(const ScratchDir& dir, const std::vector<std::string>& args, const std::vector<std::string>& lines,
                     std::size_t prefix_size = 16) {
    const TextKeys keys = keys_of(args);
    const std::string what = describe(args, lines, keys.line_end());
    const std::string input = join(lines, keys.line_end());
    EXPECT_EQ(escaped(sort_here(lines, keys)), escaped(sort_by_gnu(dir, input, args))) << what;
    expect_prefixes_consistent(lines, keys, prefix_size, what);
}

class TextOrderGnu : public ::testing::Test {
protected:
    void SetUp() override {
        if (gnu_sort().empty()) GTEST_SKIP() << "no GNU sort (/usr/bin/sort or sort on PATH) to compare with";
    }
    ScratchDir dir;
};

const std::vector<std::string> kNumbers = {
    "1.5", "1", "1.05", "-1.5", "-1", "-", "-0", "0", ".5", "-.5", "+1", "1e3", " 2", "\t-3", "--5", "1,000",
    "999", "0.50", "00012", "12.", "-0.0", "-.", ".", "", "abc", "-abc", "10", "9.999", "-9.999", "-10",
    "123456789012345678901234567890", "123456789012345678901234567891", "-123456789012345678901234567890",
    "0.000000000000000000000001", "-0.000000000000000000000001", "1.5.3", "1-2", " - 1", "007", "7"};

TEST_F(TextOrderGnu, NumbersWholeLine) {
    expect_like_gnu(dir, {"-n"}, kNumbers);
    expect_like_gnu(dir, {"-n", "-r"}, kNumbers);
    expect_like_gnu(dir, {"-n", "-s"}, kNumbers);
    expect_like_gnu(dir, {"-n", "-u"}, kNumbers);
    expect_like_gnu(dir, {"-nr", "-u"}, kNumbers, 5);
    expect_like_gnu(dir, {"-n", "-b", "-f"}, kNumbers, 3);
}

TEST_F(TextOrderGnu, NumbersInFields) {
    const std::vector<std::string> lines = {"a 10 x", "b 9 y", "c -2 z", "d  3", "e", "f -0 q", "g 3.0 a",
                                            "h 003 b", "i 1e2", "j\t-5", "k 10"};
    expect_like_gnu(dir, {"-k", "2n"}, lines);
    expect_like_gnu(dir, {"-k", "2,2n"}, lines);
    expect_like_gnu(dir, {"-k", "2,2nr"}, lines);
    expect_like_gnu(dir, {"-k", "2,2n", "-k", "3"}, lines);
    expect_like_gnu(dir, {"-k", "2.2,2.3n"}, lines);
    expect_like_gnu(dir, {"-k", "2n", "-u"}, lines);
    expect_like_gnu(dir, {"-n", "-k", "2"}, lines);
    expect_like_gnu(dir, {"-n", "-k", "2b"}, lines);  // b of its own: -n is not inherited
    expect_like_gnu(dir, {"-n", "-r", "-k", "2r"}, lines);
}

// Numbers within lines of 16 bytes and more, where digits are looked at 16 bytes at a time: runs
// of digits and of zeros across those 16 bytes, keys that end within a number, numbers near the
// line's end and far from it.
TEST_F(TextOrderGnu, NumbersInLongLines) {
    std::vector<std::string> numbers = kNumbers;
    for (const char* extra : {"0000000000000000000012.5000000000000000000", "100000000000000000.000000000000000001",
                              "-000000000000000.000000000000000", "12345678901234.5", "123456789012345.60",
                              "0.000000000000001", "1.00000000000000100", "-0000000000000012"})
        numbers.push_back(extra);
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        for (const char* tail : {"", ",z", ",abcdefghijklmnopqrstuvwxyz0123456789"})
            lines.push_back("line " + std::to_string(i) + "," + numbers[i] + tail);
        lines.push_back(std::string(40, 'p') + "," + numbers[i]);
    }
    expect_like_gnu(dir, {"-t", ",", "-k", "2,2n"}, lines);
    expect_like_gnu(dir, {"-t", ",", "-k", "2n"}, lines);
    expect_like_gnu(dir, {"-t", ",", "-k", "2,2nr"}, lines, 32);
    expect_like_gnu(dir, {"-t", ",", "-k", "2.3,2.9n"}, lines);
    expect_like_gnu(dir, {"-t", ",", "-k", "2,2n", "-u"}, lines);
    expect_like_gnu(dir, {"-t", ",", "-k", "2.2n", "-s"}, lines);
}

TEST_F(TextOrderGnu, FieldsWithoutSeparator) {
    const std::vector<std::string> lines = {"  a b", "a  b", " a\tc", "a b c", "b", "", "   ", "a", "\ta  b",
                                            "ab cd ef", " ab  cd", "ab\t\tcd"};
    for (const char* key : {"2", "2b", "2.2", "2.2b", "1.3,1.5", "2,2.0", "2,2.1", "2,2.1b", "3,2", "5", "1,1",
                             "1b,1", "1.2b,2.3b", "2.1b,2.2", "1.1,1.1", "99999999999999999999"}) {
        expect_like_gnu(dir, {"-k", key}, lines);
        expect_like_gnu(dir, {"-b", "-k", key}, lines);
    }
    expect_like_gnu(dir, {"-b"}, lines);
    expect_like_gnu(dir, {"-k", "2", "-k", "1r"}, lines);
}

TEST_F(TextOrderGnu, FieldsWithSeparator) {
    const std::vector<std::string> lines = {"a,,b", ",a", "a,", "a,b,c", ",,", "b, a", "b,a", "", "a,b", "a, b",
                                            "c,aa,b", "c,ab,a"};
    for (const char* key : {"2", "2,2", "3", "2.2,2.3", "2b,2", "2.2b", "3,3", "2,3", "1,2.0", "1,2.1", "4"}) {
        expect_like_gnu(dir, {"-t", ",", "-k", key}, lines);
        expect_like_gnu(dir, {"-t", ",", "-s", "-k", key}, lines);
    }
    expect_like_gnu(dir, {"-t", " ", "-k", "2"}, {"a  b", "a b", " a", "a  a", "a a"});
}

// Lines of many fields and long fields: field ends past the 16 that a line's fields keep, keys
// asked for out of order (a later key before an earlier field), and fields that span blocks of 16 bytes.
TEST_F(TextOrderGnu, ManyAndLongFields) {
    std::mt19937_64 random(7);
    std::vector<std::string> lines;
    for (int i = 0; i < 60; ++i) {
        std::string line;
        const int fields = static_cast<int>(random() % 30);
        for (int f = 0; f < fields; ++f) {
            line += std::string(random() % 3, random() % 2 ? ' ' : ',');
            line += std::string(random() % (f % 5 == 0 ? 20 : 2), static_cast<char>('a' + random() % 2));
            if (random() % 4 == 0) line += std::to_string(static_cast<int>(random() % 2000) - 1000);
        }
        lines.push_back(line);
    }
    for (const char* separator : {"", ","}) {
        for (const std::vector<std::string>& keys :
             std::vector<std::vector<std::string>>{{"-k", "20,20", "-k", "18,18"}, {"-k", "17,18", "-k", "16n"},
                                                   {"-k", "25.3,25.9b", "-k", "2,2n"}, {"-k", "19,19", "-k", "3,3", "-k", "17,17"}}) {
            std::vector<std::string> args = keys;
            if (*separator) args.insert(args.end(), {"-t", separator});
            expect_like_gnu(dir, args, lines);
        }
    }
}

TEST_F(TextOrderGnu, FoldAndReverse) {
    const std::vector<std::string> lines = {"a", "A", "b", "B", "_", "^", "ab", "AB", "aB", "z", "Z", "{", "[", ""};
    expect_like_gnu(dir, {"-f"}, lines);
    expect_like_gnu(dir, {"-f", "-u"}, lines);
    expect_like_gnu(dir, {"-f", "-r"}, lines);
    expect_like_gnu(dir, {"-f", "-s"}, lines);
    expect_like_gnu(dir, {"-r"}, lines);
    expect_like_gnu(dir, {"-u", "-r"}, lines);
    expect_like_gnu(dir, {"-k", "1f", "-r"}, lines);  // the key is not reversed, the last resort is
    expect_like_gnu(dir, {"-k", "1,1fr"}, lines);
}

TEST_F(TextOrderGnu, BytesAreUnsigned) {
    expect_like_gnu(dir, {}, {"\xff", "\x80", "a", "\x7f", "\x01", "", "\xe9t\xe9", "\xc3\xa9"});
    expect_like_gnu(dir, {"-f"}, {"\xff", "\x80", "a", "A", "\xe9", "\xc9"});
}

TEST_F(TextOrderGnu, ZeroTerminatedCountsNewlineAsBlank) {
    const std::vector<std::string> lines = {"b\nx", "a\ny", "x\na", "x b", "\n5", "\n-3", "10", "a\tb"};
    expect_like_gnu(dir, {"-z"}, lines);
    expect_like_gnu(dir, {"-z", "-k", "2"}, lines);
    expect_like_gnu(dir, {"-z", "-k", "2,2"}, lines);
    expect_like_gnu(dir, {"-z", "-n"}, lines);
    expect_like_gnu(dir, {"-z", "-b", "-k", "1.1,1.1"}, lines);
    expect_like_gnu(dir, {"-z", "-t", "\n", "-k", "2"}, lines);
}

TEST_F(TextOrderGnu, NulBytesInsideLines) {
    using namespace std::string_literals;
    const std::vector<std::string> lines = {"a\0b"s, "a\0a"s, "a"s, "1\0002"s, "1"s, "2\0001"s, "\0"s, ""};
    expect_like_gnu(dir, {}, lines);
    expect_like_gnu(dir, {"-n"}, lines);
    expect_like_gnu(dir, {"-t", "\\0", "-k", "2"}, lines);
}

TEST_F(TextOrderGnu, UniqueKeepsTheFirstOfEachRun) {
    const std::vector<std::string> lines = {"b 1", "a 1", "c 2", "a 2", "b 2", "d 01", "e 1.0", "x 3", "x 3"};
    expect_like_gnu(dir, {"-u", "-k", "2,2"}, lines);
    expect_like_gnu(dir, {"-u", "-k", "2,2n"}, lines);
    expect_like_gnu(dir, {"-u", "-r", "-k", "2,2n"}, lines);
    expect_like_gnu(dir, {"-u"}, lines);
    expect_like_gnu(dir, {"-u", "-s", "-k", "1,1"}, lines);
}

// One random case: options and lines over a small alphabet, as the arguments of GNU sort.
struct RandomCase {
    std::vector<std::string> args;
    std::vector<std::string> lines;
};

std::string random_position(std::mt19937_64& random, bool end) {
    std::string position = std::to_string(1 + random() % 4);
    if (random() % 5 < 2) position += "." + std::to_string(end ? random() % 5 : 1 + random() % 4);
    for (const char modifier : std::string("bnfr")) {
        if (random() % 5 == 0) position += modifier;
    }
    return position;
}

RandomCase random_case(std::mt19937_64& random) {
    RandomCase c;
    const bool zero = random() % 7 == 0;
    std::string flags = "-";
    for (const char flag : std::string("bnfrsu")) {
        if (random() % 5 == 0) flags += flag;
    }
    if (zero) flags += 'z';
    if (flags.size() > 1) c.args.push_back(flags);
    std::string alphabet = "  \t0129-.,:abAB_\xe9";
    if (random() % 5 < 2) {
        const char separator = ",: "[random() % 3];
        c.args.insert(c.args.end(), {"-t", std::string(1, separator)});
        alphabet += std::string(3, separator);
    }
    if (zero) alphabet += '\n';
    for (std::size_t keys = random() % 4; keys > 0; --keys) {
        std::string key = random_position(random, false);
        if (random() % 5 < 3) key += "," + random_position(random, true);
        c.args.insert(c.args.end(), {"-k", key});
    }
    const std::size_t count = random() % 41;
    for (std::size_t i = 0; i < count; ++i) {
        if (!c.lines.empty() && random() % 4 == 0) {
            c.lines.push_back(c.lines[random() % c.lines.size()]);
            continue;
        }
        std::string line;
        for (std::size_t length = random() % 13; length > 0; --length) line += alphabet[random() % alphabet.size()];
        c.lines.push_back(line);
    }
    return c;
}

TEST_F(TextOrderGnu, RandomLinesAndOptions) {
    std::mt19937_64 random(20261201);
    for (int i = 0; i < 300; ++i) {
        const RandomCase c = random_case(random);
        SCOPED_TRACE("random case " + std::to_string(i));
        expect_like_gnu(dir, c.args, c.lines, 1 + random() % 24);
        if (HasFailure()) return;
    }
}

// compare_lines against an independent order of exact numbers: the test's own table of values.
TEST(TextOrder, NumbersCompareByExactValue) {
    const TextKeys keys = keys_of({"-n", "-s"});
    const std::vector<std::pair<std::string, std::string>> same = {
        {"0", "-0"}, {"-", "0"}, {"abc", ""}, {"1.50", "1.5"}, {"007", "7."}, {".5", "0.5000"}, {"  -2", "-2.0"},
        {"-0.000", "."}, {"123456789012345678901234567890.1", "123456789012345678901234567890.10"}};
    for (const auto& [a, b] : same) {
        EXPECT_EQ(compare_lines(a, b, keys), 0) << a << " vs " << b;
        EXPECT_TRUE(equal_keys(a, b, keys)) << a << " vs " << b;
    }
    const std::vector<std::string> ascending = {"-1000000000000000000000", "-99", "-1.5", "-1.05", "-0.001", "0",
                                                "0.001", "0.01", "1", "1.0000000000000000000001", "9", "10", "99.9",
                                                "100", "1000000000000000000000"};
    for (std::size_t i = 0; i + 1 < ascending.size(); ++i) {
        EXPECT_LT(compare_lines(ascending[i], ascending[i + 1], keys), 0) << ascending[i] << " vs " << ascending[i + 1];
        EXPECT_GT(compare_lines(ascending[i + 1], ascending[i], keys), 0) << ascending[i + 1] << " vs " << ascending[i];
    }
}

// Numbers of different magnitudes are told apart by the prefix alone, in the right order.
TEST(TextOrder, NumericPrefixSeparatesMagnitudes) {
    const TextKeys keys = keys_of({"-n"});
    const std::vector<std::string> ascending = {
        "-1" + std::string(255, '0'), "-" + std::string(255, '9'), "-" + std::string(254, '9'), "-10000000",
        "-9999999", "-1000", "-999", "-1.5", "-0.5", "0", "0.25", "0.5", "1", "2", "10", "999", "1000", "9999999",
        "10000000", std::string(254, '9'), std::string(255, '9'), "1" + std::string(255, '0')};
    std::vector<std::byte> previous(12), current(12);
    key_prefix(ascending[0], keys, previous);
    for (std::size_t i = 1; i < ascending.size(); ++i) {
        key_prefix(ascending[i], keys, current);
        EXPECT_LT(std::memcmp(previous.data(), current.data(), 12), 0) << ascending[i - 1] << " vs " << ascending[i];
        previous = current;
    }
}

TEST(TextKeyParse, PositionsAndModifiers) {
    TextKey key = parse_text_key("2");
    EXPECT_EQ(key.start_field, 1u);
    EXPECT_EQ(key.start_char, 0u);
    EXPECT_EQ(key.end_field, TextKey::kLineEnd);
    key = parse_text_key("2.3b,4.5bnr");
    EXPECT_EQ(key.start_field, 1u);
    EXPECT_EQ(key.start_char, 2u);
    EXPECT_EQ(key.end_field, 3u);
    EXPECT_EQ(key.end_char, 5u);
    EXPECT_TRUE(key.modifiers.skip_start_blanks && key.modifiers.skip_end_blanks);
    EXPECT_TRUE(key.modifiers.numeric && key.modifiers.reverse && !key.modifiers.fold);
    key = parse_text_key("1,1b");
    EXPECT_FALSE(key.modifiers.skip_start_blanks);
    EXPECT_TRUE(key.modifiers.skip_end_blanks);
    key = parse_text_key("3,3.0");
    EXPECT_EQ(key.end_char, 0u);
    EXPECT_EQ(parse_text_key("+2").start_field, 1u);  // as GNU's strtoumax reads it
    EXPECT_EQ(parse_text_key("99999999999999999999999").start_field, SIZE_MAX - 1);
}

std::string key_error(const std::string& spec) {
    try {
        parse_text_key(spec);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(TextKeyParse, GnuMessages) {
    EXPECT_EQ(key_error("0"), "field number is zero: invalid field specification '0'");
    EXPECT_EQ(key_error("1.0"), "character offset is zero: invalid field specification '1.0'");
    EXPECT_EQ(key_error("1,0"), "field number is zero: invalid field specification '1,0'");
    EXPECT_EQ(key_error("1x"), "stray character in field spec: invalid field specification '1x'");
    EXPECT_EQ(key_error("a"), "invalid number at field start: invalid count at start of 'a'");
    EXPECT_EQ(key_error("1.x"), "invalid number after '.': invalid count at start of 'x'");
    EXPECT_EQ(key_error("1,"), "invalid number after ',': invalid count at start of ''");
    EXPECT_EQ(key_error("-1"), "invalid number at field start: invalid count at start of '-1'");
    EXPECT_EQ(key_error("a'b\t"), "invalid number at field start: invalid count at start of 'a\\'b\\t'");
    EXPECT_EQ(key_error("2,2g"), "key modifier 'g' in key '2,2g' is not supported (only b, f, n and r are)");
    EXPECT_EQ(key_error("2M"), "key modifier 'M' in key '2M' is not supported (only b, f, n and r are)");
}

TEST(TextKeyParse, KeysWithoutModifiersInheritTheGlobalOnes) {
    TextOptions options;
    options.global.numeric = options.global.reverse = options.global.skip_start_blanks = true;
    options.keys = {parse_text_key("1"), parse_text_key("2r"), parse_text_key("3f"), parse_text_key("4,4b")};
    const TextKeys keys = make_text_keys(options);
    ASSERT_EQ(keys.keys.size(), 4u);
    EXPECT_EQ(keys.keys[0].modifiers, options.global);
    EXPECT_EQ(keys.keys[1].modifiers, KeyModifiers{.reverse = true});
    EXPECT_EQ(keys.keys[2].modifiers, KeyModifiers{.fold = true});
    EXPECT_EQ(keys.keys[3].modifiers, KeyModifiers{.skip_end_blanks = true});
    EXPECT_TRUE(keys.reverse);

    options.keys.clear();
    EXPECT_EQ(make_text_keys(options).keys.size(), 1u);  // the whole line with -n -b
    options.global = KeyModifiers{.reverse = true};
    EXPECT_TRUE(make_text_keys(options).keys.empty());  // -r alone: the last resort reversed
}

}  // namespace
}  // namespace gpusort
