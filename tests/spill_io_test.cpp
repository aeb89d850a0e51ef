// Runs spilled with direct I/O (--spill-io direct): sorts of keys and records with many runs and
// several merge passes, from files and streams, whose runs and merge passes lie at offsets that are
// not multiples of the direct I/O block, compared with the independent references and with the
// same sort spilled through the page cache.
#include "generated_keys.hpp"
#include "record_sort_cases.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "io/file.hpp"
#include "io/stream_writer.hpp"
#include "io/temp_file.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <span>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// Skips a test where the scratch folder's file system does not do direct I/O.
#define SKIP_WITHOUT_DIRECT_IO(dir)                                                                    \
    if (!io::direct_io_supported((dir).path()))                                                        \
    GTEST_SKIP() << "the file system of " << (dir).path() << " does not do direct I/O"

// Sorts `keys` (a file, or a zstd stream) under the smallest budget, spilled with `spill_io`, and
// expects the reference's bytes and no temp files left. Returns the report.
template <class T>
SortReport sort_keys(const std::vector<T>& keys, bool descending, IoMode spill_io, bool stream,
                     std::optional<std::size_t> fan_in, std::uint64_t run_records, const std::string& what,
                     std::uint64_t memory = kMinMemoryBudget) {
    ScratchDir dir, tmp;
    PartSortOptions options;
    options.input = dir / (stream ? "in.zst" : "in");
    options.output = dir / "out";
    if (stream) {
        io::File file(::open(options.input.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), options.input);
        io::StreamWriter writer(file.fd(), options.input, Compression::zstd, 1);
        writer.write(std::as_bytes(std::span(keys)));
        writer.finish();
    } else {
        write_keys(options.input, keys);
    }
    options.order = {key_type_of<T>(), descending};
    options.backend = Backend::cpu;
    options.threads = 3;
    options.memory_bytes = memory;
    options.tmp_dir = tmp.path();
    options.spill_io = spill_io;
    options.max_fan_in = fan_in;
    options.max_run_records = run_records;
    const SortReport report = sort_part(options);
    EXPECT_TRUE(same_bytes(read_keys<T>(options.output), reference_sort(keys, descending))) << what;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left: " << what;
    EXPECT_GT(report.bytes_spilled, 0u) << what;
    EXPECT_EQ(report.plan.spill_direct, spill_io == IoMode::direct) << what;
    return report;
}

}  // namespace

TEST(IoMode, KeysFromFilesAndStreamsWithManyRunsAndPasses) {
    ScratchDir probe;
    SKIP_WITHOUT_DIRECT_IO(probe);
    // Runs of 10007 keys: no run, and no block of a merge pass, starts on a 4 KiB boundary.
    const auto u64 = make_keys<std::uint64_t>(200'003, mixed_key_data<std::uint64_t>(), 11);
    const auto f32 = make_keys<float>(150'001, mixed_key_data<float>(), 12);
    const auto i16 = make_keys<std::int16_t>(120'001, {gen::Distribution::few_unique}, 13);
    for (bool stream : {false, true})
        for (std::optional<std::size_t> fan_in : {std::optional<std::size_t>{}, std::optional<std::size_t>{3}}) {
            const std::string what = std::string(stream ? "stream" : "file") + (fan_in ? ", fan-in 3" : "");
            const SortReport report = sort_keys(u64, false, IoMode::direct, stream, fan_in, 10007, "u64 " + what);
            EXPECT_EQ(report.runs, 20u);
            if (fan_in) {
                EXPECT_GT(report.merge_passes, 1u) << what;
            }
            sort_keys(f32, true, IoMode::direct, stream, fan_in, 10007, "f32 descending " + what);
            sort_keys(i16, false, IoMode::direct, stream, fan_in, 10007, "i16 few distinct " + what);
        }
    // The same sort through the page cache: the same bytes, by the same reference.
    sort_keys(u64, false, IoMode::buffered, false, 3, 10007, "u64 buffered");
}

// Runs of tens of MiB are spilled over one file per thread (3) in turns of 8 MiB: runs, blocks and
// merge passes cross the turns from one file to the next, through the page cache and with direct
// I/O (where the file system has it), from a file and from a stream.
TEST(IoMode, RunsStripedOverSeveralFilesCrossTheirTurns) {
    ScratchDir probe;
    const auto keys = make_keys<std::uint64_t>(5'000'011, {gen::Distribution::uniform}, 14);  // 40 MiB: 5 turns
    std::vector<IoMode> ways = {IoMode::buffered};
    if (io::direct_io_supported(probe.path())) ways.push_back(IoMode::direct);
    for (IoMode way : ways)
        for (bool stream : {false, true}) {
            const std::string what = std::string(way == IoMode::direct ? "direct" : "buffered") + (stream ? ", stream" : "");
            const SortReport report = sort_keys(keys, false, way, stream, 3, 1'000'003, what, std::uint64_t{64} << 20);
            EXPECT_EQ(report.plan.spill_files, 3u) << what;
            EXPECT_EQ(report.runs, 5u) << what;
            EXPECT_GT(report.merge_passes, 1u) << what;
        }
}

TEST(IoMode, RecordsStableAndUniqueWithManyRunsAndPasses) {
    ScratchDir probe;
    SKIP_WITHOUT_DIRECT_IO(probe);
    for (const RecordCase& c : record_cases()) {
        if (c.spec.record_size > 100) continue;  // entries of odd sizes are what matters here
        const std::vector<std::byte> data = make_records(c.records, c.spec, 21);
        for (bool unique : {false, true}) {
            PartSortOptions options;
            options.backend = Backend::cpu;
            options.threads = 3;
            options.memory_bytes = kMinMemoryBudget;
            options.spill_io = IoMode::direct;
            options.max_fan_in = 3;
            options.max_run_records = 4099;
            const SortReport report =
                sort_records_and_compare(data, c.spec, unique, options, c.name + (unique ? ", unique" : ""));
            EXPECT_TRUE(report.plan.spill_direct) << c.name;
            EXPECT_GT(report.merge_passes, 1u) << c.name;
        }
    }
}
