// The exchange through the GPUs (--exchange gpu, and the default where every rank has a GPU): after
// the splitters, each rank sorts its range a chunk at a time on its GPU, cuts each chunk at the
// splitters and copies its piece of every rank's chunk from that rank's GPU into runs of its own
// (gpu_runs.hpp), while the pages of its share of OUTPUT are faulted in; then it merges its runs
// straight into its place in OUTPUT.
#include "gpusort/sort_plan.hpp"
#include "src/sort/sort_part.hpp"
#include "io/host_buffer.hpp"
#include "src/distributed/exchange_way.hpp"
#include "src/distributed/gpu_runs.hpp"
#include "src/distributed/shared_runs.hpp"
#include "src/output/sort_output.hpp"

#include <algorithm>
#include <optional>

namespace gpusort::distributed {

namespace {

// Why this rank cannot take the exchange through the GPUs (empty: it can). Maps its range of INPUT
// where it can.
std::string refused_here(Job& job) {
    const SortOptions& sort = job.sort;
    std::string refused;
    job.step([&] {
        if (job.ranks.host_size() != job.p) refused = "the ranks are not all on one host";
        else if (sort.records || sort.unique || sort.verify) refused = "it takes whole-record keys, without --unique or --verify";
        else if (job.all_records == 0) refused = "INPUT holds no record";
        else if (refused = gpu_exchange_refused(sort); !refused.empty()) return;
        else if (job.records * job.width > job.budget / 2) refused = "a range is larger than half the rank's memory budget";
        else if (job.rank == 0 && !output_folder_reserves(sort.output)) refused = "OUTPUT's file system does not reserve space";
        else if (job.records > 0 && !(job.range_map = job.input.map(job.first * job.width, job.records * job.width)))
            refused = "a range lies across files";
    });
    job.agree();
    return refused;
}

// Where this rank's part is expected in OUTPUT: its range's region and a sixty-fourth of it on
// either side, where its part will lie within the splitters' imbalance (none with --partitioned,
// where its part is its file).
struct Region {
    std::uint64_t at = 0, end = 0;  // bytes of OUTPUT
};
Region expected_region(const Job& job) {
    if (job.options.partitioned) return {};
    const std::uint64_t slack = job.records * job.width / 64;
    const std::uint64_t range_at = job.first * job.width;
    return {range_at > slack ? range_at - slack : 0, std::min(job.all_records * job.width, range_at + job.records * job.width + slack)};
}

class GpuExchange final : public ExchangeWay {
public:
    void exchange(Job& job) override;
    void sort_part(Job& job, const JobOutput& output) override;

private:
    GpuRuns form_runs(Job& job);
    void merge_into_place(Job& job, const JobOutput& output, const Region& expected, std::optional<OwnRuns>& region,
                          const std::vector<std::uint64_t>& run_records);

