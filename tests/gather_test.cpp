// gather_file() and gpusort-file --gather: a saved permutation applied to a column, OUT[i] =
// V[INDEX[i]], against the reference computed here; in memory and out of core (a budget far below
// V: the two sorts with columns), u32 and u64 entries, odd widths, in place. Refused, with nothing
// written: an index that is not a permutation (the first bad entry named, also where the check
// reads it in several ranges of values), sizes that do not divide, streams and compressed names,
// and on the command line the options of a sort beside --gather.
#include "cli_run.hpp"
#include "record_sort_cases.hpp"
#include "scratch_dir.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/gather_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

std::vector<std::uint64_t> random_permutation(std::uint64_t n, std::uint64_t seed) {
    std::vector<std::uint64_t> permutation(n);
    std::iota(permutation.begin(), permutation.end(), std::uint64_t{0});
    std::shuffle(permutation.begin(), permutation.end(), std::mt19937_64(seed));
    return permutation;
}

std::vector<std::byte> random_bytes(std::size_t size, std::uint64_t seed) {
    std::vector<std::byte> bytes(size);
    std::mt19937_64 random(seed);
    for (auto& b : bytes) b = static_cast<std::byte>(random());
    return bytes;
}

// The entries as the sort writes them: u32 or u64, in the machine's byte order.
std::vector<std::byte> index_bytes(const std::vector<std::uint64_t>& entries, std::size_t entry_width) {
    std::vector<std::byte> bytes(entries.size() * entry_width);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const std::uint32_t narrow = static_cast<std::uint32_t>(entries[i]);
        std::memcpy(bytes.data() + i * entry_width, entry_width == 4 ? static_cast<const void*>(&narrow) : &entries[i],
                    entry_width);
    }
    return bytes;
}

// The reference: record i of the result is record index[i] of `values`.
std::vector<std::byte> gathered(const std::vector<std::byte>& values, std::size_t width, const std::vector<std::uint64_t>& index) {
    std::vector<std::byte> out(values.size());
    for (std::size_t i = 0; i < index.size(); ++i)
        std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(index[i] * width), width,
                    out.begin() + static_cast<std::ptrdiff_t>(i * width));
    return out;
}

// A gather on the CPU, on two threads, with temp files in `tmp`.
SortOptions cpu_gather(const ScratchDir& dir, const ScratchDir& tmp, std::optional<std::uint64_t> memory = std::nullopt) {
    SortOptions options;
    options.input = dir / "values";
    options.output = dir / "out";
    options.backend = Backend::cpu;
    options.threads = 2;
    options.tmp_dir = tmp.path();
    options.memory_bytes = memory;
    return options;
}

// Writes a random column of n records of `width` bytes and a random permutation of them, gathers
// it with `options` (memory and index_type as given) and compares OUT with the reference; no other
// file may be left. Returns the report.
SortReport gather_and_compare(std::uint64_t n, std::size_t width, std::size_t entry_width, IndexType type,
                              std::optional<std::uint64_t> memory, const std::string& what) {
    ScratchDir dir, tmp;
    const std::vector<std::byte> values = random_bytes(n * width, n + width);
    const std::vector<std::uint64_t> index = random_permutation(n, width * 7 + entry_width);
    write_bytes(dir / "values", values);
    write_bytes(dir / "index", index_bytes(index, entry_width));
    SortOptions options = cpu_gather(dir, tmp, memory);
    options.index_type = type;
    const SortReport report = gather_file(dir / "index", options);
    EXPECT_TRUE(read_bytes(dir / "out") == gathered(values, width, index)) << what;
    EXPECT_EQ(report.records, n) << what;
    EXPECT_EQ(report.bytes, n * width) << what;
    EXPECT_EQ(report.record_size, n ? width : 0) << what;
    EXPECT_EQ(report.index_width, entry_width) << what;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "values", "out"})) << what;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left: " << what;
    return report;
}

// The message of the SortError that gather_file throws ("" with a failure where it throws none).
std::string gather_error(const std::string& index, const SortOptions& options) {
    try {
        gather_file(index, options);
    } catch (const SortError& e) {
        return e.what();
    }
    ADD_FAILURE() << "gather_file threw no SortError";
    return "";
}

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
    for (const auto& part : parts) EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in: " << text;
}

}  // namespace

