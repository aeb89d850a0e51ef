// merge_in_parts(): lines read at any byte of a run, samples and splitters, the cut of each run
// at each splitter by a binary search over its lines, and the parts merged in parallel.
#include "src/text/merge_in_parts.hpp"

#include "gpusort/errors.hpp"
#include "src/text/line_order.hpp"
#include "src/text/line_tournament.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

namespace gpusort {

namespace {

// Parts per thread (more parts than threads even out their sizes), and samples per part.
constexpr std::size_t kPartsPerThread = 4;
constexpr std::size_t kSamplesPerPart = 16;
// Bytes read at a time when looking for a line's ends.
constexpr std::size_t kProbeBytes = 4096;

// The lines of a run read at any of its bytes, through a buffer of its own (one RunLines per thread).
class RunLines {
public:
    RunLines(const SpilledRun& run, char terminator) : run_(run), terminator_(terminator) {}
    std::uint64_t begin() const { return run_.begin; }
    std::uint64_t end() const { return run_.end; }

    // The first line start at or after `at` (end() where none is).
    std::uint64_t start_from(std::uint64_t at) const { return at <= run_.begin ? run_.begin : line_end(at - 1) + 1; }
    // The start of the line that holds byte at - 1 (at > begin()).
    std::uint64_t start_before(std::uint64_t at) const {
        std::uint64_t to = at - 1;  // the terminator before it lies in [begin, to)
        while (to > run_.begin) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kProbeBytes, to - run_.begin));
            read(to - n, n);
            if (const void* hit = ::memrchr(buffer_.data(), terminator_, n))
                return to - n + static_cast<std::uint64_t>(static_cast<const char*>(hit) - buffer_.data()) + 1;
            to -= n;
        }
        return run_.begin;
    }
    // The line that starts at `start`, without its terminator, into `line`; returns the next start.
    std::uint64_t line_at(std::uint64_t start, std::string& line) const {
        const std::uint64_t end = line_end(start);
        line.resize(static_cast<std::size_t>(end - start));
        run_.file->read_at(start, std::as_writable_bytes(std::span<char>(line)));
        return end + 1;
    }

private:
    // Where the terminator at or after `at` lies (a run ends with one).
    std::uint64_t line_end(std::uint64_t at) const {
        for (; at < run_.end; at += kProbeBytes) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kProbeBytes, run_.end - at));
            read(at, n);
            if (const void* hit = std::memchr(buffer_.data(), terminator_, n))
                return at + static_cast<std::uint64_t>(static_cast<const char*>(hit) - buffer_.data());
        }
        throw SortError("a sorted run in '" + run_.file->path() + "' does not end with a line's terminator");
    }
    void read(std::uint64_t at, std::size_t n) const {
        buffer_.resize(kProbeBytes);
        run_.file->read_at(at, std::as_writable_bytes(std::span<char>(buffer_.data(), n)));
    }

    SpilledRun run_;
    char terminator_;
    mutable std::string buffer_;
};

// A line of a run where the runs are cut: the parts before it hold it and every line before it in
// the merge's order.
struct Splitter {
    std::string line;
    std::size_t run = 0;
    std::uint64_t start = 0;  // where it starts in its run
    std::uint64_t next = 0;   // where the line after it starts
    std::uint64_t bytes = 0;  // of the run, as a sample: the share of its run it stands for
};

// Lines at even steps of bytes through every run, `per_byte` of them per byte of the runs (one at least per run).
std::vector<Splitter> sample_runs(const std::vector<RunLines>& runs, double per_byte) {
    std::vector<Splitter> samples;
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const std::uint64_t size = runs[r].end() - runs[r].begin();
        const auto count = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(size) * per_byte));
        for (std::uint64_t i = 0; i < count; ++i) {
            Splitter sample;
            sample.run = r;
            sample.start = runs[r].start_from(runs[r].begin() + (2 * i + 1) * size / (2 * count));
            if (sample.start == runs[r].end()) continue;
            sample.next = runs[r].line_at(sample.start, sample.line);
            sample.bytes = size / count;
            samples.push_back(std::move(sample));
        }
    }
    return samples;
}

// The merge's order: by the line, then by run, then by place in the run.
bool merge_order(const Splitter& a, const Splitter& b, const TextKeys& keys) {
    const int order = compare_lines(a.line, b.line, keys);
    if (order != 0) return order < 0;
    return a.run != b.run ? a.run < b.run : a.start < b.start;
}

// parts - 1 splitters: the samples, sorted, at even steps of the bytes they stand for.
std::vector<Splitter> choose_splitters(std::vector<Splitter> samples, std::size_t parts, const TextKeys& keys) {
    std::sort(samples.begin(), samples.end(), [&](const Splitter& a, const Splitter& b) { return merge_order(a, b, keys); });
    std::uint64_t total = 0;
    for (const Splitter& sample : samples) total += sample.bytes;
    std::vector<Splitter> splitters;
    std::uint64_t seen = 0;
    for (const Splitter& sample : samples) {
        seen += sample.bytes;
        while (splitters.size() + 1 < parts && seen * parts >= (splitters.size() + 1) * total) splitters.push_back(sample);
    }
    return splitters;
}

