// The text lines of gpusort-gen --lines (tools/gen/line_generator): the count or size asked for,
// the terminators, the same bytes from the same seed with any number of threads, and the shape of
// each kind's lines, ties in the first field among them.
#include "tools/gen/line_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

using namespace gpusort::gen;

namespace {

LineSpec spec_of(LineKind kind, std::optional<std::uint64_t> count, std::optional<std::uint64_t> size,
                 std::uint64_t seed = 1) {
    LineSpec spec;
    spec.kind = kind;
    spec.seed = seed;
    spec.count = count;
    spec.size = size;
    return spec;
}

std::string lines_of(LineKind kind, std::uint64_t count, std::uint64_t seed = 1) {
    return generate_lines(spec_of(kind, count, std::nullopt, seed));
}

// The lines of `text`, each without its terminator (a last line without one included).
std::vector<std::string_view> split(std::string_view text, char terminator = '\n') {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find(terminator), text.size());
        lines.push_back(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    return lines;
}

// The share of lines whose first field (up to the first of `separators`) is that of another line
// that differs from it after the field.
double share_of_ties(const std::vector<std::string_view>& lines, std::string_view separators) {
    std::map<std::string_view, std::set<std::string_view>> by_field;
    for (std::string_view line : lines) by_field[line.substr(0, line.find_first_of(separators))].insert(line);
    std::size_t tied = 0;
    for (std::string_view line : lines)
        if (by_field[line.substr(0, line.find_first_of(separators))].size() > 1) ++tied;
    return static_cast<double>(tied) / static_cast<double>(lines.size());
}

}  // namespace

TEST(LineGenerator, KindsHaveTheirNames) {
    for (const LineKind kind : kAllLineKinds) EXPECT_EQ(parse_line_kind(line_kind_name(kind)), kind);
    EXPECT_EQ(std::string(line_kind_name(LineKind::long_lines)), "long");
    EXPECT_FALSE(parse_line_kind("lines").has_value());
}

// --count N: N lines, each with its terminator; a smaller count gives a prefix of a larger one.
TEST(LineGenerator, ACountGivesThatManyLines) {
    for (const LineKind kind : kAllLineKinds) {
        const std::uint64_t count = kind == LineKind::long_lines ? 300 : 20000;
        const std::string lines = lines_of(kind, count);
        EXPECT_EQ(static_cast<std::uint64_t>(std::count(lines.begin(), lines.end(), '\n')), count) << line_kind_name(kind);
        EXPECT_EQ(lines.back(), '\n') << line_kind_name(kind);
        EXPECT_EQ(lines.find('\0'), std::string::npos) << line_kind_name(kind);
        EXPECT_TRUE(lines.starts_with(lines_of(kind, count / 3))) << line_kind_name(kind);
        EXPECT_TRUE(lines_of(kind, 0).empty());
    }
}

// --size BYTES: the whole lines that fit, and not one more: the next line of a larger output
// would not have fitted.
TEST(LineGenerator, ASizeGivesTheWholeLinesThatFit) {
    for (const LineKind kind : kAllLineKinds) {
        const std::uint64_t size = kind == LineKind::long_lines ? 3'000'000 : 1'500'001;
        const std::string lines = generate_lines(spec_of(kind, std::nullopt, size));
        const std::string more = generate_lines(spec_of(kind, std::nullopt, 2 * size));
        ASSERT_LE(lines.size(), size) << line_kind_name(kind);
        ASSERT_FALSE(lines.empty()) << line_kind_name(kind);
        EXPECT_EQ(lines.back(), '\n') << line_kind_name(kind);
        EXPECT_TRUE(more.starts_with(lines)) << line_kind_name(kind);
        EXPECT_GT(more.find('\n', lines.size()) + 1, size) << line_kind_name(kind) << ": one more line fits";
    }
    // Less than the first line: nothing.
    EXPECT_TRUE(generate_lines(spec_of(LineKind::fixed, std::nullopt, 99)).empty());
    EXPECT_EQ(generate_lines(spec_of(LineKind::fixed, std::nullopt, 100)).size(), 100u);
}

// --zero-terminated: NUL after every line and no newline anywhere; --no-final-newline: the same
// bytes without the last terminator.
TEST(LineGenerator, TerminatorsAreNulsOrNoneAtTheEnd) {
    for (const LineKind kind : kAllLineKinds) {
        const std::uint64_t count = kind == LineKind::long_lines ? 200 : 5000;
        const std::string newlines = lines_of(kind, count);
        LineSpec spec = spec_of(kind, count, std::nullopt);
        spec.terminator = '\0';
        const std::string nuls = generate_lines(spec);
        EXPECT_EQ(nuls.find('\n'), std::string::npos) << line_kind_name(kind);
        EXPECT_EQ(static_cast<std::uint64_t>(std::count(nuls.begin(), nuls.end(), '\0')), count) << line_kind_name(kind);
        std::string expected = newlines;
        std::replace(expected.begin(), expected.end(), '\n', '\0');
        EXPECT_TRUE(nuls == expected) << line_kind_name(kind);
        spec.final_terminator = false;
        EXPECT_TRUE(generate_lines(spec) == expected.substr(0, expected.size() - 1)) << line_kind_name(kind);
    }
    // By size: the lines chosen as with the terminator, the last one then left out.
    LineSpec spec = spec_of(LineKind::words, std::nullopt, 1'234'567);
    const std::string with = generate_lines(spec);
    spec.final_terminator = false;
    EXPECT_TRUE(generate_lines(spec) == with.substr(0, with.size() - 1));
}

