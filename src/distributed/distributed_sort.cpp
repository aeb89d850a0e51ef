// distributed_sort: the job as its steps (distributed_sort.hpp): plan the job and take this rank's
// range, choose the way the records reach their parts (exchange_way.hpp: each way in a file of its
// own), exchange, make OUTPUT, sort the parts into it, commit OUTPUT and report.
#include "src/distributed/distributed_sort.hpp"

#include "gpusort/sort_plan.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/distributed/exchange_way.hpp"
#include "src/distributed/host_share.hpp"
#include "src/distributed/job.hpp"
#include "src/distributed/job_output.hpp"

#include <algorithm>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>

#include <tbb/global_control.h>

#ifdef GPUSORT_WITH_GPU
#include "gpu/device.hpp"
#endif

namespace gpusort::distributed {

namespace {

// The way the records take (collective): by --exchange, of the ways it lets the ranks try (auto and
// gpu: the GPUs, then sorting first; runs: sorting first; shared and messages: the sample sort
// alone), the first that every rank can take, else the sample sort. One rank on one INPUT file
// sorts it as gpusort-file does: no samples, no counting pass, no exchange.
std::unique_ptr<ExchangeWay> choose_exchange(Job& job) {
    const std::string& exchange = job.options.exchange;
    if (job.p == 1 && !job.options.input_list) {
        job.report.exchange = "none";
        return sort_whole_input();
    }
    const bool may_exchange_through_gpus = exchange == "auto" || exchange == "gpu";
    if (may_exchange_through_gpus)
        if (auto way = exchange_through_gpus(job)) return way;
    if (may_exchange_through_gpus || exchange == "runs")
        if (auto way = sort_first(job)) return way;
    return sample_sort(exchange != "messages");
}

}  // namespace

int device_of_local_rank(int local_rank) {
#ifdef GPUSORT_WITH_GPU
    return device_of(local_rank, gpu::device_count());
#else
    return device_of(local_rank, 0);  // no GPU: the CPU backend takes no device
#endif
}

std::optional<std::uint64_t> prepare_device(const SortOptions& sort, int local_rank, int local_ranks) {
#ifdef GPUSORT_WITH_GPU
    if (sort.backend == Backend::cpu) return std::nullopt;
    const int devices = gpu::device_count();
    if (devices == 0) return std::nullopt;
    const int sharing = ranks_sharing_device(local_rank, local_ranks, devices);
    try {
        const std::uint64_t free_bytes = gpu::device_info(sort.device).free_bytes;  // makes the context
        if (sort.device_memory_bytes || sharing == 1) return std::nullopt;
        return device_memory_available(free_bytes) / static_cast<std::uint64_t>(sharing);
    } catch (const std::exception&) {
        return std::nullopt;  // the sort itself says what is wrong with the GPU
    }
#else
    static_cast<void>(sort), static_cast<void>(local_rank), static_cast<void>(local_ranks);  // no GPU: nothing to share
    return std::nullopt;
#endif
}

std::string partition_name(const std::string& output, int rank) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, ".%05d", rank);
    return output + suffix;
}

DistributedReport distributed_sort(const DistributedOptions& options, const Communicator& ranks) {
    Job job(options, ranks);
    const tbb::global_control thread_limit(tbb::global_control::max_allowed_parallelism, job.threads);
    // The GPU's context, and the rank's share of its memory where ranks share it, on a thread of
    // their own while the ranks sample, count and exchange: the part's sort then finds it made.
    std::future<std::optional<std::uint64_t>> device_share =
        std::async(std::launch::async, [&] { return prepare_device(options.sort, options.local_rank, options.local_ranks); });

    job.take_range();
    job.report.part_records.assign(1, job.records);
    const std::unique_ptr<ExchangeWay> way = choose_exchange(job);
    job.start_steps();
    way->exchange(job);
    // Every rank has read its share of the GPU before the ranks agree that OUTPUT is made (below),
    // so before any of them sorts.
    job.step([&] {
        if (const auto share = device_share.get()) job.device_budget = share;
    });
    JobOutput output(job);
    way->sort_part(job, output);
    output.commit(job);
    job.end_step(job.report.step_seconds.output);
    if (job.progress) job.progress->start_phase(ProgressPhase::done, 0);
    job.report.seconds = seconds_since(job.start);
    return job.report;
}

}  // namespace gpusort::distributed
