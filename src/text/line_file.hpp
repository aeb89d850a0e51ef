// gpusort-file --lines: the sort of gpusort-sort (sort_lines) with gpusort-file's files and
// options: INPUT and OUTPUT as paths or "-", compressed by their names' endings or as forced,
// within --memory (less the stream queues) on --threads, runs in --tmp-dir, OUTPUT put in place
// atomically, --verify reading it back, --progress and the figures of --plan and --stats.
#pragma once

#include "gpusort/sort_file.hpp"
#include "src/text/text_keys.hpp"
#include "src/text/text_sort.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusort {

// What a sort of lines will take, from the budget and a look at INPUT.
struct LinePlan {
    std::uint64_t memory_bytes = 0;            // --memory, or the default
    unsigned threads = 1;                      // at most the CPUs this process may use
    std::optional<std::uint64_t> input_bytes;  // a plain, regular INPUT's size; nullopt: a stream or compressed
    double mean_line_bytes = 0;                // of INPUT's first MiB, terminators counted; 0: not looked at
    ReaderPlan reader;                         // INPUT's read-ahead queue
    WriterPlan writer;                         // a compressed OUTPUT's queue
    std::uint64_t sort_bytes = 0;              // the text sort's budget: the memory less the queues, at least 1 MiB
    std::uint64_t chunk_bytes = 0;             // a chunk: its text and kLineCost per line
    std::uint64_t write_buffer_bytes = 0;      // lines are written through this (the output, a run)
    std::uint64_t read_bytes = 0;              // the most one read of INPUT takes, beside the chunk
    std::size_t line_limit = 0;                // the longest line accepted
    std::uint64_t chunk_lines = 0;             // lines of the mean length a chunk holds (0: not known)
    std::uint64_t runs = 0;                    // chunks, so runs (1: one chunk, no merge); 0: not known
    std::size_t fan_in = 0;                    // runs one merge reads at once (lines up to 64 KiB)
    unsigned merge_passes = 0;                 // 0 for one chunk, or when not known
    std::string tmp_dir;                       // where runs go
    std::vector<DiskNeed> disk;                // the disk space taken, per folder (with a known size)
};

LinePlan plan_line_file(const SortOptions& options, const TextKeys& keys);

// What gpusort-file --lines did.
struct LineFileReport {
    LinePlan plan;
    LineSortReport sort;
    std::uint64_t input_bytes = 0;          // read, decompressed
    std::uint64_t output_lines = 0;         // written (fewer than the input's with --unique)
    std::uint64_t output_bytes = 0;         // before compression
    std::uint64_t output_stored_bytes = 0;  // that reached OUTPUT, after compression
    bool verified = false;
    double flush_seconds = 0;   // the output's last blocks compressed and written, and put in place
    double verify_seconds = 0;  // --verify's read-back
    double seconds = 0;         // the whole sort, wall clock
};

// Sorts the lines of options.input into options.output (options: input, output, memory_bytes,
// threads, tmp_dir, the compressions and level, sync, verify, progress). Throws gpusort::Error
// (or std::bad_alloc) on failure, leaving no OUTPUT that was not there, an existing OUTPUT
// unchanged and no temp files.
LineFileReport sort_line_file(const SortOptions& options, const TextKeys& keys);

}  // namespace gpusort
