// DeviceSorter<Key, Payload>: sorts keys that already lie in device memory, ascending by unsigned
// value, in place and asynchronously on a caller's stream; optionally carries a payload (a record
// index) along, and then the sort is stable (equal keys keep their input order).
// Keys: std::uint32_t, std::uint64_t, Key128. Payload: NoPayload, std::uint32_t, std::uint64_t.
//
// The sorter is made once for a largest number of keys and allocates all its scratch device
// memory then, never per call. Device memory for a sort of n keys:
//   n * data_bytes_per_key  (the caller's keys and payloads)  +  scratch_bytes(n)  (the sorter's),
// that is about 2 * (sizeof(Key) + sizeof(Payload)) bytes per key in all.
//
// One sort at a time per sorter (its scratch is shared by its calls): calls on different streams
// must be ordered by the caller, or use one sorter per stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpu/device_buffer.hpp"
#include "gpu/key128.hpp"
#include "gpu/no_payload.hpp"

namespace gpusort::gpu {

template <class Key, class Payload = NoPayload>
class DeviceSorter {
public:
    static constexpr bool kHasPayload = kIsPayload<Payload>;
    // Bytes of the caller's own arrays per key (key plus payload).
    static constexpr std::size_t data_bytes_per_key = sizeof(Key) + (kHasPayload ? sizeof(Payload) : 0);

    // Allocates the scratch for sorts of up to max_keys keys on the current device; throws GpuError.
    explicit DeviceSorter(std::size_t max_keys);

    DeviceSorter(DeviceSorter&&) noexcept = default;
    DeviceSorter& operator=(DeviceSorter&&) noexcept = default;
    DeviceSorter(const DeviceSorter&) = delete;
    DeviceSorter& operator=(const DeviceSorter&) = delete;

    std::size_t max_keys() const noexcept { return max_keys_; }

    // Device memory the sorter allocates for up to max_keys keys.
    static std::size_t scratch_bytes(std::size_t max_keys);
    // Device memory for a sort of n keys in all: the caller's arrays plus the sorter's scratch.
    static std::size_t device_bytes_needed(std::size_t n) { return n * data_bytes_per_key + scratch_bytes(n); }
    // The largest n with device_bytes_needed(n) <= device_bytes.
    static std::size_t max_keys_for_device_bytes(std::size_t device_bytes);

    // Sorts keys[0, n) in place. Asynchronous: the caller synchronises the stream. The device
    // current at construction must be current. Throws GpuError (launch failures) and
    // std::length_error (n > max_keys()).
    void sort(Key* keys, std::size_t n, cudaStream_t stream);
    // Sorts keys[0, n) and carries payload[0, n) along, stably; payload == nullptr sorts keys alone.
    void sort(Key* keys, Payload* payload, std::size_t n, cudaStream_t stream);

private:
    using PayloadStorage = std::conditional_t<kHasPayload, Payload, char>;

    std::size_t max_keys_ = 0;
    int device_ = 0;
    DeviceBuffer<Key> key_scratch_;
    DeviceBuffer<PayloadStorage> payload_scratch_;
    DeviceBuffer<std::int64_t> merge_splits_;
};

extern template class DeviceSorter<std::uint32_t, NoPayload>;
extern template class DeviceSorter<std::uint32_t, std::uint32_t>;
extern template class DeviceSorter<std::uint32_t, std::uint64_t>;
extern template class DeviceSorter<std::uint64_t, NoPayload>;
extern template class DeviceSorter<std::uint64_t, std::uint32_t>;
extern template class DeviceSorter<std::uint64_t, std::uint64_t>;
extern template class DeviceSorter<Key128, NoPayload>;
extern template class DeviceSorter<Key128, std::uint32_t>;
extern template class DeviceSorter<Key128, std::uint64_t>;

}  // namespace gpusort::gpu
