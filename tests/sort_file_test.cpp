// sort_file end to end through the library API, typed over all ten key types: every size class,
// distribution and direction, sorted in memory, as many runs, and with several merge passes,
// each compared byte for byte with std::sort under an independent reference order, the input
// compared byte for byte with what was written before the sort. The inputs of the typed tests
// are listed once, and a census of them shows that they hold what the order must get right:
// NaNs, -0.0 and +0.0, both infinities, and duplicates.
#include "generated_keys.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "io/file.hpp"
#include "io/stream_writer.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <span>
#include <stdexcept>
#include <fcntl.h>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

enum class Budget { in_memory, many_runs, many_passes };
const char* budget_name(Budget b) {
    return b == Budget::in_memory ? "in-memory" : b == Budget::many_runs ? "many-runs" : "many-passes";
}

// Keys per run under the smallest budget (1 MiB: two run buffers in 15/16 of it).
template <class T>
std::size_t min_budget_run_keys() {
    return (kMinMemoryBudget - kMinMemoryBudget / 16) / 2 / sizeof(T);
}

// An input of the typed tests: `count` keys of a kind of data from a seed.
struct TypedInput {
    std::size_t count;
    KeyData data;
    std::uint64_t seed;
};

std::string input_name(const TypedInput& input) {
    return std::to_string(input.count) + " " + key_data_name(input.data);
}

// SmallSizesInMemory: every size class and kind of data.
template <class T>
std::vector<TypedInput> small_inputs() {
    std::vector<TypedInput> inputs;
    for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 1001u, 65537u})
        for (const KeyData& data : key_data_for<T>()) inputs.push_back({n, data, n + 1});
    return inputs;
}

// ManyRunsAndManyPasses: six and a bit runs (the last one short and odd-sized) of every kind.
template <class T>
std::vector<TypedInput> many_runs_inputs() {
    std::vector<TypedInput> inputs;
    for (const KeyData& data : key_data_for<T>()) inputs.push_back({6 * min_budget_run_keys<T>() + 17, data, 99});
    return inputs;
}

// SeveralMillionKeys: the widest mix, and uniform keys.
template <class T>
std::vector<TypedInput> several_million_inputs() {
    return {{3'000'001, mixed_key_data<T>(), 5}, {3'000'001, {}, 6}};
}

template <class T>
SortReport sort_and_compare(const std::vector<T>& keys, KeyType type, bool descending, Budget budget,
                            const std::string& what, unsigned threads = 2) {
    ScratchDir dir;
    ScratchDir tmp;
    write_keys(dir / "in", keys);
    PartSortOptions options;
    options.input = dir / "in";
    options.output = dir / "out";
    options.order = {type, descending};
    options.backend = Backend::cpu;  // these budgets are the host's; the GPU path has its own tests
    options.threads = threads;
    options.tmp_dir = tmp.path();
    if (budget != Budget::in_memory) options.memory_bytes = kMinMemoryBudget;
    if (budget == Budget::many_passes) options.max_fan_in = 2;
    SortReport report = sort_part(options);
    const std::vector<T> expected = reference_sort(keys, descending);
    const std::vector<T> actual = read_keys<T>(dir / "out");
    EXPECT_TRUE(same_bytes(actual, expected)) << what;
    EXPECT_TRUE(same_bytes(read_keys<T>(dir / "in"), keys)) << "input changed: " << what;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left: " << what;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"})) << what;
    return report;
}

}  // namespace

template <class Traits>
class SortFileTest : public ::testing::Test {};
TYPED_TEST_SUITE(SortFileTest, AllKeyTypes);

TYPED_TEST(SortFileTest, SmallSizesInMemory) {
    using T = typename TypeParam::type;
    for (const TypedInput& input : small_inputs<T>())
        for (bool descending : {false, true}) {
            SortReport report = sort_and_compare(make_keys<T>(input.count, input.data, input.seed), TypeParam::key,
                                                 descending, Budget::in_memory,
                                                 input_name(input) + (descending ? " desc" : ""));
            EXPECT_EQ(report.merge_passes, 0u);
        }
}

TYPED_TEST(SortFileTest, ManyRunsAndManyPasses) {
    using T = typename TypeParam::type;
    for (Budget budget : {Budget::many_runs, Budget::many_passes})
        for (const TypedInput& input : many_runs_inputs<T>())
            for (bool descending : {false, true}) {
                // One thread: the 1 MiB budget then merges all seven runs at once.
                const unsigned threads = budget == Budget::many_runs ? 1 : 2;
                SortReport report = sort_and_compare(make_keys<T>(input.count, input.data, input.seed), TypeParam::key,
                                                     descending, budget,
                                                     std::string(budget_name(budget)) + " " + input_name(input) +
                                                         (descending ? " desc" : ""),
                                                     threads);
                EXPECT_EQ(report.runs, 7u);
                EXPECT_EQ(report.merge_passes, budget == Budget::many_runs ? 1u : 3u);  // 7 -> 4 -> 2 -> out
            }
}

