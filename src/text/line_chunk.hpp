// The in-memory step of gpusort-sort: the inputs' lines read into chunks that fit the budget
// (ChunkReader), and a chunk's lines put in order (LineSorter): an entry per line, a window of
// the line's sort code and where the line lies, sorted (on the GPU where one is usable, else
// IPS4o on the CPU; stable), then the few groups of equal windows whose codes go on
// past them settled by their next window or by compare_lines.
#pragma once

#include "io/host_buffer.hpp"
#include "src/text/line_input.hpp"
#include "src/text/text_budget.hpp"
#include "src/text/text_keys.hpp"
#include "src/text/uninitialized.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort {

class ChunkSorter;
class SortThreadPool;

// Lines held in memory: their text, each with its terminator, back to back. A line is named by
// its number (in the chunk) or by its place: where it starts in the text and its length, in one
// word that an entry carries, so that a sorted line is found without its number's lookup.
class LineChunk {
public:
    // A chunk's text is kept below kMaxBytes, so that a place fits 63 bits.
    static constexpr unsigned kLengthBits = 20;
    static constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << (63 - kLengthBits);

    std::size_t lines() const { return ends_.size(); }
    // Bytes of its lines, each with its terminator.
    std::uint64_t bytes() const { return ends_.empty() ? 0 : ends_.back(); }
    // Line i without its terminator.
    std::string_view line(std::size_t i) const {
        const std::uint64_t begin = i == 0 ? 0 : ends_[i - 1];
        return std::string_view(text() + begin, ends_[i] - begin - 1);
    }
    // The place of line i: its start << kLengthBits | its length, kLongLine for kLongLine bytes or more.
    std::uint64_t place(std::size_t i) const {
        const std::string_view text = line(i);
        return static_cast<std::uint64_t>(text.data() - this->text()) << kLengthBits | std::min<std::uint64_t>(text.size(), kLongLine);
    }
    // The line at `place` (as place() gave it), without its terminator.
    std::string_view line_at(std::uint64_t place) const {
        const std::uint64_t begin = place >> kLengthBits;
        const std::uint64_t length = place & kLongLine;
        return std::string_view(text() + begin, length < kLongLine ? length : long_line_length(begin));
    }
    // The text of its lines, each with its terminator.
    std::string_view text_view() const { return std::string_view(text(), bytes()); }
    // Starts fetching the line at `place`, up to its first 128 bytes (a hint).
    void prefetch_text(std::uint64_t place) const {
        const char* start = text() + (place >> kLengthBits);
        __builtin_prefetch(start);
        __builtin_prefetch(start + std::min<std::uint64_t>(place & kLongLine, 127));  // the same cache line for most short lines
    }

private:
    friend class ChunkReader;
    static constexpr std::uint64_t kLongLine = (std::uint64_t{1} << kLengthBits) - 1;
    char* text() const { return mapped_ ? mapped_->data() : reinterpret_cast<char*>(text_.data()); }
    // The length of the line that starts at `begin`, found among the ends.
    std::size_t long_line_length(std::uint64_t begin) const;

    io::HostBuffer text_;               // its size is the chunk's capacity
    std::unique_ptr<MappedInput> mapped_;  // in place of text_: the only input, mapped whole
    std::size_t size_ = 0;              // bytes held: the lines, then the start of the next ones
    UninitializedVector<std::uint64_t> ends_;  // the offset just after each line's terminator
};

// Cuts the inputs, in turn, into chunks of whole lines whose text and kLineCost per line fit the
// budget's chunk_bytes(). A last line without its terminator is given one, at the end of each input.
// Large reads are cut into lines in parallel, by blocks. A single input that is a regular file in
// the page cache is mapped (MappedInput) rather than read: where all of its lines fit one chunk,
// the map is the chunk's text, else the map is read from as the input.
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
    // The first fill, from the only input mapped; false where it cannot be mapped, or does not fit
    // one chunk (the chunk is then left empty, and the map read from as the input).
    bool fill_mapped();
    // Cuts the bytes read into lines; false when the chunk is full.
    bool cut_lines();
    // Reads more of the current input (moving on at its end); false when the chunk is full.
    bool read_more();
    void grow();
    // Of the lines found after the first `held` of the chunk's ends, keeps those that fit the
    // chunk, checking their lengths; returns how many.
    std::size_t take_lines(std::size_t held);

    std::vector<ByteSource*> inputs_;
    std::unique_ptr<MappedSource> mapped_source_;  // the only input, mapped but read as a source
    bool filled_ = false;            // fill() has been called
    std::size_t input_ = 0;          // the input being read
    bool input_ended_ = false;       // ... has been read to its end
    std::uint64_t line_number_ = 0;  // lines of that input cut so far
    std::uint64_t chunk_bytes_;
    std::size_t read_bytes_;
    std::size_t line_limit_;
    char terminator_;
    LineChunk chunk_;
    std::size_t scanned_ = 0;        // bytes looked at for terminators
    std::size_t longest_ = 0;
};

