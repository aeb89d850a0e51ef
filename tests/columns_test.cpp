// The columns of a sort through the library API, on the CPU backend: value files carried along with
// the keys (SortOptions::values), the permutation written (index_output, u32 or u64) and applied to
// another column (gather_file). Every output is compared byte for byte with a reference built here
// (reference_columns.hpp): the record numbers of the keys stably sorted by the tests' own comparison,
// and each file's records gathered in that order. Every key type (floats with NaNs, -0.0 and the
// infinities), records with a key spec, gensort records, descending and unique; in memory, as hundreds
// of runs merged in several passes, and in place. The refusals throw a gpusort::Error of one line
// naming the file, and leave every folder as it was.
#include "record_sort_cases.hpp"
#include "reference_columns.hpp"
#include "scratch_dir.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

using Bytes = std::vector<std::byte>;

// A column of values: its records, their width, and whether the width is given to the sort (else
// the sort infers it from the file's size).
struct Values {
    Bytes data;
    std::size_t width = 0;
    bool width_given = false;
};

// Columns of `n` records of each width, of random bytes.
std::vector<Values> columns_of_widths(std::size_t n, const std::vector<std::size_t>& widths, std::uint64_t seed) {
    std::vector<Values> columns;
    for (const std::size_t width : widths) columns.push_back({random_column(n, width, seed++), width});
    return columns;
}

// Which outputs a sort with columns writes, and how.
struct Outputs {
    bool keys = true;   // OUT (else options.output stays empty)
    bool index = true;  // INDEX
    IndexType index_type = IndexType::automatic;
    bool in_place = false;  // OUT is KEYS and each column's output its input
};

// "" where `actual` is `expected`, else where they first differ (records of `width` bytes).
std::string difference(const Bytes& actual, const Bytes& expected, std::size_t width) {
    if (actual.size() != expected.size())
        return std::to_string(actual.size()) + " bytes, expected " + std::to_string(expected.size());
    const auto at = std::mismatch(actual.begin(), actual.end(), expected.begin());
    if (at.first == actual.end()) return "";
    return "record " + std::to_string(static_cast<std::size_t>(at.first - actual.begin()) / width) + " differs";
}

std::size_t expected_index_width(IndexType type) { return type == IndexType::u64 ? 8 : 4; }

// Sorts KEYS (records of `key_width` bytes, ordered by the key that `options` holds) with the
// columns `values` in a fresh folder and expects every output to be its reference: KEYS and each
// column gathered in the order of `index`, and `index` itself; the inputs not sorted in place
// unchanged; no file in the folder but the inputs and outputs, and none in the temp folder.
SortReport sort_columns_and_compare(const Bytes& keys, std::size_t key_width, const std::vector<Values>& values,
                                    const std::vector<std::uint64_t>& index, const Outputs& outputs,
                                    PartSortOptions options, const std::string& what) {
    ScratchDir dir, tmp;
    std::set<std::string> expected_entries = {"keys"};
    write_bytes(dir / "keys", keys);
    options.input = dir / "keys";
    if (outputs.keys) options.output = outputs.in_place ? dir / "keys" : dir / "out";
    if (outputs.keys && !outputs.in_place) expected_entries.insert("out");
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::string name = std::string("v").append(std::to_string(i));
        write_bytes(dir / name, values[i].data);
        ValueColumn column{dir / name, outputs.in_place ? dir / name : dir / (name + ".out"), std::nullopt};
        if (values[i].width_given) column.width = values[i].width;
        options.values.push_back(column);
        expected_entries.insert(name);
        if (!outputs.in_place) expected_entries.insert(name + ".out");
    }
    if (outputs.index) {
        options.index_output = dir / "index";
        expected_entries.insert("index");
    }
    options.index_type = outputs.index_type;
    options.tmp_dir = tmp.path();
    const SortReport report = sort_part(options);

    if (outputs.keys) {
        EXPECT_EQ(difference(read_bytes(options.output), reference_gather(keys, key_width, index), key_width), "")
            << "OUT: " << what;
    }
    if (!(outputs.keys && outputs.in_place)) {
        EXPECT_TRUE(read_bytes(dir / "keys") == keys) << "KEYS changed: " << what;
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
        const Values& column = values[i];
        EXPECT_EQ(difference(read_bytes(options.values[i].output), reference_gather(column.data, column.width, index),
                             column.width), "")
            << "the column of width " << column.width << ": " << what;
        if (!outputs.in_place) {
            EXPECT_TRUE(read_bytes(options.values[i].input) == column.data) << "a value file changed: " << what;
        }
    }
    const std::size_t width = outputs.index ? expected_index_width(outputs.index_type) : 0;
    if (outputs.index) {
        EXPECT_EQ(difference(read_bytes(dir / "index"), index_bytes(index, width), width), "") << "INDEX: " << what;
    }
    EXPECT_EQ(report.index_width, width) << what;
    EXPECT_EQ(report.records, keys.size() / key_width) << what;
    EXPECT_EQ(report.output_records, index.size()) << what;
    EXPECT_EQ(dir.entries(), expected_entries) << what;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left: " << what;
    return report;
}

