// The phases a sort reports, path by path (one chunk, runs, merge passes, streams, compressed
// input and output, --unique, --verify, in place): the order of the phases, and that every counted
// phase adds up to its total before the next one starts, so that no phase shows 100% while work of
// it is left and none ends short of its total. Each sort is checked against std::sort too.
#include "generated_keys.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "io/file.hpp"
#include "io/stream_writer.hpp"
#include "gpusort/progress.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// Every phase of one sort, as it ended; the starting phase is left out.
struct PhaseLog {
    std::mutex mutex;
    std::vector<ProgressCounters::Snapshot> ended;

    explicit PhaseLog(ProgressCounters& counters) {
        counters.set_phase_listener([this](const ProgressCounters::Snapshot& s) {
            if (s.phase == ProgressPhase::starting) return;
            std::lock_guard lock(mutex);
            ended.push_back(s);
        });
    }
    std::string names() const {
        std::string text;
        for (const auto& s : ended) text += std::string(text.empty() ? "" : " ") + progress_phase_name(s.phase);
        return text;
    }
    // Counted phases with a known total ended at it; `unknown_total_bytes` is what each counted
    // phase of unknown total must have counted (the stream's bytes; the kept records' bytes).
    void expect_counts_add_up(std::uint64_t unknown_total_bytes) const {
        for (const auto& s : ended) {
            const std::string what = std::string(progress_phase_name(s.phase)) + " in " + names();
            if (s.phase == ProgressPhase::done) continue;
            if (!s.counted) {
                EXPECT_EQ(s.done, 0u) << what;
                continue;
            }
            EXPECT_EQ(s.done, s.total > 0 ? s.total : unknown_total_bytes) << what;
        }
    }
};

struct Sorted {
    std::string phases;
    SortReport report;
};

void write_zst(const std::string& path, std::span<const std::uint64_t> keys) {
    io::File file(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), path);
    io::StreamWriter writer(file.fd(), path, Compression::zstd, 1);
    writer.write(std::as_bytes(keys));
    writer.finish();
}

class SortProgress : public ::testing::Test {
protected:
    ScratchDir dir, tmp;
    std::vector<std::uint64_t> keys = make_keys<std::uint64_t>(400'000, {}, 11);  // 3.05 MiB

    PartSortOptions options_for(const std::string& input, const std::string& output) {
        PartSortOptions options;
        options.input = input == "-" ? input : dir / input;
        options.output = dir / output;
        options.backend = Backend::cpu;
        options.threads = 2;
        options.tmp_dir = tmp.path();
        return options;
    }
    // Sorts, checks the output against std::sort and the counts of every phase.
    Sorted sort(PartSortOptions options, std::uint64_t unknown_total_bytes) {
        ProgressCounters counters;
        PhaseLog log(counters);
        options.progress = &counters;
        Sorted sorted{"", sort_part(options)};
        EXPECT_STREQ(progress_phase_name(counters.snapshot().phase), "done") << "the phase the sort ended in";
        counters.start_phase(ProgressPhase::done, 0);  // ends the last phase, into the log
        sorted.phases = log.names();
        log.expect_counts_add_up(unknown_total_bytes);
        if (options.output.ends_with(".zst")) return sorted;
        std::vector<std::uint64_t> expected = reference_sort(keys, false);
        if (options.unique) expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
        EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(options.output), expected));
        return sorted;
    }
    std::uint64_t bytes() const { return keys.size() * sizeof(std::uint64_t); }
};

}  // namespace

TEST_F(SortProgress, OneChunkIsReadSortedAndWrittenInTurn) {
    write_keys(dir / "in", keys);
    const Sorted sorted = sort(options_for("in", "out"), 0);
    EXPECT_EQ(sorted.phases, "reading sorting writing flushing done");
    EXPECT_EQ(sorted.report.runs, 1u);
}

TEST_F(SortProgress, RunsAreCountedAsTheyAreStoredThenMergedIntoTheOutput) {
    write_keys(dir / "in", keys);
    PartSortOptions options = options_for("in", "out");
    options.max_run_records = 100'000;
    const Sorted sorted = sort(options, 0);
    EXPECT_EQ(sorted.phases, "sorting writing flushing done");
    EXPECT_GT(sorted.report.runs, 2u);
    EXPECT_EQ(sorted.report.merge_passes, 1u);
}

TEST_F(SortProgress, EachMergePassIsAPhaseOfItsOwn) {
    write_keys(dir / "in", keys);
    PartSortOptions options = options_for("in", "out");
    options.memory_bytes = kMinMemoryBudget;
    options.max_fan_in = 2;
    const Sorted sorted = sort(options, 0);
    std::string expected = "sorting";
    for (unsigned pass = 1; pass < sorted.report.merge_passes; ++pass) expected += " merging";
    EXPECT_EQ(sorted.phases, expected + " writing flushing done");
    EXPECT_GE(sorted.report.merge_passes, 3u);
}

