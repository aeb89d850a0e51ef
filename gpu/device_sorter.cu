// DeviceSorter: owns the scratch of a sort, checks the arguments and launches the sort's kernels
// (dispatch/sort_launch.cuh) with the tuned policies of its key and payload types
// (dispatch/sort_policy.cuh) on the caller's stream.
#include "gpu/device_sorter.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/device.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/dispatch/sort_launch.cuh"
#include "gpu/dispatch/sort_policy.cuh"

namespace gpusort::gpu {

namespace {

// Room for one split per merge tile of the smallest merge tile any sort of the sorter uses.
template <class Key, class Payload>
std::size_t merge_split_count(std::size_t max_keys) {
    const std::size_t smallest_tile = std::min<std::size_t>(detail::TunedMergePolicy<Key, NoPayload>::kTileSize,
                                                            detail::TunedMergePolicy<Key, Payload>::kTileSize);
    return detail::merge_split_count(max_keys, smallest_tile);
}

template <class Key, class Payload>
void launch_sort(Key* keys, Payload* payload, Key* key_scratch, Payload* payload_scratch, std::int64_t* splits,
                 std::int64_t n, cudaStream_t stream) {
    using TilePolicy = detail::TunedTileSortPolicy<Key, Payload>;
    using MergePolicy = detail::TunedMergePolicy<Key, Payload>;
    detail::launch_sort<Key, Payload, TilePolicy, MergePolicy>(keys, payload, key_scratch, payload_scratch, splits, n,
                                                               stream);
}

void check_sort_arguments(std::size_t n, std::size_t max_keys, int sorter_device) {
    if (n > max_keys) {
        throw std::length_error("DeviceSorter::sort of " + std::to_string(n) +
                                " keys, but the sorter was made for at most " + std::to_string(max_keys));
    }
    const int device = current_device();
    if (device != sorter_device) {
        throw GpuError(cudaErrorInvalidDevice, "DeviceSorter made on GPU " + std::to_string(sorter_device) +
                                                   " used while GPU " + std::to_string(device) + " is current");
    }
}

}  // namespace

template <class Key, class Payload>
DeviceSorter<Key, Payload>::DeviceSorter(std::size_t max_keys)
    : max_keys_(max_keys),
      device_(current_device()),
      key_scratch_(max_keys),
      payload_scratch_(kHasPayload ? max_keys : 0),
      merge_splits_(merge_split_count<Key, Payload>(max_keys)) {}

template <class Key, class Payload>
std::size_t DeviceSorter<Key, Payload>::scratch_bytes(std::size_t max_keys) {
    return max_keys * data_bytes_per_key + merge_split_count<Key, Payload>(max_keys) * sizeof(std::int64_t);
}

template <class Key, class Payload>
std::size_t DeviceSorter<Key, Payload>::max_keys_for_device_bytes(std::size_t device_bytes) {
    // device_bytes_needed grows with n and is at least 2 * data_bytes_per_key * n: binary search.
    std::size_t low = 0;  // fits
    std::size_t high = device_bytes / (2 * data_bytes_per_key) + 1;  // does not fit
    while (high - low > 1) {
        const std::size_t mid = low + (high - low) / 2;
        if (device_bytes_needed(mid) <= device_bytes) {
            low = mid;
        } else {
            high = mid;
        }
    }
    return low;
}

template <class Key, class Payload>
void DeviceSorter<Key, Payload>::sort(Key* keys, std::size_t n, cudaStream_t stream) {
    check_sort_arguments(n, max_keys_, device_);
    if (n == 0) return;
    launch_sort<Key, NoPayload>(keys, nullptr, key_scratch_.data(), nullptr, merge_splits_.data(),
                                static_cast<std::int64_t>(n), stream);
}

template <class Key, class Payload>
void DeviceSorter<Key, Payload>::sort(Key* keys, Payload* payload, std::size_t n, cudaStream_t stream) {
    if constexpr (kHasPayload) {
        if (payload != nullptr) {
            check_sort_arguments(n, max_keys_, device_);
            if (n == 0) return;
            launch_sort<Key, Payload>(keys, payload, key_scratch_.data(), payload_scratch_.data(),
                                      merge_splits_.data(), static_cast<std::int64_t>(n), stream);
            return;
        }
    }
    sort(keys, n, stream);
}

template class DeviceSorter<std::uint32_t, NoPayload>;
template class DeviceSorter<std::uint32_t, std::uint32_t>;
template class DeviceSorter<std::uint32_t, std::uint64_t>;
template class DeviceSorter<std::uint64_t, NoPayload>;
template class DeviceSorter<std::uint64_t, std::uint32_t>;
template class DeviceSorter<std::uint64_t, std::uint64_t>;
template class DeviceSorter<Key128, NoPayload>;
template class DeviceSorter<Key128, std::uint32_t>;
template class DeviceSorter<Key128, std::uint64_t>;

}  // namespace gpusort::gpu
