// sort_memory() on the GPU backend: arrays in host memory (u64 keys in place, f32 keys with special
// values, and u32 keys with a value array of 12 bytes and a u64 index), in one chunk and in many
// runs under a small device budget, give the bytes of the CPU backend and of the tests' own stable
// reference. Skips where no GPU can be used (fails instead under GPUSORT_REQUIRE_GPU=1).
#include "tests/generated_keys.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/reference_order.hpp"
#include "tests/scratch_dir.hpp"
#include "gpusort/sort_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

MemoryOptions on(Backend backend, bool small, const ScratchDir& tmp) {
    MemoryOptions options;
    options.backend = backend;
    options.tmp_dir = tmp.path();
    if (small) options.device_memory_bytes = std::uint64_t{64} << 20;
    return options;
}

template <class T>
std::vector<std::uint64_t> stable_order(const std::vector<T>& keys) {
    std::vector<std::uint64_t> index(keys.size());
    std::iota(index.begin(), index.end(), 0);
    std::stable_sort(index.begin(), index.end(), [&](std::uint64_t a, std::uint64_t b) { return reference_less(keys[a], keys[b]); });
    return index;
}

}  // namespace

TEST(MemoryGpu, KeysInPlaceAndTheirPermutationGiveTheBytesOfTheCpu) {
    SKIP_WITHOUT_GPU();
    ScratchDir tmp;
    for (const bool small : {false, true}) {
        const std::vector<std::uint64_t> u64 = make_keys<std::uint64_t>(20'000'000, {gen::Distribution::uniform}, 3);
        std::vector<std::uint64_t> gpu = u64, cpu = u64;
        sort_keys<std::uint64_t>(gpu, false, on(Backend::gpu, small, tmp));
        sort_keys<std::uint64_t>(cpu, false, on(Backend::cpu, small, tmp));
        EXPECT_TRUE(same_bytes(gpu, cpu)) << (small ? "runs" : "one chunk");
        EXPECT_TRUE(same_bytes(gpu, reference_sort(u64, false)));
        const std::vector<float> f32 = make_keys<float>(3'000'000, mixed_key_data<float>(), 4);
        EXPECT_EQ(argsort<float>(f32, false, on(Backend::gpu, small, tmp)), stable_order(f32)) << (small ? "runs" : "one chunk");
    }
    EXPECT_TRUE(tmp.entries().empty());
}

TEST(MemoryGpu, ValuesAndTheIndexFollowTheKeysAsOnTheCpu) {
    SKIP_WITHOUT_GPU();
    ScratchDir tmp;
    const std::vector<std::uint32_t> keys = make_keys<std::uint32_t>(5'000'000, {gen::Distribution::few_unique}, 5);
    std::vector<std::byte> values(keys.size() * 12);
    std::mt19937_64 rng(6);
    for (std::byte& b : values) b = static_cast<std::byte>(rng());
    const std::vector<std::uint64_t> order = stable_order(keys);
    for (const bool small : {false, true}) {
        std::vector<std::byte> out(values.size());
        std::vector<std::uint64_t> index(keys.size());
        MemorySort sort;
        sort.keys = std::as_bytes(std::span<const std::uint32_t>(keys));
        sort.order = {KeyType::u32, false};
        sort.values = {{values, out}};
        sort.index_output = std::as_writable_bytes(std::span<std::uint64_t>(index));
        const SortReport report = sort_memory(sort, on(Backend::gpu, small, tmp));
        EXPECT_NE(report.backend, "cpu");
        EXPECT_EQ(index, order) << (small ? "runs" : "one chunk");
        for (std::size_t k = 0; k < keys.size(); ++k)
            ASSERT_EQ(std::memcmp(out.data() + k * 12, values.data() + order[k] * 12, 12), 0) << k;
    }
    EXPECT_TRUE(tmp.entries().empty());
}
