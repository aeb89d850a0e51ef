// gpusort-tune-kernels: times the device sort under alternative kernel policies (threads per
// block, items per thread) on uniform random keys, to choose the tuned policies in
// gpu/dispatch/sort_policy.cuh. For each variant and key type it reports the whole sort, the
// tile sort alone and the merge passes (the difference), medians of CUDA-event timings, and checks
// that the output is ascending with the same multiset of keys.
//
// Options: --log-size N (default 28)  --reps N (default 5)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/dispatch/sort_launch.cuh"
#include "gpu/dispatch/sort_policy.cuh"
#include "gpu/event.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/stream.hpp"
#include "tests/gpu/support/device_fill.hpp"
#include "tests/gpu/support/order_check.hpp"

namespace {

using namespace gpusort::gpu;

struct Timing {
    double sort_ms = 0;
    double tile_sort_ms = 0;
    bool verified = false;
};

double median(std::vector<float> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

template <class Key, class Payload, class TilePolicy, class MergePolicy>
Timing time_variant(std::size_t n, int reps, cudaStream_t stream) {
    constexpr bool kPairs = kIsPayload<Payload>;
    using PayloadStorage = std::conditional_t<kPairs, Payload, std::uint32_t>;
    DeviceBuffer<Key> input(n), keys(n), key_scratch(n);
    DeviceBuffer<PayloadStorage> input_payload(kPairs ? n : 0), payload(kPairs ? n : 0),
        payload_scratch(kPairs ? n : 0);
    DeviceBuffer<std::int64_t> splits(detail::merge_split_count(n, MergePolicy::kTileSize));
    fill_random_keys(input.data(), n, 12345, stream);
    if constexpr (kPairs) fill_index_sequence(input_payload.data(), n, stream);
    const std::uint64_t hash = key_multiset_hash(input.data(), n, stream);
    auto* payload_pointer = reinterpret_cast<Payload*>(payload.data());
    auto* payload_scratch_pointer = reinterpret_cast<Payload*>(payload_scratch.data());

    Event start, stop;
    std::vector<float> sort_times, tile_times;
    for (int rep = 0; rep <= reps; ++rep) {
        for (int tile_only = 0; tile_only < 2; ++tile_only) {
            check_cuda(cudaMemcpyAsync(keys.data(), input.data(), n * sizeof(Key), cudaMemcpyDeviceToDevice, stream),
                       "restore");
            if constexpr (kPairs) {
                check_cuda(cudaMemcpyAsync(payload.data(), input_payload.data(), n * sizeof(Payload),
                                           cudaMemcpyDeviceToDevice, stream),
                           "restore");
            }
            start.record(stream);
            if (tile_only) {
                const auto kernel = detail::bitonic_tile_sort_kernel<Key, Payload, TilePolicy>;
                detail::allow_dynamic_shared_memory(kernel, TilePolicy::kSharedBytes);
                kernel<<<static_cast<unsigned>(detail::ceil_div(n, TilePolicy::kTileSize)), TilePolicy::kThreads,
                         TilePolicy::kSharedBytes, stream>>>(keys.data(), payload_pointer, keys.data(),
                                                             payload_pointer, static_cast<std::int64_t>(n));
                check_launch("bitonic_tile_sort_kernel");
            } else {
                detail::launch_sort<Key, Payload, TilePolicy, MergePolicy>(
                    keys.data(), payload_pointer, key_scratch.data(), payload_scratch_pointer, splits.data(),
                    static_cast<std::int64_t>(n), stream);
            }
            stop.record(stream);
            stop.synchronize();
            if (rep > 0) (tile_only ? tile_times : sort_times).push_back(Event::elapsed_ms(start, stop));
        }
    }
    // One more full sort to verify.
    check_cuda(cudaMemcpyAsync(keys.data(), input.data(), n * sizeof(Key), cudaMemcpyDeviceToDevice, stream), "restore");
    detail::launch_sort<Key, Payload, TilePolicy, MergePolicy>(keys.data(), payload_pointer, key_scratch.data(),
                                                               payload_scratch_pointer, splits.data(),
                                                               static_cast<std::int64_t>(n), stream);
    Timing timing;
    timing.sort_ms = median(sort_times);
    timing.tile_sort_ms = median(tile_times);
    timing.verified = count_descents(keys.data(), n, stream) == 0 && key_multiset_hash(keys.data(), n, stream) == hash;
    return timing;
}

template <class Key, class Payload, class TilePolicy, class MergePolicy>
void report(const char* variant, const char* type, std::size_t n, int reps, cudaStream_t stream) {
    const Timing t = time_variant<Key, Payload, TilePolicy, MergePolicy>(n, reps, stream);
    std::printf("%-34s %-8s tile %5d merge %5d | sort %8.3f ms  %6.2f GKeys/s | tile sort %7.3f ms | merges %8.3f ms | %s\n",
                variant, type, TilePolicy::kTileSize, MergePolicy::kTileSize, t.sort_ms, n / (t.sort_ms * 1e6),
                t.tile_sort_ms, t.sort_ms - t.tile_sort_ms, t.verified ? "ok" : "WRONG");
    std::fflush(stdout);
}

template <class Key, class Payload>
void tune_type(const char* type, std::size_t n, int reps, cudaStream_t stream) {
    using namespace detail;
    using Tile = TunedTileSortPolicy<Key, Payload>;
    using Merge = TunedMergePolicy<Key, Payload>;
    report<Key, Payload, Tile, Merge>("default", type, n, reps, stream);
    report<Key, Payload, Tile, MergePolicy<Key, Payload, 256, Merge::kItemsPerThread, 3>>("merge min 3 blocks", type, n,
                                                                                          reps, stream);
    if constexpr (std::is_same_v<Key, std::uint32_t> && !kIsPayload<Payload>) {
        report<Key, Payload, TileSortPolicy<Key, Payload, 256, 32>, Merge>("tile T256xI32", type, n, reps, stream);
        report<Key, Payload, Tile, MergePolicy<Key, Payload, 256, 16, 2>>("merge T256xI16", type, n, reps, stream);
    }
    if constexpr (std::is_same_v<Key, std::uint64_t> && !kIsPayload<Payload>) {
        report<Key, Payload, TileSortPolicy<Key, Payload, 128, 32>, Merge>("tile T128xI32", type, n, reps, stream);
    }
    if constexpr (kIsPayload<Payload>) {
        report<Key, Payload, TileSortPolicy<Key, Payload, 256, 16>, Merge>("tile T256xI16", type, n, reps, stream);
    }
}

}  // namespace

int main(int argc, char** argv) {
    int log_size = 28;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string arg = argv[i];
        if (arg == "--log-size") log_size = std::atoi(argv[i + 1]);
        if (arg == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    }
    try {
        if (device_count() == 0) {
            std::printf("%s\n", device_unavailable_reason().c_str());
            return 1;
        }
        const std::size_t n = std::size_t{1} << log_size;
        std::printf("device: %s; n = 2^%d; median of %d\n", device_info(current_device()).name.c_str(), log_size, reps);
        Stream stream;
        tune_type<std::uint32_t, NoPayload>("u32", n, reps, stream.get());
        tune_type<std::uint64_t, NoPayload>("u64", n, reps, stream.get());
        tune_type<std::uint64_t, std::uint32_t>("u64+u32", n, reps, stream.get());
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
}
