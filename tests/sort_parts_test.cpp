// A sort as one part of a larger job (as each rank of gpusort-mpi sorts the records it received
// into its part of one OUTPUT): PartSortOptions::output_region writes the records into a part of an open
// file, in memory and as runs merged on the host, keys and records, with --verify and --unique (the
// bytes around the region stay as they were, the file keeps its size and name, and no other file
// appears); PartSortOptions::input_memory reads them from memory instead of INPUT. OutputTarget's
// positional writes (no map) into a region land there too.
#include "record_sort_cases.hpp"
#include "src/sort/sort_part.hpp"
#include "src/output/sort_output.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <barrier>
#include <functional>
#include <random>
#include <thread>
#include <unistd.h>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// A CPU sort on two threads of records with `spec` (whole u64 keys when none), verified or not;
// runs: under the smallest budget, so that runs are formed and merged.
PartSortOptions cpu_sort(std::optional<KeySpec> spec, bool runs, bool verify = true) {
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 2;
    options.order = {KeyType::u64, false};
    options.records = std::move(spec);
    options.verify = verify;
    if (runs) options.memory_bytes = kMinMemoryBudget;
    return options;
}

// A file of `head` bytes, room for `middle` bytes, and `tail` bytes, all of a pattern; returns the pattern.
std::vector<std::byte> make_host_file(const std::string& path, std::size_t size, std::uint64_t seed) {
    std::vector<std::byte> pattern(size);
    std::mt19937_64 rng(seed);
    for (auto& b : pattern) b = static_cast<std::byte>(rng());
    write_bytes(path, pattern);
    return pattern;
}

// Sorts `data` into bytes [head, head + data.size()) of a file `head + data.size() + tail` long
// and checks the start of the region against `expected` (all of it but with --unique) and the rest
// of the file against what was there. With options.input_memory set, `data` is that memory.
void sort_into_region(const std::vector<std::byte>& data, const std::vector<std::byte>& expected, PartSortOptions options,
                      std::size_t head, const std::string& what) {
    ScratchDir dir, tmp;
    const bool from_memory = options.input_memory.has_value();  // then no file "in" exists
    if (!from_memory) write_bytes(dir / "in", data);
    const std::size_t tail = 5003;
    std::vector<std::byte> before = make_host_file(dir / "host", head + data.size() + tail, head);
    const int fd = ::open((dir / "host").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    options.input = dir / "in";
    options.output = dir / "host";
    options.tmp_dir = tmp.path();
    options.output_region = OutputRegion{fd, head};
    const SortReport report = sort_part(options);
    ::close(fd);
    EXPECT_EQ(report.output_records * report.record_size, expected.size()) << what;
    const std::vector<std::byte> after = read_bytes(dir / "host");
    ASSERT_EQ(after.size(), before.size()) << what;
    EXPECT_TRUE(std::equal(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(head), before.begin()))
        << "the bytes before the region changed: " << what;
    EXPECT_TRUE(std::equal(after.end() - static_cast<std::ptrdiff_t>(tail), after.end(), before.end() - static_cast<std::ptrdiff_t>(tail)))
        << "the bytes after the region changed: " << what;
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), after.begin() + static_cast<std::ptrdiff_t>(head)))
        << "the region does not hold the sorted records: " << what;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left: " << what;
    const std::set<std::string> files = from_memory ? std::set<std::string>{"host"} : std::set<std::string>{"in", "host"};
    EXPECT_EQ(dir.entries(), files) << what;
}

}  // namespace

TEST(OutputRegion, KeysInMemoryAndAsRunsLandInTheirPlace) {
    std::mt19937_64 rng(3);
    std::vector<std::uint64_t> keys(300000);
    for (auto& k : keys) k = rng() % 100000;
    std::vector<std::byte> data(keys.size() * 8), expected(keys.size() * 8);
    std::memcpy(data.data(), keys.data(), data.size());
    std::sort(keys.begin(), keys.end());
    std::memcpy(expected.data(), keys.data(), expected.size());
    for (const bool runs : {false, true})
        for (const bool verify : {false, true}) {
            const PartSortOptions options = cpu_sort(std::nullopt, runs, verify);
            // 1001 records in: not at a page boundary.
            sort_into_region(data, expected, options, 1001 * 8,
                             std::string(runs ? "runs" : "in memory") + (verify ? ", verified" : ""));
        }
}

TEST(OutputRegion, RecordsAsRunsLandInTheirPlace) {
    for (const RecordCase& c : {record_cases()[0], record_cases()[5]}) {
        const std::vector<std::byte> data = make_records(c.records, c.spec, 17);
        const std::vector<std::byte> expected = reference_record_sort(data, c.spec, false);
        PartSortOptions options = cpu_sort(c.spec, true);
        options.max_fan_in = 2;
        sort_into_region(data, expected, options, 333 * c.spec.record_size, c.name);
    }
}

