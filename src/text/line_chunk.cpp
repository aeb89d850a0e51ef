// Chunks of lines: the inputs read into one growing buffer and cut at their terminators, and a
// chunk's lines sorted by their key prefixes on gpusort's engine, the ties settled on the host.
#include "src/text/line_chunk.hpp"

#include "gpusort/sort_memory.hpp"
#include "src/text/line_order.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <span>

namespace gpusort {

namespace {

// The buffer of a chunk starts at this size (or the inputs' size, where known) and doubles as needed.
constexpr std::size_t kFirstCapacity = std::size_t{1} << 20;
// The least read of an input (fewer bytes where the chunk's buffer is full).
constexpr std::size_t kMinRead = std::size_t{64} << 10;
// Chunks of fewer lines are sorted on the CPU: starting a GPU would take longer than the sort.
constexpr std::size_t kMinGpuLines = std::size_t{1} << 20;

// The bytes the inputs hold, where every one is a regular file.
std::optional<std::uint64_t> inputs_size(const std::vector<ByteSource*>& inputs) {
    std::uint64_t bytes = 0;
    for (const ByteSource* input : inputs) {
        if (!input->known_size()) return std::nullopt;
        bytes += *input->known_size() + 1;  // and a terminator that may be added
    }
    return bytes;
}

}  // namespace

ChunkReader::ChunkReader(std::vector<ByteSource*> inputs, const TextBudget& budget, char terminator)
    : inputs_(std::move(inputs)), chunk_bytes_(budget.chunk_bytes()), line_limit_(budget.line_limit()), terminator_(terminator) {
    const std::optional<std::uint64_t> known = inputs_size(inputs_);
    chunk_.capacity_ = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes_, std::max<std::uint64_t>(known.value_or(0), kFirstCapacity)));
    chunk_.text_.reset(static_cast<char*>(std::malloc(chunk_.capacity_)));
    if (!chunk_.text_) throw std::bad_alloc();
    if (known) chunk_.ends_.reserve(static_cast<std::size_t>(std::min(chunk_bytes_ / kLineCost + 1, *known)));
}

bool ChunkReader::fill() {
    const std::size_t given = chunk_.ends_.empty() ? 0 : chunk_.ends_.back();
    std::memmove(chunk_.text_.get(), chunk_.text_.get() + given, chunk_.size_ - given);
    chunk_.size_ -= given;
    scanned_ -= given;
    chunk_.ends_.clear();
    while (cut_lines() && read_more()) {
    }
    return !chunk_.ends_.empty();
}

bool ChunkReader::done() const {
    const std::size_t given = chunk_.ends_.empty() ? 0 : chunk_.ends_.back();
    return input_ == inputs_.size() && chunk_.size_ == given;
}

bool ChunkReader::cut_lines() {
    const char* text = chunk_.text_.get();
    std::vector<std::uint64_t>& ends = chunk_.ends_;
    while (scanned_ < chunk_.size_) {
        const void* found = std::memchr(text + scanned_, terminator_, chunk_.size_ - scanned_);
        if (!found) {
            scanned_ = chunk_.size_;
            break;
        }
        const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(found) - text) + 1;
        if (end + (ends.size() + 1) * kLineCost > chunk_bytes_) return false;
        const std::size_t length = end - 1 - (ends.empty() ? 0 : ends.back());
        if (length > line_limit_) line_too_long(inputs_[input_]->name(), line_number_ + 1, line_limit_);
        longest_ = std::max(longest_, length);
        ends.push_back(end);
        ++line_number_;
        scanned_ = end;
    }
    const std::size_t partial = chunk_.size_ - (ends.empty() ? 0 : ends.back());
    if (partial > line_limit_) line_too_long(inputs_[input_]->name(), line_number_ + 1, line_limit_);
    if (input_ended_) {  // all of it is cut into lines: on to the next input
        ++input_;
        input_ended_ = false;
        line_number_ = 0;
    }
    return true;
}