// The CPU backend, as hundreds of runs (at most `run_records` each) merged `fan_in` at a time under
// the smallest budget; or, without them, in memory.
PartSortOptions cpu_options(std::optional<std::uint64_t> run_records = std::nullopt, std::size_t fan_in = 0) {
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 2;
    if (run_records) {
        options.memory_bytes = kMinMemoryBudget;
        options.max_run_records = run_records;
        options.max_fan_in = fan_in;
    }
    return options;
}

// Keys of type T drawn from a small pool (the type's special values and random bit patterns), so
// that equal keys are common and the order of their values shows stability.
template <class T>
std::vector<T> keys_with_ties(std::size_t n, std::size_t random_values, std::uint64_t seed) {
    std::vector<T> pool = special_values<T>();
    std::mt19937_64 random(seed);
    for (std::size_t i = 0; i < random_values; ++i) {
        const std::uint64_t bits = random();
        T value;
        std::memcpy(&value, &bits, sizeof value);
        pool.push_back(value);
    }
    std::vector<T> keys(n);
    for (T& key : keys) key = pool[random() % pool.size()];
    return keys;
}

std::string case_name(bool descending, bool unique) {
    return std::string(descending ? "descending" : "ascending") + (unique ? ", unique" : "");
}

}  // namespace

template <class Traits>
class ColumnsOfEveryKeyType : public ::testing::Test {};
TYPED_TEST_SUITE(ColumnsOfEveryKeyType, AllKeyTypes);

// Values of widths 1, 3 and 8 and the index, in memory, each direction, stable and unique.
TYPED_TEST(ColumnsOfEveryKeyType, InMemory) {
    using T = typename TypeParam::type;
    const std::vector<T> keys = keys_with_ties<T>(3001, 20, 7);
    const std::vector<Values> values = columns_of_widths(keys.size(), {1, 3, 8}, 11);
    for (bool descending : {false, true})
        for (bool unique : {false, true}) {
            PartSortOptions options = cpu_options();
            options.order = {TypeParam::key, descending};
            options.unique = unique;
            const SortReport report =
                sort_columns_and_compare(bytes_of(keys), sizeof(T), values, reference_key_index(keys, descending, unique),
                                         {}, options, case_name(descending, unique));
            EXPECT_EQ(report.runs, 1u);
        }
}

// The same as about two hundred runs merged in several passes.
TYPED_TEST(ColumnsOfEveryKeyType, HundredsOfRunsInSeveralPasses) {
    using T = typename TypeParam::type;
    const std::vector<T> keys = keys_with_ties<T>(20000, 500, 8);
    const std::vector<Values> values = columns_of_widths(keys.size(), {3, 8}, 12);
    for (bool descending_and_unique : {false, true}) {
        PartSortOptions options = cpu_options(97, 8);
        options.order = {TypeParam::key, descending_and_unique};
        options.unique = descending_and_unique;
        const std::vector<std::uint64_t> index = reference_key_index(keys, descending_and_unique, descending_and_unique);
        const SortReport report = sort_columns_and_compare(bytes_of(keys), sizeof(T), values, index, {}, options,
                                                           case_name(descending_and_unique, descending_and_unique));
        EXPECT_GE(report.runs, 200u);
        EXPECT_GE(report.merge_passes, 2u);
    }
}