TEST(OutputRegion, RefusesWhatARegionCannotHold) {
    ScratchDir dir;
    write_bytes(dir / "in", std::vector<std::byte>(64));
    write_bytes(dir / "host", std::vector<std::byte>(128));
    const int fd = ::open((dir / "host").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.input = dir / "in";
    options.output = dir / "host";
    options.order = {KeyType::u64, false};
    options.output_region = OutputRegion{fd, 8};
    options.output_compression = Compression::gzip;
    EXPECT_THROW(sort_part(options), std::invalid_argument);
    options.output_compression.reset();
    options.output_region = OutputRegion{fd, 4};  // not at a whole record
    EXPECT_THROW(sort_part(options), std::invalid_argument);
    ::close(fd);
    EXPECT_TRUE(read_bytes(dir / "host") == std::vector<std::byte>(128));
}

// With --unique the records kept come first in the region, as many as the report says.
TEST(OutputRegion, UniqueKeepsTheFirstOfEachKeyAtTheStartOfTheRegion) {
    const RecordCase c = record_cases()[1];
    const std::vector<std::byte> data = make_records(c.records, c.spec, 23);
    const std::vector<std::byte> expected = reference_record_sort(data, c.spec, true);
    ASSERT_LT(expected.size(), data.size()) << "the case must have duplicate keys";
    for (const bool runs : {false, true}) {
        PartSortOptions options = cpu_sort(c.spec, runs);
        options.unique = true;
        sort_into_region(data, expected, options, 5 * c.spec.record_size, runs ? "unique, runs" : "unique, one chunk");
    }
}

// Records read from memory, in one chunk and as runs, into a region and into a file of their own.
TEST(InputMemory, KeysAndRecordsAreSortedFromMemory) {
    const RecordCase c = record_cases()[0];
    const std::vector<std::byte> data = make_records(c.records, c.spec, 21);
    const std::vector<std::byte> expected = reference_record_sort(data, c.spec, false);
    for (const bool runs : {false, true}) {
        PartSortOptions options = cpu_sort(c.spec, runs);
        options.input_memory = std::span<const std::byte>(data);
        sort_into_region(data, expected, options, 7 * c.spec.record_size, runs ? "from memory, runs" : "from memory");
    }
    ScratchDir dir;
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.records = c.spec;
    options.input = dir / "not-there";  // only a name
    options.input_memory = std::span<const std::byte>(data);
    options.output = dir / "out";
    options.memory_bytes = kMinMemoryBudget;
    const SortReport report = sort_part(options);
    EXPECT_GT(report.runs, 1u);
    EXPECT_TRUE(read_bytes(dir / "out") == expected);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"out"}));
}

// Without a map (as under a limit on the address space), the writes go to the region's offsets.
TEST(OutputRegion, PositionalWritesLandInTheRegion) {
    ScratchDir dir;
    const std::vector<std::byte> before = make_host_file(dir / "host", 3000, 9);
    const int fd = ::open((dir / "host").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::vector<std::byte> part(1000);
    for (std::size_t i = 0; i < part.size(); ++i) part[i] = static_cast<std::byte>(i * 7);
    {
        OutputOptions out_options;
        out_options.path = dir / "host";
        out_options.region = OutputRegion{fd, 1500};
        OutputTarget target(out_options);
        target.write_without_map();
        const SortOutput& output = target.open(part.size());
        EXPECT_TRUE(std::holds_alternative<PositionalFile>(output.destination()));
        output.write(600, std::span<const std::byte>(part).subspan(600));
        output.write(0, std::span<const std::byte>(part).first(600));
        target.finish(part.size());
        target.commit(false);  // a region's owner moves its file: nothing happens here
    }
    ::close(fd);
    std::vector<std::byte> expected = before;
    std::copy(part.begin(), part.end(), expected.begin() + 1500);
    EXPECT_TRUE(read_bytes(dir / "host") == expected);
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"host"}));
}