TEST_F(SortProgress, AStreamIsReadThenSortedAsOneChunkOrInRuns) {
    write_zst(dir / "in.zst", keys);
    // Within the two chunk buffers: read (size unknown), then one chunk from the buffers.
    EXPECT_EQ(sort(options_for("in.zst", "out"), bytes()).phases, "reading reading sorting writing flushing done");
    // Runs: the first two chunks read, then runs counted as stored (size unknown), then the merge.
    PartSortOptions options = options_for("in.zst", "out2");
    options.max_run_records = 100'000;
    ProgressCounters counters;
    PhaseLog log(counters);
    options.progress = &counters;
    const SortReport report = sort_part(options);
    counters.start_phase(ProgressPhase::done, 0);
    EXPECT_EQ(log.names(), "reading sorting writing flushing done");
    ASSERT_EQ(log.ended.size(), 5u);
    // What was read before the runs: the two chunk buffers, whole records.
    EXPECT_EQ(log.ended[0].done, 2 * report.plan.run_records * sizeof(std::uint64_t));
    EXPECT_EQ(log.ended[1].done, bytes());  // every run stored
    EXPECT_EQ(log.ended[2].done, bytes());  // all written
    EXPECT_GT(report.runs, 2u);
    EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(options.output), reference_sort(keys, false)));
}

TEST_F(SortProgress, ACompressedOutputCountsItsBytesBeforeCompression) {
    write_keys(dir / "in", keys);
    EXPECT_EQ(sort(options_for("in", "out.zst"), 0).phases, "reading sorting writing flushing done");
    PartSortOptions options = options_for("in", "out2.zst");
    options.max_run_records = 100'000;
    EXPECT_EQ(sort(options, 0).phases, "sorting writing flushing done");
}

TEST_F(SortProgress, UniqueWritesAnUnknownNumberOfRecords) {
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] %= 1000;  // many duplicates
    write_keys(dir / "in", keys);
    PartSortOptions options = options_for("in", "out");
    options.unique = true;
    const Sorted one_chunk = sort(options, 1000 * sizeof(std::uint64_t));
    EXPECT_EQ(one_chunk.phases, "reading sorting writing flushing done");
    EXPECT_EQ(one_chunk.report.output_records, 1000u);
    options.output = dir / "out2";
    options.max_run_records = 100'000;
    EXPECT_EQ(sort(options, 1000 * sizeof(std::uint64_t)).phases, "sorting writing flushing done");
}

TEST_F(SortProgress, VerifyReadsTheOutputBackAfterTheFlush) {
    write_keys(dir / "in", keys);
    PartSortOptions options = options_for("in", "out");
    options.verify = true;
    EXPECT_EQ(sort(options, 0).phases, "reading sorting writing flushing verifying done");
}

TEST_F(SortProgress, InPlaceFlushesTheOutputToDiskBeforeItReplacesTheInput) {
    write_keys(dir / "data", keys);
    PartSortOptions options = options_for("data", "data");
    EXPECT_EQ(sort(options, 0).phases, "reading sorting writing flushing flushing done");
}

// ProgressCounters::cancel() stops a sort at its next count or phase, whichever phase it is in:
// gpusort::Interrupted, and nothing left (no OUTPUT, an existing one unchanged, no temp file), as
// any failed sort. Cancelled as each phase of a one-chunk sort and of a many-run, many-pass sort
// ends (from the phase listener, so at a point the test chooses: the next phase then stops), for
// keys and for columns (keys with values and an index).
TEST_F(SortProgress, ACancelledSortStopsInAnyPhaseAndLeavesNothing) {
    write_keys(dir / "in", keys);
    write_keys(dir / "values", keys);
    write_keys(dir / "out", std::vector<std::uint64_t>{7, 8, 9});
    const std::vector<std::pair<bool, ProgressPhase>> ends = {
        {true, ProgressPhase::starting}, {true, ProgressPhase::reading}, {true, ProgressPhase::sorting},
        {true, ProgressPhase::writing},  {false, ProgressPhase::sorting}, {false, ProgressPhase::merging},
        {false, ProgressPhase::writing}};
    for (const bool columns : {false, true}) {
        for (const auto& [one_chunk, at] : ends) {
            const std::string what = std::string(columns ? "columns, " : "") + (one_chunk ? "one chunk" : "runs") +
                                     ", cancelled as " + progress_phase_name(at) + " ends";
            PartSortOptions options = options_for("in", "out");
            if (!one_chunk) {
                options.memory_bytes = kMinMemoryBudget;
                options.max_fan_in = 2;
            }
            if (columns) {
                options.values = {{dir / "values", dir / "values.out", std::nullopt}};
                options.index_output = dir / "index";
            }
            ProgressCounters counters;
            counters.set_phase_listener([&counters, at](const ProgressCounters::Snapshot& ended) {
                if (ended.phase == at) counters.cancel();
            });
            options.progress = &counters;
            try {
                sort_part(options);
                ADD_FAILURE() << what << ": the sort ended";
            } catch (const Interrupted& e) {
                EXPECT_NE(std::string(e.what()).find("interrupted"), std::string::npos) << what;
            }
            EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "values", "out"})) << what;
            EXPECT_TRUE(same_bytes(read_keys<std::uint64_t>(dir / "out"), std::vector<std::uint64_t>{7, 8, 9})) << what;
            EXPECT_TRUE(tmp.entries().empty()) << what;
        }
    }
}
