// The help of gpusort-mpi (--help), from which help2man makes its manual page.
#pragma once

namespace gpusort::distributed {

inline constexpr const char* kMpiHelp =
    "Usage: mpirun -n N gpusort-mpi [OPTIONS] [--partitioned] INPUT OUTPUT\n"
    "       mpirun -n N gpusort-mpi [OPTIONS] [--partitioned] --input-list FILE OUTPUT\n"
    "For whole-record keys, the ranks of one host that each have a GPU copy their pieces of every\n"
    "rank's sorted chunks from that rank's GPU into runs of their own and merge them into OUTPUT\n"
    "(--exchange gpu); else they sort their ranges first, into runs in OUTPUT, and each merges its\n"
    "part of all the runs where they lie (--exchange runs); else, and with --exchange shared, they\n"
    "send the records to their parts through shared memory and sort after; with --exchange\n"
    "messages, by MPI messages alone (as between hosts). --exchange auto, the default, takes the\n"
    "first of these ways that the job allows; gpu says why where it cannot be used.\n"
    "Every rank sorts a share of INPUT (a file all ranks see) into one sorted OUTPUT, or with\n"
    "--partitioned into OUTPUT.00000, OUTPUT.00001, ... (one per rank, in key order). With\n"
    "--input-list, INPUT is the files FILE names, one path per line, one after the other. Rank r uses\n"
    "GPU r mod the GPUs of its host; without --threads, ranks that may all run on the host's CPUs\n"
    "(mpirun --bind-to none) take an equal share of them. The options are those of gpusort-file:\n\n";

}  // namespace gpusort::distributed
