// Which GPU each rank of a host takes, and how many ranks share it: rank r among the ranks of its
// host takes GPU r mod the host's GPUs. Needs no MPI and no GPU (tested in
// tests/distributed_step_test.cpp).
#pragma once

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

}  // namespace gpusort::distributed
