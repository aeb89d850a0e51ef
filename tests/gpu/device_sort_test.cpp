// DeviceSorter against std::stable_sort on the host, for every key width (32, 64, 128 bits) alone
// and with a 32- or 64-bit input-index payload (which checks stability): sizes 0 to 2^20 (small,
// power-of-two and multiple-of-tile boundaries +-1, a dense geometric set) and six distributions.
// Every test skips when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/device_sorter.hpp"
#include "tests/gpu_skip.hpp"
#include "sort_checker.hpp"
#include "sort_test_data.hpp"

namespace gpusort::gpu::testing {
namespace {

template <class K, class P>
struct SortCase {
    using Key = K;
    using Payload = P;
};

using SortCases = ::testing::Types<SortCase<std::uint32_t, NoPayload>, SortCase<std::uint32_t, std::uint32_t>,
                                   SortCase<std::uint32_t, std::uint64_t>, SortCase<std::uint64_t, NoPayload>,
                                   SortCase<std::uint64_t, std::uint32_t>, SortCase<std::uint64_t, std::uint64_t>,
                                   SortCase<Key128, NoPayload>, SortCase<Key128, std::uint32_t>,
                                   SortCase<Key128, std::uint64_t>>;

template <class T>
std::string type_name() {
    if constexpr (std::is_same_v<T, std::uint32_t>) return "u32";
    if constexpr (std::is_same_v<T, std::uint64_t>) return "u64";
    if constexpr (std::is_same_v<T, Key128>) return "u128";
    return "none";
}

struct SortCaseNames {
    template <class Case>
    static std::string GetName(int) {
        std::string name = type_name<typename Case::Key>();
        if constexpr (kIsPayload<typename Case::Payload>) {
            name += "_with_" + type_name<typename Case::Payload>() + "_index";
        }
        return name;
    }
};

constexpr std::size_t kLargestSize = std::size_t{1} << 20;

std::vector<std::size_t> unique_sorted(std::vector<std::size_t> sizes) {
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

template <class Case>
class DeviceSortTest : public ::testing::Test {
protected:
    using Key = typename Case::Key;
    using Payload = typename Case::Payload;

    void SetUp() override {
        SKIP_WITHOUT_DEVICE();
    }

    // Sorts keys of every size in `sizes`, drawn from `distribution`, with one sorter.
    void check_sizes(const std::vector<std::size_t>& sizes, Distribution distribution, std::uint64_t seed,
                     bool keys_only = false, std::size_t offset = 0) {
        const std::size_t max_n = std::max<std::size_t>(1, *std::max_element(sizes.begin(), sizes.end()));
        SortChecker<Key, Payload> checker(max_n);
        for (const std::size_t n : sizes) {
            const std::vector<Key> keys = make_keys<Key>(n, distribution, seed * 1000003 + n);
            ASSERT_TRUE(checker.check(keys, keys_only, offset))
                << "n=" << n << " distribution=" << distribution_name(distribution) << " seed=" << seed
                << " offset=" << offset;
        }
    }
};

TYPED_TEST_SUITE(DeviceSortTest, SortCases, SortCaseNames);

// 0 .. 300: one tile, partial tiles, every small odd size.
TYPED_TEST(DeviceSortTest, SmallSizes) {
    std::vector<std::size_t> sizes;
    for (std::size_t n = 0; n <= 300; ++n) sizes.push_back(n);
    this->check_sizes(sizes, Distribution::kUniform, 1);
    this->check_sizes(sizes, Distribution::kFewDistinct, 2);
}

// A few tiles and up to four merge passes: small enough to run under compute-sanitizer.
TYPED_TEST(DeviceSortTest, FewTiles) {
    const std::vector<std::size_t> sizes = {1000,  2047,  2048,  2049,  4095,  4096,  4097,  6000,  8191,
                                            8193,  12289, 16383, 16385, 20000, 32767, 32769, 49153, 65537};
    this->check_sizes(sizes, Distribution::kUniform, 3);
    this->check_sizes(sizes, Distribution::kFewDistinct, 4);
}

// 2^p - 1, 2^p, 2^p + 1 for p = 0 .. 20: every tile boundary and every merge-pass boundary (tile
// sizes are powers of two, and pass k merges runs of tile * 2^k). One test per distribution, so
// that each fits compute-sanitizer's time.
std::vector<std::size_t> power_of_two_boundaries() {
    std::vector<std::size_t> sizes;
    for (int p = 0; p <= 20; ++p) {
        const std::size_t power = std::size_t{1} << p;
        sizes.insert(sizes.end(), {power - 1, power, power + 1});
    }
    return unique_sorted(sizes);
}

TYPED_TEST(DeviceSortTest, PowerOfTwoBoundariesUniform) {
    this->check_sizes(power_of_two_boundaries(), Distribution::kUniform, 5);
}

TYPED_TEST(DeviceSortTest, PowerOfTwoBoundariesFewDistinct) {
    this->check_sizes(power_of_two_boundaries(), Distribution::kFewDistinct, 6);
}

// m * 2^p +- 1 for odd m, from 2^9 up to 2^20: runs left unpaired at the end of a pass, and merge
// tiles cut inside pairs. One test per m, so that each fits compute-sanitizer's time.
std::vector<std::size_t> multiple_of_tile_boundaries(std::size_t m) {
    std::vector<std::size_t> sizes;
    for (int p = 9; (m << p) + 1 <= kLargestSize; ++p) {
        const std::size_t base = m << p;
        sizes.insert(sizes.end(), {base - 1, base, base + 1});
    }
    return sizes;
}

TYPED_TEST(DeviceSortTest, MultipleOfTileBoundaries3) {
    this->check_sizes(multiple_of_tile_boundaries(3), Distribution::kUniform, 7);
}

TYPED_TEST(DeviceSortTest, MultipleOfTileBoundaries5) {
    this->check_sizes(multiple_of_tile_boundaries(5), Distribution::kUniform, 7);
}

TYPED_TEST(DeviceSortTest, MultipleOfTileBoundaries7) {
    this->check_sizes(multiple_of_tile_boundaries(7), Distribution::kUniform, 7);
}

TYPED_TEST(DeviceSortTest, MultipleOfTileBoundaries11) {
    this->check_sizes(multiple_of_tile_boundaries(11), Distribution::kUniform, 7);
}

TYPED_TEST(DeviceSortTest, MultipleOfTileBoundaries13) {
    this->check_sizes(multiple_of_tile_boundaries(13), Distribution::kUniform, 7);
}

// A dense geometric set of sizes from 1000 to 2^20 (about 20% apart, odd and even in turn).
TYPED_TEST(DeviceSortTest, DenseSizes) {
    std::vector<std::size_t> sizes;
    bool odd = true;
    for (double x = 1000.0; x < static_cast<double>(kLargestSize); x *= 1.2, odd = !odd) {
        const auto n = static_cast<std::size_t>(x);
        sizes.push_back(odd ? (n | 1) : (n & ~std::size_t{1}));
    }
    sizes.push_back(kLargestSize);
    this->check_sizes(unique_sorted(sizes), Distribution::kUniform, 8);
}

// Every distribution at sizes from 1 to 2^20.
TYPED_TEST(DeviceSortTest, AllDistributions) {
    const std::vector<std::size_t> sizes = {1, 2, 3, 5, 31, 1000, 2047, 2049, 4095, 4097, 65537, 300001,
                                            kLargestSize};
    std::uint64_t seed = 100;
    for (const Distribution distribution : kAllDistributions) this->check_sizes(sizes, distribution, ++seed);
}

// Arrays that start 1, 2 or 3 elements past a 16-byte boundary (pieces of runs are copied in
// 16-byte units where alignment allows).
TYPED_TEST(DeviceSortTest, UnalignedArrays) {
    const std::vector<std::size_t> sizes = {1, 5, 4097, 20001, 100003, kLargestSize - 3};
    for (std::size_t offset = 1; offset <= 3; ++offset) {
        this->check_sizes(sizes, Distribution::kUniform, 300 + offset, /*keys_only=*/false, offset);
    }
}

// A payload sorter given a null payload pointer sorts the keys alone.
TYPED_TEST(DeviceSortTest, NullPayloadSortsKeysAlone) {
    const std::vector<std::size_t> sizes = {0, 1, 3, 4097, 100000};
    this->check_sizes(sizes, Distribution::kUniform, 200, /*keys_only=*/true);
}

}  // namespace
}  // namespace gpusort::gpu::testing
