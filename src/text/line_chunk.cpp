// Chunks of lines: the inputs read into one growing buffer and cut at their terminators, and a
// chunk's lines sorted by their key prefixes on gpusort's engine, the ties settled on the host.
#include "src/text/line_chunk.hpp"

#include "gpusort/sort_memory.hpp"
#include "src/sorters/make_chunk_sorter.hpp"
#include "src/sorters/sort_thread_pool.hpp"
#include "src/text/line_order.hpp"

#include <ips4o.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <chrono>
#include <cstring>
#include <new>
#include <span>
#include <utility>

namespace gpusort {

namespace {

// The buffer of a chunk starts at this size (or the inputs' size, where known) and doubles as needed.
constexpr std::size_t kFirstCapacity = std::size_t{1} << 20;
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
    : inputs_(std::move(inputs)), chunk_bytes_(std::min(budget.chunk_bytes(), LineChunk::kMaxBytes / 2)), read_bytes_(budget.read_bytes()),
      line_limit_(budget.line_limit()),
      terminator_(terminator) {
    const std::optional<std::uint64_t> known = inputs_size(inputs_);
    chunk_.text_ = io::HostBuffer(static_cast<std::size_t>(
        std::min<std::uint64_t>(chunk_bytes_ + read_bytes_, std::max<std::uint64_t>(known.value_or(0), kFirstCapacity))));
    if (known) chunk_.ends_.reserve(static_cast<std::size_t>(std::min(chunk_bytes_ / kLineCost + 1, *known)));
}

std::size_t LineChunk::long_line_length(std::uint64_t begin) const {
    const auto next = std::upper_bound(ends_.begin(), ends_.end(), begin);  // the end of the line that starts at `begin`
    return static_cast<std::size_t>(*next - begin - 1);
}

bool ChunkReader::fill() {
    if (!std::exchange(filled_, true) && fill_mapped()) return true;
    const std::size_t given = chunk_.ends_.empty() ? 0 : chunk_.ends_.back();
    std::memmove(chunk_.text(), chunk_.text() + given, chunk_.size_ - given);
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

namespace {

// Text is searched for terminators by blocks of this size, in parallel.
constexpr std::size_t kCutBlock = std::size_t{1} << 20;

// Calls found(p) for each p in [from, to) where *p is `byte`, in order: 64 bytes compared at a time
// where SSE2 is, so that short lines cost no call each.
template <class Found>
void for_each_byte(const char* from, const char* to, char byte, Found&& found) {
    const char* at = from;
#if defined(__SSE2__)
    const __m128i wanted = _mm_set1_epi8(byte);
    for (; at + 64 <= to; at += 64) {
        std::uint64_t mask = 0;
        for (int lane = 0; lane < 4; ++lane) {
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 16 * lane));
            const auto hits = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, wanted)));
            mask |= std::uint64_t{hits} << (16 * lane);
        }
        for (; mask != 0; mask &= mask - 1) found(at + std::countr_zero(mask));
    }
#endif
    for (; at < to; ++at)
        if (*at == byte) found(at);
}

// Appends to `ends` the offset just after each terminator in text[begin, end), in order: each
// block's offsets found in parallel, then put in place. The text is read once (it is not in the
// cache any more when a second pass would come to it).
void find_terminators(const char* text, std::size_t begin, std::size_t end, char terminator, UninitializedVector<std::uint64_t>& ends) {
    const std::size_t blocks = (end - begin + kCutBlock - 1) / kCutBlock;
    std::vector<std::vector<std::uint64_t>> found(blocks);
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const char* from = text + begin + b * kCutBlock;
        const char* to = text + std::min(end, begin + (b + 1) * kCutBlock);
        std::vector<std::uint64_t>& offsets = found[b];
        for_each_byte(from, to, terminator, [&](const char* hit) { offsets.push_back(static_cast<std::uint64_t>(hit + 1 - text)); });
    });
    std::vector<std::size_t> first(blocks + 1, ends.size());
    for (std::size_t b = 0; b < blocks; ++b) first[b + 1] = first[b] + found[b].size();
    ends.resize(first.back());
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        std::copy(found[b].begin(), found[b].end(), ends.data() + first[b]);
        std::vector<std::uint64_t>().swap(found[b]);
    });
}

}  // namespace