TYPED_TEST(SortFileTest, SeveralMillionKeys) {
    using T = typename TypeParam::type;
    const std::vector<TypedInput> inputs = several_million_inputs<T>();
    sort_and_compare(make_keys<T>(inputs[0].count, inputs[0].data, inputs[0].seed), TypeParam::key,
                     false, Budget::many_runs, "several million, many runs");
    sort_and_compare(make_keys<T>(inputs[1].count, inputs[1].data, inputs[1].seed), TypeParam::key, true,
                     Budget::in_memory, "several million, in memory, one thread", 1);
}

// What the typed tests above sort holds what the order must get right, counted by value
// (census_of), not by the key rules: for floats, the inputs with special values (of more than a
// few keys) each hold NaNs of both signs and more than one payload, -0.0, +0.0, +inf and -inf,
// and each test has such inputs; for every type, the all-equal and few-distinct inputs of each
// test are duplicates but for a few keys. (Uniform keys of 64 bits do not repeat: the sorts of
// duplicates are those of other kinds of data.)
TYPED_TEST(SortFileTest, TheTypedTestsInputsHoldSpecialValuesAndDuplicates) {
    using T = typename TypeParam::type;
    const std::pair<const char*, std::vector<TypedInput>> tests[] = {{"SmallSizesInMemory", small_inputs<T>()},
                                                                     {"ManyRunsAndManyPasses", many_runs_inputs<T>()},
                                                                     {"SeveralMillionKeys", several_million_inputs<T>()}};
    for (const auto& [test, inputs] : tests) {
        std::size_t duplicates = 0, special_inputs = 0, repeating_inputs = 0;
        for (const TypedInput& input : inputs) {
            const std::string what = std::string(test) + ", " + input_name(input);
            const KeyCensus c = census_of(make_keys<T>(input.count, input.data, input.seed));
            ASSERT_EQ(c.keys, input.count) << what;
            duplicates += c.duplicates;
            const auto d = input.data.distribution;
            if ((d == gen::Distribution::equal || d == gen::Distribution::few_unique) && input.count >= 1001) {
                ++repeating_inputs;
                EXPECT_GE(c.duplicates, input.count - (input.data.special ? 64 : 5)) << what;
            }
            if (!std::is_floating_point_v<T> || !input.data.special || input.count < 1001) {
                continue;
            }
            ++special_inputs;
            EXPECT_GT(c.nan, 0u) << what;
            EXPECT_GT(c.negative_nan, 0u) << what;
            EXPECT_LT(c.negative_nan, c.nan) << what << ": NaNs of one sign only";
            EXPECT_GE(c.nan_patterns, 3u) << what << ": NaNs of one or two payloads only";
            EXPECT_GT(c.negative_zero, 0u) << what;
            EXPECT_GT(c.positive_zero, 0u) << what;
            EXPECT_GT(c.positive_infinity, 0u) << what;
            EXPECT_GT(c.negative_infinity, 0u) << what;
            EXPECT_GT(c.duplicates, 0u) << what;
        }
        if (std::string(test) != "SeveralMillionKeys") {
            EXPECT_GE(repeating_inputs, 2u) << test << ": no all-equal or few-distinct input";
            EXPECT_GT(duplicates, 0u) << test << ": no key repeats in any input";
        }
        if (std::is_floating_point_v<T>) {
            EXPECT_GT(special_inputs, 0u) << test << ": no input with special values";
        }
    }
}

TEST(SortFile, BoundariesOfTheRunSize) {
    const std::size_t run = min_budget_run_keys<std::uint32_t>();
    for (std::size_t n : {2 * run - 1, 2 * run, 2 * run + 1, 3 * run})
        sort_and_compare(make_keys<std::uint32_t>(n, {}, n), KeyType::u32, false, Budget::many_runs,
                         "run boundary " + std::to_string(n));
}

