// Unsigned numbers in arguments as GNU coreutils reads them (its xstrtoumax): spaces and a '+'
// allowed before the digits, a value too large saturated and marked, then an optional suffix
// letter out of a given set that multiplies by a power of 1024. What sort's -k, -S and --parallel
// accept and refuse follows from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpusort {

struct GnuNumber {
    std::uintmax_t value = 0;       // saturated at UINTMAX_MAX when too large
    bool invalid = false;           // no number at all (or a '-')
    bool overflow = false;          // too large, with its suffix
    bool invalid_suffix = false;    // something follows the number (and its valid suffix)
    std::size_t end = 0;            // where reading stopped: past the digits and the suffix letter read
};

// Reads `text` from its start. `suffixes` are the letters allowed after the digits ("" for none),
// each of k K m M g G t T P E Z Y multiplying by its power of 1024; a suffix letter alone counts as
// 1 of its unit.
GnuNumber read_gnu_number(std::string_view text, std::string_view suffixes);

}  // namespace gpusort
