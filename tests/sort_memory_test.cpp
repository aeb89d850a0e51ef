// sort_memory() and its templates: arrays in host memory sorted in place or into others, by type
// or by a key spec, their permutation, and value arrays carried along; in one chunk and in runs
// spilled under a small budget. Each result against the tests' own references (std::stable_sort
// of positions by reference_less, the key rules written independently).
#include "generated_keys.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "gpusort/errors.hpp"
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

// The stable permutation of `keys` by reference_less (or its reverse).
template <class T>
std::vector<std::uint64_t> reference_argsort(const std::vector<T>& keys, bool descending) {
    std::vector<std::uint64_t> index(keys.size());
    std::iota(index.begin(), index.end(), 0);
    std::stable_sort(index.begin(), index.end(), [&](std::uint64_t a, std::uint64_t b) {
        return descending ? reference_less(keys[b], keys[a]) : reference_less(keys[a], keys[b]);
    });
    return index;
}

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> bytes(n);
    for (std::byte& b : bytes) b = static_cast<std::byte>(rng());
    return bytes;
}

// Options of a CPU sort; `small` budgets make runs that spill to `tmp`.
MemoryOptions cpu_options(const ScratchDir& tmp, bool small) {
    MemoryOptions options;
    options.backend = Backend::cpu;
    options.threads = 2;
    options.tmp_dir = tmp.path();
    if (small) options.memory_bytes = kMinMemoryBudget;
    return options;
}

template <class T>
class SortMemoryTyped : public ::testing::Test {};
TYPED_TEST_SUITE(SortMemoryTyped, AllKeyTypes);

}  // namespace

// Every key type, both orders, with special values for floats: sort_keys in place gives the
// reference's order (stable: equal bit patterns need no order, keys are compared by their bytes),
// argsort the stable permutation, in one chunk and in runs spilled under a 1 MiB budget.
TYPED_TEST(SortMemoryTyped, KeysSortInPlaceAndArgsortIsStable) {
    using T = typename TypeParam::type;
    ScratchDir tmp;
    for (const bool small : {false, true}) {
        for (const bool descending : {false, true}) {
            // 3 MiB of keys under a 1 MiB budget: runs.
            const std::vector<T> keys = make_keys<T>(small ? (std::size_t{3} << 20) / sizeof(T) : 20'000, mixed_key_data<T>(), 5);
            std::vector<T> sorted = keys;
            const SortReport report = sort_keys<T>(sorted, descending, cpu_options(tmp, small));
            EXPECT_TRUE(same_bytes(sorted, reference_sort(keys, descending))) << (small ? "runs" : "one chunk");
            if (small) {
                EXPECT_GT(report.runs, 1u);
            }
            const std::vector<std::uint64_t> index = argsort<T>(keys, descending, cpu_options(tmp, small));
            EXPECT_EQ(index, reference_argsort(keys, descending)) << (small ? "runs" : "one chunk");
            EXPECT_TRUE(tmp.entries().empty());
        }
    }
}

// Records by a key spec (u16 at byte 4 descending, then the u32 at 0), with two value arrays of 3
// and 8 bytes and a u32 index, into other arrays, stable and --unique; the same in place.
TEST(SortMemory, RecordsWithValuesAndIndexFollowTheStableOrder) {
    ScratchDir tmp;
    const std::size_t n = 50'000, size = 12;
    std::vector<std::byte> records = random_bytes(n * size, 7);
    for (std::size_t i = 0; i < n; ++i) records[i * size + 4] = static_cast<std::byte>(i % 7);  // many equal keys
    for (std::size_t i = 0; i < n; ++i) records[i * size + 5] = std::byte{0};
    const std::vector<std::byte> v3 = random_bytes(n * 3, 8), v8 = random_bytes(n * 8, 9);
    KeySpec spec;
    spec.record_size = size;
    spec.fields = {KeyField{4, false, 2, KeyType::u16, false, true}, KeyField{0, false, 4, KeyType::u32, false, false}};
    // The reference: positions ordered by the two fields.
    auto field = [&](std::size_t i, std::size_t offset, std::size_t width) {
        std::uint64_t v = 0;
        std::memcpy(&v, records.data() + i * size + offset, width);
        return v;
    };
    std::vector<std::uint64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
        if (field(a, 4, 2) != field(b, 4, 2)) return field(a, 4, 2) > field(b, 4, 2);
        return field(a, 0, 4) < field(b, 0, 4);
    });
    for (const bool unique : {false, true}) {
        std::vector<std::uint64_t> kept;
        for (std::size_t k = 0; k < n; ++k)
            if (!unique || k == 0 || field(order[k], 4, 2) != field(order[k - 1], 4, 2) || field(order[k], 0, 4) != field(order[k - 1], 0, 4))
                kept.push_back(order[k]);
        std::vector<std::byte> out(records.size()), o3(v3.size()), o8(v8.size());
        std::vector<std::uint32_t> index(n);
        MemorySort sort;
        sort.keys = records;
        sort.records = spec;
        sort.unique = unique;
        sort.keys_output = out;
        sort.values = {{v3, o3}, {v8, o8}};
        sort.index_output = std::as_writable_bytes(std::span<std::uint32_t>(index));
        const SortReport report = sort_memory(sort, cpu_options(tmp, true));
        ASSERT_EQ(report.output_records, kept.size());
        for (std::size_t k = 0; k < kept.size(); ++k) {
            ASSERT_EQ(index[k], kept[k]) << k;
            ASSERT_EQ(std::memcmp(out.data() + k * size, records.data() + kept[k] * size, size), 0) << k;
            ASSERT_EQ(std::memcmp(o3.data() + k * 3, v3.data() + kept[k] * 3, 3), 0) << k;
            ASSERT_EQ(std::memcmp(o8.data() + k * 8, v8.data() + kept[k] * 8, 8), 0) << k;
        }
    }
    // In place: the keys and the values are their own outputs.
    std::vector<std::byte> keys = records, values = v8;
    MemorySort in_place;
    in_place.keys = keys;
    in_place.records = spec;
    in_place.keys_output = keys;
    in_place.values = {{values, values}};
    sort_memory(in_place, cpu_options(tmp, false));
    for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(std::memcmp(keys.data() + k * size, records.data() + order[k] * size, size), 0) << k;
        ASSERT_EQ(std::memcmp(values.data() + k * 8, v8.data() + order[k] * 8, 8), 0) << k;
    }
    EXPECT_TRUE(tmp.entries().empty());
}

