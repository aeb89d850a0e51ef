// Large sorts: 2^28 (u64 key, u32 index) pairs checked on the host against the definition of a
// stable sort; 2^28 u64 keys alone; and more than 2^32 u32 keys (64-bit sizes and offsets),
// checked on the device. Each skips without a GPU or when the GPU lacks the memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/stream.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/gpu/support/device_fill.hpp"
#include "tests/gpu/support/order_check.hpp"

namespace gpusort::gpu {
namespace {

// Skips the test unless a GPU with `bytes` of free memory (plus a margin) is present.
#define SKIP_UNLESS_DEVICE_HAS(bytes)                                                                    \
    do {                                                                                                 \
        SKIP_WITHOUT_DEVICE();                                                                           \
        const std::size_t free_bytes = device_info(current_device()).free_bytes;                        \
        if (free_bytes < (bytes) + (std::size_t{1} << 30)) {                                             \
            GTEST_SKIP() << "needs " << (bytes) << " bytes of device memory, " << free_bytes << " free"; \
        }                                                                                                \
    } while (false)

TEST(LargeSort, U64KeysWithU32Index_2Pow28_CheckedOnHost) {
    using Sorter = DeviceSorter<std::uint64_t, std::uint32_t>;
    const std::size_t n = std::size_t{1} << 28;
    SKIP_UNLESS_DEVICE_HAS(Sorter::device_bytes_needed(n));

    std::vector<std::uint64_t> input(n);
    std::mt19937_64 random(2024);
    // Half the keys from a small range, so that many are equal and stability is exercised.
    for (std::size_t i = 0; i < n; ++i) input[i] = (i % 2 == 0) ? random() : random() % 1000;

    Stream stream;
    DeviceBuffer<std::uint64_t> keys(n);
    DeviceBuffer<std::uint32_t> index(n);
    Sorter sorter(n);
    check_cuda(cudaMemcpyAsync(keys.data(), input.data(), keys.size_bytes(), cudaMemcpyHostToDevice, stream.get()),
               "copy in");
    fill_index_sequence(index.data(), n, stream.get());
    sorter.sort(keys.data(), index.data(), n, stream.get());
    std::vector<std::uint64_t> sorted(n);
    std::vector<std::uint32_t> sorted_index(n);
    check_cuda(cudaMemcpyAsync(sorted.data(), keys.data(), keys.size_bytes(), cudaMemcpyDeviceToHost, stream.get()),
               "copy out");
    check_cuda(cudaMemcpyAsync(sorted_index.data(), index.data(), index.size_bytes(), cudaMemcpyDeviceToHost,
                               stream.get()),
               "copy out");
    stream.synchronize();

    // Ascending keys, each the input key its index names, equal keys in input order: with these
    // the indices are distinct, so the output is the stable sort of the input.
    std::size_t errors = 0;
    std::size_t first_error = n;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t from = sorted_index[i];
        bool wrong = from >= n || input[from] != sorted[i];
        if (i + 1 < n) {
            wrong = wrong || sorted[i + 1] < sorted[i] || (sorted[i + 1] == sorted[i] && sorted_index[i + 1] <= from);
        }
        if (wrong && errors++ == 0) first_error = i;
    }
    EXPECT_EQ(errors, 0u) << "first wrong output at " << first_error;
}

TEST(LargeSort, U64Keys_2Pow28_CheckedOnDevice) {
    using Sorter = DeviceSorter<std::uint64_t>;
    const std::size_t n = std::size_t{1} << 28;
    SKIP_UNLESS_DEVICE_HAS(Sorter::device_bytes_needed(n));
    Stream stream;
    DeviceBuffer<std::uint64_t> keys(n);
    Sorter sorter(n);
    fill_random_keys(keys.data(), n, 77, stream.get());
    const std::uint64_t hash_before = key_multiset_hash(keys.data(), n, stream.get());
    EXPECT_GT(count_descents(keys.data(), n, stream.get()), 0u);
    sorter.sort(keys.data(), n, stream.get());
    EXPECT_EQ(count_descents(keys.data(), n, stream.get()), 0u);
    EXPECT_EQ(key_multiset_hash(keys.data(), n, stream.get()), hash_before);
}

TEST(LargeSort, MoreThan2Pow32U32Keys_CheckedOnDevice) {
    using Sorter = DeviceSorter<std::uint32_t>;
    const std::size_t n = (std::size_t{1} << 32) + 4099;
    SKIP_UNLESS_DEVICE_HAS(Sorter::device_bytes_needed(n));
    Stream stream;
    DeviceBuffer<std::uint32_t> keys(n);
    Sorter sorter(n);
    fill_random_keys(keys.data(), n, 99, stream.get());
    const std::uint64_t hash_before = key_multiset_hash(keys.data(), n, stream.get());
    sorter.sort(keys.data(), n, stream.get());
    EXPECT_EQ(count_descents(keys.data(), n, stream.get()), 0u);
    EXPECT_EQ(key_multiset_hash(keys.data(), n, stream.get()), hash_before);
    // The last keys are the largest: the end of the array was sorted too.
    std::uint32_t last = 0;
    check_cuda(cudaMemcpy(&last, keys.data() + n - 1, sizeof last, cudaMemcpyDeviceToHost), "copy out");
    EXPECT_GE(last, 0xffff0000u);
}

}  // namespace
}  // namespace gpusort::gpu
