// The ordering of text lines that GNU sort's options describe (in the C locale): the keys
// (-k POS1[,POS2] with their modifiers b n f r), the global modifiers (-b -n -f -r), the field
// separator (-t) and the flags that change how lines compare and end (-s, -u, -z).
// parse_text_key() reads one -k argument by GNU's rules and messages; make_text_keys() turns what
// the command line gave into the keys compared, with GNU's inheritance of the global modifiers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort {

// The ordering modifiers of one key, or the global ones of the command line.
struct KeyModifiers {
    bool skip_start_blanks = false;  // b on POS1 (-b: both): blanks before the start are skipped
    bool skip_end_blanks = false;    // b on POS2 (-b: both): blanks before POS2's characters are skipped
    bool numeric = false;            // n: by numeric value (optional '-', digits, '.', digits)
    bool fold = false;               // f: lower case folded to upper case
    bool reverse = false;            // r: the key's order reversed

    // Whether a modifier other than r is set. A key with none of these and no r of its own takes
    // all of the global modifiers, as GNU sort does.
    bool any_but_reverse() const { return skip_start_blanks || skip_end_blanks || numeric || fold; }
    bool operator==(const KeyModifiers&) const = default;
};

// One key, as -k POS1[,POS2] gives it, in 0-based positions.
struct TextKey {
    // end_field of a key that runs to the end of the line (no POS2).
    static constexpr std::size_t kLineEnd = SIZE_MAX;

    std::size_t start_field = 0;        // POS1's field - 1
    std::size_t start_char = 0;         // POS1's character - 1 (characters skipped in that field)
    std::size_t end_field = kLineEnd;   // POS2's field - 1, or kLineEnd
    std::size_t end_char = 0;           // POS2's character (the last one in the key); 0: the whole field
    KeyModifiers modifiers;

    bool operator==(const TextKey&) const = default;
};

// One -k argument, F[.C][OPTS][,F[.C][OPTS]], by GNU's rules: fields and characters count from 1,
// a character 0 in POS2 means the end of the field, numbers too large mean "beyond any line", OPTS
// are letters of "bnfr" ('b' applies to the position it follows). Throws std::invalid_argument
// with GNU's message ("field number is zero: invalid field specification '0'"); a modifier that
// GNU knows but this sort does not (d g h i M R V) is named in a message of its own.
TextKey parse_text_key(std::string_view spec);

// The byte of a field separator as -t gives it: one byte, or "\0" for NUL; nullopt for anything else.
std::optional<char> separator_byte(std::string_view value);

// What the command line says about the order, before the global modifiers are given to the keys.
struct TextOptions {
    std::vector<TextKey> keys;        // -k, in order
    KeyModifiers global;              // -b -n -f -r
    std::optional<char> separator;    // -t SEP; none: fields are separated by runs of blanks
    bool stable = false;              // -s: no last-resort comparison
    bool unique = false;              // -u
    bool zero_terminated = false;     // -z
};

// The order as compared (line_order.hpp).
struct TextKeys {
    std::vector<TextKey> keys;        // compared in turn; none: only the last-resort comparison
    bool reverse = false;             // -r: reverses the last-resort comparison of whole lines
    std::optional<char> separator;    // -t SEP
    bool stable = false;              // -s
    bool unique = false;              // -u: lines whose keys compare equal are duplicates
    bool zero_terminated = false;     // -z

    // The byte that ends each line: '\n', or '\0' with -z.
    char line_end() const { return zero_terminated ? '\0' : '\n'; }
};

// GNU's inheritance: each key with no modifier of its own (r included) takes the global ones;
// with no -k at all, the global modifiers other than r make one key of the whole line.
TextKeys make_text_keys(const TextOptions& options);

// `text` in single quotes as GNU's messages quote it in the C locale: a quote or backslash
// escaped with a backslash, control and non-ASCII bytes as C escapes ("\t", "\303").
std::string quote_gnu(std::string_view text);

}  // namespace gpusort
