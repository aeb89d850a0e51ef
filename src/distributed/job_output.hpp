// JobOutput: OUTPUT of a distributed sort (steps 4 and 6 of distributed_sort.hpp), made before the
// parts are sorted into it: with --partitioned a file of each rank's own, else one file that rank 0
// creates under a hidden name and every rank opens to write its part of. Either appears only once
// every rank has written its part (commit()).
#pragma once

#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/signal_cleanup.hpp"
#include "src/distributed/job.hpp"

#include <cstdint>
#include <optional>

namespace gpusort::distributed {

class JobOutput {
public:
    // Makes OUTPUT (collective): rank 0's sized for every rank's part (but with --unique, where the
    // parts' sizes are known only once they are sorted: resize()).
    explicit JobOutput(Job& job);
    // Where this rank writes its part: its own file, or OUTPUT as every rank opened it.
    const io::File& target() const;
    // Sizes the one OUTPUT of the ranks to `bytes` (rank 0 alone; none with --partitioned).
    void resize(const Job& job, std::uint64_t bytes) const;
    // Moves OUTPUT into place once every rank has written its part (collective).
    void commit(Job& job);

private:
    void commit_partitioned(Job& job);

    std::optional<io::AtomicOutputFile> out_;  // this rank's partition file, or rank 0's OUTPUT
    std::optional<io::File> shared_;           // OUTPUT as every rank writes it (not partitioned)
    // A rank that dies (SIGKILL, its node lost) cannot remove what it named; the launcher then ends
    // the others by SIGTERM, and they remove it: OUTPUT's hidden name (chosen by rank 0 and
    // registered by every other rank before rank 0 makes the file, so that no moment of it is
    // unknown to them) and, with --partitioned, the ranks' files in place (commit()), until every
    // rank's is.
    io::UnlinkOnSignal peer_cleanup_;
};

}  // namespace gpusort::distributed
