// gpusort-sort's three ways: the check of -c/-C, the merge of -m and the sort, each over the
// inputs opened up front, within the budget of -S and with the threads of --parallel.
#include "src/text/text_sort.hpp"

#include "gpusort/sort_plan.hpp"
#include "src/text/line_chunk.hpp"
#include "src/text/line_merge.hpp"
#include "src/text/line_order.hpp"

#include <tbb/global_control.h>

#include <algorithm>
#include <iostream>
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

void write_chunk(const LineChunk& chunk, const std::vector<LineEntry>& entries, UniqueLines& out) {
    for (const LineEntry& entry : entries) out.write(chunk.line(entry.line));
}

// The sort: chunks sorted in memory; one chunk goes straight to `out`, more are spilled as runs
// and merged.
void sort_inputs(std::vector<InputFile>& inputs, const SortCommand& command, const TextBudget& budget, unsigned threads,
                 UniqueLines& out) {
    const TextKeys& keys = command.keys;
    const std::vector<std::string> folders = temp_folders(command.temp_dirs);
    SpillFiles spill(folders);
    std::vector<SpilledRun> runs;
    std::size_t longest_line = 0;
    {
        ChunkReader reader(inputs, budget, keys.line_end());
        const ChunkSortOptions options{threads};
        while (reader.fill()) {
            const std::vector<LineEntry> entries = sort_chunk(reader.chunk(), keys, options);
            if (runs.empty() && reader.done()) {  // all of the input in one chunk
                write_chunk(reader.chunk(), entries, out);
                return;
            }
            runs.push_back(spill.write_run(budget, keys.line_end(), [&](LineWriter& writer) {
                UniqueLines lines(writer, keys);
                write_chunk(reader.chunk(), entries, lines);
            }));
        }
        longest_line = reader.longest_line();
    }  // the chunk's memory goes before the merge
    std::vector<RunSource> sources;
    for (const SpilledRun& run : runs) sources.emplace_back(*run.file, run.begin, run.end);
    std::vector<ByteSource*> merged;
    for (RunSource& source : sources) merged.push_back(&source);
    merge_sources(std::move(merged), longest_line, keys, budget, folders, out);
}

}  // namespace

int run_sort_command(const SortCommand& command) {
    // GNU sort runs at most as many threads as there are CPUs, whatever --parallel says.
    const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(command.parallel.value_or(default_threads()), default_threads()));
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
        sort_inputs(inputs, command, budget, threads, lines);
    }
    writer.flush();
    output.commit();
    return 0;
}

}  // namespace gpusort
