// The distributed sample sort of gpusort-mpi: one rank per GPU (or per share of the CPUs), every
// rank on one INPUT that all of them see, one sorted OUTPUT (or one file per rank, --partitioned).
//
//   1. Each rank takes an equal, record-aligned range of INPUT (with --input-list: of the listed
//      files one after the other, input_files.hpp).
//   2. Each takes regular samples of its range; all ranks choose the same p - 1 splitters from all
//      samples (key_points.hpp: ties broken by input position).
//   3. Each reads its range in blocks, first counting the records for each part (keeping each
//      record's part, and the range itself, where its memory budget holds them:
//      exchange_memory.hpp), then
//      sending each block's records to the ranks whose parts they fall in, in rounds of the
//      exchange (communicator.hpp: through shared memory between the ranks of a host, else by MPI
//      messages). A part is kept in memory where the budget holds it, else in a temp file,
//      each source's records in a region of their own, in input order.
//   4. OUTPUT is made: a hidden file that rank 0 creates and every rank opens, moved to OUTPUT when
//      every rank has succeeded; or, with --partitioned, OUTPUT.RRRRR of each rank's own.
//   5. Each rank sorts its part with the single-process engine (sort_file: GPU or CPU, out of core
//      when needed) straight into its place in OUTPUT (PartSortOptions::output_region). Its sort is
//      stable, and its part holds the records of lower ranks first, so equal keys keep their input
//      order across ranks. With --unique, where how many records each part keeps is known only once
//      all are sorted, a rank sorts into a nameless temp file, drops a first record whose key ended the
//      part before, and copies the rest into its place.
// Where every rank runs on one host and the keys are whole records (no --unique, no --verify), steps
// 2, 3 and 5 give way to a sort first (--exchange runs): OUTPUT is made, each rank
// sorts its range into runs in its own region of OUTPUT (sort_part, PartSortOptions::shared_runs), which
// the other ranks map (shared_runs.hpp); each then cuts its exact share of the merge of every rank's
// runs out of them where they lie (multi-way selection: the parts are the ranges' sizes, to the
// record) and merges it into memory of its own, and once every rank has merged, copies it over its
// runs. Nothing is counted, scattered or sent: each rank does what gpusort-file does for its range,
// reading the others' runs in its merge, plus one copy. Where a range lies across files of an
// --input-list or its part would not fit in half the rank's budget, the ranks take steps 2 to 5.
// --exchange shared takes them always; --exchange messages takes them with MPI messages between the
// ranks of a host too. --exchange gpu (every rank of one host on a GPU, whole-record keys): after
// step 2, each rank sorts its range a chunk at a time on its GPU, cuts each chunk at the splitters,
// and copies its piece of every rank's chunk from that rank's GPU into runs of its own
// (gpu_runs.hpp); then it merges its runs straight into its place in OUTPUT, whose pages it faulted
// in meanwhile. Where that cannot be (no GPU, a range across files, ...), rank 0 says why and the
// ranks sort first as with --exchange runs. --exchange auto, the default, takes the exchange through
// the GPUs where it can be used, else sorts first where that can be, else steps 2 to 5, saying nothing.
// A failure on any rank ends every rank (Communicator::agree) with no OUTPUT and no temp file left;
// a rank that dies leaves none either (the others, ended by the launcher, remove what it named).
#pragma once

#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"
#include "src/distributed/communicator.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusort::distributed {

struct DistributedOptions {
    SortOptions sort;          // INPUT, OUTPUT, the key, the budgets and the backend of each rank
    bool partitioned = false;  // OUTPUT.00000, OUTPUT.00001, ...: one file per rank, in key order
    bool input_list = false;   // sort.input names a list of files (--input-list), sorted as one INPUT
    // How the records reach their parts (--exchange): "auto", "gpu", "runs", "shared" or "messages" (above).
    std::string exchange = "auto";
    int local_rank = 0;        // this rank among the ranks of its host, as the launcher says
    int local_ranks = 1;       // the ranks of its host
};

// The GPU of the rank that is `local_rank` among the ranks of its host: local_rank mod the GPUs.
int device_of_local_rank(int local_rank);

// Makes the context of the rank's GPU (a few tenths of a second) and returns the --device-memory
// the rank takes by default: where the ranks of its host share its GPU, each an equal share of the
// GPU's memory available now (before any of them sorts), else none set (the single-process
// default). None either with --device-memory, --backend cpu or no GPU (which make no context).
std::optional<std::uint64_t> prepare_device(const SortOptions& sort, int local_rank, int local_ranks);

// The name of rank `rank`'s file under --partitioned: OUTPUT.00000 and on.
std::string partition_name(const std::string& output, int rank);

struct DistributedReport {
    PartSortReport part;                            // this rank's sort of its part (empty when it got none)
    std::size_t record_size = 0;                  // bytes per record
    std::uint64_t range_records = 0;              // records of this rank's range of INPUT
    std::vector<std::uint64_t> part_records;      // records of every rank's part, as received
    std::uint64_t output_records = 0;             // records of all parts, after --unique
    std::uint64_t splitters = 0;
    // How this rank read its range: "map" (through a map of INPUT), "kept" (read once, into memory,
    // in the counting pass), "twice" (block by block in the counting pass and again in the
    // exchange), or "sort" (one rank: the sort of its part read INPUT itself).
    std::string range_read = "sort";
    std::uint64_t memory_budget = 0;              // this rank's (--memory, or its share of the host's default)
    unsigned threads = 0;                         // this rank's host threads (--threads, or its share of the host's CPUs)
    double imbalance = 0;                         // the largest part over the mean, less 1
    std::uint64_t exchange_bytes_sent = 0;        // by this rank to others
    std::uint64_t shared_bytes_sent = 0;          // of them, through shared memory
    std::uint64_t peer_bytes_read = 0;            // sorting first: of the other ranks' runs, by this rank's merge
    std::uint64_t exchange_rounds = 0;            // of the sample sort's exchange, or the chunks of the exchange through the GPUs
    std::string exchange;                         // how the records reached their parts: runs, shared, messages or none (one rank)
    // This rank's steps, wall clock: samples and splitters, the counting pass, the exchange, the
    // sort of its part (OUTPUT made, and the part written into it; sorting first, its runs formed
    // and its part merged), and OUTPUT moved into place (with --unique, the kept records copied
    // there first; sorting first, the part copied over the runs first). Of the exchange, `transfer` is the time
    // of its rounds (MPI's messages, and the copies out of the send areas of the host) on the thread
    // that moves them, while this one reads, classifies and lays out the next round.
    struct Seconds {
        double samples = 0, counting = 0, exchange = 0, transfer = 0, sort = 0, output = 0;
    } step_seconds;
    double seconds = 0;                           // the whole job, this rank
};

// Runs on every rank at once (collective). Throws RankError on every rank when any rank fails.
DistributedReport distributed_sort(const DistributedOptions& options, const Communicator& ranks);

}  // namespace gpusort::distributed
