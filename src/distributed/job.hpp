// Job: one rank's share of a distributed sort (distributed_sort.cpp), as its steps and each way of
// exchanging the records (exchange_way.hpp) see it: the options and the ranks, the key, INPUT and
// this rank's range of it, its budgets, the clock of its steps and its report. Also the small rules
// that the ways share: where each rank's range starts, where a part lies in OUTPUT, the runs laid
// one after the other in memory.
#pragma once

#include "io/file_mapping.hpp"
#include "src/sort/sort_part.hpp"
#include "src/distributed/communicator.hpp"
#include "src/distributed/distributed_sort.hpp"
#include "src/distributed/input_files.hpp"
#include "src/distributed/key_points.hpp"
#include "src/distributed/step.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpusort::distributed {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start);

// The first record of rank `rank`'s range of `all` records over `p` ranks (and of its part, where
// the runs are shared): the ranges differ by one record at most.
std::uint64_t range_first(std::uint64_t all, int rank, int p);

// The largest part over the mean, less 1.
double imbalance_of(const std::vector<std::uint64_t>& parts);

// The records before `rank`'s part and in all parts, from the records of each part.
std::pair<std::uint64_t, std::uint64_t> part_offset_total(const std::vector<std::uint64_t>& parts, int rank);

// The runs of `records` records each, one after the other in `memory` (keys of `width` bytes).
std::vector<std::span<const std::byte>> runs_in(std::span<const std::byte> memory, std::span<const std::uint64_t> records,
                                                std::size_t width);

// Whether the file system of OUTPUT's folder reserves space (fallocate), as the ways that write runs
// through maps of OUTPUT need: those maps must not meet a full disk.
bool output_folder_reserves(const std::string& output);

struct Job {
    // The options of the job as this rank runs it; its threads, and the clock of the whole job.
    Job(const DistributedOptions& options, const Communicator& ranks);
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    // Ends the step on every rank: throws RankError on every rank where any rank's step failed.
    void agree() const { ranks.agree(step.failure()); }

    // Step 1: the key, INPUT and this rank's range of it; then this rank's memory budget and temp folder.
    void take_range();
    // Step 2: samples of every rank's range and the p - 1 splitters chosen from them (the same on every rank).
    std::vector<KeyPoint> take_splitters();
    // Every rank's records of its range, in rank order: the parts, where the ranks' runs are cut at the ranges.
    std::vector<std::uint64_t> range_records_of_every_rank() const;
    // This rank's range through its map of INPUT (empty where there is none).
    std::span<const std::byte> mapped_range() const;
    // The options of the sort of this rank's part (sort_file): the caller says where its input lies
    // and how much memory the sort may take.
    PartSortOptions part_sort_options() const;

    // The clock of the steps that the report times: start_steps() starts it, and each end_step()
    // gives the seconds since the last to `seconds` and starts the next.
    void start_steps() { step_start_ = Clock::now(); }
    void end_step(double& seconds);

    const DistributedOptions& options;
    const SortOptions& sort;
    const Communicator& ranks;
    const int rank;
    const int p;  // the ranks
    const Clock::time_point start = Clock::now();
    DistributedReport report;
    Step step;
    const unsigned threads;  // the classification of records runs on --threads threads, as the sort does
    const KeySpec spec;
    std::optional<KeyReader> reader;
    InputFiles input;
    std::uint64_t first = 0, records = 0, width = 0, all_records = 0;  // this rank's range, the record, INPUT's records
    // The memory budget of this rank, read once: the blocks, the kept range and parts, the received
    // part and the part's sort are all sized from it.
    std::uint64_t budget = 0;
    ProgressCounters* const progress;  // rank 0's, when it draws the progress line
    std::string tmp;                   // the temp folder
    // This rank's range, through a map of INPUT where it lies in one file (made once, for any way).
    std::unique_ptr<io::FileMapping> range_map;
    // --device-memory of the part's sort: as given, or the rank's share of a GPU that ranks share.
    std::optional<std::uint64_t> device_budget;

private:
    Clock::time_point step_start_ = Clock::now();
};

}  // namespace gpusort::distributed