// Records with a key of two fields, one descending; values of widths 1, 3, 8 and 100 at once, the
// width of one given; in memory and as hundreds of runs, stable and unique.
TEST(Columns, RecordKeysWithFourValueFiles) {
    const KeySpec spec = spec_of(13, {"3:u32:be", "0:i16:desc"});
    const Bytes keys = make_records(20000, spec, 21);
    std::vector<Values> values = columns_of_widths(20000, {1, 3, 8, 100}, 22);
    values[2].width_given = true;
    for (const std::optional<std::uint64_t> run_records : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{100}})
        for (bool unique : {false, true}) {
            PartSortOptions options = cpu_options(run_records, 4);
            options.records = spec;
            options.unique = unique;
            const std::string what = std::string("two fields") + (unique ? ", unique" : "") + (run_records ? ", many runs" : "");
            const SortReport report = sort_columns_and_compare(keys, spec.record_size, values,
                                                               reference_record_index(keys, spec, unique), {}, options, what);
            if (run_records) {
                EXPECT_EQ(report.runs, 200u) << what;
                EXPECT_GE(report.merge_passes, 3u) << what;
            }
        }
}

// 100-byte records ordered by a 10-byte key (gensort's layout), ascending and descending, stable and
// unique, in memory and as hundreds of runs.
TEST(Columns, GensortRecords) {
    const Bytes keys = make_records(20000, gensort_key(), 31, 1);  // keys of mostly zero bytes: many ties
    const std::vector<Values> values = columns_of_widths(20000, {8, 3}, 32);
    for (bool descending : {false, true})
        for (bool unique : {false, true}) {
            KeySpec spec = gensort_key();
            spec.fields[0].descending = descending;
            for (const std::optional<std::uint64_t> run_records : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{90}}) {
                PartSortOptions options = cpu_options(run_records, 6);
                options.records = spec;
                options.unique = unique;
                const std::vector<std::uint64_t> index = reference_record_index(keys, spec, unique);
                ASSERT_LT(index.size(), unique ? 19000u : 20001u) << "too few equal keys for unique to show";
                sort_columns_and_compare(keys, 100, values, index, {}, options,
                                         "gensort, " + case_name(descending, unique) + (run_records ? ", many runs" : ""));
            }
        }
}

// The index forced to u32 and u64, and chosen (u32 for so few records); the index alone and the
// values alone, the sorted keys not written.
TEST(Columns, IndexTypesAndOutputsLeftOut) {
    const std::vector<std::uint64_t> keys = keys_with_ties<std::uint64_t>(5000, 300, 41);
    const std::vector<Values> values = columns_of_widths(keys.size(), {8, 3}, 42);
    const std::vector<std::uint64_t> index = reference_key_index(keys, false, false);
    for (const IndexType type : {IndexType::automatic, IndexType::u32, IndexType::u64}) {
        Outputs outputs;
        outputs.index_type = type;
        for (const std::optional<std::uint64_t> run_records : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{64}}) {
            const std::string what = "index type " + std::to_string(int(type)) + (run_records ? ", many runs" : "");
            sort_columns_and_compare(bytes_of(keys), 8, values, index, outputs, cpu_options(run_records, 5), what);
            outputs.keys = false;
            sort_columns_and_compare(bytes_of(keys), 8, {}, index, outputs, cpu_options(run_records, 5), "index alone, " + what);
            outputs.keys = true;
        }
    }
    Outputs values_alone;
    values_alone.keys = false;
    values_alone.index = false;
    sort_columns_and_compare(bytes_of(keys), 8, values, index, values_alone, cpu_options(), "values alone");
    sort_columns_and_compare(bytes_of(keys), 8, values, index, values_alone, cpu_options(64, 5), "values alone, many runs");
}

// OUT = KEYS and each column's output its input, with the index beside them.
TEST(Columns, InPlace) {
    const std::vector<std::int32_t> keys = keys_with_ties<std::int32_t>(12000, 200, 51);
    const std::vector<Values> values = columns_of_widths(keys.size(), {1, 8, 100}, 52);
    Outputs in_place;
    in_place.in_place = true;
    for (bool unique : {false, true})
        for (const std::optional<std::uint64_t> run_records : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{50}}) {
            PartSortOptions options = cpu_options(run_records, 8);
            options.order = {KeyType::i32, false};
            options.unique = unique;
            sort_columns_and_compare(bytes_of(keys), 4, values, reference_key_index(keys, false, unique), in_place, options,
                                     std::string("in place") + (unique ? ", unique" : "") + (run_records ? ", many runs" : ""));
        }
}