TEST(GatherFile, InMemoryMatchesTheReference) {
    for (const std::size_t width : {1, 3, 8, 100}) {
        const std::string what = std::to_string(width) + "-byte records";
        gather_and_compare(3001, width, 4, IndexType::automatic, std::nullopt, what + ", u32 (automatic)");
        gather_and_compare(3001, width, 4, IndexType::u32, std::nullopt, what + ", u32");
        gather_and_compare(3001, width, 8, IndexType::u64, std::nullopt, what + ", u64");
    }
}

TEST(GatherFile, OutOfCoreMatchesTheReference) {
    // 16 MiB of values under a budget of 1 MiB: the two sorts form many runs and merge them.
    const std::uint64_t values_bytes = std::uint64_t{16} << 20;
    const SortReport keys = gather_and_compare(values_bytes / 8, 8, 4, IndexType::automatic, kMinMemoryBudget, "8-byte records, u32");
    EXPECT_GT(keys.runs, 2u);
    EXPECT_GT(keys.bytes_spilled, 0u);
    gather_and_compare(values_bytes / 100, 100, 8, IndexType::u64, kMinMemoryBudget, "100-byte records, u64");
    gather_and_compare((std::uint64_t{4} << 20) / 3, 3, 4, IndexType::u32, kMinMemoryBudget, "3-byte records, u32");
}

TEST(GatherFile, InPlace) {
    for (const std::optional<std::uint64_t> memory : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{kMinMemoryBudget}}) {
        ScratchDir dir, tmp;
        const std::uint64_t n = 300000;
        const std::vector<std::byte> values = random_bytes(n * 5, 11);
        const std::vector<std::uint64_t> index = random_permutation(n, 12);
        write_bytes(dir / "values", values);
        write_bytes(dir / "index", index_bytes(index, 4));
        SortOptions options = cpu_gather(dir, tmp, memory);
        options.output = options.input;
        gather_file(dir / "index", options);
        EXPECT_TRUE(read_bytes(dir / "values") == gathered(values, 5, index)) << (memory ? "out of core" : "in memory");
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "values"}));
        EXPECT_TRUE(tmp.entries().empty());
    }
}

// The index a sort writes, applied to a column, puts its records where the sort with that column
// puts them: both as the stable order of the keys, computed here, says.
TEST(GatherFile, AppliesTheIndexOfASort) {
    ScratchDir dir, tmp;
    const std::uint64_t n = 200000;  // 1.2 MB of values: out of core under the smallest budget
    std::vector<std::uint64_t> keys(n);
    std::mt19937_64 random(21);
    for (auto& key : keys) key = random() % 1000;  // many equal keys: their input order decides
    std::vector<std::uint64_t> order(n);
    std::iota(order.begin(), order.end(), std::uint64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return keys[a] < keys[b]; });
    const std::vector<std::byte> values = random_bytes(n * 6, 22);
    write_keys(dir / "keys", keys);
    write_bytes(dir / "values", values);
    SortOptions sort = cpu_gather(dir, tmp);
    sort.input = dir / "keys";
    sort.output.clear();
    sort.values = {{dir / "values", dir / "sorted-values", std::nullopt}};
    sort.index_output = dir / "index";
    sort_file(sort);
    ASSERT_TRUE(read_bytes(dir / "sorted-values") == gathered(values, 6, order));
    for (const std::optional<std::uint64_t> memory : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{kMinMemoryBudget}}) {
        const SortReport report = gather_file(dir / "index", cpu_gather(dir, tmp, memory));
        EXPECT_EQ(report.index_width, 4u);
        EXPECT_EQ(report.runs > 1, memory.has_value());
        EXPECT_TRUE(read_bytes(dir / "out") == read_bytes(dir / "sorted-values")) << (memory ? "out of core" : "in memory");
    }
    EXPECT_TRUE(tmp.entries().empty());
}

