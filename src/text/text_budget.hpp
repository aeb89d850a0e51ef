// How gpusort-sort shares its memory budget (-S) out: the chunks of lines with their entries, the
// buffer of the output (or of a run being written), the buffers the merge reads runs through, and
// the longest line it accepts. Every size that the budget bounds is decided here.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gpusort {

// The least budget: a smaller -S is raised to it.
inline constexpr std::uint64_t kMinTextBudget = std::uint64_t{1} << 20;
// The longest line accepted whatever the budget (bytes, without its terminator).
inline constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;
// Bytes of a line's sort code that the engine sorts by (the widest key sort_memory() takes); with
// where the line lies, an entry is 40 bytes.
inline constexpr std::size_t kPrefixBytes = 32;
// Memory a line of a chunk takes besides its text: its end offset (8 bytes), its entry (40) and
// room for the sort's own (at most 88): what sort_memory() takes per entry where the GPU sorts a
// chunk in parts (the entry copied, a tag, a share of the gather buffer); the GPU's pinned staging
// buffers take a 16th of it (LineSorter); IPS4o sorts in place.
inline constexpr std::size_t kLineCost = 8 + 40 + 88;
// Bounds of each merge source's read buffer, and of the fan-in.
inline constexpr std::size_t kMinReadBuffer = std::size_t{64} << 10;
inline constexpr std::size_t kMaxReadBuffer = std::size_t{4} << 20;
inline constexpr std::size_t kMaxFanIn = 128;

struct TextBudget {
    std::uint64_t total = kMinTextBudget;

    explicit TextBudget(std::uint64_t bytes) : total(std::max(bytes, kMinTextBudget)) {}

    // The buffer lines are written through (the output, or a run): a 32nd of the budget, 64 KiB to 8 MiB.
    std::size_t write_buffer() const {
        return static_cast<std::size_t>(std::clamp<std::uint64_t>(total / 32, std::uint64_t{64} << 10, std::uint64_t{8} << 20));
    }
    // The most one read of the inputs takes: a 32nd of what the write buffer leaves, at least 64
    // KiB. Bytes read past a full chunk wait for the next one, so the chunk leaves room for them.
    std::size_t read_bytes() const {
        return static_cast<std::size_t>(std::max<std::uint64_t>((total - write_buffer()) / 32, std::uint64_t{64} << 10));
    }
    // A chunk: its text plus kLineCost per line, beside the write buffer and one read.
    std::uint64_t chunk_bytes() const { return total - write_buffer() - read_bytes(); }
    // The longest line accepted: a quarter of the budget, at most kMaxLineBytes.
    std::size_t line_limit() const {
        return static_cast<std::size_t>(std::min<std::uint64_t>(kMaxLineBytes, total / 4));
    }
    // How many sources one merge reads at once when each needs a buffer of `least` bytes (the
    // longest line of the runs and its terminator, or more): at least 2.
    std::size_t fan_in(std::size_t least) const {
        const std::uint64_t each = std::max(least, kMinReadBuffer);
        return static_cast<std::size_t>(std::clamp<std::uint64_t>(chunk_bytes() / each, 2, kMaxFanIn));
    }
    // The read buffer of each of `sources` merged at once.
    std::size_t read_buffer(std::size_t sources) const {
        return static_cast<std::size_t>(
            std::clamp<std::uint64_t>(chunk_bytes() / std::max<std::size_t>(sources, 1), kMinReadBuffer, kMaxReadBuffer));
    }
};

}  // namespace gpusort
