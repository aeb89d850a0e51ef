// How the ranks of a host share its GPUs and CPUs: which GPU each rank takes and how many ranks share
// it (rank r among the ranks of its host takes GPU r mod the host's GPUs), and how many threads a
// rank runs. Needs no MPI and no GPU (tested in tests/distributed_step_test.cpp).
#pragma once

#include <algorithm>

namespace gpusort::distributed {

// The GPU of the rank that is `local_rank` among the ranks of a host with `devices` GPUs (0 without any).
inline int device_of(int local_rank, int devices) { return devices > 0 ? local_rank % devices : 0; }

// How many of the `local_ranks` ranks of a host with `devices` GPUs take the GPU of the rank that is
// `local_rank` among them (all of them without any GPU).
inline int ranks_sharing_device(int local_rank, int local_ranks, int devices) {
    int sharing = 0;
    for (int r = 0; r < local_ranks; ++r) sharing += device_of(r, devices) == device_of(local_rank, devices) ? 1 : 0;
    return sharing;
}

// The threads of a rank not given --threads, which may run on `mine` CPUs of the `host` CPUs that the
// `local_ranks` ranks of its host may use: all of its CPUs where the ranks' CPUs can be apart (ranks
// bound to CPUs of their own); where they cannot (ranks unbound, each on all of the host's CPUs), an
// equal share of the host's, at least one. A thread per CPU for each rank would put twice as many
// threads as CPUs on a host of 2 ranks: on the machine of 2 H200, 32 GiB with 2 ranks took 8.32 s
// (median of 3) with 32 threads each on its 32 CPUs, 6.90 s with 16 (docs/distributed.md, "Tuning").
inline unsigned rank_threads(unsigned mine, unsigned host, int local_ranks) {
    const unsigned ranks = static_cast<unsigned>(std::max(1, local_ranks));
    if (static_cast<unsigned long long>(mine) * ranks <= host) return std::max(1u, mine);
    return std::clamp(host / ranks, 1u, std::max(1u, mine));
}

// Whether ranks bound to `mine` CPUs each leave some of the `host` CPUs of their `local_ranks` ranks idle.
inline bool leaves_cpus_idle(unsigned mine, unsigned host, int local_ranks) {
    return static_cast<unsigned long long>(mine) * static_cast<unsigned>(std::max(1, local_ranks)) < host;
}

}  // namespace gpusort::distributed