// The same seed gives the same bytes with one thread or several, another seed other bytes.
TEST(LineGenerator, TheSameSeedGivesTheSameBytesWithAnyNumberOfThreads) {
    for (const LineKind kind : kAllLineKinds) {
        const LineSpec spec = spec_of(kind, std::nullopt, 3'000'000, 7);
        const std::string lines = generate_lines(spec);
        std::string one_thread, four_threads;
        {
            const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
            one_thread = generate_lines(spec);
        }
        const tbb::global_control four(tbb::global_control::max_allowed_parallelism, 4);
        tbb::task_arena(4).execute([&] { four_threads = generate_lines(spec); });
        EXPECT_TRUE(lines == one_thread) << line_kind_name(kind);
        EXPECT_TRUE(lines == four_threads) << line_kind_name(kind);
        EXPECT_FALSE(lines == generate_lines(spec_of(kind, std::nullopt, 3'000'000, 8))) << line_kind_name(kind);
    }
}

// fixed: 99 characters: the key of 10 from '!' to '~', two blanks, 32 hex digits, two blanks,
// 53 pattern characters; many keys repeated with other lines after them.
TEST(LineGenerator, FixedLinesAreGensortTextRecords) {
    const std::string text = lines_of(LineKind::fixed, 20000);
    const std::vector<std::string_view> lines = split(text);
    const std::regex shape("[!-~]{10}  [0-9A-F]{32}  [0-9A-F]{53}");
    for (std::string_view line : lines)
        ASSERT_TRUE(std::regex_match(line.begin(), line.end(), shape)) << line;
    EXPECT_GT(share_of_ties(lines, " "), 0.2);
}

// words: 1 to 6 words of 1-20 letters with single blanks; words and whole lines repeat, and many
// lines share their first word.
TEST(LineGenerator, WordsRepeat) {
    const std::string text = lines_of(LineKind::words, 20000);
    const std::vector<std::string_view> lines = split(text);
    const std::regex shape("[A-Za-z]{1,20}( [A-Za-z]{1,20}){0,5}");
    std::set<std::string_view> distinct_words;
    std::size_t words = 0;
    for (std::string_view line : lines) {
        ASSERT_TRUE(std::regex_match(line.begin(), line.end(), shape)) << line;
        for (std::string_view word : split(line, ' ')) distinct_words.insert(word), ++words;
    }
    EXPECT_LE(distinct_words.size(), 4096u);
    EXPECT_GT(words, 4 * distinct_words.size());
    EXPECT_LT(std::set<std::string_view>(lines.begin(), lines.end()).size(), lines.size() * 9 / 10);
    EXPECT_GT(share_of_ties(lines, " "), 0.3);
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](std::string_view l) { return l[0] >= 'A' && l[0] <= 'Z'; }));
}

// log: a timestamp, a level, a component, words, id= and took=; timestamps out of order and
// repeated, negative numbers among the fields.
TEST(LineGenerator, LogLinesParseAsTimestampAndLevel) {
    const std::string text = lines_of(LineKind::log, 20000);
    const std::vector<std::string_view> lines = split(text);
    const std::regex shape(
        "(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z) (DEBUG|INFO |WARN |ERROR) \\[[a-z0-9.-]+\\]"
        "( [A-Za-z]+)+ id=\\d+( delta=-?\\d+)? took=\\d+\\.\\d\\dms( code=-\\d+)?");
    std::set<std::string> levels;
    std::size_t out_of_order = 0, negative = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::match_results<std::string_view::const_iterator> match;
        ASSERT_TRUE(std::regex_match(lines[i].begin(), lines[i].end(), match, shape)) << lines[i];
        levels.insert(match[2].str());
        if (i > 0 && lines[i].substr(0, 27) < lines[i - 1].substr(0, 27)) ++out_of_order;
        if (lines[i].find("=-") != std::string_view::npos) ++negative;
    }
    EXPECT_EQ(levels, (std::set<std::string>{"DEBUG", "INFO ", "WARN ", "ERROR"}));
    EXPECT_GT(out_of_order, lines.size() / 10);
    EXPECT_GT(negative, lines.size() / 10);
    EXPECT_TRUE(lines[0].starts_with("2026-11-2")) << lines[0];
    EXPECT_GT(share_of_ties(lines, " "), 0.1);
}