// Two dozen value files of widths 1 to 24 at once, as hundreds of runs.
TEST(Columns, TwoDozenColumnsAsManyRuns) {
    const std::vector<std::uint64_t> keys = keys_with_ties<std::uint64_t>(6000, 400, 55);
    std::vector<std::size_t> widths(24);
    for (std::size_t i = 0; i < widths.size(); ++i) widths[i] = i + 1;
    const SortReport report = sort_columns_and_compare(bytes_of(keys), 8, columns_of_widths(keys.size(), widths, 56),
                                                       reference_key_index(keys, false, false), {}, cpu_options(30, 7),
                                                       "24 columns");
    EXPECT_EQ(report.runs, 200u);
}

// KEYS carried as a value column of its own while it is sorted in place: the column's output is
// the sorted keys too, though KEYS is replaced by the same sort.
TEST(Columns, KeysAsTheirOwnColumnSortedInPlace) {
    const std::vector<std::uint64_t> keys = keys_with_ties<std::uint64_t>(40000, 3000, 57);
    for (const std::optional<std::uint64_t> run_records : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{200}}) {
        SCOPED_TRACE(run_records ? "many runs" : "in memory");
        ScratchDir dir, tmp;
        write_bytes(dir / "keys", bytes_of(keys));
        PartSortOptions options = cpu_options(run_records, 8);
        options.input = options.output = dir / "keys";
        options.values = {{dir / "keys", dir / "copy", std::nullopt}};
        options.index_output = dir / "index";
        options.tmp_dir = tmp.path();
        sort_part(options);
        const std::vector<std::uint64_t> index = reference_key_index(keys, false, false);
        const Bytes sorted = reference_gather(bytes_of(keys), 8, index);
        EXPECT_EQ(difference(read_bytes(dir / "keys"), sorted, 8), "") << "KEYS";
        EXPECT_EQ(difference(read_bytes(dir / "copy"), sorted, 8), "") << "the column of KEYS";
        EXPECT_EQ(difference(read_bytes(dir / "index"), index_bytes(index, 4), 4), "") << "INDEX";
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"keys", "copy", "index"}));
        EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
    }
}

// ---------------------------------------------------------------------------------------------
// gather_file: a permutation applied to another column.

namespace {

// gather_file(index, V -> OUT) in `dir`, expecting OUT to be V's records in the order of `index`,
// and nothing else left in `dir` than `entries` and OUT.
SortReport gather_and_compare(const ScratchDir& dir, const std::string& index_file, const Bytes& column,
                              std::size_t width, const std::vector<std::uint64_t>& index, SortOptions options,
                              const std::string& what) {
    const std::set<std::string> before = dir.entries();
    write_bytes(dir / "column", column);
    options.input = dir / "column";
    options.output = dir / "column.sorted";
    const SortReport report = gather_file(index_file, options);
    EXPECT_EQ(difference(read_bytes(dir / "column.sorted"), reference_gather(column, width, index), width), "") << what;
    EXPECT_TRUE(read_bytes(dir / "column") == column) << "the column changed: " << what;
    EXPECT_EQ(report.output_records, index.size()) << what;
    std::set<std::string> after = before;
    after.insert({"column", "column.sorted"});
    EXPECT_EQ(dir.entries(), after) << what;
    return report;
}

}  // namespace