TEST(SortFile, StreamOfExactlyTwoChunks) {
    // A stream that fills both chunk buffers cannot be known to end there: it becomes two runs, and
    // they are merged. (The merge was once planned as a one-chunk sort, without fan-in, and looped.)
    ScratchDir dir, tmp;
    const auto keys = make_keys<std::uint64_t>(2000, {}, 4);
    {
        const std::string path = dir / "in.zst";
        io::File file(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), path);
        io::StreamWriter writer(file.fd(), path, Compression::zstd, 1);
        writer.write(std::as_bytes(std::span(keys)));
        writer.finish();
    }
    PartSortOptions options;
    options.input = dir / "in.zst";
    options.output = dir / "out";
    options.backend = Backend::cpu;
    options.memory_bytes = kMinMemoryBudget;
    options.tmp_dir = tmp.path();
    options.max_run_records = 1000;
    const std::string input = read_text(dir / "in.zst");
    const SortReport report = sort_part(options);
    EXPECT_EQ(report.runs, 2u);
    EXPECT_EQ(report.merge_passes, 1u);
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), reference_sort(keys, false)));
    EXPECT_TRUE(read_text(dir / "in.zst") == input) << "input changed";
    EXPECT_TRUE(tmp.entries().empty());
}

TEST(SortFile, InPlaceWhenOutputIsInput) {
    ScratchDir dir;
    const auto keys = make_keys<std::int64_t>(500'000, {}, 3);
    write_keys(dir / "data", keys);
    SortOptions options;
    options.input = dir / "data";
    options.output = dir / "data";
    options.order = {KeyType::i64, false};
    options.backend = Backend::cpu;
    options.memory_bytes = kMinMemoryBudget;  // spilled runs: the input is read long after the output exists
    sort_file(options);
    EXPECT_TRUE(same_bytes(read_keys<std::int64_t>(dir / "data"), reference_sort(keys, false)));
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"data"}));
}

TEST(SortFile, SizeNotAMultipleOfTheRecordIsRefusedAndNothingIsWritten) {
    ScratchDir dir;
    write_text(dir / "in", std::string(13, 'x'));
    write_text(dir / "out", "keep me");
    SortOptions options;
    options.input = dir / "in";
    options.output = dir / "out";
    options.order = {KeyType::u32, false};
    try {
        sort_file(options);
        FAIL() << "no error";
    } catch (const SortError& e) {
        EXPECT_NE(std::string(e.what()).find("not a multiple of the record size 4"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_text(dir / "out"), "keep me");
    EXPECT_EQ(read_text(dir / "in"), std::string(13, 'x'));
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
}

// Every failure reaches the caller as a public gpusort::Error of its kind (gpusort/errors.hpp):
// an input that cannot be opened as an IoError, one that does not hold whole records as a
// SortError; a budget below the least as std::invalid_argument.
TEST(SortFile, FailuresAreThePublicErrorsOfTheirKind) {
    ScratchDir dir;
    SortOptions options;
    options.input = dir / "missing";
    options.output = dir / "out";
    try {
        sort_file(options);
        FAIL() << "no error";
    } catch (const gpusort::IoError& e) {
        EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
        EXPECT_NE(dynamic_cast<const gpusort::Error*>(&e), nullptr);
    }
    write_text(dir / "in", std::string(13, 'x'));
    options.input = dir / "in";
    options.order = {KeyType::u32, false};
    EXPECT_THROW(sort_file(options), gpusort::SortError);
    try {
        sort_file(options);
    } catch (const gpusort::IoError&) {
        ADD_FAILURE() << "an input of a partial record was taken for a failed system call";
    } catch (const gpusort::Error&) {
    }
    write_text(dir / "in", std::string(16, 'x'));
    options.memory_bytes = 1000;
    EXPECT_THROW(sort_file(options), std::invalid_argument);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in"}));
}

// Hundreds of runs in several passes: skewed runs (each run holds a range of its own: sorted and
// reversed input), all-equal runs and few distinct keys, for keys and for records with --unique.
TEST(SortFile, HundredsOfRunsInSeveralPasses) {
    for (const KeyData& data : {KeyData{gen::Distribution::sorted}, KeyData{gen::Distribution::reversed},
                                KeyData{gen::Distribution::equal}, KeyData{gen::Distribution::few_unique}}) {
        ScratchDir dir, tmp;
        const auto keys = make_keys<std::uint64_t>(300'017, data, 8);
        write_keys(dir / "in", keys);
        PartSortOptions options;
        options.input = dir / "in";
        options.output = dir / "out";
        options.backend = Backend::cpu;
        options.threads = 2;
        options.memory_bytes = kMinMemoryBudget;
        options.tmp_dir = tmp.path();
        options.max_run_records = 1000;
        options.max_fan_in = 8;
        const SortReport report = sort_part(options);
        EXPECT_EQ(report.runs, 301u) << key_data_name(data);
        EXPECT_GE(report.merge_passes, 3u) << key_data_name(data);
        EXPECT_EQ(report.merge_passes, report.plan.merge_passes) << key_data_name(data);
        EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), reference_sort(keys, false))) << key_data_name(data);
        EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "in"), keys)) << "input changed: " << key_data_name(data);
        EXPECT_TRUE(tmp.entries().empty());
    }
}
