// The in-memory step of gpusort-sort: the inputs' lines read into chunks that fit the budget
// (ChunkReader), and a chunk's lines put in order (sort_chunk): an entry per line, the line's key
// prefix and its number, sorted by sort_memory() (on the GPU where one is usable, else IPS4o on
// the CPU; stable), then each group of lines whose prefixes are equal settled by compare_lines.
#pragma once

#include "src/text/line_input.hpp"
#include "src/text/text_budget.hpp"
#include "src/text/text_keys.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort {

// Lines held in memory: their text, each with its terminator, back to back.
class LineChunk {
public:
    std::size_t lines() const { return ends_.size(); }
    // Bytes of its lines, each with its terminator.
    std::uint64_t bytes() const { return ends_.empty() ? 0 : ends_.back(); }
    // Line i without its terminator.
    std::string_view line(std::size_t i) const {
        const std::uint64_t begin = i == 0 ? 0 : ends_[i - 1];
        return std::string_view(text_.get() + begin, ends_[i] - begin - 1);
    }

private:
    friend class ChunkReader;
    struct Free {
        void operator()(char* p) const { std::free(p); }
    };
    std::unique_ptr<char, Free> text_;
    std::size_t capacity_ = 0;
    std::size_t size_ = 0;              // bytes held: the lines, then the start of the next ones
    std::vector<std::uint64_t> ends_;  // the offset just after each line's terminator
};

// Cuts the inputs, in turn, into chunks of whole lines whose text and kLineCost per line fit the
// budget's chunk_bytes(). A last line without its terminator is given one, at the end of each input.
class ChunkReader {
public:
    ChunkReader(std::vector<ByteSource*> inputs, const TextBudget& budget, char terminator);

    // Fills the chunk with the next lines: false when none is left.
    bool fill();
    const LineChunk& chunk() const { return chunk_; }
    // Whether every line has been given in a chunk.
    bool done() const;
    std::size_t longest_line() const { return longest_; }

private:
    // Cuts the bytes read into lines; false when the chunk is full.
    bool cut_lines();
    // Reads more of the current input (moving on at its end); false when the chunk is full.
    bool read_more();
    void grow();

    std::vector<ByteSource*> inputs_;
    std::size_t input_ = 0;          // the input being read
    bool input_ended_ = false;       // ... has been read to its end
    std::uint64_t line_number_ = 0;  // lines of that input cut so far
    std::uint64_t chunk_bytes_;
    std::size_t line_limit_;
    char terminator_;
    LineChunk chunk_;
    std::size_t scanned_ = 0;        // bytes looked at for terminators
    std::size_t longest_ = 0;
};

// A line's place in the sort: its key prefix (memcmp order), then its number in the chunk.
struct LineEntry {
    std::array<std::byte, kPrefixBytes> prefix;
    std::uint64_t line;
};
static_assert(sizeof(LineEntry) == 32);

// Seconds a chunk's sort took, by step: its entries made and sorted, and the ties settled.
struct ChunkSortTimes {
    double sort = 0;
    double ties = 0;
};

struct ChunkSortOptions {
    unsigned threads = 1;
    ChunkSortTimes* times = nullptr;  // where the steps' seconds are added (optional)
};

// The chunk's entries in the order of compare_lines, stable.
std::vector<LineEntry> sort_chunk(const LineChunk& chunk, const TextKeys& keys, const ChunkSortOptions& options);

}  // namespace gpusort
