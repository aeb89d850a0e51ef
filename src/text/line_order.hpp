// The order of text lines exactly as GNU sort gives it in the C locale (LC_ALL=C sort), for the
// keys of text_keys.hpp, and the fixed-size key prefix whose memcmp order the GPU sorts by.
//
// Lines are passed without their terminator. Blanks are space, tab and newline (GNU counts a
// newline as a blank, which matters only with -z). Without -t a field is a run of blanks followed
// by a run of non-blanks (its leading blanks belong to it); with -t SEP each SEP ends a field.
#pragma once

#include "src/text/text_keys.hpp"

#include <cstddef>
#include <span>
#include <string_view>

namespace gpusort {

// <0, 0 or >0 as a sorts before, with or after b: the keys in turn (each by bytes, folded, or by
// numeric value, reversed by its r), then, unless -s or -u, the whole lines as unsigned bytes (a
// prefix first), reversed by the global -r.
int compare_lines(std::string_view a, std::string_view b, const TextKeys& keys);

// Whether a and b are duplicates for -u: their keys compare equal (with no key, the lines are
// equal).
bool equal_keys(std::string_view a, std::string_view b, const TextKeys& keys);

// A line's sort code is a byte string whose memcmp order is the order of compare_lines (a code
// that is a prefix of another sorts first): each key in turn in a self-delimiting form (its bytes
// after b and f, a 0 byte escaped as 0 0xff, ended by 0 0; for n the number's sign, count of
// integer digits and significant digits, ended by a 0 byte, all complemented for a negative
// number), complemented for the key's r; then, unless -s or -u with keys, the whole line's bytes
// in the same form, complemented for the global -r. Lines whose keys compare equal (and, but for
// -s and -u, whose lines are equal) have equal codes.
//
// key_prefix writes bytes [skip, skip + out.size()) of the line's code into `out`, zeros after its
// end, and returns whether the code ends within them; false: it was cut short, and lines with
// equal windows are then told apart by the bytes after them (or by compare_lines). So
// compare_lines(a, b) < 0 implies prefix(a) <= prefix(b) for windows after equal bytes, and equal
// windows of codes that both end in them mean lines that compare equal. Allocates nothing.
//
// `padded`: the kLinePadding bytes after the line's end may be read (never written), whatever
// they hold. The first window of a code (skip 0, of kPaddedWindow bytes) is then made
// faster: the line's bytes are read 16 and 32 at a time, whatever the lengths of its parts.
inline constexpr std::size_t kLinePadding = 64;
inline constexpr std::size_t kPaddedWindow = 32;
bool key_prefix(std::string_view line, const TextKeys& keys, std::span<std::byte> out, std::size_t skip = 0, bool padded = false);

}  // namespace gpusort
