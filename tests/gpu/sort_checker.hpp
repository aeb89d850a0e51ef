// SortChecker: sorts host inputs with one DeviceSorter on the device and compares the result with
// the host reference (std::stable_sort); payloads are the input indices, so the comparison also
// checks stability. Guard elements past the end of the input must come back unchanged. The arrays
// may start a few elements into their allocations, to try pointers not aligned to 16 bytes.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/stream.hpp"
#include "sort_test_data.hpp"

namespace gpusort::gpu::testing {

template <class Key, class Payload>
class SortChecker {
public:
    static constexpr bool kHasPayload = kIsPayload<Payload>;
    static constexpr std::size_t kGuard = 67;        // elements past n that a sort must leave alone
    static constexpr std::size_t kMaxOffset = 3;     // largest start offset into the allocations

    explicit SortChecker(std::size_t max_n)
        : sorter_(max_n),
          keys_(max_n + kGuard + kMaxOffset),
          payload_(kHasPayload ? max_n + kGuard + kMaxOffset : 0) {}

    // Sorts `input` on the device and compares with the reference. With keys_only, a payload sorter
    // is called with a null payload pointer and must sort the keys alone.
    // The arrays start `offset` elements (at most kMaxOffset) into the allocations.
    ::testing::AssertionResult check(const std::vector<Key>& input, bool keys_only = false, std::size_t offset = 0) {
        const std::size_t n = input.size();
        offset_ = offset;
        const bool with_payload = kHasPayload && !keys_only;
        std::vector<Key> keys = input;
        keys.resize(n + kGuard, key_from_words<Key>(0x5a5a5a5a5a5a5a5aull, 0xa5a5a5a5a5a5a5a5ull));
        std::vector<PayloadStorage> payload;
        if (with_payload) {
            payload = input_indices<PayloadStorage>(n + kGuard);
        }
        copy_in(keys, payload);
        if constexpr (kHasPayload) {
            if (with_payload) {
                sorter_.sort(device_keys(), device_payload(), n, stream_.get());
            } else {
                sorter_.sort(device_keys(), nullptr, n, stream_.get());
            }
        } else {
            sorter_.sort(device_keys(), n, stream_.get());
        }
        std::vector<Key> device_keys(n + kGuard);
        std::vector<PayloadStorage> device_payload(payload.size());
        copy_out(device_keys, device_payload);

        // Reference: the guards stay where they are.
        std::vector<Key> expected_keys(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n));
        if (with_payload) {
            std::vector<PayloadStorage> expected_payload(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(n));
            reference_stable_sort(expected_keys, expected_payload);
            expected_payload.insert(expected_payload.end(), payload.begin() + static_cast<std::ptrdiff_t>(n),
                                    payload.end());
            expected_keys.insert(expected_keys.end(), keys.begin() + static_cast<std::ptrdiff_t>(n), keys.end());
            const std::size_t key_diff = first_difference(device_keys, expected_keys);
            if (key_diff != expected_keys.size()) return mismatch("key", key_diff, n);
            const std::size_t payload_diff = first_difference(device_payload, expected_payload);
            if (payload_diff != expected_payload.size()) {
                return mismatch("payload (input index; stability)", payload_diff, n)
                       << ": got " << device_payload[payload_diff] << ", expected " << expected_payload[payload_diff];
            }
        } else {
            reference_stable_sort(expected_keys);
            expected_keys.insert(expected_keys.end(), keys.begin() + static_cast<std::ptrdiff_t>(n), keys.end());
            const std::size_t key_diff = first_difference(device_keys, expected_keys);
            if (key_diff != expected_keys.size()) return mismatch("key", key_diff, n);
        }
        return ::testing::AssertionSuccess();
    }

private:
    using PayloadStorage = std::conditional_t<kHasPayload, Payload, std::uint32_t>;

    static ::testing::AssertionResult mismatch(const char* what, std::size_t index, std::size_t n) {
        return ::testing::AssertionFailure() << what << " differs from std::stable_sort at index " << index
                                             << (index >= n ? " (a guard element past the end)" : "");
    }

    void copy_in(const std::vector<Key>& keys, const std::vector<PayloadStorage>& payload) {
        check_cuda(cudaMemcpyAsync(device_keys(), keys.data(), keys.size() * sizeof(Key), cudaMemcpyHostToDevice,
                                   stream_.get()),
                   "copy of test keys");
        if (!payload.empty()) {
            check_cuda(cudaMemcpyAsync(device_payload(), payload.data(), payload.size() * sizeof(PayloadStorage),
                                       cudaMemcpyHostToDevice, stream_.get()),
                       "copy of test payload");
        }
    }

    void copy_out(std::vector<Key>& keys, std::vector<PayloadStorage>& payload) {
        check_cuda(cudaMemcpyAsync(keys.data(), device_keys(), keys.size() * sizeof(Key), cudaMemcpyDeviceToHost,
                                   stream_.get()),
                   "copy of sorted keys");
        if (!payload.empty()) {
            check_cuda(cudaMemcpyAsync(payload.data(), device_payload(), payload.size() * sizeof(PayloadStorage),
                                       cudaMemcpyDeviceToHost, stream_.get()),
                       "copy of sorted payload");
        }
        stream_.synchronize();
    }

    Key* device_keys() { return keys_.data() + offset_; }
    PayloadStorage* device_payload() { return payload_.data() + offset_; }

    std::size_t offset_ = 0;
    Stream stream_;
    DeviceSorter<Key, Payload> sorter_;
    DeviceBuffer<Key> keys_;
    DeviceBuffer<PayloadStorage> payload_;
};

}  // namespace gpusort::gpu::testing