std::size_t ChunkReader::take_lines(std::size_t held) {
    UninitializedVector<std::uint64_t>& ends = chunk_.ends_;
    const std::span<const std::uint64_t> found = std::span<const std::uint64_t>(ends).subspan(held);
    // Line k of `found` fits when the chunk's text up to its end and kLineCost for every line held fit.
    std::size_t fit = 0;
    for (std::size_t step = std::bit_floor(found.size() | 1); step > 0; step /= 2)
        if (fit + step <= found.size() && found[fit + step - 1] + (held + fit + step) * kLineCost <= chunk_bytes_) fit += step;
    const std::uint64_t before = held > 0 ? ends[held - 1] : 0;
    auto length = [&](std::size_t k) { return found[k] - 1 - (k > 0 ? found[k - 1] : before); };
    const std::uint64_t longest = tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, fit, 1 << 16), std::uint64_t{0},
        [&](const tbb::blocked_range<std::size_t>& range, std::uint64_t most) {
            for (std::size_t k = range.begin(); k != range.end(); ++k) most = std::max(most, length(k));
            return most;
        },
        [](std::uint64_t a, std::uint64_t b) { return std::max(a, b); });
    // Only a line over the limit fails to fit an empty chunk.
    if (longest > line_limit_ || (fit == 0 && held == 0 && !found.empty())) {
        std::size_t k = 0;
        while (k < fit && length(k) <= line_limit_) ++k;
        line_too_long(inputs_[input_]->name(), line_number_ + k + 1, line_limit_);
    }
    longest_ = std::max(longest_, static_cast<std::size_t>(longest));
    ends.resize(held + fit);
    line_number_ += fit;
    return fit;
}

bool ChunkReader::fill_mapped() {
    const std::optional<std::uint64_t> known = inputs_.size() == 1 ? inputs_.front()->known_size() : std::nullopt;
    if (!known || *known >= chunk_bytes_) return false;  // its text alone would not fit one chunk
    std::unique_ptr<MappedInput> mapped = inputs_.front()->map_rest();
    if (!mapped) return false;
    const std::uint64_t size = mapped->size();
    chunk_.mapped_ = std::move(mapped);
    // Cut a read's worth at a time, as read bytes are, so that the lines held never pass the
    // chunk's budget; a last line is given its terminator in the byte after the file's.
    bool fits = true;
    while (fits && chunk_.size_ < size) {
        chunk_.size_ = static_cast<std::size_t>(std::min<std::uint64_t>(size, chunk_.size_ + read_bytes_));
        if (chunk_.size_ == size) {
            input_ended_ = true;
            if (chunk_.text()[size - 1] != terminator_) chunk_.text()[chunk_.size_++] = terminator_;
        }
        fits = cut_lines();  // at the end, moves on past the input
    }
    if (fits) return true;
    // Its lines do not fit one chunk: read from the map as from the file, from its start.
    const std::string name = inputs_.front()->name();
    chunk_.ends_.clear();
    chunk_.size_ = 0;
    scanned_ = 0;
    input_ended_ = false;
    line_number_ = 0;
    longest_ = 0;
    mapped_source_ = std::make_unique<MappedSource>(std::move(chunk_.mapped_), name);
    inputs_.front() = mapped_source_.get();
    return false;
}

