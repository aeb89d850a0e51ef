// sort_file end to end through the library API, typed over all ten key types: every size class,
// distribution and direction, sorted in memory, as many runs, and with several merge passes,
// each compared byte for byte with std::sort under an independent reference order.
#include "generated_keys.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "io/file.hpp"
#include "io/stream_writer.hpp"
#include "gpusort/sort_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <span>
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

template <class T>
SortReport sort_and_compare(const std::vector<T>& keys, KeyType type, bool descending, Budget budget,
                            const std::string& what, unsigned threads = 2) {
    ScratchDir dir;
    ScratchDir tmp;
    write_keys(dir / "in", keys);
    SortOptions options;
    options.input = dir / "in";
    options.output = dir / "out";
    options.order = {type, descending};
    options.backend = Backend::cpu;  // these budgets are the host's; the GPU path has its own tests
    options.threads = threads;
    options.tmp_dir = tmp.path();
    if (budget != Budget::in_memory) options.memory_bytes = kMinMemoryBudget;
    if (budget == Budget::many_passes) options.max_fan_in = 2;
    SortReport report = sort_file(options);
    const std::vector<T> expected = reference_sort(keys, descending);
    const std::vector<T> actual = read_keys<T>(dir / "out");
    EXPECT_TRUE(same_bytes(actual, expected)) << what;
    EXPECT_EQ(read_keys<T>(dir / "in").size(), keys.size()) << "input changed: " << what;
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
    for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 1001u, 65537u})
        for (const KeyData& data : key_data_for<T>())
            for (bool descending : {false, true}) {
                SortReport report = sort_and_compare(make_keys<T>(n, data, n + 1), TypeParam::key, descending,
                                                     Budget::in_memory,
                                                     std::to_string(n) + " " + key_data_name(data) + (descending ? " desc" : ""));
                EXPECT_EQ(report.merge_passes, 0u);
            }
}

TYPED_TEST(SortFileTest, ManyRunsAndManyPasses) {
    using T = typename TypeParam::type;
    // Six and a bit runs: the last one short and odd-sized.
    const std::size_t n = 6 * min_budget_run_keys<T>() + 17;
    for (Budget budget : {Budget::many_runs, Budget::many_passes})
        for (const KeyData& data : key_data_for<T>())
            for (bool descending : {false, true}) {
                // One thread: the 1 MiB budget then merges all seven runs at once.
                const unsigned threads = budget == Budget::many_runs ? 1 : 2;
                SortReport report = sort_and_compare(make_keys<T>(n, data, 99), TypeParam::key, descending, budget,
                                                     std::string(budget_name(budget)) + " " + key_data_name(data) +
                                                         (descending ? " desc" : ""),
                                                     threads);
                EXPECT_EQ(report.runs, 7u);
                EXPECT_EQ(report.merge_passes, budget == Budget::many_runs ? 1u : 3u);  // 7 -> 4 -> 2 -> out
            }
}

TYPED_TEST(SortFileTest, SeveralMillionKeys) {
    using T = typename TypeParam::type;
    const std::size_t n = 3'000'001;
    sort_and_compare(make_keys<T>(n, mixed_key_data<T>(), 5), TypeParam::key,
                     false, Budget::many_runs, "several million, many runs");
    sort_and_compare(make_keys<T>(n, {}, 6), TypeParam::key, true, Budget::in_memory,
                     "several million, in memory, one thread", 1);
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
    SortOptions options;
    options.input = dir / "in.zst";
    options.output = dir / "out";
    options.backend = Backend::cpu;
    options.memory_bytes = kMinMemoryBudget;
    options.tmp_dir = tmp.path();
    options.max_run_records = 1000;
    const SortReport report = sort_file(options);
    EXPECT_EQ(report.runs, 2u);
    EXPECT_EQ(report.merge_passes, 1u);
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), reference_sort(keys, false)));
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
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"}));
}

// Hundreds of runs in several passes: skewed runs (each run holds a range of its own: sorted and
// reversed input), all-equal runs and few distinct keys, for keys and for records with --unique.
TEST(SortFile, HundredsOfRunsInSeveralPasses) {
    for (const KeyData& data : {KeyData{gen::Distribution::sorted}, KeyData{gen::Distribution::reversed},
                                KeyData{gen::Distribution::equal}, KeyData{gen::Distribution::few_unique}}) {
        ScratchDir dir, tmp;
        const auto keys = make_keys<std::uint64_t>(300'017, data, 8);
        write_keys(dir / "in", keys);
        SortOptions options;
        options.input = dir / "in";
        options.output = dir / "out";
        options.backend = Backend::cpu;
        options.threads = 2;
        options.memory_bytes = kMinMemoryBudget;
        options.tmp_dir = tmp.path();
        options.max_run_records = 1000;
        options.max_fan_in = 8;
        const SortReport report = sort_file(options);
        EXPECT_EQ(report.runs, 301u) << key_data_name(data);
        EXPECT_GE(report.merge_passes, 3u) << key_data_name(data);
        EXPECT_EQ(report.merge_passes, report.plan.merge_passes) << key_data_name(data);
        EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), reference_sort(keys, false))) << key_data_name(data);
        EXPECT_TRUE(tmp.entries().empty());
    }
}
