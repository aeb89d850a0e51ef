// gpusort-sort's three ways: the check of -c/-C, the merge of -m and the sort, each over the
// inputs opened up front, within the budget of -S and with the threads of --parallel; the sort is
// sort_lines(), which gpusort-file --lines runs too.
#include "src/text/text_sort.hpp"

#include "gpusort/sort_plan.hpp"
#include "src/text/line_chunk.hpp"
#include "src/text/line_merge.hpp"
#include "src/text/merge_in_parts.hpp"
#include "src/text/line_order.hpp"

#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace gpusort {

namespace {

// -c, -C: whether the lines are in order (strictly, by their keys, with -u); -c reports the first
// line out of order as GNU sort does.
int check_order(InputFile& input, const SortCommand& command, const TextBudget& budget) {
    const TextKeys& keys = command.keys;
    LineReader reader(input, budget.read_buffer(1), budget.line_limit(), keys.line_end());
    std::string previous;
    for (bool first = true; reader.next(); first = false) {
        if (!first) {
            const int order = compare_lines(previous, reader.line(), keys);
            if (order > 0 || (order == 0 && keys.unique)) {
                if (command.check == CheckMode::diagnose) {
                    std::cerr << "gpusort-sort: " << reader.name() << ':' << reader.number() << ": disorder: " << reader.line()
                              << keys.line_end() << std::flush;
                }
                return 1;
            }
        }
        previous.assign(reader.line());
    }
    return 0;
}

// A chunk's lines in the order of its sorted entries.
class SortedLines final : public LineSequence {
public:
    SortedLines(const LineChunk& chunk, std::span<const LineEntry> entries) : chunk_(chunk), entries_(entries) {}
    std::size_t size() const override { return entries_.size(); }
    std::string_view line(std::size_t i) const override { return chunk_.line_at(entries_[i].place()); }
    void prefetch(std::size_t i) const override { chunk_.prefetch_text(entries_[i].place()); }

private:
    const LineChunk& chunk_;
    std::span<const LineEntry> entries_;
};

void write_chunk(const LineChunk& chunk, std::span<const LineEntry> entries, UniqueLines& out) {
    out.write_all(SortedLines(chunk, entries));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void start_phase(const LineSortHooks& hooks, ProgressPhase phase, std::uint64_t bytes,
                 ProgressCounters::Counting counting = ProgressCounters::Counting::bytes) {
    if (hooks.progress) hooks.progress->start_phase(phase, bytes, counting);
}

// The runs merged into `out` (their merge passes and bytes spilled added to `report`), then their
// files closed (freeing their pages and blocks takes long, and is part of the merge).
void merge_runs(std::unique_ptr<SpillFiles> spill, const std::vector<SpilledRun>& runs, std::size_t longest_line, const TextKeys& keys,
                const TextBudget& budget, unsigned threads, const std::vector<std::string>& folders, UniqueLines& out,
                const LineSortHooks& hooks, LineSortReport& report) {
    report.merge_passes = 1;
    // One merge reads every run: on all threads, in parts, where the output can take them at their places.
    const bool in_parts = runs.size() <= merge_fan_in(budget, longest_line) &&
                          out.write_placed(report.lines, report.bytes_spilled, [&](const LineWriter::PutAt& put) {
                              merge_in_parts(runs, keys, budget, threads, longest_line, report.bytes_spilled, put, hooks.progress);
                          });
    if (!in_parts) {
        std::vector<RunSource> sources;
        for (const SpilledRun& run : runs) sources.emplace_back(*run.file, run.begin, run.end);
        std::vector<ByteSource*> merged;
        for (RunSource& source : sources) merged.push_back(&source);
        const MergeCounts counts = merge_sources(std::move(merged), longest_line, keys, budget, folders, out);
        report.merge_passes = counts.passes;
        report.bytes_spilled += counts.bytes_spilled;
    }
    spill.reset();
}

}  // namespace

unsigned line_sort_threads(std::optional<std::size_t> wanted) {
    return static_cast<unsigned>(std::min<std::size_t>(wanted.value_or(default_threads()), default_threads()));
}

LineSortReport sort_lines(std::vector<ByteSource*> inputs, const TextKeys& keys, const TextBudget& budget, unsigned threads,
                          const std::vector<std::string>& folders, UniqueLines& out, const LineSortHooks& hooks) {
    LineSortReport report;
    ChunkSortTimes chunk_times;
    auto spill = std::make_unique<SpillFiles>(folders);
    std::vector<SpilledRun> runs;
    std::size_t longest_line = 0;
    {
        std::uint64_t known_bytes = 0;
        for (const ByteSource* input : inputs) known_bytes += input->known_size().value_or(0);
        ChunkReader reader(std::move(inputs), budget, keys.line_end());
        LineSorter sorter(keys, threads, known_bytes);
        for (;;) {
            const auto start = std::chrono::steady_clock::now();
            const bool filled = reader.fill();
            report.times.read += seconds_since(start);
            if (!filled) break;
            const LineChunk& chunk = reader.chunk();
            ++report.runs;
            report.lines += chunk.lines();
            report.line_bytes += chunk.bytes();
            if (hooks.chunk_read) hooks.chunk_read(chunk);
            const bool one_chunk = runs.empty() && reader.done();  // all of the input in one chunk
            if (one_chunk) {
                start_phase(hooks, ProgressPhase::sorting, chunk.bytes(), ProgressCounters::Counting::time_only);
                out.expect(chunk.bytes());  // the output's pages made ready while the lines are sorted
            }
            const std::span<const LineEntry> entries = sorter.sort(chunk, &chunk_times);
            const auto written = std::chrono::steady_clock::now();
            if (one_chunk) {
                start_phase(hooks, ProgressPhase::writing, chunk.bytes());
                write_chunk(chunk, entries, out);
                report.times.write = seconds_since(written);
                report.times.prefixes = chunk_times.prefixes;
                report.times.sort = chunk_times.sort;
                report.times.ties = chunk_times.ties;
                return report;
            }
            runs.push_back(spill->write_run(budget, keys.line_end(), [&](LineWriter& writer) {
                UniqueLines lines(writer, keys);
                write_chunk(chunk, entries, lines);
            }));
            report.times.runs += seconds_since(written);
        }
        longest_line = reader.longest_line();
    }  // the chunk's memory goes before the merge
    report.times.prefixes = chunk_times.prefixes;
    report.times.sort = chunk_times.sort;
    report.times.ties = chunk_times.ties;
    report.bytes_spilled = spill->bytes();
    start_phase(hooks, ProgressPhase::merging, report.bytes_spilled);
    const auto merge_start = std::chrono::steady_clock::now();
    merge_runs(std::move(spill), runs, longest_line, keys, budget, threads, folders, out, hooks, report);
    report.times.merge = seconds_since(merge_start);
    return report;
}

int run_sort_command(const SortCommand& command) {
    // GNU sort runs at most as many threads as there are CPUs, whatever --parallel says.
    const unsigned threads = line_sort_threads(command.parallel);
    const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
    const TextBudget budget(command.buffer_bytes.value_or(default_memory_budget()));
    std::vector<InputFile> inputs = check_inputs(command.inputs, command.check != CheckMode::none ? "open failed" : "cannot read");
    if (command.check != CheckMode::none) return check_order(inputs.front(), command, budget);

    TextOutput output(command.output);
    LineWriter writer(output.fd(), output.name(), budget.write_buffer(), command.keys.line_end());
    UniqueLines lines(writer, command.keys);
    if (command.merge) {
        std::vector<ByteSource*> sources;
        for (InputFile& input : inputs) sources.push_back(&input);
        merge_sources(std::move(sources), 0, command.keys, budget, temp_folders(command.temp_dirs), lines);
    } else {
        std::vector<ByteSource*> sources;
        for (InputFile& input : inputs) sources.push_back(&input);
        sort_lines(std::move(sources), command.keys, budget, threads, temp_folders(command.temp_dirs), lines);
    }
    writer.flush();
    output.commit();
    return 0;
}

}  // namespace gpusort