// The index a sort wrote, applied to another column, gives that column sorted by the keys: u32 and
// u64 indexes, of a stable and a unique sort.
TEST(ColumnsGather, AppliesTheIndexASortWrote) {
    const std::vector<std::uint16_t> keys = keys_with_ties<std::uint16_t>(10000, 100, 61);
    const Bytes other = random_column(keys.size(), 24, 62);
    for (const IndexType type : {IndexType::u32, IndexType::u64})
        for (bool unique : {false, true}) {
            ScratchDir dir;
            write_bytes(dir / "keys", bytes_of(keys));
            PartSortOptions sort = cpu_options();
            sort.input = dir / "keys";
            sort.order = {KeyType::u16, true};
            sort.unique = unique;
            sort.index_output = dir / "index";
            sort.index_type = type;
            sort_part(sort);
            const std::vector<std::uint64_t> index = reference_key_index(keys, true, unique);
            SortOptions gather;
            gather.backend = Backend::cpu;
            gather.index_type = type;
            // With --unique the index holds fewer entries than the column has records: the width is
            // then not the column's size over the entries, so only the stable index is applied.
            if (!unique)
                gather_and_compare(dir, dir / "index", other, 24, index, gather,
                                   std::string("index ") + (type == IndexType::u64 ? "u64" : "u32"));
            else
                EXPECT_TRUE(read_bytes(dir / "index") == index_bytes(index, expected_index_width(type)));
        }
}

// A column of 16 MiB under a budget of 1 MiB: gathered out of core, as runs merged.
TEST(ColumnsGather, OutOfCore) {
    const std::size_t n = 262144, width = 64;
    std::vector<std::uint64_t> index(n);
    for (std::size_t i = 0; i < n; ++i) index[i] = i;
    std::shuffle(index.begin(), index.end(), std::mt19937_64(71));
    const Bytes column = random_column(n, width, 72);
    for (const IndexType type : {IndexType::u32, IndexType::u64}) {
        ScratchDir dir, tmp;
        write_bytes(dir / "index", index_bytes(index, expected_index_width(type)));
        SortOptions options;
        options.backend = Backend::cpu;
        options.threads = 2;
        options.memory_bytes = kMinMemoryBudget;
        options.tmp_dir = tmp.path();
        options.index_type = type;
        const SortReport report = gather_and_compare(dir, dir / "index", column, width, index, options, "out of core");
        EXPECT_GT(report.runs, 1u) << "16 MiB gathered in memory under a budget of 1 MiB";
        EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
    }
}

// A column gathered in place (OUT is V), in memory and out of core.
TEST(ColumnsGather, InPlace) {
    const std::size_t n = 100000, width = 40;
    std::vector<std::uint64_t> index(n);
    for (std::size_t i = 0; i < n; ++i) index[i] = i;
    std::shuffle(index.begin(), index.end(), std::mt19937_64(74));
    const Bytes column = random_column(n, width, 75);
    for (const bool out_of_core : {false, true}) {
        SCOPED_TRACE(out_of_core ? "out of core" : "in memory");
        ScratchDir dir, tmp;
        write_bytes(dir / "index", index_bytes(index, 4));
        write_bytes(dir / "column", column);
        SortOptions options;
        options.backend = Backend::cpu;
        options.input = options.output = dir / "column";
        options.tmp_dir = tmp.path();
        if (out_of_core) options.memory_bytes = kMinMemoryBudget;
        gather_file(dir / "index", options);
        EXPECT_EQ(difference(read_bytes(dir / "column"), reference_gather(column, width, index), width), "");
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "column"}));
        EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
    }
}

// An index that is not a permutation of the column's record numbers (a number repeated, one out of
// range) is refused with a SortError; no OUT appears, an existing one stays as it was.
TEST(ColumnsGather, RefusesAnIndexThatIsNotAPermutation) {
    const std::size_t n = 1000;
    const Bytes column = random_column(n, 8, 81);
    std::vector<std::uint64_t> repeated(n), out_of_range(n);
    for (std::size_t i = 0; i < n; ++i) repeated[i] = out_of_range[i] = n - 1 - i;
    repeated[500] = repeated[10];
    out_of_range[700] = n;
    for (const auto& [bad, what] : {std::pair{repeated, "a repeated record number"}, std::pair{out_of_range, "one out of range"}})
        for (bool existing : {false, true}) {
            SCOPED_TRACE(std::string(what) + (existing ? ", OUT there before" : ""));
            ScratchDir dir, tmp;
            write_bytes(dir / "index", index_bytes(bad, 4));
            write_bytes(dir / "column", column);
            if (existing) write_text(dir / "out", "keep");
            const std::set<std::string> before = dir.entries();
            SortOptions options;
            options.backend = Backend::cpu;
            options.input = dir / "column";
            options.output = dir / "out";
            options.tmp_dir = tmp.path();
            options.index_type = IndexType::u32;
            EXPECT_THROW(gather_file(dir / "index", options), SortError);
            EXPECT_EQ(dir.entries(), before);
            if (existing) {
                EXPECT_EQ(read_text(dir / "out"), "keep");
            }
            EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
        }
}

