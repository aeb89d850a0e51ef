// RAII wrappers, device information, error reporting on a GPU, and the device-side helpers
// (fills and checks) that the large tests and the benchmark rely on. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/event.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/stream.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/gpu/support/device_fill.hpp"
#include "tests/gpu/support/host_sort.hpp"
#include "tests/gpu/support/order_check.hpp"

namespace gpusort::gpu {
namespace {

class GpuResourcesTest : public ::testing::Test {
protected:
    void SetUp() override {
        SKIP_WITHOUT_DEVICE();
    }
};

TEST_F(GpuResourcesTest, DeviceInfoHasNameAndMemory) {
    const DeviceInfo info = device_info(current_device());
    EXPECT_FALSE(info.name.empty());
    EXPECT_GT(info.total_bytes, 0u);
    EXPECT_GT(info.free_bytes, 0u);
    EXPECT_LE(info.free_bytes, info.total_bytes);
    EXPECT_GT(info.multiprocessors, 0);
}

TEST_F(GpuResourcesTest, OutOfDeviceMemoryNamesTheSizeAskedFor) {
    const std::size_t huge = std::size_t{1} << 50;  // 1 PiB
    try {
        DeviceBuffer<char> buffer(huge);
        FAIL() << "allocating 1 PiB did not throw";
    } catch (const GpuError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("out of device memory"), std::string::npos) << message;
        EXPECT_NE(message.find(std::to_string(huge)), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        EXPECT_EQ(error.code(), cudaErrorMemoryAllocation);
    }
    // The failure left nothing behind: the next allocation and launch work.
    DeviceBuffer<std::uint32_t> small(1000);
    Stream stream;
    EXPECT_NO_THROW(fill_index_sequence(small.data(), small.size(), stream.get()));
    EXPECT_NO_THROW(stream.synchronize());
}

TEST_F(GpuResourcesTest, PinnedRoundTripOnAStreamWithTimingEvents) {
    const std::size_t n = 1 << 20;
    PinnedBuffer<std::uint64_t> host_in(n);
    PinnedBuffer<std::uint64_t> host_out(n);
    for (std::size_t i = 0; i < n; ++i) host_in[i] = i * 2654435761u;
    DeviceBuffer<std::uint64_t> device(n);
    Stream stream;
    Event start;
    Event stop;
    const auto host_start = std::chrono::steady_clock::now();
    start.record(stream.get());
    check_cuda(cudaMemcpyAsync(device.data(), host_in.data(), host_in.size_bytes(), cudaMemcpyHostToDevice,
                               stream.get()),
               "copy in");
    check_cuda(cudaMemcpyAsync(host_out.data(), device.data(), device.size_bytes(), cudaMemcpyDeviceToHost,
                               stream.get()),
               "copy out");
    stop.record(stream.get());
    stop.synchronize();
    const std::chrono::duration<float, std::milli> host_ms = std::chrono::steady_clock::now() - host_start;
    // 16 MiB crossed the bus between the events, within the span the host waited for them.
    const float device_ms = Event::elapsed_ms(start, stop);
    EXPECT_GT(device_ms, 0.0f);
    EXPECT_LE(device_ms, host_ms.count());
    EXPECT_TRUE(std::equal(host_in.data(), host_in.data() + n, host_out.data()));
}

TEST_F(GpuResourcesTest, MovedBuffersKeepTheirMemory) {
    DeviceBuffer<int> a(10);
    int* const pointer = a.data();
    DeviceBuffer<int> b(std::move(a));
    EXPECT_EQ(b.data(), pointer);
    EXPECT_EQ(b.size(), 10u);
    EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
    PinnedBuffer<int> p(10);
    PinnedBuffer<int> q;
    q = std::move(p);
    EXPECT_EQ(q.size(), 10u);
}

TEST_F(GpuResourcesTest, SortOfMoreKeysThanTheSorterWasMadeForThrows) {
    DeviceSorter<std::uint32_t> sorter(100);
    DeviceBuffer<std::uint32_t> keys(101);
    Stream stream;
    EXPECT_THROW(sorter.sort(keys.data(), 101, stream.get()), std::length_error);
    EXPECT_NO_THROW(sorter.sort(keys.data(), 0, stream.get()));
}

TEST_F(GpuResourcesTest, HostConvenienceSortsVectors) {
    std::vector<std::uint64_t> keys = {5, 3, 9, 3, 1, 0, 18446744073709551615ull, 7};
    std::vector<std::uint32_t> index(keys.size());
    std::iota(index.begin(), index.end(), 0u);
    std::vector<std::uint64_t> keys_alone = keys;
    sort_on_device(keys, index);
    EXPECT_EQ(keys, (std::vector<std::uint64_t>{0, 1, 3, 3, 5, 7, 9, 18446744073709551615ull}));
    EXPECT_EQ(index, (std::vector<std::uint32_t>{5, 4, 1, 3, 0, 7, 2, 6}));
    sort_on_device(keys_alone);
    EXPECT_EQ(keys_alone, keys);
}

// The device-side checks find what they are meant to find.
TEST_F(GpuResourcesTest, OrderChecksDetectPlantedErrors) {
    const std::size_t n = 100000;
    Stream stream;
    DeviceBuffer<std::uint64_t> keys(n);
    DeviceBuffer<std::uint64_t> original(n);
    DeviceBuffer<std::uint32_t> index(n);
    std::vector<std::uint64_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = i / 3;  // sorted, with ties
    std::vector<std::uint32_t> host_index(n);
    std::iota(host_index.begin(), host_index.end(), 0u);
    auto upload = [&] {
        check_cuda(cudaMemcpy(keys.data(), host.data(), n * 8, cudaMemcpyHostToDevice), "copy");
        check_cuda(cudaMemcpy(original.data(), host.data(), n * 8, cudaMemcpyHostToDevice), "copy");
        check_cuda(cudaMemcpy(index.data(), host_index.data(), n * 4, cudaMemcpyHostToDevice), "copy");
    };
    upload();
    EXPECT_EQ(count_descents(keys.data(), n, stream.get()), 0u);
    EXPECT_EQ(count_stable_index_errors(keys.data(), index.data(), original.data(), n, stream.get()), 0u);
    const std::uint64_t hash = key_multiset_hash(keys.data(), n, stream.get());

    std::swap(host[10], host[5000]);  // two descents, same multiset
    check_cuda(cudaMemcpy(keys.data(), host.data(), n * 8, cudaMemcpyHostToDevice), "copy");
    EXPECT_EQ(count_descents(keys.data(), n, stream.get()), 2u);
    EXPECT_EQ(key_multiset_hash(keys.data(), n, stream.get()), hash);
    host[10] += 1;  // a different multiset
    check_cuda(cudaMemcpy(keys.data(), host.data(), n * 8, cudaMemcpyHostToDevice), "copy");
    EXPECT_NE(key_multiset_hash(keys.data(), n, stream.get()), hash);

    for (std::size_t i = 0; i < n; ++i) host[i] = i / 3;
    std::swap(host_index[3], host_index[4]);  // equal keys (1, 1) out of input order
    upload();
    EXPECT_EQ(count_stable_index_errors(keys.data(), index.data(), original.data(), n, stream.get()), 1u);

    fill_random_keys(keys.data(), n, 1, stream.get());
    EXPECT_GT(count_descents(keys.data(), n, stream.get()), n / 4);
}

}  // namespace
}  // namespace gpusort::gpu
