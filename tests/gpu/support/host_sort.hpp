// Test support (not in the production library): copy a host vector to the device, sort it there
// with DeviceSorter, copy it back. Synchronous; allocates per call.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/stream.hpp"

namespace gpusort::gpu {

template <class Key>
void sort_on_device(std::vector<Key>& keys) {
    if (keys.empty()) return;
    Stream stream;
    DeviceBuffer<Key> device_keys(keys.size());
    DeviceSorter<Key> sorter(keys.size());
    check_cuda(cudaMemcpyAsync(device_keys.data(), keys.data(), device_keys.size_bytes(), cudaMemcpyHostToDevice,
                               stream.get()),
               "cudaMemcpyAsync of keys to the device");
    sorter.sort(device_keys.data(), keys.size(), stream.get());
    check_cuda(cudaMemcpyAsync(keys.data(), device_keys.data(), device_keys.size_bytes(), cudaMemcpyDeviceToHost,
                               stream.get()),
               "cudaMemcpyAsync of keys from the device");
    stream.synchronize();
}

// Sorts keys and carries payload along, stably.
template <class Key, class Payload>
void sort_on_device(std::vector<Key>& keys, std::vector<Payload>& payload) {
    if (keys.size() != payload.size()) throw std::invalid_argument("keys and payload differ in length");
    if (keys.empty()) return;
    Stream stream;
    DeviceBuffer<Key> device_keys(keys.size());
    DeviceBuffer<Payload> device_payload(payload.size());
    DeviceSorter<Key, Payload> sorter(keys.size());
    check_cuda(cudaMemcpyAsync(device_keys.data(), keys.data(), device_keys.size_bytes(), cudaMemcpyHostToDevice,
                               stream.get()),
               "cudaMemcpyAsync of keys to the device");
    check_cuda(cudaMemcpyAsync(device_payload.data(), payload.data(), device_payload.size_bytes(),
                               cudaMemcpyHostToDevice, stream.get()),
               "cudaMemcpyAsync of payload to the device");
    sorter.sort(device_keys.data(), device_payload.data(), keys.size(), stream.get());
    check_cuda(cudaMemcpyAsync(keys.data(), device_keys.data(), device_keys.size_bytes(), cudaMemcpyDeviceToHost,
                               stream.get()),
               "cudaMemcpyAsync of keys from the device");
    check_cuda(cudaMemcpyAsync(payload.data(), device_payload.data(), device_payload.size_bytes(),
                               cudaMemcpyDeviceToHost, stream.get()),
               "cudaMemcpyAsync of payload from the device");
    stream.synchronize();
}

}  // namespace gpusort::gpu