bool ChunkReader::cut_lines() {
    UninitializedVector<std::uint64_t>& ends = chunk_.ends_;
    const std::size_t held = ends.size();
    find_terminators(chunk_.text(), scanned_, chunk_.size_, terminator_, ends);
    const std::size_t found = ends.size() - held;
    const std::size_t taken = take_lines(held);
    if (taken < found) {  // the chunk is full
        if (taken > 0) scanned_ = ends.back();
        return false;
    }
    scanned_ = chunk_.size_;
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
    if (chunk_.size_ == chunk_.text_.size()) grow();
    // Bytes read but not taken into this chunk wait beside it, within the budget's read_bytes().
    const std::size_t piece = std::min(chunk_.text_.size() - chunk_.size_, read_bytes_);
    const std::size_t n = inputs_[input_]->read(std::span<char>(chunk_.text() + chunk_.size_, piece));
    chunk_.size_ += n;
    if (n == 0) {
        input_ended_ = true;
        // The bytes after the last line hold no terminator (all were cut): they are a last line.
        const std::size_t given = chunk_.ends_.empty() ? 0 : chunk_.ends_.back();
        if (chunk_.size_ > given) chunk_.text()[chunk_.size_++] = terminator_;
    }
    return true;
}

void ChunkReader::grow() {
    const std::size_t capacity =
        static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes_ + read_bytes_, 2 * std::uint64_t{chunk_.text_.size()}));
    io::HostBuffer text(capacity);
    io::copy_parallel(text.data(), std::span<const std::byte>(chunk_.text_.data(), chunk_.size_));
    chunk_.text_ = std::move(text);
}

namespace {

// Groups of at least this many lines whose windows are equal are sorted again by their next
// window rather than by comparing lines, down to this many windows into the codes.
constexpr std::size_t kMinPrefixedGroup = 64;
constexpr std::size_t kMaxWindows = 64;

// The entry of the line at `place` with window `window` of its sort code; `padded`: as key_prefix takes it.
void make_entry(LineEntry& entry, std::string_view line, std::uint64_t place, const TextKeys& keys, std::size_t window, bool padded = false) {
    std::array<std::byte, kPrefixBytes> bytes;
    const bool complete = key_prefix(line, keys, bytes, window * kPrefixBytes, padded);
    for (std::size_t w = 0; w < entry.prefix.size(); ++w) {
        std::uint64_t word;
        std::memcpy(&word, bytes.data() + 8 * w, 8);
        entry.prefix[w] = std::endian::native == std::endian::little ? __builtin_bswap64(word) : word;
    }
    entry.tag = place << 1 | (complete ? 0 : 1);
}

void settle_ties(std::span<LineEntry> entries, const LineChunk& chunk, const TextKeys& keys, std::size_t window);

// Puts a group of entries with equal windows, some code going on past them, in the order of
// compare_lines, ties by place (the order of input): a large group by the codes' next window.
void settle_group(std::span<LineEntry> group, const LineChunk& chunk, const TextKeys& keys, std::size_t window) {
    if (group.size() >= kMinPrefixedGroup && window + 1 < kMaxWindows) {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, group.size(), 4096), [&](const tbb::blocked_range<std::size_t>& range) {
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                const std::uint64_t place = group[i].place();
                make_entry(group[i], chunk.line_at(place), place, keys, window + 1);
            }
        });
        tbb::parallel_sort(group.begin(), group.end());
        return settle_ties(group, chunk, keys, window + 1);
    }
    tbb::parallel_sort(group.begin(), group.end(), [&](const LineEntry& a, const LineEntry& b) {
        const int order = compare_lines(chunk.line_at(a.place()), chunk.line_at(b.place()), keys);
        return order != 0 ? order < 0 : a.tag < b.tag;
    });
}

// Groups settled in turn, [first, last) each, the text of the lines of small groups fetched
// kFetchAhead groups ahead (their places are in the entries). Fetching ahead (in two stages then,
// where the lines lay, then their text) halved the ties step of log lines by -k2,2 -k6n on a
// 2-core machine.
constexpr std::size_t kFetchAhead = 6;

void settle_groups(std::span<const std::pair<std::size_t, std::size_t>> groups, std::span<LineEntry> entries, const LineChunk& chunk,
                   const TextKeys& keys, std::size_t window) {
    auto small = [&](std::size_t g) { return groups[g].second - groups[g].first < kMinPrefixedGroup; };
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (const std::size_t ahead = g + kFetchAhead; ahead < groups.size() && small(ahead))
            for (std::size_t i = groups[ahead].first; i < groups[ahead].second; ++i) chunk.prefetch_text(entries[i].place());
        const auto [first, last] = groups[g];
        settle_group(entries.subspan(first, last - first), chunk, keys, window);
    }
}

