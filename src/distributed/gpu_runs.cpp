#include "src/distributed/gpu_runs.hpp"
#include "src/plan/plan_sort.hpp"

#include "io/host_buffer.hpp"

#include <stdexcept>

#ifdef GPUSORT_WITH_GPU
#include "gpu/device.hpp"
#include "gpu/peer_exchange.hpp"
#endif

namespace gpusort::distributed {

std::string gpu_exchange_refused(const SortOptions& sort) {
#ifdef GPUSORT_WITH_GPU
    if (sort.backend == Backend::cpu) return "--backend cpu";
    if (gpu::device_count() == 0) return "no GPU: " + gpu::device_unavailable_reason();
    return "";
#else
    static_cast<void>(sort);
    return "this build has no GPU support";
#endif
}

GpuRuns form_runs_through_gpus(const SortOptions& sort, std::optional<std::uint64_t> device_bytes, const Communicator& ranks,
                               std::span<const std::byte> range, std::uint64_t first, const std::vector<std::byte>& splitter_keys,
                               const std::vector<std::uint64_t>& splitter_positions, std::span<std::byte> runs) {
#ifdef GPUSORT_WITH_GPU
    gpu::PeerExchangeJob job;
    job.device = sort.device;
    job.order = sort.order;
    job.rank = ranks.rank();
    job.ranks = ranks.size();
    job.device_bytes = static_cast<std::size_t>(device_bytes.value_or(device_memory_available(gpu::device_info(sort.device).free_bytes)));
    job.range = range;
    job.first = first;
    job.splitter_keys = splitter_keys;
    job.splitter_positions = splitter_positions;
    job.runs = runs;
    job.copy = [](std::byte* to, std::span<const std::byte> from) { io::copy_parallel(to, from); };
    const gpu::PeerTrade trade{[&ranks](std::span<const std::uint64_t> mine) { return ranks.all_gather(mine); }};
    try {
        const gpu::PeerExchangeReport report = gpu::form_runs_exchanging(job, trade);
        return {report.run_records, report.peer_bytes, report.sent_bytes, report.chunks, report.pull_seconds};
    } catch (const gpu::PeerFailed&) {
        return {};  // another rank failed: it says why when the ranks agree
    }
#else
    static_cast<void>(sort), static_cast<void>(device_bytes), static_cast<void>(ranks), static_cast<void>(range),
        static_cast<void>(first), static_cast<void>(splitter_keys), static_cast<void>(splitter_positions), static_cast<void>(runs);
    throw std::logic_error("the exchange through the GPUs needs a build with GPU support");  // gpu_exchange_refused said so first
#endif
}

}  // namespace gpusort::distributed