namespace {

// One job of three processes sharing their runs: the keys' type and order, and the records of each
// process's range and part.
struct SharedRunsCase {
    KeyType type;
    bool descending;
    std::vector<std::uint64_t> ranges, parts;
    std::string name;
    std::size_t width() const { return type == KeyType::u64 ? 8 : 4; }
};

// What each process came to: the memory of its runs and of its part, its runs' sizes as it handed
// them to the gather, its report, and what it failed with ("" where it did not).
struct SharedRunsResult {
    explicit SharedRunsResult(std::size_t n) : runs(n), parts(n), sizes(n), reports(n), failures(n) {}
    std::vector<std::vector<std::byte>> runs, parts;
    std::vector<std::vector<std::uint64_t>> sizes;
    std::vector<SortReport> reports;
    std::vector<std::string> failures;
};

// The keys of every process's range, one range after the other: many equal keys across the runs.
std::vector<std::byte> shared_runs_input(const SharedRunsCase& c) {
    const std::size_t width = c.width();
    std::uint64_t all = 0;
    for (const std::uint64_t n : c.ranges) all += n;
    std::mt19937_64 rng(11);
    std::vector<std::byte> data(all * width);
    for (std::uint64_t i = 0; i < all; ++i) {
        const std::uint64_t key = rng() % 5000;
        std::memcpy(data.data() + i * width, &key, width);
    }
    return data;
}

// The keys sorted by std::sort: ascending u64, or descending i32 (`greater`).
std::vector<std::byte> sorted_reference(const SharedRunsCase& c, std::vector<std::byte> keys) {
    if (c.type == KeyType::u64) {
        auto* begin = reinterpret_cast<std::uint64_t*>(keys.data());
        std::sort(begin, begin + keys.size() / 8);
    } else {
        auto* begin = reinterpret_cast<std::int32_t*>(keys.data());
        std::sort(begin, begin + keys.size() / 4, std::greater<>());
    }
    return keys;
}

// Process p's sort: its range of `data` from record `at`, its runs into memory of its own, its part
// from record `first` of the whole into memory of its own; the gather hands it every process's runs
// once all have formed theirs.
PartSortOptions process_options(const SharedRunsCase& c, std::size_t p, const std::vector<std::byte>& data, std::uint64_t at,
                            std::uint64_t first, SharedRunsResult& result, std::barrier<>& formed) {
    const std::size_t width = c.width(), n = c.ranges.size();
    result.runs[p].resize(c.ranges[p] * width);
    result.parts[p].resize(c.parts[p] * width);
    PartSortOptions options;
    options.backend = Backend::cpu;
    options.threads = 1;
    options.order = {c.type, c.descending};
    options.max_run_records = 7000;
    options.input = "range";
    options.output = "part";
    options.input_memory = std::span<const std::byte>(data.data() + at * width, c.ranges[p] * width);
    SharedRuns shared;
    shared.runs = result.runs[p];
    shared.part = result.parts[p];
    shared.first = first;
    shared.gather = [&result, &formed, p, n, width](std::span<const std::uint64_t> mine) {
        result.sizes[p].assign(mine.begin(), mine.end());
        formed.arrive_and_wait();
        std::vector<std::span<const std::byte>> every;
        for (std::size_t q = 0; q < n; ++q) {
            std::uint64_t offset = 0;
            for (const std::uint64_t records : result.sizes[q]) {
                every.push_back(std::span<const std::byte>(result.runs[q]).subspan(offset * width, records * width));
                offset += records;
            }
        }
        return every;
    };
    options.shared_runs = shared;
    return options;
}

// The processes' sorts, each on a thread of its own, to their end.
SharedRunsResult sort_in_processes(const SharedRunsCase& c, const std::vector<std::byte>& data) {
    const std::size_t n = c.ranges.size();
    SharedRunsResult result(n);
    std::barrier formed(static_cast<std::ptrdiff_t>(n));
    std::vector<std::thread> processes;
    std::uint64_t at = 0, first = 0;
    for (std::size_t p = 0; p < n; ++p) {
        const PartSortOptions options = process_options(c, p, data, at, first, result, formed);
        processes.emplace_back([&result, p, options] {
            try {
                result.reports[p] = sort_part(options);
            } catch (const std::exception& e) {
                result.failures[p] = e.what();
            }
        });
        at += c.ranges[p];
        first += c.parts[p];
    }
    for (std::thread& t : processes) t.join();
    return result;
}

}  // namespace

// PartSortOptions::shared_runs, as the ranks of one host use it: three sorts on threads of their own
// stand in for three processes; each forms its runs of its third of the keys in memory of its own
// (up to 7 runs: --max-run-records), the gather hands every sort all three's runs (after all have
// formed theirs), and each merges records [first, first + its part) of the whole into its part's
// memory. The parts, one after the other, are the keys sorted (std::sort, descending with `greater`
// for a descending sort), whatever the sizes of the ranges and parts (one of them empty).
TEST(SharedRuns, EachSortMergesItsPartOfEveryProcesssRuns) {
    for (const SharedRunsCase& c :
         {SharedRunsCase{KeyType::u64, false, {40000, 40001, 39999}, {40000, 40000, 40000}, "u64, equal parts"},
          SharedRunsCase{KeyType::u64, false, {0, 70000, 50000}, {50000, 0, 70000}, "u64, an empty range and part"},
          SharedRunsCase{KeyType::i32, true, {30000, 30000, 30000}, {10000, 60000, 20000}, "i32 descending, uneven parts"}}) {
        const std::vector<std::byte> data = shared_runs_input(c);
        const SharedRunsResult result = sort_in_processes(c, data);
        std::vector<std::byte> merged;
        for (std::size_t p = 0; p < c.ranges.size(); ++p) {
            EXPECT_EQ(result.failures[p], "") << c.name << ", process " << p;
            EXPECT_EQ(result.reports[p].output_records, c.parts[p]) << c.name << ", process " << p;
            EXPECT_EQ(result.reports[p].runs, (c.ranges[p] + 6999) / 7000) << c.name << ", process " << p;
            EXPECT_EQ(result.sizes[p].size(), result.reports[p].runs) << c.name;
            merged.insert(merged.end(), result.parts[p].begin(), result.parts[p].end());
        }
        EXPECT_TRUE(merged == sorted_reference(c, data)) << c.name << ": the parts are not the keys sorted";
    }
}