bool ChunkReader::read_more() {
    if (input_ == inputs_.size()) return false;
    const std::uint64_t held = chunk_.size_ + chunk_.ends_.size() * kLineCost;
    if (held >= chunk_bytes_) return false;
    if (chunk_.size_ == chunk_.capacity_) grow();
    // Bytes read but not taken into this chunk are held beyond its budget: a read takes no more
    // than could be all terminators (each line costing kLineCost), or kMinRead.
    const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(
        chunk_.capacity_ - chunk_.size_, std::max<std::uint64_t>(kMinRead, (chunk_bytes_ - held) / (1 + kLineCost))));
    const std::size_t n = inputs_[input_]->read(std::span<char>(chunk_.text_.get() + chunk_.size_, piece));
    chunk_.size_ += n;
    if (n == 0) {
        input_ended_ = true;
        // The bytes after the last line hold no terminator (all were cut): they are a last line.
        const std::size_t given = chunk_.ends_.empty() ? 0 : chunk_.ends_.back();
        if (chunk_.size_ > given) chunk_.text_.get()[chunk_.size_++] = terminator_;
    }
    return true;
}

void ChunkReader::grow() {
    const std::size_t capacity = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes_, 2 * std::uint64_t{chunk_.capacity_}));
    char* text = static_cast<char*>(std::realloc(chunk_.text_.get(), capacity));
    if (!text) throw std::bad_alloc();
    chunk_.text_.release();
    chunk_.text_.reset(text);
    chunk_.capacity_ = capacity;
}

namespace {

// Sorts the entries by their prefixes with sort_memory(): records of 32 bytes whose key is the
// prefix's bytes in memcmp order; stable, so equal prefixes keep the lines' order.
void sort_entries(std::vector<LineEntry>& entries, const ChunkSortOptions& options) {
    const std::span<LineEntry> all(entries);
    MemorySort sort;
    sort.keys = std::as_bytes(all);
    sort.records = KeySpec{sizeof(LineEntry), {KeyField{.offset = 0, .is_bytes = true, .length = kPrefixBytes}}};
    sort.keys_output = std::as_writable_bytes(all);
    MemoryOptions memory;
    memory.backend = entries.size() < kMinGpuLines ? Backend::cpu : Backend::automatic;
    memory.threads = options.threads;
    // Twice what kLineCost counts for the sort (the entry and the engine's own), so that the
    // entries are sorted as one chunk, never spilled.
    memory.memory_bytes = (std::uint64_t{1} << 20) + entries.size() * (kLineCost - 8) * 2;
    sort_memory(sort, memory);
}

// Groups of at least this many lines whose first keys are equal are sorted again by the prefix
// of their next key, rather than by comparing lines.
constexpr std::size_t kMinPrefixedGroup = 64;

// The order from each key on, for groups of lines whose earlier keys are equal: from[i] is the
// order without the first i keys (from[0] the whole order, from[keys] the last resort alone);
// only[i] is key i alone.
struct KeyLevels {
    explicit KeyLevels(const TextKeys& keys) : from(keys.keys.size() + 1, keys), only(keys.keys.size(), keys) {
        for (std::size_t i = 0; i < keys.keys.size(); ++i) {
            from[i + 1].keys.erase(from[i + 1].keys.begin(), from[i + 1].keys.begin() + static_cast<std::ptrdiff_t>(i + 1));
            only[i].keys = {keys.keys[i]};
        }
    }
    std::vector<TextKeys> from;
    std::vector<TextKeys> only;
};

void settle_ties(std::span<LineEntry> entries, const LineChunk& chunk, const KeyLevels& levels, std::size_t level);

// Entries with equal prefixes compare by line number: the order of input.
bool before_by_prefix(const LineEntry& a, const LineEntry& b) {
    const int order = std::memcmp(a.prefix.data(), b.prefix.data(), kPrefixBytes);
    return order != 0 ? order < 0 : a.line < b.line;
}

// A group whose lines have equal keys before `level` sorted by the prefix of key `level` (after
// the last key: of the whole line), its groups of equal prefixes then settled.
void sort_by_prefix(std::span<LineEntry> group, const LineChunk& chunk, const KeyLevels& levels, std::size_t level) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, group.size(), 4096), [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) key_prefix(chunk.line(group[i].line), levels.from[level], group[i].prefix);
    });
    tbb::parallel_sort(group.begin(), group.end(), before_by_prefix);
    settle_ties(group, chunk, levels, level);
}