// An index that does not hold whole entries, and a column whose size its entries do not divide:
// refused with a gpusort::Error naming the file, no OUT.
TEST(ColumnsGather, RefusesFilesOfTheWrongSize) {
    std::vector<std::uint64_t> index(1000);
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = (i * 7) % index.size();
    for (const bool ragged_index : {true, false}) {
        SCOPED_TRACE(ragged_index ? "an index of 4002 bytes" : "a column of 8001 bytes");
        ScratchDir dir, tmp;
        Bytes index_file = index_bytes(index, 4);
        if (ragged_index) index_file.resize(index_file.size() + 2);
        write_bytes(dir / "index", index_file);
        write_bytes(dir / "column", random_column(ragged_index ? 1000 : 8001, ragged_index ? 8 : 1, 83));
        const std::set<std::string> before = dir.entries();
        SortOptions options;
        options.backend = Backend::cpu;
        options.input = dir / "column";
        options.output = dir / "out";
        options.tmp_dir = tmp.path();
        options.index_type = IndexType::u32;
        try {
            gather_file(dir / "index", options);
            ADD_FAILURE() << "not refused";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(dir / (ragged_index ? "index" : "column")), std::string::npos) << e.what();
        }
        EXPECT_EQ(dir.entries(), before);
        EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
    }
}

// ---------------------------------------------------------------------------------------------
// Refusals.

namespace {

// A sort with columns of n u64 keys in `dir`: KEYS "keys", value files "v8" (width 8) and "v3"
// (width 3) to "v8.out" and "v3.out", the index to "index"; OUT "out" is there before the sort.
struct RefusalCase {
    explicit RefusalCase(const ScratchDir& dir) : dir(dir) {
        write_bytes(dir / "keys", bytes_of(keys_with_ties<std::uint64_t>(n, 50, 91)));
        write_bytes(dir / "v8", random_column(n, 8, 92));
        write_bytes(dir / "v3", random_column(n, 3, 93));
        write_text(dir / "out", "the OUT that was there before");
        options = cpu_options();
        options.input = dir / "keys";
        options.output = dir / "out";
        options.values = {{dir / "v8", dir / "v8.out", std::nullopt}, {dir / "v3", dir / "v3.out", std::nullopt}};
        options.index_output = dir / "index";
    }

    static constexpr std::size_t n = 1000;
    const ScratchDir& dir;
    PartSortOptions options;
};

// How a refusal is thrown: a gpusort::Error, or (outputs that are the same file, which the options
// tell before any file is written) std::invalid_argument, as sort_file() documents.
enum class Thrown { error, error_or_invalid_argument };

// The sort with `options` throws a gpusort::Error (or what `thrown` allows) of one line naming
// `file`, and leaves `dir` and `tmp` as they were (OUT with its old bytes).
void expect_refused(const PartSortOptions& options, const ScratchDir& dir, const std::string& file,
                    const std::string& what, Thrown thrown = Thrown::error) {
    SCOPED_TRACE(what);
    ScratchDir tmp;
    PartSortOptions with_tmp = options;
    with_tmp.tmp_dir = tmp.path();
    const std::set<std::string> before = dir.entries();
    const std::string out_before = read_text(dir / "out");
    try {
        sort_part(with_tmp);
        ADD_FAILURE() << "not refused";
    } catch (const std::exception& e) {
        const bool allowed = dynamic_cast<const Error*>(&e) != nullptr ||
                             (thrown == Thrown::error_or_invalid_argument && dynamic_cast<const std::invalid_argument*>(&e));
        EXPECT_TRUE(allowed) << "not a gpusort::Error: " << e.what();
        const std::string message = e.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << "more than one line: " << message;
        EXPECT_NE(message.find(file), std::string::npos) << "'" << file << "' not named in: " << message;
    } catch (...) {
        ADD_FAILURE() << "not a std::exception";
    }
    EXPECT_EQ(dir.entries(), before);
    EXPECT_EQ(read_text(dir / "out"), out_before) << "OUT changed";
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
}

}  // namespace

