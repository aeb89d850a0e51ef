// The sort of a rank's part in the sample sort (exchange_sample.cpp), by the single-process engine
// (sort_file): straight into its place in OUTPUT; with --unique, where how many records each part
// keeps is known only once all are sorted, into a nameless temp file, whose kept records are then
// copied there (a part's first record dropped where its key ended the part before).
#pragma once

#include "io/file.hpp"
#include "io/host_buffer.hpp"
#include "src/distributed/job.hpp"
#include "src/distributed/job_output.hpp"

#include <cstdint>
#include <optional>

namespace gpusort::distributed {

// Where the exchange left this rank's part: in memory, or in a temp file; neither where the part is
// INPUT itself (one rank).
struct ReceivedPart {
    std::optional<io::HostBuffer> memory;
    std::optional<io::File> file;
};

// Sorts this rank's part of `records` records into its place in `output` (collective); frees
// `received` once sorted. Sets the report's part and output_records.
void sort_received_part(Job& job, const JobOutput& output, ReceivedPart& received, std::uint64_t records);

}  // namespace gpusort::distributed
