// The exchange through the GPUs for gpusort-mpi (--exchange gpu; gpu/peer_exchange.hpp): every rank
// of one host forms runs of its part, its pieces of every rank's sorted chunks copied from that
// rank's GPU, trading the cuts between the chunks by MPI. The ranks then merge their runs straight
// into their places in OUTPUT (exchange_gpu.cpp).
#pragma once

#include "gpusort/sort_file.hpp"
#include "src/distributed/communicator.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpusort::distributed {

// Empty where this rank can exchange through its GPU (a build with GPUs, the GPU backend, a GPU),
// else why it cannot.
std::string gpu_exchange_refused(const SortOptions& sort);

struct GpuRuns {
    std::vector<std::uint64_t> run_records;  // of each run, one after the other in the runs' memory
    std::uint64_t peer_bytes = 0;            // copied from other ranks' GPUs
    std::uint64_t sent_bytes = 0;            // of this rank's chunks, copied by other ranks
    std::uint64_t rounds = 0;                // the chunks every rank sorted, in step
    double pull_seconds = 0;                 // the copies between the GPUs, trades included
};

// Forms this rank's runs of whole-record keys of sort.order into `runs` (collective): its range,
// whose first key is at input position `first`, and the ranks - 1 splitters (raw keys, one after
// the other, and their input positions). `device_bytes`: this rank's share of its GPU where the
// ranks share it, else none (what its GPU has free). Throws on a rank that failed; the others
// return no runs, and the ranks' agreement on the step then says why.
GpuRuns form_runs_through_gpus(const SortOptions& sort, std::optional<std::uint64_t> device_bytes, const Communicator& ranks,
                               std::span<const std::byte> range, std::uint64_t first, const std::vector<std::byte>& splitter_keys,
                               const std::vector<std::uint64_t>& splitter_positions, std::span<std::byte> runs);

}  // namespace gpusort::distributed
