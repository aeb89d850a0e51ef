// LineSpec and generate_lines(): the text lines of gpusort-gen --lines KIND, test data for line
// sorters (gpusort-sort, LC_ALL=C sort). The lines are made in blocks of about 1 MiB, each block
// a function of (seed, block number) alone, so the same spec gives the same bytes with any number
// of threads; a smaller limit gives a prefix of the lines of a larger one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpusort::gen {

// fixed: 100-byte records, gensort's text form: a 10-character printable key (a quarter of the
//   keys from 256 repeated ones), two blanks, 32 hex digits, two blanks, 53 pattern characters;
// words: 1 to 6 words of 1-20 letters (lower, upper or capitalised) from a vocabulary of 4096
//   words drawn with zipf-like frequencies, so words and whole lines repeat;
// log: "2026-11-28T23:59:59.123456Z INFO  [component] words id=123 took=3.25ms": six sources with
//   their own clocks interleaved (timestamps out of order, a quarter repeating the one before),
//   levels DEBUG INFO WARN ERROR, numbers of varying length and sign;
// csv: id,name,city,amount,score without a header: integers (a third below 1000, some negative),
//   names and cities with blanks, decimals such as -12.50 or 1234.005, an empty field now and then;
// long_lines ("long"): three lines in four a few words, a fifth up to 64 KiB, one in 40 from 64 KiB
//   to 1 MiB, and one in 40 of 256 KiB to 1 MiB that all begin with the same text and differ
//   near their end (about 32 lines and one or two of 256 KiB or more per MiB);
// mixed: empty lines, leading blanks and tabs, numbers with signs, decimals and leading zeros,
//   case variants of the same words, tab-separated fields, UTF-8 words and punctuation.
// Every kind has many lines that are equal in their first field and differ after it. No line
// holds '\n' or '\0'.
enum class LineKind { fixed, words, log, csv, long_lines, mixed };

inline constexpr LineKind kAllLineKinds[] = {LineKind::fixed, LineKind::words,      LineKind::log,
                                             LineKind::csv,   LineKind::long_lines, LineKind::mixed};

// "fixed", "words", "log", "csv", "long", "mixed".
const char* line_kind_name(LineKind kind);
std::optional<LineKind> parse_line_kind(std::string_view name);

// The longest line of any kind, its terminator included.
inline constexpr std::size_t kMaxLineBytes = (std::size_t{1} << 20) + 64;

struct LineSpec {
    LineKind kind = LineKind::fixed;
    std::uint64_t seed = 1;
    // Exactly one limit: `count` lines, or as many whole lines (terminators included) as `size`
    // bytes hold.
    std::optional<std::uint64_t> count;
    std::optional<std::uint64_t> size;
    char terminator = '\n';         // '\0' for --zero-terminated
    bool final_terminator = true;   // false: the last line has none (--no-final-newline)

    // Throws std::invalid_argument when not exactly one limit is set or the terminator is neither
    // '\n' nor '\0'.
    void validate() const;
};

// The output, piece by piece: `pieces` follow each other from byte `offset` of the output.
using LinePut = std::function<void(std::uint64_t offset, std::span<const std::span<const std::byte>> pieces)>;

// Makes the lines in batches of blocks, each batch by TBB threads, and hands each batch to `put`
// in order. Throws std::invalid_argument as validate() does, and whatever `put` throws.
void generate_lines(const LineSpec& spec, const LinePut& put);

// All the lines, in memory.
std::string generate_lines(const LineSpec& spec);

}  // namespace gpusort::gen