    std::vector<std::byte> splitter_keys_;  // raw, one after the other
    std::vector<std::uint64_t> splitter_positions_;
    io::HostBuffer runs_memory_;  // room for the runs of the largest part this rank could receive
    std::uint64_t part_ = 0;      // records of this rank's part, once received
};

// The splitters' raw keys (read where they lie in INPUT), and room for the runs of the largest part
// this rank could receive (only what it receives is touched). The runs are formed once OUTPUT is
// made (sort_part); until then the parts are the ranges.
void GpuExchange::exchange(Job& job) {
    const std::vector<KeyPoint> splitters = job.take_splitters();
    job.step([&] {
        splitter_keys_.resize(splitters.size() * job.width);
        for (std::size_t j = 0; j < splitters.size(); ++j) {
            job.input.read(splitters[j].position * job.width, std::span<std::byte>(splitter_keys_.data() + j * job.width, job.width));
            splitter_positions_.push_back(splitters[j].position);
        }
        runs_memory_ = io::HostBuffer(static_cast<std::size_t>(job.all_records * job.width));
    });
    job.agree();
    job.report.part_records = job.range_records_of_every_rank();
}

// This rank's runs formed with the exchange through the GPUs, while the pages of its expected
// region of OUTPUT are faulted in; then its runs (its part) merged straight into their place.
void GpuExchange::sort_part(Job& job, const JobOutput& output) {
    const Region expected = expected_region(job);
    std::optional<OwnRuns> region;
    job.step([&] { region.emplace(output.target(), expected.at, expected.end - expected.at, std::max(1u, job.threads / 2)); });
    job.agree();
    const GpuRuns exchanged = form_runs(job);
    merge_into_place(job, output, expected, region, exchanged.run_records);
}

GpuRuns GpuExchange::form_runs(Job& job) {
    const std::uint64_t range_bytes = job.records * job.width;
    if (job.progress) job.progress->start_phase(ProgressPhase::exchanging, range_bytes);
    GpuRuns exchanged;
    job.step([&] {
        exchanged = form_runs_through_gpus(job.sort, job.device_budget, job.ranks, job.mapped_range(), job.first, splitter_keys_,
                                           splitter_positions_, std::span<std::byte>(runs_memory_.data(), runs_memory_.size()));
        if (job.progress) job.progress->add(range_bytes);
    });
    job.agree();
    job.range_map.reset();
    std::uint64_t received = 0;
    for (const std::uint64_t n : exchanged.run_records) received += n;
    DistributedReport& report = job.report;
    report.part_records = job.ranks.all_gather(std::span<const std::uint64_t>(&received, 1));
    part_ = received;
    report.imbalance = imbalance_of(report.part_records);
    report.peer_bytes_read = exchanged.peer_bytes;
    report.exchange_bytes_sent = exchanged.sent_bytes;
    report.exchange_rounds = exchanged.rounds;
    report.step_seconds.transfer = exchanged.pull_seconds;
    job.end_step(report.step_seconds.exchange);
    return exchanged;
}

// This rank's runs (of `run_records` records each) merged into its part's place in OUTPUT, the
// written pages released behind the merge. A part beyond the region faulted in (an imbalance larger
// than its margin) is mapped on its own.
void GpuExchange::merge_into_place(Job& job, const JobOutput& output, const Region& expected, std::optional<OwnRuns>& region,
                                   const std::vector<std::uint64_t>& run_records) {
    const std::size_t width = job.width;
    const auto [offset, total] = part_offset_total(job.report.part_records, job.rank);
    const std::uint64_t part_at = job.options.partitioned ? 0 : offset * width, part_bytes = part_ * width;
    const bool outside = part_at < expected.at || part_at + part_bytes > expected.end;
    const std::uint64_t map_at = outside ? part_at : expected.at;
    job.step([&] {
        if (outside) region.emplace(output.target(), part_at, part_bytes, 0);
        if (part_ == 0) return;
        const std::span<std::byte> runs_bytes(runs_memory_.data(), static_cast<std::size_t>(part_bytes));
        constexpr std::size_t kReleasePieceBytes = std::size_t{1} << 30;
        std::optional<io::ReleaseBehind> released;
        released.emplace(*region->mapping(), kReleasePieceBytes);
        released->written(0, part_at - map_at);  // the bytes before the part are not this rank's to write
        SharedRuns given;
        given.runs = runs_bytes;
        given.part = region->bytes().subspan(static_cast<std::size_t>(part_at - map_at), static_cast<std::size_t>(part_bytes));
        given.formed = run_records;
        given.gather = [&](std::span<const std::uint64_t> sizes) { return runs_in(runs_bytes, sizes, width); };
        given.written = release_behind(*released, part_at - map_at);
        PartSortOptions local = job.part_sort_options();
        local.input_memory = runs_bytes;
        local.memory_bytes = std::max(kMinMemoryBudget, job.budget - part_bytes);
        local.shared_runs = given;
        job.report.part = gpusort::sort_part(local);
        released.reset();
        runs_memory_ = io::HostBuffer();
        region.reset();
        if (job.sort.sync) output.target().sync_data();
    });
    job.agree();
    job.report.output_records = total;
    job.end_step(job.report.step_seconds.sort);
}

}  // namespace

std::unique_ptr<ExchangeWay> exchange_through_gpus(Job& job) {
    const std::vector<std::string> every = job.ranks.all_gather(refused_here(job));
    const bool taken = std::all_of(every.begin(), every.end(), [](const std::string& why) { return why.empty(); });
    if (!taken && job.options.exchange == "gpu" && job.rank == 0 && job.sort.notice)
        for (int s = 0; s < job.p; ++s)
            if (!every[static_cast<std::size_t>(s)].empty()) {
                job.sort.notice("the exchange through the GPUs cannot be used (rank " + std::to_string(s) + ": " +
                                every[static_cast<std::size_t>(s)] + "): the ranks sort first as with --exchange runs");
                break;
            }
    if (!taken) return nullptr;
    job.report.exchange = "gpu";
    job.report.range_read = "map";
    return std::make_unique<GpuExchange>();
}

}  // namespace gpusort::distributed