// csv: five fields, an integer id, names and cities with blanks, amounts with 1 to 3 decimals,
// scores as integers or decimals, and each field but the id empty now and then.
TEST(LineGenerator, CsvLinesHaveFiveFields) {
    const std::string text = lines_of(LineKind::csv, 20000);
    const std::vector<std::string_view> lines = split(text);
    const std::regex shape("-?\\d+,([A-Za-z]+( [A-Za-z]+){1,2})?,([A-Za-z .]+)?,(-?\\d+\\.\\d{1,3})?,(-?\\d+|\\d+\\.\\d{1,2})?");
    std::size_t negative_ids = 0, empty_fields = 0;
    for (std::string_view line : lines) {
        ASSERT_EQ(std::count(line.begin(), line.end(), ','), 4) << line;
        ASSERT_TRUE(std::regex_match(line.begin(), line.end(), shape)) << line;
        negative_ids += line[0] == '-';
        empty_fields += line.find(",,") != std::string_view::npos || line.back() == ',';
    }
    EXPECT_GT(negative_ids, lines.size() / 20);
    EXPECT_GT(empty_fields, lines.size() / 20);
    EXPECT_GT(share_of_ties(lines, ","), 0.2);
}

// long: with a few MiB asked for, lines of 256 KiB and more, two of them with the same first
// 256 KiB that differ after it; no line longer than kMaxLineBytes; most lines short.
TEST(LineGenerator, LongLinesReachQuarterOfAMebibyteAndShareLongPrefixes) {
    for (std::uint64_t seed : {1, 2, 3}) {
        const std::string text = generate_lines(spec_of(LineKind::long_lines, std::nullopt, 8 << 20, seed));
        const std::vector<std::string_view> lines = split(text);
        std::vector<std::string_view> longest;
        std::size_t short_lines = 0;
        for (std::string_view line : lines) {
            ASSERT_LT(line.size(), kMaxLineBytes);
            if (line.size() >= 256 << 10) longest.push_back(line);
            short_lines += line.size() < 200;
        }
        ASSERT_FALSE(longest.empty()) << "seed " << seed;
        EXPECT_GT(short_lines, lines.size() / 2) << "seed " << seed;
        bool shared = false;
        for (std::size_t i = 0; i < longest.size(); ++i)
            for (std::size_t j = i + 1; j < longest.size(); ++j)
                shared |= longest[i].substr(0, 256 << 10) == longest[j].substr(0, 256 << 10) && longest[i] != longest[j];
        EXPECT_TRUE(shared) << "seed " << seed << ": " << longest.size() << " lines of 256 KiB or more";
    }
}

// mixed: empty lines, leading blanks and tabs, signed numbers with leading zeros and decimals,
// one word in several cases, tab-separated fields, bytes above 127.
TEST(LineGenerator, MixedLinesHoldTheEdgeCases) {
    const std::string text = lines_of(LineKind::mixed, 20000);
    const std::vector<std::string_view> lines = split(text);
    auto count = [&](const char* pattern) {
        const std::regex re(pattern);
        return std::count_if(lines.begin(), lines.end(),
                             [&](std::string_view line) { return std::regex_search(line.begin(), line.end(), re); });
    };
    EXPECT_GT(count("^$"), 1000);
    EXPECT_GT(count("^[ \t]+[A-Za-z]"), 1000);
    EXPECT_GT(count("^\t"), 300);
    EXPECT_GT(count("^ ?-0+[1-9]"), 100);
    EXPECT_GT(count("^ ?\\+[0-9]"), 100);
    EXPECT_GT(count("^ ?-?[0-9]+\\.[0-9]+"), 1000);
    EXPECT_GT(count("^ ?-?\\.[0-9]"), 20);
    EXPECT_GT(count("^[a-z]+\t[-+.0-9]+\t[A-Za-z]+$"), 500);
    EXPECT_GT(std::count_if(lines.begin(), lines.end(),
                            [](std::string_view line) {
                                return std::any_of(line.begin(), line.end(), [](char c) { return c & 0x80; });
                            }),
              300);
    // A word in lower case and in upper case, as a line of its own.
    std::set<std::string_view> whole(lines.begin(), lines.end());
    const bool variants = std::any_of(lines.begin(), lines.end(), [&](std::string_view line) {
        if (line.size() < 2 || !std::all_of(line.begin(), line.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
            return false;
        std::string upper(line);
        std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
        return whole.count(upper) > 0;
    });
    EXPECT_TRUE(variants);
    EXPECT_GT(share_of_ties(lines, " \t"), 0.2);
}

TEST(LineGenerator, ASpecNeedsOneLimitAndATerminatorOfItsOwn) {
    EXPECT_THROW(generate_lines(spec_of(LineKind::words, std::nullopt, std::nullopt)), std::invalid_argument);
    EXPECT_THROW(generate_lines(spec_of(LineKind::words, 10, 1000)), std::invalid_argument);
    LineSpec spec = spec_of(LineKind::words, 10, std::nullopt);
    spec.terminator = ' ';
    EXPECT_THROW(generate_lines(spec), std::invalid_argument);
}