TEST(GatherFile, EmptyIndexAndValues) {
    gather_and_compare(0, 8, 4, IndexType::automatic, std::nullopt, "empty");
    ScratchDir dir, tmp;
    write_bytes(dir / "index", {});
    write_bytes(dir / "values", random_bytes(10, 1));
    expect_contains(gather_error(dir / "index", cpu_gather(dir, tmp)), {dir / "values", "10 bytes", "0 entries"});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "values"}));
}

// An entry that repeats another or lies beyond the records: SortError naming the entry, no OUT
// made, an existing OUT unchanged, in memory and where the gather would go out of core.
TEST(GatherFile, RefusesAnIndexThatIsNoPermutation) {
    const std::uint64_t n = 300000;
    std::vector<std::uint64_t> repeated = random_permutation(n, 3);
    repeated[250000] = repeated[1234];
    std::vector<std::uint64_t> beyond = random_permutation(n, 4);
    beyond[77] = n + 5;
    const struct {
        std::vector<std::uint64_t> index;
        std::vector<std::string> message;
    } cases[] = {{repeated, {"entry 250000 is " + std::to_string(repeated[1234]), "as entry 1234"}},
                 {beyond, {"entry 77 is " + std::to_string(n + 5), "beyond"}}};
    for (const auto& c : cases)
        for (const bool existing : {false, true})
            for (const std::optional<std::uint64_t> memory : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{kMinMemoryBudget}}) {
                ScratchDir dir, tmp;
                write_bytes(dir / "index", index_bytes(c.index, 8));
                write_bytes(dir / "values", random_bytes(n * 8, 5));
                if (existing) write_text(dir / "out", "old output");
                SortOptions options = cpu_gather(dir, tmp, memory);
                options.index_type = IndexType::u64;
                std::vector<std::string> parts = c.message;
                parts.push_back(dir / "index");
                parts.push_back("not a permutation");
                expect_contains(gather_error(dir / "index", options), parts);
                if (existing) {
                    EXPECT_EQ(read_text(dir / "out"), "old output");
                }
                EXPECT_EQ(dir.entries(), existing ? (std::set<std::string>{"index", "values", "out"})
                                                  : (std::set<std::string>{"index", "values"}));
                EXPECT_TRUE(tmp.entries().empty());
            }
}

// The check in ranges of values (a bitmap smaller than the index's values): the first bad entry
// in the index's order is found whichever range it lies in, as a plain scan in order finds it.
TEST(GatherPermutationCheck, FindsTheFirstBadEntryInAnyRange) {
    const std::uint64_t n = 5000;
    std::mt19937_64 random(9);
    for (int round = 0; round < 60; ++round) {
        std::vector<std::uint64_t> entries = random_permutation(n, round);
        const int changes = round % 4;  // round 0, 4, ...: a permutation, which passes
        for (int c = 0; c < changes; ++c) entries[random() % n] = random() % (n + n / 50);
        std::optional<std::uint64_t> first;  // the reference: the first entry out of range or seen before
        std::set<std::uint64_t> seen;
        for (std::uint64_t i = 0; i < n && !first; ++i)
            if (entries[i] >= n || !seen.insert(entries[i]).second) first = i;
        const std::vector<std::byte> bytes = index_bytes(entries, 4);
        for (const std::uint64_t range_bits : {std::uint64_t{64}, std::uint64_t{1000}, std::uint64_t{1} << 20}) {
            const std::string what = "round " + std::to_string(round) + ", ranges of " + std::to_string(range_bits);
            try {
                gather::check_permutation<std::uint32_t>(bytes, n, range_bits, "index", "values");
                EXPECT_FALSE(first) << what << ": entry " << *first << " passed";
            } catch (const SortError& e) {
                ASSERT_TRUE(first) << what << ": a permutation refused: " << e.what();
                expect_contains(e.what(), {"entry " + std::to_string(*first) + " is " + std::to_string(entries[*first]) + ","});
            }
        }
    }
}

