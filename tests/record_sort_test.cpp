// Records with key specs on the CPU backend through the library API: every case of
// record_sort_cases.hpp, stable and with --unique, in memory, as many runs and with several
// merge passes, each compared byte for byte with std::stable_sort under an independent
// field-by-field comparison. Ties are common, so stability is visible in the payload bytes.
#include "record_sort_cases.hpp"
#include "src/sort/sort_part.hpp"
#include "src/plan/merge_plan.hpp"

using namespace gpusort;
using namespace gpusort::testing;

namespace {

enum class Budget { in_memory, many_runs, many_passes };

void run_case(const RecordCase& c, Budget budget, bool unique, std::uint64_t seed) {
    const auto data = make_records(c.records, c.spec, seed);
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 2;
    if (budget != Budget::in_memory) options.memory_bytes = kMinMemoryBudget;
    if (budget == Budget::many_passes) options.max_fan_in = 2;
    const std::string what = c.name + (unique ? ", unique" : "") +
                             (budget == Budget::in_memory ? ", in memory" : budget == Budget::many_runs ? ", many runs" : ", many passes");
    const SortReport report = sort_records_and_compare(data, c.spec, unique, options, what);
    if (budget == Budget::in_memory) {
        EXPECT_EQ(report.runs, 1u) << what;
    } else {
        EXPECT_GE(report.runs, 4u) << what;
    }
    if (budget == Budget::many_passes) {
        EXPECT_GE(report.merge_passes, 2u) << what;
    }
}

}  // namespace

TEST(RecordSort, EveryCaseInMemory) {
    std::uint64_t seed = 1;
    for (const auto& c : record_cases())
        for (bool unique : {false, true}) run_case(c, Budget::in_memory, unique, seed++);
}

TEST(RecordSort, EveryCaseAsManyRuns) {
    std::uint64_t seed = 100;
    for (const auto& c : record_cases())
        for (bool unique : {false, true}) run_case(c, Budget::many_runs, unique, seed++);
}

TEST(RecordSort, EveryCaseWithSeveralMergePasses) {
    std::uint64_t seed = 200;
    for (const auto& c : record_cases())
        for (bool unique : {false, true}) run_case(c, Budget::many_passes, unique, seed++);
}

TEST(RecordSort, EdgeSizesAndAllEqualKeys) {
    const KeySpec spec = spec_of(13, {"3:u32:be"});
    PartSortOptions options;
    options.backend = Backend::cpu;
    for (std::size_t n : {0u, 1u, 2u, 3u, 7u}) {
        const auto data = make_records(n, spec, n);
        sort_records_and_compare(data, spec, false, options, "n=" + std::to_string(n));
        sort_records_and_compare(data, spec, true, options, "unique n=" + std::to_string(n));
    }
    // One key for all: the output is the input (stable), or its first record (unique), also
    // when the group spans every run and merge slice.
    auto data = make_records(80000, spec, 9);
    for (std::size_t i = 0; i < 80000; ++i) std::memset(&data[i * 13 + 3], 0x5a, 4);
    options.memory_bytes = kMinMemoryBudget;
    const SortReport report = sort_records_and_compare(data, spec, false, options, "all equal");
    EXPECT_GE(report.runs, 4u);
    sort_records_and_compare(data, spec, true, options, "all equal, unique");
}

TEST(RecordSort, UniqueOfPlainKeysKeepsOneOfEachValue) {
    // --type with --unique goes through the record path with the whole record as the key.
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.memory_bytes = kMinMemoryBudget;
    const KeySpec spec = whole_record_key(KeyType::f64, false);
    sort_records_and_compare(make_records(300000, spec, 5), spec, true, options, "f64 unique");
}

TEST(RecordSort, UniqueGroupsThatSpanMergeSlices) {
    // 20 MB of records with a 1-byte key of few values: the merge cuts its output into several
    // slices, and groups of equal keys run across their bounds.
    const KeySpec spec = spec_of(100, {"0:bytes:1"});
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 2;
    options.memory_bytes = 4 * kMinMemoryBudget;
    const auto data = make_records(200000, spec, 11);
    for (bool unique : {true, false}) {
        const SortReport report = sort_records_and_compare(data, spec, unique, options, unique ? "unique" : "stable");
        EXPECT_GE(report.runs, 4u);
        EXPECT_GE(merge_slices(report.plan, report.plan.records), 4u);
    }
}

TEST(RecordSort, ManyMergeTasksWithLargeBuffers) {
    // More threads than cores, merge buffers of megabytes: while a merge task copies a large
    // buffer out with several threads, none of them may pick up another slice (whose buffers
    // would be its own). 130 MB of 13-byte records in three runs.
    const KeySpec spec = spec_of(13, {"3:u32:be"});
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 16;
    options.memory_bytes = std::uint64_t{256} << 20;
    const SortReport report =
        sort_records_and_compare(make_records(10'000'000, spec, 21, 256), spec, false, options, "16 merge tasks");
    EXPECT_GE(report.runs, 2u);
    EXPECT_GE(merge_buffer_bytes(report.plan, report.runs), std::uint64_t{1} << 20);
}

TEST(RecordSort, UniqueInLargePiecesSplitAmongThreads) {
    // One chunk of a million records: the sorter hands the output over in pieces of 125001
    // records, which are deduplicated and copied by several threads, block by block.
    const KeySpec spec = spec_of(13, {"3:u32:be"});
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 4;
    for (unsigned distinct : {3u, 256u}) {
        const SortReport report = sort_records_and_compare(make_records(1'000'000, spec, distinct, distinct), spec, true,
                                                           options, "distinct " + std::to_string(distinct));
        EXPECT_EQ(report.runs, 1u);
    }
}

// Hundreds of runs in several passes, stable and --unique, of gensort records.
TEST(RecordSort, HundredsOfRunsInSeveralPasses) {
    const KeySpec spec = gensort_key();
    const std::vector<std::byte> data = make_records(60'000, spec, 17);
    for (bool unique : {false, true}) {
        PartSortOptions options;
        options.backend = Backend::cpu;
        options.threads = 2;
        options.memory_bytes = kMinMemoryBudget;
        options.max_run_records = 200;
        options.max_fan_in = 6;
        const SortReport report =
            sort_records_and_compare(data, spec, unique, options, unique ? "gensort, unique" : "gensort");
        EXPECT_EQ(report.runs, 300u);
        EXPECT_GE(report.merge_passes, 3u);
    }
}