// Settles every group of equal windows that needs it. The groups are all found first, while no prefix changes,
// then settled in parallel, block by block: settling a large group rewrites its entries' prefixes (it is sorted
// again by its next window), which a search for another group's bounds must not see (it once did,
// and cut a group in two that were then sorted at once).
void settle_ties(std::span<LineEntry> entries, const LineChunk& chunk, const TextKeys& keys, std::size_t window) {
    constexpr std::size_t kBlock = std::size_t{1} << 14;
    const std::size_t n = entries.size();
    // The groups of two entries or more, [first, last), each block listing those that begin in it.
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> found((n + kBlock - 1) / kBlock);
    tbb::parallel_for(std::size_t{0}, found.size(), [&](std::size_t b) {
        const std::size_t end = std::min(n, (b + 1) * kBlock);
        std::size_t first = b * kBlock;
        while (first > 0 && first < end && entries[first].same_prefix(entries[first - 1])) ++first;
        while (first < end) {
            std::size_t last = first + 1;
            while (last < n && entries[last].same_prefix(entries[first])) ++last;
            // Where no code goes on past the window, the codes are equal: in the order of input already.
            if (last - first > 1 && std::any_of(&entries[first], &entries[last], [](const LineEntry& e) { return e.cut(); }))
                found[b].emplace_back(first, last);
            first = last;
        }
    });
    tbb::parallel_for(std::size_t{0}, found.size(), [&](std::size_t b) { settle_groups(found[b], entries, chunk, keys, window); });
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The key of an entry as the sorters take it: records of 40 bytes keyed by the prefix's words.
KeySpec entry_spec() {
    KeySpec spec{sizeof(LineEntry), {}};
    for (std::size_t w = 0; w < kPrefixBytes / 8; ++w) spec.fields.push_back(KeyField{.offset = 8 * w, .length = 8, .type = KeyType::u64});
    return spec;
}

// The entries of lines [first, first + entries.size()) of the chunk, made in parallel; the lines
// that the chunk's text goes on past by kLinePadding bytes are read as padded.
void make_entries(const LineChunk& chunk, std::size_t first, std::span<LineEntry> entries, const TextKeys& keys) {
    const std::string_view text = chunk.text_view();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, entries.size(), 4096), [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            const std::string_view line = chunk.line(first + i);
            const bool padded = static_cast<std::size_t>(text.data() + text.size() - (line.data() + line.size())) >= kLinePadding;
            make_entry(entries[i], line, chunk.place(first + i), keys, 0, padded);
        }
    });
}

}  // namespace

LineSorter::LineSorter(const TextKeys& keys, unsigned threads, std::uint64_t expected_bytes)
    : keys_(&keys), threads_(threads), pool_(make_sort_thread_pool(threads, {})) {
    // A failure here is found again, and reported, where the first large chunk asks.
    if (expected_bytes >= kGpuWarmUpBytes) gpu_ready_ = std::async(std::launch::async, [this] { make_gpu_sorter(); });
}

LineSorter::~LineSorter() = default;

void LineSorter::make_gpu_sorter() {
    gpu_asked_ = true;
    SorterChoice choice;
    choice.threads = threads_;
    std::unique_ptr<ChunkSorter> sorter = make_chunk_sorter(choice, entry_spec());
    if (const std::optional<DeviceCapacity> device = sorter->device()) {
        gpu_capacity_ = sorter->capacity(1, ChunkMemory{.device_bytes = device_memory_available(device->free_bytes),
                                                        .staging_bytes = device->preferred_staging_bytes});
        gpu_ = std::move(sorter);
    }
}

