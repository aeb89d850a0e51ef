// The k-way merge of sorted lines: a loser tree over the sources' current lines, the passes that
// bring the sources down to one merge's fan-in, and the temp files that hold the runs between them.
#include "src/text/line_merge.hpp"

#include "gpusort/errors.hpp"
#include "io/temp_file.hpp"
#include "src/text/line_order.hpp"
#include "src/text/line_tournament.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/resource.h>
#include <unistd.h>
#include <utility>

namespace gpusort {

SpillFiles::SpillFiles(const std::vector<std::string>& folders)
    : folders_(folders), files_(folders.size()), sizes_(folders.size(), 0) {}

io::File& SpillFiles::next_file() {
    const std::size_t i = next_++ % folders_.size();
    if (!files_[i].is_open()) {
        if (::access(folders_[i].c_str(), W_OK | X_OK) != 0)
            throw IoError("cannot create temporary file in " + quote_gnu(folders_[i]) + ": " + std::strerror(errno));
        files_[i] = io::create_temp_file(folders_[i]);
    }
    return files_[i];
}

SpilledRun SpillFiles::add_run(const io::File& file, std::uint64_t bytes) {
    const std::size_t i = static_cast<std::size_t>(&file - files_.data());
    const SpilledRun run{&file, sizes_[i], sizes_[i] + bytes};
    sizes_[i] = run.end;
    return run;
}

std::uint64_t SpillFiles::bytes() const {
    std::uint64_t total = 0;
    for (const std::uint64_t size : sizes_) total += size;
    return total;
}

std::vector<std::string> temp_folders(const std::vector<std::string>& given) {
    if (!given.empty()) return given;
    const char* tmpdir = std::getenv("TMPDIR");
    return {tmpdir && *tmpdir ? tmpdir : "/tmp"};
}

namespace {

// Inputs one merge may read at once as far as descriptors go: the limit on open files, less a
// few for the output, the temp files and the program's own.
std::size_t descriptor_room() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
    return static_cast<std::size_t>(std::max<rlim_t>(limit.rlim_cur, 18) - 16);
}

// One merge of `sources` into `out`.
void merge_once(const std::vector<ByteSource*>& sources, std::size_t longest_line, const TextKeys& keys,
                const TextBudget& budget, UniqueLines& out) {
    const std::size_t buffer = std::max(budget.read_buffer(sources.size()), longest_line + 1);
    std::vector<LineReader> readers;
    readers.reserve(sources.size());
    for (ByteSource* source : sources) readers.emplace_back(*source, buffer, budget.line_limit(), keys.line_end());
    if (readers.empty()) return;
    merge_lines(readers, keys, [&](std::string_view line) { out.write(line); });
}

}  // namespace

std::size_t merge_fan_in(const TextBudget& budget, std::size_t longest_line) {
    return std::min(budget.fan_in(longest_line + 1), descriptor_room());
}

unsigned merge_passes(std::size_t sources, std::size_t fan_in) {
    if (sources == 0) return 0;
    unsigned passes = 1;
    for (; sources > fan_in; ++passes) sources = (sources + fan_in - 1) / fan_in;
    return passes;
}

MergeCounts merge_sources(std::vector<ByteSource*> sources, std::size_t longest_line, const TextKeys& keys,
                          const TextBudget& budget, const std::vector<std::string>& folders, UniqueLines& out) {
    const std::size_t fan_in = merge_fan_in(budget, longest_line);
    MergeCounts counts{merge_passes(sources.size(), fan_in), 0};
    std::unique_ptr<SpillFiles> spill;  // the runs of the last pass
    std::vector<RunSource> runs;
    while (sources.size() > fan_in) {
        auto next = std::make_unique<SpillFiles>(folders);
        std::vector<SpilledRun> merged;
        for (std::size_t first = 0; first < sources.size(); first += fan_in) {
            const std::vector<ByteSource*> group(sources.begin() + first, sources.begin() + std::min(first + fan_in, sources.size()));
            merged.push_back(next->write_run(budget, keys.line_end(), [&](LineWriter& writer) {
                UniqueLines lines(writer, keys);
                merge_once(group, longest_line, keys, budget, lines);
            }));
        }
        sources.clear();
        runs.clear();
        for (const SpilledRun& run : merged) runs.emplace_back(*run.file, run.begin, run.end);
        for (RunSource& run : runs) sources.push_back(&run);
        counts.bytes_spilled += next->bytes();
        spill = std::move(next);  // the files of the pass before go
    }
    merge_once(sources, longest_line, keys, budget, out);
    return counts;
}

}  // namespace gpusort