// A line's place in the sort: a window of its sort code (line_order.hpp) as big-endian words, so
// that the words' order is the bytes' memcmp order, then where it lies in the chunk (its place,
// whose order is the order of input) and whether its code was cut short by the window.
struct LineEntry {
    std::array<std::uint64_t, kPrefixBytes / 8> prefix;
    std::uint64_t tag;  // the line's place (LineChunk::place) << 1, | 1 when its code goes on past the window

    std::uint64_t place() const { return tag >> 1; }
    bool cut() const { return (tag & 1) != 0; }
    // By prefix, then in the order of input.
    friend bool operator<(const LineEntry& a, const LineEntry& b) {
        for (std::size_t w = 0; w < a.prefix.size(); ++w)
            if (a.prefix[w] != b.prefix[w]) return a.prefix[w] < b.prefix[w];
        return a.tag < b.tag;
    }
    bool same_prefix(const LineEntry& other) const {
        return ((prefix[0] ^ other.prefix[0]) | (prefix[1] ^ other.prefix[1]) | (prefix[2] ^ other.prefix[2]) |
                (prefix[3] ^ other.prefix[3])) == 0;
    }
};
static_assert(sizeof(LineEntry) == 40 && kPrefixBytes == 32);

// Seconds a chunk's sort took, by step: its entries made, sorted, and the ties settled.
struct ChunkSortTimes {
    double prefixes = 0;
    double sort = 0;
    double ties = 0;
};

// Puts chunks' lines in order, one chunk after another, in entries kept from chunk to chunk: an
// entry per line with the first window of its sort code, sorted on the GPU where one is usable
// (chunks of a million lines or more), else in place with IPS4o on the CPU; then each group of
// equal windows where a code was cut short put in order by the codes' next window (a large
// group), or by compare_lines.
//
// The GPU's sorter is made once and kept, its memory set up for the largest chunk so far: each
// set-up of device memory and pinned buffers takes about 0.1 s. Entries are made straight into
// its pinned buffers as it copies them to the device.
class LineSorter {
public:
    // `expected_bytes`: the input's size where it is known up front (0 where not). From
    // kGpuWarmUpBytes on, the GPU is made ready on a thread of its own (its driver started, which
    // takes about 0.3 s) while the first chunk is read.
    LineSorter(const TextKeys& keys, unsigned threads, std::uint64_t expected_bytes = 0);
    ~LineSorter();
    static constexpr std::uint64_t kGpuWarmUpBytes = std::uint64_t{64} << 20;

    // The chunk's entries in the order of compare_lines, stable; valid until the next sort. Adds
    // the steps' seconds to `times` (optional).
    std::span<const LineEntry> sort(const LineChunk& chunk, ChunkSortTimes* times = nullptr);

private:
    // Asks for a GPU once: gpu_ is left null where none is usable.
    void make_gpu_sorter();
    // The GPU's sorter ready for a chunk of `lines` lines; null without a GPU, or where the
    // device cannot hold them at once.
    ChunkSorter* gpu_sorter(std::size_t lines);
    void sort_on_gpu(ChunkSorter& gpu, const LineChunk& chunk, std::span<LineEntry> entries, ChunkSortTimes& times);
    void sort_entries(std::span<LineEntry> entries, bool in_parts_on_gpu);

    const TextKeys* keys_;
    unsigned threads_;
    std::unique_ptr<SortThreadPool> pool_;
    UninitializedVector<LineEntry> entries_;
    bool gpu_asked_ = false;
    std::unique_ptr<ChunkSorter> gpu_;
    std::uint64_t gpu_capacity_ = 0;  // the most lines the device holds at once
    std::uint64_t gpu_lines_ = 0;     // the lines its memory is set up for
    std::future<void> gpu_ready_;     // the warm-up (makes gpu_); waited for when the sorter goes
};

}  // namespace gpusort