ChunkSorter* LineSorter::gpu_sorter(std::size_t lines) {
    if (gpu_ready_.valid()) gpu_ready_.get();
    if (!gpu_asked_) make_gpu_sorter();
    if (!gpu_ || lines > gpu_capacity_) return nullptr;
    if (lines > gpu_lines_) {
        // Pinned staging within what kLineCost counts for the sort: a 16th of it, at most the device's preferred size.
        const std::uint64_t staging = std::min<std::uint64_t>(gpu_->device()->preferred_staging_bytes, lines * kLineCost / 16);
        gpu_lines_ = 0;  // a failed set-up is made again by the next chunk
        gpu_->prepare(1, lines, ChunkMemory{.staging_bytes = staging});
        gpu_lines_ = lines;
    }
    return gpu_.get();
}

// The entries made into the GPU's staging buffers as it pulls them (so that making them overlaps
// its copies), sorted there (stable), and written back into `entries`.
void LineSorter::sort_on_gpu(ChunkSorter& gpu, const LineChunk& chunk, std::span<LineEntry> entries, ChunkSortTimes& times) {
    const auto start = std::chrono::steady_clock::now();
    double making = 0;
    ChunkIo io;
    io.read = [&](std::uint64_t first, std::span<std::byte> bytes) {
        const auto made = std::chrono::steady_clock::now();
        make_entries(chunk, first, std::span(reinterpret_cast<LineEntry*>(bytes.data()), bytes.size() / sizeof(LineEntry)), *keys_);
        making += seconds_since(made);
    };
    io.write = [&](std::uint64_t first, std::span<const std::byte> bytes) {
        io::copy_parallel(reinterpret_cast<std::byte*>(entries.data() + first), bytes);
    };
    gpu.sort_chunk(0, entries.size(), io);
    times.prefixes += making;
    times.sort += seconds_since(start) - making;
}

// Where the device cannot hold the chunk's entries at once: sort_memory() sorts them in parts and
// merges them. Small chunks, or any without a GPU: IPS4o in place, by prefix and place.
void LineSorter::sort_entries(std::span<LineEntry> entries, bool in_parts_on_gpu) {
    if (in_parts_on_gpu) {
        MemorySort sort;
        sort.keys = std::as_bytes(entries);
        sort.records = entry_spec();
        sort.keys_output = std::as_writable_bytes(entries);
        MemoryOptions memory;
        memory.threads = threads_;
        // Twice what kLineCost counts for the sort (the entry and the engine's own), so that the
        // entries are sorted as one chunk, never spilled.
        memory.memory_bytes = (std::uint64_t{1} << 20) + entries.size() * (kLineCost - 8) * 2;
        sort_memory(sort, memory);
    } else if (pool_) {
        ips4o::parallel::sort(entries.begin(), entries.end(), std::less<>(), *pool_);
    } else {
        ips4o::sort(entries.begin(), entries.end(), std::less<>());
    }
}

std::span<const LineEntry> LineSorter::sort(const LineChunk& chunk, ChunkSortTimes* times) {
    const std::size_t n = chunk.lines();
    if (n > entries_.capacity()) {  // the old entries go first: they are not copied
        entries_.clear();
        entries_.shrink_to_fit();
    }
    entries_.resize(n);
    const std::span<LineEntry> entries(entries_);
    ChunkSortTimes chunk_times;
    ChunkSorter* gpu = n >= kMinGpuLines ? gpu_sorter(n) : nullptr;
    if (gpu) {
        sort_on_gpu(*gpu, chunk, entries, chunk_times);
    } else {
        const auto start = std::chrono::steady_clock::now();
        make_entries(chunk, 0, entries, *keys_);
        chunk_times.prefixes = seconds_since(start);
        const auto made = std::chrono::steady_clock::now();
        sort_entries(entries, n >= kMinGpuLines && gpu_);
        chunk_times.sort = seconds_since(made);
    }
    const auto sorted = std::chrono::steady_clock::now();
    settle_ties(entries, chunk, *keys_, 0);
    if (times) {
        times->prefixes += chunk_times.prefixes;
        times->sort += chunk_times.sort;
        times->ties += seconds_since(sorted);
    }
    return entries;
}

}  // namespace gpusort
