// ExchangeWay: one way of bringing the records of every rank's range to the rank of their part and
// sorting each part into its place in OUTPUT (--exchange; distributed_sort.hpp says when each is
// taken). Each way lives in a file named for it:
//
//   exchange_gpu.cpp      gpu: runs of each rank's part formed of pieces copied between the GPUs
//                         (gpu_runs.hpp), merged straight into OUTPUT;
//   exchange_runs.cpp     runs: each rank sorts its range into runs in its region of OUTPUT and
//                         merges its part of every rank's runs where they lie (shared_runs.hpp);
//   exchange_sample.cpp   shared and messages: the sample sort, whose counted exchange moves the
//                         records through shared memory between the ranks of a host or by MPI
//                         messages (communicator.hpp, Exchange), each part then sorted by sort_file;
//                         with one rank on one INPUT file, its part is INPUT itself (no exchange).
//
// The job calls exchange() once OUTPUT's way is chosen and sort_part() once OUTPUT is made; both are
// collective (every rank calls them at once) and end with the ranks agreeing (Job::agree()).
#pragma once

#include "src/distributed/job.hpp"
#include "src/sort/sort_part.hpp"
#include "src/distributed/job_output.hpp"

#include <memory>

namespace gpusort::distributed {

class ExchangeWay {
public:
    virtual ~ExchangeWay() = default;
    // Before OUTPUT is made: the splitters, and whatever the way moves before its parts are sorted.
    // Leaves every rank's part in the report's part_records.
    virtual void exchange(Job& job) = 0;
    // This rank's part, sorted into its place in OUTPUT; sets the report's output_records.
    virtual void sort_part(Job& job, const JobOutput& output) = 0;
};

// The exchange through the GPUs (exchange_gpu.cpp), where every rank can take it; else none, and
// with --exchange gpu rank 0 says why.
std::unique_ptr<ExchangeWay> exchange_through_gpus(Job& job);
// Sorting first (exchange_runs.cpp), where every rank can; else none.
std::unique_ptr<ExchangeWay> sort_first(Job& job);
// The sample sort (exchange_sample.cpp): its exchange through shared memory between the ranks of a
// host where `shared_memory` allows it, else by MPI messages.
std::unique_ptr<ExchangeWay> sample_sort(bool shared_memory);
// One rank on one INPUT file (exchange_sample.cpp): its part is INPUT, sorted straight from it.
std::unique_ptr<ExchangeWay> sort_whole_input();

}  // namespace gpusort::distributed
