// gpusort-check --lines: FILE's text lines in the order that the same key options give
// gpusort-file --lines (LC_ALL=C sort's order), and with --input, the lines of ORIGINAL (count,
// bytes and order-independent checksum).
#pragma once

#include "src/text/text_keys.hpp"

#include <optional>
#include <string>

namespace gpusort::lines {

// Checks FILE (decompressed by its name's ending; "-" is stdin) by `keys`, and against ORIGINAL
// where it is given; prints the verdict (the first line out of order, or what differs) and
// returns the exit status: 0 or 1. Throws on a file that cannot be read.
int check(const std::string& file, const std::optional<std::string>& original, const TextKeys& keys);

}  // namespace gpusort::lines