TEST(GatherFile, RefusesSizesThatDoNotDivide) {
    ScratchDir dir, tmp;
    write_bytes(dir / "values", random_bytes(1001, 1));
    write_bytes(dir / "index", random_bytes(10, 2));
    SortOptions options = cpu_gather(dir, tmp);
    expect_contains(gather_error(dir / "index", options), {dir / "index", "10 bytes", "4-byte entries"});
    write_bytes(dir / "index", index_bytes(random_permutation(3, 1), 4));  // 12 bytes: 3 u32, not u64
    options.index_type = IndexType::u64;
    expect_contains(gather_error(dir / "index", options), {dir / "index", "8-byte entries"});
    write_bytes(dir / "index", index_bytes(random_permutation(1000, 1), 8));
    expect_contains(gather_error(dir / "index", options), {dir / "values", "1001 bytes", "1000 entries"});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "values"}));
}

TEST(GatherFile, RefusesStreamsAndCompressedFiles) {
    ScratchDir dir, tmp;
    write_bytes(dir / "values", random_bytes(80, 1));
    write_bytes(dir / "index", index_bytes(random_permutation(10, 1), 4));
    SortOptions options = cpu_gather(dir, tmp);
    options.input = "-";
    expect_contains(gather_error(dir / "index", options), {"standard input"});
    options = cpu_gather(dir, tmp);
    options.output = dir / "out.zst";
    expect_contains(gather_error(dir / "index", options), {"out.zst", "uncompressed"});
    options = cpu_gather(dir, tmp);
    options.input_compression = Compression::gzip;
    expect_contains(gather_error(dir / "index", options), {dir / "values", "uncompressed"});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"index", "values"}));
}

TEST(GatherCli, AppliesAnIndex) {
    ScratchDir dir;
    const std::uint64_t n = 100000;  // 1.2 MB: out of core under --memory 1M
    const std::vector<std::byte> values = random_bytes(n * 12, 3);
    const std::vector<std::uint64_t> index = random_permutation(n, 4);
    write_bytes(dir / "values", values);
    write_bytes(dir / "index32", index_bytes(index, 4));
    write_bytes(dir / "index64", index_bytes(index, 8));
    Result r = run(GPUSORT_FILE_BIN, {"--gather", dir / "index32", "--backend", "cpu", "--stats", dir / "stats",
                                      dir / "values", dir / "out"});
    EXPECT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_bytes(dir / "out") == gathered(values, 12, index));
    expect_contains(read_text(dir / "stats"), {"\"input_records\": 100000", "\"record_size\": 12"});
    r = run(GPUSORT_FILE_BIN, {"--gather", dir / "index64", "--index-type", "u64", "--memory", "1M", "--backend", "cpu",
                               "--tmp-dir", dir.path(), dir / "values", dir / "out64"});
    EXPECT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_bytes(dir / "out64") == gathered(values, 12, index));
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"values", "index32", "index64", "out", "out64", "stats"}));
}

TEST(GatherCli, RefusesWhatIsNoGather) {
    ScratchDir dir;
    write_bytes(dir / "values", random_bytes(80, 1));
    std::vector<std::uint64_t> index = random_permutation(10, 1);
    index[9] = index[0];
    write_bytes(dir / "index", index_bytes(index, 4));
    auto gather = [&](std::vector<std::string> options, const std::string& in = "values", const std::string& out = "out") {
        std::vector<std::string> args = {"--gather", dir / "index"};
        args.insert(args.end(), options.begin(), options.end());
        args.push_back(in == "-" ? in : dir / in);
        args.push_back(out == "-" ? out : dir / out);
        return run(GPUSORT_FILE_BIN, args);
    };
    for (const std::vector<std::string>& options : std::vector<std::vector<std::string>>{
             {"--unique"}, {"--type", "u32"}, {"--key", "0:u32"}, {"--record-size", "8"}, {"--descending"},
             {"--values", "a:b"}, {"--index-out", "x"}, {"--verify"}})
        expect_one_error_line(gather(options), "--gather excludes " + options[0], kBadCommandLine);
    expect_one_error_line(gather({}, "-"), std::vector<std::string>{"--gather", "regular, uncompressed"}, kBadCommandLine);
    expect_one_error_line(gather({}, "values", "out.gz"), std::vector<std::string>{"--gather", "out.gz"}, kBadCommandLine);
    expect_one_error_line(gather({"--index-type", "u16"}), "--index-type", kBadCommandLine);
    expect_one_error_line(gather({}), {"not a permutation", "entry 9 is", "as entry 0"});
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"values", "index"}));
}