// Arrays that do not fit: the budget is what the sort takes besides them, and runs beyond it go to
// tmp_dir and are merged (a gather of the values through the index proves the order).
TEST(SortMemory, ValuesAlongKeysLargerThanTheBudgetSpillAndMerge) {
    ScratchDir tmp;
    const std::vector<std::uint64_t> keys = make_keys<std::uint64_t>(400'000, {gen::Distribution::few_unique}, 3);
    const std::vector<std::byte> values = random_bytes(keys.size() * 5, 4);
    std::vector<std::byte> out(values.size());
    std::vector<std::uint64_t> index(keys.size());
    MemorySort sort;
    sort.keys = std::as_bytes(std::span<const std::uint64_t>(keys));
    sort.order = {KeyType::u64, false};
    sort.values = {{values, out}};
    sort.index_output = std::as_writable_bytes(std::span<std::uint64_t>(index));
    const SortReport report = sort_memory(sort, cpu_options(tmp, true));
    EXPECT_GT(report.runs, 3u);
    EXPECT_EQ(index, reference_argsort(keys, false));
    for (std::size_t k = 0; k < keys.size(); ++k) ASSERT_EQ(std::memcmp(out.data() + k * 5, values.data() + index[k] * 5, 5), 0);
    EXPECT_TRUE(tmp.entries().empty());
}

// Sizes that do not fit are refused before anything is sorted; empty arrays sort to nothing.
TEST(SortMemory, SizesThatDoNotFitAreRefused) {
    std::vector<std::uint64_t> keys = {3, 1, 2};
    std::vector<std::byte> values(7), out(7), index(3 * 5);
    MemorySort sort;
    sort.keys = std::as_bytes(std::span<const std::uint64_t>(keys));
    sort.values = {{values, out}};
    EXPECT_THROW(sort_memory(sort), std::invalid_argument);  // 7 bytes of values for 3 keys
    sort.values = {};
    sort.index_output = index;
    EXPECT_THROW(sort_memory(sort), std::invalid_argument);  // 5 bytes per index entry
    sort.index_output = {};
    std::vector<std::byte> short_output(16);
    sort.keys_output = short_output;
    EXPECT_THROW(sort_memory(sort), std::invalid_argument);
    std::vector<std::uint64_t> none;
    EXPECT_EQ(sort_keys<std::uint64_t>(none).records, 0u);
    EXPECT_TRUE(argsort<std::uint64_t>(none).empty());
}

// A budget beyond what a temp folder can take fails with the public error of its kind.
TEST(SortMemory, AnUnusableTempFolderIsAnIoError) {
    std::vector<std::uint64_t> keys = make_keys<std::uint64_t>(300'000, {gen::Distribution::uniform}, 1);
    MemoryOptions options;
    options.backend = Backend::cpu;
    options.memory_bytes = kMinMemoryBudget;
    options.tmp_dir = "/nonexistent-folder-of-gpusort-tests";
    EXPECT_THROW(sort_keys<std::uint64_t>(keys, false, options), IoError);
}
