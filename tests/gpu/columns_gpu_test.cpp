// The columns of a sort on the GPU backend: the same keys with value files and the index sorted on
// the GPU and on the CPU give the same bytes in every output, and those of the reference built here
// (reference_columns.hpp: the record numbers stably sorted by the tests' own comparison, each file
// gathered in that order). u64 keys with values of 8 and 3 bytes, records with a key spec of two
// fields, unique, and many runs under a small device budget; and gather_file out of core on the
// GPU. Skips where no GPU can be used (fails instead under GPUSORT_REQUIRE_GPU=1).
#include "tests/gpu_skip.hpp"
#include "tests/record_sort_cases.hpp"
#include "tests/reference_columns.hpp"
#include "tests/scratch_dir.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

using Bytes = std::vector<std::byte>;

// KEYS and its value files, and what a sort of them must write.
struct ColumnInput {
    Bytes keys;
    std::size_t key_width = 0;
    std::vector<Bytes> values;
    std::vector<std::size_t> widths;
    std::vector<std::uint64_t> index;  // the reference permutation

    // OUT, each column's output and INDEX (u32) as the reference has them.
    std::vector<Bytes> expected() const {
        std::vector<Bytes> outputs = {reference_gather(keys, key_width, index)};
        for (std::size_t i = 0; i < values.size(); ++i) outputs.push_back(reference_gather(values[i], widths[i], index));
        outputs.push_back(index_bytes(index, 4));
        return outputs;
    }
};

// Columns of widths 8 and 3 beside `keys`.
ColumnInput with_values(Bytes keys, std::size_t key_width, std::vector<std::uint64_t> index) {
    const std::size_t n = keys.size() / key_width;
    return {std::move(keys), key_width, {random_column(n, 8, 5), random_column(n, 3, 6)}, {8, 3}, std::move(index)};
}

// Sorts `input` (written in `dir`) on `backend` into outputs named after it, and returns their bytes:
// OUT, each column's output, INDEX.
std::vector<Bytes> sort_on(Backend backend, const ColumnInput& input, PartSortOptions options, const ScratchDir& dir,
                           SortReport& report) {
    const std::string tag = backend == Backend::gpu ? "gpu" : "cpu";
    options.backend = backend;
    options.input = dir / "keys";
    options.output = dir / (tag + ".out");
    options.values.clear();
    for (std::size_t i = 0; i < input.values.size(); ++i)
        options.values.push_back({dir / ("v" + std::to_string(i)), dir / (tag + ".v" + std::to_string(i)), std::nullopt});
    options.index_output = dir / (tag + ".index");
    options.index_type = IndexType::u32;
    report = sort_part(options);
    std::vector<Bytes> outputs = {read_bytes(options.output)};
    for (const ValueColumn& column : options.values) outputs.push_back(read_bytes(column.output));
    outputs.push_back(read_bytes(*options.index_output));
    return outputs;
}

// The sort of `input` with `options` on both backends: every output the same on both, and the
// reference's; the GPU's report names a GPU. Returns the GPU's report.
SortReport expect_gpu_matches_cpu(const ColumnInput& input, const PartSortOptions& options, const std::string& what) {
    ScratchDir dir;
    write_bytes(dir / "keys", input.keys);
    for (std::size_t i = 0; i < input.values.size(); ++i) write_bytes(dir / ("v" + std::to_string(i)), input.values[i]);
    SortReport gpu_report, cpu_report;
    const std::vector<Bytes> gpu = sort_on(Backend::gpu, input, options, dir, gpu_report);
    const std::vector<Bytes> cpu = sort_on(Backend::cpu, input, options, dir, cpu_report);
    const std::vector<Bytes> expected = input.expected();
    const std::vector<std::string> names = {"OUT", "the column of width 8", "the column of width 3", "INDEX"};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_TRUE(gpu[i] == cpu[i]) << names[i] << ": GPU and CPU differ: " << what;
        EXPECT_TRUE(gpu[i] == expected[i]) << names[i] << ": the GPU's is not the reference: " << what;
    }
    EXPECT_NE(gpu_report.backend, "cpu") << what;
    EXPECT_EQ(gpu_report.output_records, input.index.size()) << what;
    EXPECT_EQ(gpu_report.index_width, 4u) << what;
    EXPECT_EQ(dir.entries().size(), 3 + 2 * 4u) << "files other than the inputs and outputs: " << what;
    return gpu_report;
}