// Puts a group of entries with equal prefixes (of key `level`) in the order of compare_lines,
// ties by line number (the order of input), so that the whole order is stable. Where key `level`
// is the same in every line of the group (found in one pass), the next key decides, or after the
// last key the last-resort comparison (the whole line's prefix), or with -s and -u nothing: a
// large group is sorted again by that prefix.
void settle_group(std::span<LineEntry> group, const LineChunk& chunk, const KeyLevels& levels, std::size_t level) {
    const std::string_view first = chunk.line(group.front().line);
    const bool same_key = level < levels.only.size() && std::all_of(group.begin() + 1, group.end(), [&](const LineEntry& entry) {
        return equal_keys(first, chunk.line(entry.line), levels.only[level]);
    });
    if (same_key) {
        ++level;
        const TextKeys& rest = levels.from[level];
        if (rest.keys.empty() && (rest.stable || rest.unique)) return;
        if (group.size() >= kMinPrefixedGroup) return sort_by_prefix(group, chunk, levels, level);
    }
    tbb::parallel_sort(group.begin(), group.end(), [&](const LineEntry& a, const LineEntry& b) {
        const int order = compare_lines(chunk.line(a.line), chunk.line(b.line), levels.from[level]);
        return order != 0 ? order < 0 : a.line < b.line;
    });
}

// Settles every group of equal prefixes. The groups are all found first, while no prefix changes,
// then settled in parallel: settling a large group rewrites its entries' prefixes (it is sorted
// again by its next key's), which a search for another group's bounds must not see (it once did,
// and cut a group in two that were then sorted at once).
void settle_ties(std::span<LineEntry> entries, const LineChunk& chunk, const KeyLevels& levels, std::size_t level) {
    constexpr std::size_t kBlock = std::size_t{1} << 14;
    const std::size_t n = entries.size();
    // The groups of two entries or more, [first, last), each block listing those that begin in it.
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> found((n + kBlock - 1) / kBlock);
    tbb::parallel_for(std::size_t{0}, found.size(), [&](std::size_t b) {
        const std::size_t end = std::min(n, (b + 1) * kBlock);
        std::size_t first = b * kBlock;
        while (first > 0 && first < end && entries[first].prefix == entries[first - 1].prefix) ++first;
        while (first < end) {
            std::size_t last = first + 1;
            while (last < n && entries[last].prefix == entries[first].prefix) ++last;
            if (last - first > 1) found[b].emplace_back(first, last);
            first = last;
        }
    });
    std::vector<std::pair<std::size_t, std::size_t>> groups;
    for (const auto& block : found) groups.insert(groups.end(), block.begin(), block.end());
    tbb::parallel_for(std::size_t{0}, groups.size(), [&](std::size_t g) {
        const auto [first, last] = groups[g];
        settle_group(entries.subspan(first, last - first), chunk, levels, level);
    });
}

}  // namespace

std::vector<LineEntry> sort_chunk(const LineChunk& chunk, const TextKeys& keys, const ChunkSortOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<LineEntry> entries(chunk.lines());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, entries.size(), 4096), [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            key_prefix(chunk.line(i), keys, entries[i].prefix);
            entries[i].line = i;
        }
    });
    sort_entries(entries, options);
    const auto sorted = std::chrono::steady_clock::now();
    settle_ties(entries, chunk, KeyLevels(keys), 0);
    if (options.times) {
        options.times->sort += std::chrono::duration<double>(sorted - start).count();
        options.times->ties += std::chrono::duration<double>(std::chrono::steady_clock::now() - sorted).count();
    }
    return entries;
}

}  // namespace gpusort