// SharedRuns::formed, as gpusort-mpi --exchange gpu uses it: runs the caller formed itself (sorted
// normalised keys, here u64 ascending, which are their own normal form; one of them empty) are merged
// into the part, with no run formed and the input not read; every byte of the part is told written once.
TEST(SharedRuns, MergesRunsTheCallerFormed) {
    std::mt19937_64 rng(12);
    const std::vector<std::uint64_t> sizes = {9000, 1, 0, 17000, 5000, 12345};
    std::vector<std::uint64_t> keys;
    for (const std::uint64_t n : sizes) {
        std::vector<std::uint64_t> run(n);
        for (std::uint64_t& key : run) key = rng() % 3000;
        std::sort(run.begin(), run.end());
        keys.insert(keys.end(), run.begin(), run.end());
    }
    std::vector<std::byte> runs(keys.size() * 8), part(keys.size() * 8);
    std::memcpy(runs.data(), keys.data(), runs.size());
    std::vector<std::uint64_t> expected = keys;
    std::sort(expected.begin(), expected.end());
    PartSortOptions options = cpu_sort(std::nullopt, false, false);
    options.max_run_records = 7000;
    options.input = "runs";
    options.output = "part";
    // An input of the part's size that is not the runs: had the sort formed runs of it, the part would be zeros.
    const std::vector<std::byte> zeros(runs.size(), std::byte{0});
    options.input_memory = std::span<const std::byte>(zeros);
    std::vector<std::uint64_t> gathered;
    std::vector<int> told(keys.size(), 0);
    SharedRuns shared;
    shared.runs = runs;
    shared.part = part;
    shared.formed = sizes;
    shared.gather = [&](std::span<const std::uint64_t> mine) {
        gathered.assign(mine.begin(), mine.end());
        std::vector<std::span<const std::byte>> every;
        std::uint64_t at = 0;
        for (const std::uint64_t n : mine) {
            every.push_back(std::span<const std::byte>(runs).subspan(at * 8, n * 8));
            at += n;
        }
        return every;
    };
    shared.written = [&](std::uint64_t offset, std::uint64_t bytes) {
        for (std::uint64_t i = offset / 8; i < (offset + bytes) / 8; ++i) ++told[i];
    };
    options.shared_runs = shared;
    const SortReport report = sort_part(options);
    EXPECT_EQ(gathered, sizes);
    EXPECT_EQ(report.runs, sizes.size());
    EXPECT_EQ(report.output_records, keys.size());
    std::vector<std::uint64_t> merged(keys.size());
    std::memcpy(merged.data(), part.data(), part.size());
    EXPECT_TRUE(merged == expected) << "the part is not the runs merged";
    EXPECT_TRUE(std::all_of(told.begin(), told.end(), [](int n) { return n == 1; })) << "a byte of the part not told written once";
}

// Shared runs hold whole-record keys of an input of known size: records with a key, --unique and
// --verify are refused before anything is read.
TEST(SharedRuns, RefusesWhatItCannotMerge) {
    std::vector<std::byte> data(800), runs(800), part(800);
    PartSortOptions options = cpu_sort(std::nullopt, false, false);
    options.input = "range";
    options.output = "part";
    options.input_memory = std::span<const std::byte>(data);
    bool gathered = false;
    SharedRuns shared;
    shared.runs = runs;
    shared.part = part;
    shared.gather = [&](std::span<const std::uint64_t>) {
        gathered = true;
        return std::vector<std::span<const std::byte>>{};
    };
    options.shared_runs = shared;
    for (const std::string what : {"records", "unique", "verify"}) {
        PartSortOptions refused = options;
        if (what == "records") refused.records = KeySpec{8, {KeyField{0, false, 8, KeyType::u64, false, false}}};
        refused.unique = what == "unique";
        refused.verify = what == "verify";
        EXPECT_THROW(sort_part(refused), std::invalid_argument) << what;
    }
    EXPECT_FALSE(gathered);
}