// Where run r is cut at `splitter`: the first line start whose line comes after the splitter in the
// merge's order, found by a binary search over the run's bytes that only ever looks at line starts.
std::uint64_t cut_run(RunLines run, std::size_t r, const Splitter& splitter, const TextKeys& keys) {
    if (r == splitter.run) return splitter.next;
    auto before = [&](std::string_view line) {
        const int order = compare_lines(line, splitter.line, keys);
        return order < 0 || (order == 0 && r < splitter.run);
    };
    std::uint64_t lo = run.begin(), hi = run.end();  // line starts: lines before lo come first, from hi on after
    std::string line;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        std::uint64_t start = run.start_from(mid);
        if (start >= hi) start = run.start_before(mid);  // no line starts in [mid, hi): the one holding mid - 1
        const std::uint64_t next = run.line_at(start, line);
        if (before(line))
            lo = next;
        else
            hi = start;
    }
    return lo;
}

// Merges bytes [cuts[r], ends[r]) of each run r, `bytes` bytes in all, to put() from `offset` on,
// through a writer's buffer of `buffer` bytes.
void merge_part(const std::vector<SpilledRun>& runs, std::span<const std::uint64_t> cuts, std::span<const std::uint64_t> ends,
                const TextKeys& keys, const TextBudget& budget, std::size_t read_buffer, std::size_t buffer, std::uint64_t offset,
                std::uint64_t bytes, const LineWriter::PutAt& put) {
    std::vector<RunSource> sources;
    sources.reserve(runs.size());
    std::vector<LineReader> readers;
    readers.reserve(runs.size());
    for (std::size_t r = 0; r < runs.size(); ++r) {
        if (cuts[r] == ends[r]) continue;
        sources.emplace_back(*runs[r].file, cuts[r], ends[r]);
        readers.emplace_back(sources.back(), read_buffer, budget.line_limit(), keys.line_end());
    }
    std::uint64_t done = 0;  // bytes given to put()
    LineWriter out([&](std::span<const char> piece) { put(offset + done, piece); done += piece.size(); }, buffer, keys.line_end());
    merge_lines(readers, keys, [&](std::string_view line) {
        if (out.bytes() + line.size() + 1 > bytes) throw SortError("the runs' lines do not add up to their bytes");
        out.write(line);
    });
    out.flush();
    if (out.bytes() != bytes) throw SortError("the runs' lines do not add up to their bytes");
}

}  // namespace

void merge_in_parts(const std::vector<SpilledRun>& runs, const TextKeys& keys, const TextBudget& budget, unsigned threads,
                    std::size_t longest_line, std::uint64_t bytes, const LineWriter::PutAt& put, ProgressCounters* progress) {
    const std::size_t parts = std::max<std::size_t>(1, kPartsPerThread * threads);
    std::vector<RunLines> lines;
    for (const SpilledRun& run : runs) lines.emplace_back(run, keys.line_end());
    const std::vector<Splitter> splitters =
        choose_splitters(sample_runs(lines, static_cast<double>(parts * kSamplesPerPart) / static_cast<double>(std::max<std::uint64_t>(bytes, 1))), parts, keys);
    // cuts[p * runs + r]: where part p begins in run r; part p ends where part p + 1 begins.
    const std::size_t k = runs.size(), cut_parts = splitters.size() + 1;
    std::vector<std::uint64_t> cuts((cut_parts + 1) * k);
    for (std::size_t r = 0; r < k; ++r) {
        cuts[r] = runs[r].begin;
        cuts[cut_parts * k + r] = runs[r].end;
    }
    tbb::parallel_for(std::size_t{0}, splitters.size() * k, [&](std::size_t i) {
        const std::size_t s = i / k, r = i % k;
        cuts[(s + 1) * k + r] = cut_run(lines[r], r, splitters[s], keys);
    });
    std::vector<std::uint64_t> offsets(cut_parts + 1, 0);  // where each part goes
    for (std::size_t p = 0; p < cut_parts; ++p) {
        offsets[p + 1] = offsets[p];
        for (std::size_t r = 0; r < k; ++r) offsets[p + 1] += cuts[(p + 1) * k + r] - cuts[p * k + r];
    }
    if (offsets.back() != bytes) throw SortError("the runs' cuts do not add up to their bytes");
    // Each thread's readers and its part's buffer share the chunk's memory; a reader holds the longest line.
    const std::size_t share = budget.read_buffer((k + 1) * std::max(1u, threads));
    const std::span<const std::uint64_t> all(cuts);
    tbb::parallel_for(std::size_t{0}, cut_parts, std::size_t{1}, [&](std::size_t p) {
        const std::uint64_t part = offsets[p + 1] - offsets[p];
        merge_part(runs, all.subspan(p * k, k), all.subspan((p + 1) * k, k), keys, budget, std::max(share, longest_line + 1), share,
                   offsets[p], part, put);
        if (progress) progress->add(part);
    });
}

}  // namespace gpusort
