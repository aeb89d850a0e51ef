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

// Writes out.size() bytes such that memcmp order of the prefixes never contradicts compare_lines:
// compare_lines(a, b) < 0 implies prefix(a) <= prefix(b), and lines whose keys compare equal get
// equal prefixes. The prefix encodes the first key only (with no key, the whole line): its bytes
// after b and f, zero-padded, or for n an order-preserving form of the number (sign, count of
// integer digits, significant digits), all complemented for r. Lines it cannot tell apart (to be
// settled by compare_lines): first keys that agree in their first out.size() bytes (for n, in
// their sign, magnitude and about out.size() - 3 leading significant digits); a key that is a
// prefix of the other when the rest of the other is NUL bytes; and all later keys and the
// last-resort comparison. Allocates nothing.
void key_prefix(std::string_view line, const TextKeys& keys, std::span<std::byte> out);

}  // namespace gpusort
