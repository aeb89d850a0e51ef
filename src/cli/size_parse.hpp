// Sizes on the command line: a number with an optional binary suffix K, M, G or T
// ("512M", "8G", "1.5G", "4096"); also accepts KB/KiB and the like.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpusort {

// The bytes `text` gives, rounded down ("0.5K" is 512, "1.3" is 1); nullopt when it is not a size.
std::optional<std::uint64_t> parse_size(std::string_view text);
// The same where the bytes must be whole: "1.5K" is 1536, "1.3" is refused (nullopt).
std::optional<std::uint64_t> parse_whole_size(std::string_view text);

}  // namespace gpusort