// A value file whose size is not a multiple of the key count, or not the count times the width given.
TEST(ColumnsRefused, ValueFilesOfTheWrongSize) {
    ScratchDir dir;
    RefusalCase c(dir);
    write_bytes(dir / "ragged", random_column(RefusalCase::n * 3 + 1, 1, 94));
    PartSortOptions ragged = c.options;
    ragged.values[1].input = dir / "ragged";
    expect_refused(ragged, dir, dir / "ragged", "a size that the key count does not divide");
    PartSortOptions wrong_width = c.options;
    wrong_width.values[1].width = 4;
    expect_refused(wrong_width, dir, dir / "v3", "a width that does not match the size");
    PartSortOptions short_column = c.options;
    short_column.values[0].width = 16;
    expect_refused(short_column, dir, dir / "v8", "a width too large for the size");
    write_bytes(dir / "ragged-keys", random_column(RefusalCase::n * 8 + 3, 1, 96));
    PartSortOptions ragged_keys = c.options;
    ragged_keys.input = dir / "ragged-keys";
    expect_refused(ragged_keys, dir, dir / "ragged-keys", "KEYS of no whole number of records");
}

// Two outputs that are the same file, by the same name or by another.
TEST(ColumnsRefused, TwoOutputsOfOneFile) {
    ScratchDir dir;
    RefusalCase c(dir);
    PartSortOptions index_and_values = c.options;
    index_and_values.index_output = dir / "v3.out";
    expect_refused(index_and_values, dir, dir / "v3.out", "the index and a column's output", Thrown::error_or_invalid_argument);
    PartSortOptions two_columns = c.options;
    two_columns.values[1].output = dir / "v8.out";
    expect_refused(two_columns, dir, dir / "v8.out", "two columns' outputs", Thrown::error_or_invalid_argument);
    PartSortOptions keys_and_values = c.options;
    keys_and_values.values[0].output = dir / "out";
    expect_refused(keys_and_values, dir, dir / "out", "OUT and a column's output", Thrown::error_or_invalid_argument);
    PartSortOptions another_name = c.options;
    another_name.index_output = dir.path() + "/./out";
    expect_refused(another_name, dir, "out", "OUT and the index by another name", Thrown::error_or_invalid_argument);
}

// Compressed names, for KEYS, a value file, a column's output or the index.
TEST(ColumnsRefused, CompressedNames) {
    ScratchDir dir;
    RefusalCase c(dir);
    write_bytes(dir / "keys.gz", read_bytes(dir / "keys"));
    write_bytes(dir / "v3.zst", read_bytes(dir / "v3"));
    PartSortOptions keys = c.options;
    keys.input = dir / "keys.gz";
    expect_refused(keys, dir, dir / "keys.gz", "compressed KEYS");
    PartSortOptions value = c.options;
    value.values[1].input = dir / "v3.zst";
    expect_refused(value, dir, dir / "v3.zst", "a compressed value file");
    PartSortOptions value_output = c.options;
    value_output.values[0].output = dir / "v8.out.xz";
    expect_refused(value_output, dir, dir / "v8.out.xz", "a compressed column output");
    PartSortOptions index = c.options;
    index.index_output = dir / "index.bz2";
    expect_refused(index, dir, dir / "index.bz2", "a compressed index");
    PartSortOptions out = c.options;
    out.output = dir / "out.gz";
    expect_refused(out, dir, dir / "out.gz", "a compressed OUT");
}

// Value files whose records are together wider than a record may be (1 MiB with the key and the
// index): refused, naming a value file.
TEST(ColumnsRefused, ValuesTooWideTogether) {
    ScratchDir dir;
    write_bytes(dir / "keys", bytes_of(std::vector<std::uint64_t>{3, 1, 2, 0}));
    write_bytes(dir / "wide", random_column(4, 600 * 1024, 95));
    write_text(dir / "out", "the OUT that was there before");
    PartSortOptions options = cpu_options();
    options.input = dir / "keys";
    options.output = dir / "out";
    options.values = {{dir / "wide", dir / "wide.out", std::nullopt}, {dir / "wide", dir / "wide2.out", std::nullopt}};
    expect_refused(options, dir, dir / "wide", "two columns of 600 KiB", Thrown::error_or_invalid_argument);
}
