// The merge of gpusort-sort: sorted sources (spilled runs, or the inputs of -m) merged on the host
// by a loser tree that compares lines with compare_lines, ties going to the earlier source, so
// that the merge is stable; more sources than the budget lets one merge read at once are first
// merged in consecutive groups into longer runs, in as many passes as needed. Runs live in
// nameless temp files in the -T folders (SpillFiles), which vanish however the program ends.
#pragma once

#include "io/file.hpp"
#include "src/text/line_input.hpp"
#include "src/text/line_output.hpp"
#include "src/text/text_budget.hpp"
#include "src/text/text_keys.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpusort {

// A sorted run: bytes [begin, end) of a spill file.
struct SpilledRun {
    const io::File* file = nullptr;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
};

// Nameless temp files, one per folder, that runs are appended to, the folders taken in turn; a
// folder where no temp file can be made fails as GNU sort says it ("cannot create temporary file
// in 'DIR': CAUSE").
class SpillFiles {
public:
    explicit SpillFiles(const std::vector<std::string>& folders);
    // Writes a run through `write(LineWriter&)` into the next folder's file.
    template <class WriteLines>
    SpilledRun write_run(const TextBudget& budget, char terminator, WriteLines&& write) {
        io::File& file = next_file();
        LineWriter writer(file.fd(), file.path(), budget.write_buffer(), terminator);
        write(writer);
        writer.flush();
        return add_run(file, writer.bytes());
    }

    // Bytes written to the files so far.
    std::uint64_t bytes() const;

private:
    io::File& next_file();
    SpilledRun add_run(const io::File& file, std::uint64_t bytes);

    std::vector<std::string> folders_;
    std::vector<io::File> files_;          // one per folder, made when first needed
    std::vector<std::uint64_t> sizes_;     // bytes written to each
    std::size_t next_ = 0;
};

// The folders of -T, or $TMPDIR, or /tmp.
std::vector<std::string> temp_folders(const std::vector<std::string>& given);

// How many sources one merge reads at once when the longest line is `longest_line` bytes: what
// the budget's buffers allow, and the limit on open files.
std::size_t merge_fan_in(const TextBudget& budget, std::size_t longest_line);
// The passes a merge of `sources` takes at that fan-in: 0 for none, 1 when one merge reads them all.
unsigned merge_passes(std::size_t sources, std::size_t fan_in);

// What a merge did: its passes over the data, and the bytes its passes before the last spilled.
struct MergeCounts {
    unsigned passes = 0;
    std::uint64_t bytes_spilled = 0;
};

// Merges sorted sources into `out`. Each is read through a buffer that holds a line of
// `longest_line` bytes (the runs'; 0 where unknown: a buffer then grows to hold a longer line, up
// to the budget's line limit). Passes before the last write runs into `folders`.
MergeCounts merge_sources(std::vector<ByteSource*> sources, std::size_t longest_line, const TextKeys& keys,
                          const TextBudget& budget, const std::vector<std::string>& folders, UniqueLines& out);

}  // namespace gpusort
