// Sorting first (--exchange runs, and the default where the GPUs cannot be used): each rank sorts its
// range into runs in its own region of OUTPUT (sort_part, PartSortOptions::shared_runs), which the other
// ranks of the host map (shared_runs.hpp); each then cuts its exact share of the merge of every
// rank's runs out of them where they lie (the parts are the ranges' sizes, to the record), merges it
// into memory of its own, and once every rank has merged, copies it over its runs. Nothing is
// counted, scattered or sent.
#include "gpusort/sort_plan.hpp"
#include "src/sort/sort_part.hpp"
#include "io/host_buffer.hpp"
#include "io/parallel_io.hpp"
#include "src/distributed/exchange_way.hpp"
#include "src/distributed/shared_runs.hpp"
#include "src/output/sort_output.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <optional>

namespace gpusort::distributed {

namespace {

// Whether this rank can sort first: every rank on this host, whole-record keys, its range in one
// file (mapped here) and its part of the merge (as large as its range) in half its budget, and
// OUTPUT's file system reserving space.
bool fits_here(Job& job) {
    const SortOptions& sort = job.sort;
    bool fits = false;
    job.step([&] {
        if (job.ranks.host_size() != job.p || sort.records || sort.unique || sort.verify) return;
        if (job.records > 0) job.range_map = job.input.map(job.first * job.width, job.records * job.width);
        fits = (job.records == 0 || job.range_map) && job.records * job.width <= job.budget / 2 &&
               (job.rank != 0 || output_folder_reserves(sort.output));  // the ranks share a folder: one asks
    });
    job.agree();
    return fits;
}

// The runs of the ranks of this host as this rank sees them. The kernel unmaps a map of 16 GiB in
// about half a second, on one thread: each map other than the region's goes on a thread of its own
// once nothing reads it, while the job goes on (INPUT's once the runs are formed, the other ranks'
// once this rank's merge is done).
struct HostRuns {
    std::optional<OwnRuns> own;   // this rank's, in its region of OUTPUT
    std::vector<PeerRuns> peers;  // every other rank's
    std::future<void> input_released, peers_released;
};

class SortFirst final : public ExchangeWay {
public:
    void exchange(Job&) override {}  // nothing moves: each rank merges its part out of every rank's runs
    void sort_part(Job& job, const JobOutput& output) override;
};

// Rank s's region of OUTPUT, where its runs lie (its part starts where its range does).
std::uint64_t region_of(const Job& job, int s) {
    return job.options.partitioned ? 0 : range_first(job.all_records, s, job.p) * job.width;
}

void map_runs(Job& job, const io::File& target, HostRuns& runs) {
    runs.peers.resize(static_cast<std::size_t>(job.p));
    job.step([&] { runs.own.emplace(target, region_of(job, job.rank), job.records * job.width, std::max(1u, job.threads / 2)); });
    job.agree();
    const std::vector<std::string> addresses = job.ranks.all_gather(runs.own ? runs.own->address() : std::string());
    const std::vector<std::uint64_t> ranges = job.range_records_of_every_rank();
    job.step([&] {
        for (int s = 0; s < job.p; ++s)
            if (s != job.rank)
                runs.peers[static_cast<std::size_t>(s)] =
                    PeerRuns(addresses[static_cast<std::size_t>(s)], region_of(job, s), ranges[static_cast<std::size_t>(s)] * job.width);
    });
    job.agree();
}

// Every rank's runs, in rank order, once every rank has formed its own (collective, called by the
// merge): this rank's are of `sizes` records each. `counts` takes every rank's number of runs.
std::vector<std::span<const std::byte>> gather_runs(Job& job, HostRuns& runs, std::span<const std::uint64_t> sizes,
                                                    std::vector<std::uint64_t>& counts) {
    runs.input_released = std::async(std::launch::async, [&job] { job.range_map.reset(); });
    // Every rank has formed its runs (a rank that failed says so here, and every rank ends).
    job.ranks.agree(std::string());
    const std::uint64_t count = sizes.size();
    counts = job.ranks.all_gather(std::span<const std::uint64_t>(&count, 1));
    const std::vector<std::byte> all = job.ranks.all_gather(std::as_bytes(sizes));
    std::vector<std::uint64_t> records(all.size() / sizeof(std::uint64_t));
    if (!records.empty()) std::memcpy(records.data(), all.data(), records.size() * sizeof(std::uint64_t));  // none: no records at all
    std::vector<std::span<const std::byte>> every;
    std::size_t at = 0;  // runs of the ranks before
    for (int s = 0; s < job.p; ++s) {
        const std::span<const std::byte> memory =
            s == job.rank ? std::span<const std::byte>(runs.own->bytes()) : runs.peers[static_cast<std::size_t>(s)].bytes();
        const std::size_t of_rank = static_cast<std::size_t>(counts[static_cast<std::size_t>(s)]);
        for (const std::span<const std::byte> run : runs_in(memory, std::span<const std::uint64_t>(records).subspan(at, of_rank), job.width))
            every.push_back(run);
        at += of_rank;
    }
    return every;
}

// This rank's runs formed, and its part of every rank's runs merged into `merged`.
void merge_part(Job& job, HostRuns& runs, io::HostBuffer& merged) {
    PartSortOptions local = job.part_sort_options();
    local.input_memory = job.mapped_range();
    local.memory_bytes = std::max(kMinMemoryBudget, job.budget - job.records * job.width);
    std::vector<std::uint64_t> counts;  // every rank's runs
    SharedRuns shared;
    shared.first = job.first;
    shared.gather = [&](std::span<const std::uint64_t> sizes) { return gather_runs(job, runs, sizes, counts); };
    // A rank that failed before its runs were formed ends the others in their gather (above), as
    // RankError, which goes on to end the job; any other failure ends every rank after the merge.
    std::optional<RankError> failed_elsewhere;
    job.step([&] {
        try {
            merged = io::HostBuffer(static_cast<std::size_t>(job.records * job.width));
            shared.runs = runs.own->bytes();
            shared.part = std::span<std::byte>(merged.data(), merged.size());
            local.shared_runs = shared;
            job.report.part = sort_part(local);
            runs.peers_released = std::async(std::launch::async, [&runs] { runs.peers.clear(); });
        } catch (const RankError& e) {
            failed_elsewhere = e;
        }
    });
    if (failed_elsewhere) throw *failed_elsewhere;
    job.agree();  // every rank's merge has read what it needed of the others' runs
    // What crossed to this rank: its merge's records from the other ranks' runs.
    std::size_t run = 0;
    for (int s = 0; s < job.p; ++s)
        for (std::uint64_t r = 0; r < counts[static_cast<std::size_t>(s)]; ++r, ++run)
            if (s != job.rank) job.report.peer_bytes_read += job.report.part.shared_run_records.at(run) * job.width;
}

// This rank's part copied over its runs, once every rank has merged.
void copy_over_runs(Job& job, HostRuns& runs, io::HostBuffer& merged, const io::File& target) {
    job.step([&] {
        if (job.progress) job.progress->start_phase(ProgressPhase::writing, merged.size());
        // Dropping the region's pages from its map once it is all written took twice as long as
        // the copy, on one thread (0.8 s for 16 GiB on the H200 machine): the pages of each piece
        // copied are released on a thread of their own while the next piece is copied.
        constexpr std::size_t kReleasePieceBytes = std::size_t{1} << 30;
        {
            std::optional<io::ReleaseBehind> released;
            if (runs.own->mapping()) released.emplace(*runs.own->mapping(), kReleasePieceBytes);
            const SortOutput region(MappedFile{runs.own->bytes().data(), runs.own->bytes().size()}, job.progress,
                                    released ? release_behind(*released) : SortOutput::Written());
            io::for_each_piece(std::span<const std::byte>(merged.data(), merged.size()), job.width,
                               std::min(kReleasePieceBytes, io::progress_piece_bytes(job.progress != nullptr, job.threads, merged.size())),
                               [&](std::size_t offset, std::span<const std::byte> piece) { region.write(offset, piece); });
        }
        for (std::future<void>* unmapped : {&runs.peers_released, &runs.input_released})
            if (unmapped->valid()) unmapped->get();
        runs.own.reset();
        merged = io::HostBuffer();
        if (job.sort.sync) target.sync_data();
    });
    job.agree();
}

void SortFirst::sort_part(Job& job, const JobOutput& output) {
    HostRuns runs;
    map_runs(job, output.target(), runs);
    io::HostBuffer merged;  // this rank's part
    merge_part(job, runs, merged);
    job.end_step(job.report.step_seconds.sort);  // the copy belongs to the output step
    copy_over_runs(job, runs, merged, output.target());
    job.range_map.reset();
    job.report.output_records = job.all_records;
}

}  // namespace

std::unique_ptr<ExchangeWay> sort_first(Job& job) {
    const std::uint64_t mine = fits_here(job) ? 1 : 0;
    const std::vector<std::uint64_t> every = job.ranks.all_gather(std::span<const std::uint64_t>(&mine, 1));
    if (std::find(every.begin(), every.end(), 0) != every.end()) return nullptr;
    // The parts are the ranges' sizes: the merge is cut at the same records.
    job.report.part_records = job.range_records_of_every_rank();
    job.report.imbalance = imbalance_of(job.report.part_records);
    job.report.range_read = "map";
    job.report.exchange = "runs";
    return std::make_unique<SortFirst>();
}

}  // namespace gpusort::distributed
