#include "src/distributed/job_output.hpp"

#include <array>
#include <string>
#include <vector>

namespace gpusort::distributed {

JobOutput::JobOutput(Job& job) {
    const bool partitioned = job.options.partitioned;
    const std::string& output = job.sort.output;
    std::string hidden;
    job.step([&] {
        if (!partitioned && job.rank == 0) hidden = io::AtomicOutputFile::hidden_name_for(output);
    });
    job.agree();
    if (!partitioned) {
        hidden = job.ranks.broadcast(hidden, 0);
        if (job.rank != 0) peer_cleanup_ = io::UnlinkOnSignal(hidden);  // rank 0's file registers it itself
    }
    job.step([&] {
        if (partitioned) {
            out_.emplace(partition_name(output, job.rank));
        } else if (job.rank == 0) {
            out_.emplace(output, hidden);
            if (!job.sort.unique) out_->file().truncate(part_offset_total(job.report.part_records, job.rank).second * job.width);
        }
    });
    job.agree();
    if (!partitioned) {
        job.step([&] { shared_.emplace(io::File::open_existing(hidden, true, "cannot write", output)); });
        job.agree();
    }
}

const io::File& JobOutput::target() const { return shared_ ? *shared_ : out_->file(); }

void JobOutput::resize(const Job& job, std::uint64_t bytes) const {
    if (!job.options.partitioned && job.rank == 0) out_->file().truncate(bytes);
}

void JobOutput::commit(Job& job) {
    if (job.options.partitioned) {
        commit_partitioned(job);
    } else {
        shared_.reset();
        job.step([&] {
            if (job.rank == 0) out_->commit(job.sort.sync);
        });
        job.agree();
    }
    peer_cleanup_.release();  // every rank's part is in place
}

// Every rank's file by device and inode, so that each rank removes any rank's of its host (whose
// file system it sees as that rank does) that is in place when the job fails, its own or a dead
// rank's (on the launcher's signal), and leaves an older file of that name that was not replaced. A
// name that is a symbolic link is the link's target, where the file goes.
void JobOutput::commit_partitioned(Job& job) {
    const int p = job.p;
    io::FileId mine;
    std::vector<std::string> placed_at(static_cast<std::size_t>(p));
    job.step([&] {
        mine = out_->file().id();
        for (int s = 0; s < p; ++s)
            if (job.ranks.on_this_host(s)) placed_at[static_cast<std::size_t>(s)] = io::follow_links(partition_name(job.sort.output, s));
    });
    job.agree();
    const std::vector<std::uint64_t> ids = job.ranks.all_gather(std::span<const std::uint64_t>(std::array{mine.device, mine.inode}));
    auto id_of = [&](int s) {
        return io::FileId{ids[static_cast<std::size_t>(2 * s)], ids[static_cast<std::size_t>(2 * s + 1)]};
    };
    // On a signal: its own and the next ranks' of its host, a quarter of the table of paths to
    // remove on a signal at most.
    std::vector<io::UnlinkOnSignal> placed;
    for (int k = 0; k < p && placed.size() < io::kSignalCleanupCapacity / 4; ++k) {
        const int s = (job.rank + k) % p;
        if (job.ranks.on_this_host(s)) placed.emplace_back(placed_at[static_cast<std::size_t>(s)], id_of(s));
    }
    job.step([&] { out_->commit(job.sort.sync); });
    try {
        job.agree();
    } catch (const RankError&) {
        for (int s = 0; s < p; ++s)  // another rank's file did not appear: none does
            if (job.ranks.on_this_host(s)) io::unlink_if_names(placed_at[static_cast<std::size_t>(s)].c_str(), id_of(s));
        throw;
    }
}

}  // namespace gpusort::distributed