// u64 keys with many ties.
std::vector<std::uint64_t> u64_keys(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::uint64_t> keys(n);
    for (auto& key : keys) key = random() % (n / 4 + 1) * 0x9e3779b97f4a7c15ULL;
    return keys;
}

// Many runs: chunks of at most `run_records` under a device budget of 64 MiB and the host's of 256 MiB.
PartSortOptions many_runs(std::uint64_t run_records) {
    PartSortOptions options;
    options.threads = 2;
    options.device_memory_bytes = std::uint64_t{64} << 20;
    options.memory_bytes = std::uint64_t{256} << 20;
    options.max_run_records = run_records;
    return options;
}

}  // namespace

TEST(ColumnsGpu, U64KeysWithValuesInOneChunk) {
    SKIP_WITHOUT_GPU();
    const std::vector<std::uint64_t> keys = u64_keys(1'000'003, 1);
    for (bool unique : {false, true}) {
        PartSortOptions options;
        options.order = {KeyType::u64, false};
        options.unique = unique;
        const SortReport report = expect_gpu_matches_cpu(
            with_values(bytes_of(keys), 8, reference_key_index(keys, false, unique)), options, unique ? "unique" : "stable");
        EXPECT_EQ(report.runs, 1u);
    }
}

TEST(ColumnsGpu, RecordKeysWithValues) {
    SKIP_WITHOUT_GPU();
    const KeySpec spec = spec_of(13, {"3:u32:be", "0:i16:desc"});
    const Bytes records = make_records(500'000, spec, 2);
    for (bool unique : {false, true}) {
        PartSortOptions options;
        options.records = spec;
        options.unique = unique;
        expect_gpu_matches_cpu(with_values(records, 13, reference_record_index(records, spec, unique)), options,
                               unique ? "records, unique" : "records");
    }
}

TEST(ColumnsGpu, ManyRunsUnderASmallDeviceBudget) {
    SKIP_WITHOUT_GPU();
    const std::vector<std::uint64_t> keys = u64_keys(3'000'000, 3);
    for (bool unique : {false, true}) {
        PartSortOptions options = many_runs(100'000);
        options.order = {KeyType::u64, unique};
        options.unique = unique;
        const SortReport report = expect_gpu_matches_cpu(with_values(bytes_of(keys), 8, reference_key_index(keys, unique, unique)),
                                                         options, unique ? "many runs, descending, unique" : "many runs");
        EXPECT_GE(report.runs, 30u);
    }
    const KeySpec spec = spec_of(13, {"3:u32:be", "0:i16:desc"});
    const Bytes records = make_records(1'000'000, spec, 4);
    PartSortOptions options = many_runs(40'000);
    options.records = spec;
    const SortReport report =
        expect_gpu_matches_cpu(with_values(records, 13, reference_record_index(records, spec, false)), options, "records, many runs");
    EXPECT_GE(report.runs, 25u);
}

// gather_file out of core on the GPU (the column larger than the host budget: two sorts with
// columns, on the device): the column in the order of the index.
TEST(ColumnsGpu, GatherOutOfCore) {
    SKIP_WITHOUT_GPU();
    const std::size_t n = 2'000'000, width = 24;
    std::vector<std::uint64_t> index(n);
    for (std::size_t i = 0; i < n; ++i) index[i] = i;
    std::shuffle(index.begin(), index.end(), std::mt19937_64(8));
    const Bytes column = random_column(n, width, 9);
    for (const IndexType type : {IndexType::u32, IndexType::u64}) {
        ScratchDir dir, tmp;
        write_bytes(dir / "index", index_bytes(index, type == IndexType::u64 ? 8 : 4));
        write_bytes(dir / "column", column);
        SortOptions options;
        options.backend = Backend::gpu;
        options.input = dir / "column";
        options.output = dir / "gathered";
        options.tmp_dir = tmp.path();
        options.index_type = type;
        options.memory_bytes = std::uint64_t{16} << 20;
        options.device_memory_bytes = std::uint64_t{64} << 20;
        const SortReport report = gather_file(dir / "index", options);
        EXPECT_NE(report.backend, "cpu");
        EXPECT_GT(report.runs, 1u) << "48 MB gathered in memory under a budget of 16 MiB";
        EXPECT_TRUE(read_bytes(dir / "gathered") == reference_gather(column, width, index))
            << "not the column in the order of the index";
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "column", "gathered"}));
        EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
    }
}
