// Sizes on the command line: a number with an optional binary suffix K, M, G or T
// ("512M", "8G", "1.5G", "4096"); also accepts KB/KiB and the like.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpusort {

std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace gpusort
