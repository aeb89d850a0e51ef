// gpusort-file's columns on the command line: --values V:OUT[:WIDTH] carried along with the keys,
// --index-out and --index-type, OUTPUT left out, --gather applying a saved permutation, and the
// refusals (one "gpusort-file: " line, status 2 for a malformed command line and 1 for a file that
// cannot be sorted so, nothing written). Every output is compared byte for byte with a reference
// built here (reference_columns.hpp, with the key options read by the tests' own parser), and
// gpusort-check --index / --values passes on them.
#include "cli_run.hpp"
#include "record_sort_cases.hpp"
#include "reference_columns.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

using Bytes = std::vector<std::byte>;
using Args = std::vector<std::string>;

Args operator+(Args a, const Args& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// KEYS of `n` records of a layout (key options, --unique among them) in `dir` as "keys", value files
// "v8" (8 bytes a record) and "v3" (3 bytes), and the reference permutation.
struct CliColumns {
    CliColumns(Args key_options, std::size_t n, const ScratchDir& dir, std::uint64_t seed = 1)
        : layout(std::move(key_options)), dir(dir) {
        const ReferenceKey key = reference_key_of_options(layout);
        width = key.spec.record_size;
        keys = make_records(n, key.spec, seed);
        v8 = random_column(n, 8, seed + 1);
        v3 = random_column(n, 3, seed + 2);
        index = reference_record_index(keys, key.spec, key.unique);
        write_bytes(dir / "keys", keys);
        write_bytes(dir / "v8", v8);
        write_bytes(dir / "v3", v3);
    }

    // gpusort-file with the layout's options and `args`.
    Result sort(const Args& args) const { return run(GPUSORT_FILE_BIN, layout + args); }

    // gpusort-check with the layout's options, --input KEYS and `args`.
    Result check(const Args& args) const { return run(GPUSORT_CHECK_BIN, layout + Args{"--input", dir / "keys"} + args); }

    // The inputs as they were.
    void expect_inputs_unchanged() const {
        EXPECT_TRUE(read_bytes(dir / "keys") == keys) << "KEYS changed";
        EXPECT_TRUE(read_bytes(dir / "v8") == v8) << "v8 changed";
        EXPECT_TRUE(read_bytes(dir / "v3") == v3) << "v3 changed";
    }

    Args layout;
    const ScratchDir& dir;
    std::size_t width = 0;
    Bytes keys, v8, v3;
    std::vector<std::uint64_t> index;
};

const std::vector<Args> kLayouts = {
    {"--type", "u32"},
    {"--type", "f64", "--descending"},
    {"--record-size", "13", "--key", "3:u32:be", "--key", "0:i16:desc"},
    {"--format", "gensort", "--unique"},
    {"--type", "i16", "--unique"},
};

std::set<std::string> entries_with(std::set<std::string> names, const std::set<std::string>& more) {
    names.insert(more.begin(), more.end());
    return names;
}

}  // namespace

// Two value files (one with its width given), the index and OUT, of every layout: each output the
// reference's, and gpusort-check passes on them.
TEST(ColumnsCli, ValuesAndIndexBesideTheKeys) {
    for (const Args& layout : kLayouts) {
        SCOPED_TRACE(layout[1] + (layout.back() == "--unique" ? " --unique" : ""));
        ScratchDir dir;
        const CliColumns c(layout, 20000, dir);
        const Result r = c.sort({dir / "keys", dir / "out", "--values", dir / "v8:" + dir / "o8", "--values",
                                 dir / "v3:" + dir / "o3:3", "--index-out", dir / "index"});
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_TRUE(read_bytes(dir / "out") == reference_gather(c.keys, c.width, c.index)) << "OUT";
        EXPECT_TRUE(read_bytes(dir / "o8") == reference_gather(c.v8, 8, c.index)) << "o8";
        EXPECT_TRUE(read_bytes(dir / "o3") == reference_gather(c.v3, 3, c.index)) << "o3";
        EXPECT_TRUE(read_bytes(dir / "index") == index_bytes(c.index, 4)) << "INDEX";
        c.expect_inputs_unchanged();
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"keys", "v8", "v3", "out", "o8", "o3", "index"}));
        const Result checked =
            c.check({"--index", dir / "index", dir / "out", "--values", dir / "v8:" + dir / "o8", "--values", dir / "v3:" + dir / "o3"});
        EXPECT_EQ(checked.status(), 0) << checked.out << checked.err;
    }
}

// Out of core: runs spilled under --memory 1M and merged, with --stats.
TEST(ColumnsCli, SpilledRunsWithStats) {
    ScratchDir dir, tmp;
    const CliColumns c({"--type", "u64"}, 400000, dir, 5);
    const Result r = c.sort({"--memory", "1M", "--backend", "cpu", "--tmp-dir", tmp.path(), "--stats", dir / "stats",
                             dir / "keys", dir / "out", "--values", dir / "v8:" + dir / "o8", "--values", dir / "v3:" + dir / "o3",
                             "--index-out", dir / "index"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_bytes(dir / "out") == reference_gather(c.keys, 8, c.index)) << "OUT";
    EXPECT_TRUE(read_bytes(dir / "o8") == reference_gather(c.v8, 8, c.index)) << "o8";
    EXPECT_TRUE(read_bytes(dir / "o3") == reference_gather(c.v3, 3, c.index)) << "o3";
    EXPECT_TRUE(read_bytes(dir / "index") == index_bytes(c.index, 4)) << "INDEX";
    const std::string stats = read_text(dir / "stats");
    EXPECT_EQ(stats.find("\"runs\": 1,"), std::string::npos) << "sorted in memory: " << stats;
    EXPECT_NE(stats.find("\"records\": 400000"), std::string::npos) << stats;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"keys", "v8", "v3", "out", "o8", "o3", "index", "stats"}));
}

// OUTPUT left out: the index alone, the values alone; --index-type u32, u64 and auto.
TEST(ColumnsCli, OutputLeftOutAndIndexTypes) {
    ScratchDir dir;
    const CliColumns c({"--type", "u16"}, 30000, dir, 9);
    const std::set<std::string> inputs = {"keys", "v8", "v3"};
    for (const auto& [type, width] : {std::pair<const char*, std::size_t>{"auto", 4}, {"u32", 4}, {"u64", 8}}) {
        SCOPED_TRACE(type);
        const Result r = c.sort({dir / "keys", "--index-out", dir / "index", "--index-type", type});
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_bytes(dir / "index") == index_bytes(c.index, width)) << "INDEX";
        EXPECT_EQ(dir.entries(), entries_with(inputs, {"index"}));
        const Result checked = c.check({"--index", dir / "index", "--index-type", width == 8 ? "u64" : "u32"});
        EXPECT_EQ(checked.status(), 0) << checked.out << checked.err;
        std::filesystem::remove(dir / "index");
    }
    const Result r = c.sort({dir / "keys", "--values", dir / "v3:" + dir / "o3"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_bytes(dir / "o3") == reference_gather(c.v3, 3, c.index)) << "o3";
    EXPECT_EQ(dir.entries(), entries_with(inputs, {"o3"}));
    c.expect_inputs_unchanged();
}

// In place: KEYS sorted into itself and a value file into itself.
TEST(ColumnsCli, InPlace) {
    ScratchDir dir;
    const CliColumns c({"--type", "i32"}, 50000, dir, 13);
    const Result r = c.sort({dir / "keys", dir / "keys", "--values", dir / "v8:" + dir / "v8", "--index-out", dir / "index"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_bytes(dir / "keys") == reference_gather(c.keys, 4, c.index)) << "KEYS";
    EXPECT_TRUE(read_bytes(dir / "v8") == reference_gather(c.v8, 8, c.index)) << "v8";
    EXPECT_TRUE(read_bytes(dir / "index") == index_bytes(c.index, 4)) << "INDEX";
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"keys", "v8", "v3", "index"}));
}

// --gather applies a saved index (u32 or u64) to another column; an index that is not a permutation
// is refused with status 1 and no OUT.
TEST(ColumnsCli, Gather) {
    ScratchDir dir;
    const CliColumns c({"--type", "u64"}, 40000, dir, 17);
    const Bytes other = random_column(40000, 12, 18);
    write_bytes(dir / "other", other);
    for (const char* type : {"u32", "u64"}) {
        SCOPED_TRACE(type);
        ASSERT_EQ(c.sort({dir / "keys", "--index-out", dir / "index", "--index-type", type}).status(), 0);
        const Result r = run(GPUSORT_FILE_BIN, {"--gather", dir / "index", "--index-type", type, dir / "other", dir / "gathered"});
        ASSERT_EQ(r.status(), 0) << r.err;
        EXPECT_TRUE(read_bytes(dir / "gathered") == reference_gather(other, 12, c.index)) << "gathered";
        EXPECT_TRUE(read_bytes(dir / "other") == other) << "the column changed";
        std::filesystem::remove(dir / "gathered");
    }
    // A repeated record number, and one out of range; OUT absent and OUT there before.
    std::vector<std::uint64_t> repeated = c.index, out_of_range = c.index;
    repeated[300] = repeated[301];
    out_of_range[5] = 40000;
    write_bytes(dir / "repeated", index_bytes(repeated, 4));
    write_bytes(dir / "out-of-range", index_bytes(out_of_range, 4));
    write_text(dir / "kept", "keep");
    const std::set<std::string> before = dir.entries();
    for (const char* bad : {"repeated", "out-of-range"})
        for (const char* out : {"gathered", "kept"}) {
            SCOPED_TRACE(std::string(bad) + " into " + out);
            const Result r = run(GPUSORT_FILE_BIN, {"--gather", dir / bad, dir / "other", dir / out});
            expect_one_error_line(r, dir / bad);
            EXPECT_EQ(dir.entries(), before);
            EXPECT_EQ(read_text(dir / "kept"), "keep");
        }
}

// ---------------------------------------------------------------------------------------------
// Refusals: one line, the status, nothing written, an existing OUT as it was.

namespace {

// A sort refused with `status` and one line holding `text`, `dir` left as it was.
void expect_refused(const CliColumns& c, const Args& args, const std::string& text, int status) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    SCOPED_TRACE(shown);
    const std::set<std::string> before = c.dir.entries();
    const std::string out_before = read_text(c.dir / "out");
    ChildProcess child(GPUSORT_FILE_BIN, c.layout + args);
    const Result r = child.wait(kHangBound);  // a sort that hangs fails here, not the whole suite
    expect_one_error_line(r, text, status);
    EXPECT_EQ(c.dir.entries(), before);
    EXPECT_EQ(read_text(c.dir / "out"), out_before) << "OUT changed";
    c.expect_inputs_unchanged();
}

}  // namespace

// Malformed command lines: status 2.
TEST(ColumnsCli, RefusesMalformedColumnOptions) {
    ScratchDir dir;
    const CliColumns c({"--type", "u64"}, 1000, dir);
    write_text(dir / "out", "the OUT that was there before");
    const std::string keys = dir / "keys", v8 = dir / "v8", o8 = dir / "o8";
    expect_refused(c, {keys, dir / "out", "--values", v8}, "--values", kBadCommandLine);
    expect_refused(c, {keys, dir / "out", "--values", v8 + ":" + o8 + ":0"}, "--values", kBadCommandLine);
    expect_refused(c, {keys, dir / "out", "--values", v8 + ":" + o8 + ":wide"}, "--values", kBadCommandLine);
    expect_refused(c, {keys, dir / "out", "--values", v8 + ":" + o8 + ":8:9"}, "--values", kBadCommandLine);
    expect_refused(c, {keys, dir / "out", "--values", ":" + o8}, "--values", kBadCommandLine);
    expect_refused(c, {keys, "--index-out", dir / "index", "--index-type", "u16"}, "--index-type", kBadCommandLine);
    expect_refused(c, {keys, dir / "out", "--index-type", "u64"}, "--index-type", kBadCommandLine);
    expect_refused(c, {keys}, "expected INPUT and OUTPUT", kBadCommandLine);
    expect_refused(c, {"--gather", dir / "index", v8}, "--gather", kBadCommandLine);
    // --gather takes no key (the layout's --type), no --unique, no columns of a sort.
    const Result keyed = run(GPUSORT_FILE_BIN, {"--gather", dir / "index", "--type", "u32", v8, o8});
    expect_one_error_line(keyed, "--gather", kBadCommandLine);
    for (const Args& extra : {Args{"--unique"}, Args{"--values", v8 + ":" + o8}, Args{"--index-out", dir / "index2"}}) {
        SCOPED_TRACE(extra[0]);
        expect_one_error_line(run(GPUSORT_FILE_BIN, Args{"--gather", dir / "index"} + extra + Args{v8, o8}), "--gather",
                              kBadCommandLine);
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"keys", "v8", "v3", "out"}));
}

// Standard input and output, and compressed names: columns take regular, uncompressed files only.
// A file the sort cannot take so is refused as a failed sort (status 1), as gpusort-mpi refuses a
// compressed OUTPUT.
TEST(ColumnsCli, RefusesStreamsAndCompressedNames) {
    ScratchDir dir;
    const CliColumns c({"--type", "u64"}, 1000, dir);
    write_text(dir / "out", "the OUT that was there before");
    write_bytes(dir / "v8.gz", c.v8);
    const std::string keys = dir / "keys", out = dir / "out", v8 = dir / "v8", o8 = dir / "o8";
    expect_refused(c, {"-", out, "--values", v8 + ":" + o8}, "'-'", kFailed);
    expect_refused(c, {keys, "-", "--values", v8 + ":" + o8}, "standard output", kFailed);
    expect_refused(c, {keys, out, "--values", v8 + ":-"}, "standard output", kFailed);
    expect_refused(c, {keys, out, "--index-out", "-"}, "standard output", kFailed);
    expect_refused(c, {keys, out, "--values", v8 + ".gz:" + o8}, v8 + ".gz", kFailed);
    expect_refused(c, {keys, out, "--values", v8 + ":" + o8 + ".gz"}, o8 + ".gz", kFailed);
    expect_refused(c, {keys, dir / "out.zst", "--index-out", dir / "index"}, dir / "out.zst", kFailed);
    expect_refused(c, {keys, out, "--index-out", dir / "index.xz"}, dir / "index.xz", kFailed);
}

// A FIFO as a value file or as KEYS: refused (status 1) without waiting for a writer, which opening
// it for reading would do.
TEST(ColumnsCli, RefusesFifosWithoutWaitingForAWriter) {
    ScratchDir dir;
    const CliColumns c({"--type", "u64"}, 1000, dir);
    write_text(dir / "out", "the OUT that was there before");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    expect_refused(c, {dir / "keys", dir / "out", "--values", dir / "fifo:" + dir / "o8"}, dir / "fifo", kFailed);
    expect_refused(c, {dir / "fifo", "--index-out", dir / "index"}, dir / "fifo", kFailed);
}

// Files that cannot be sorted so: status 1.
TEST(ColumnsCli, RefusesColumnFilesThatDoNotFit) {
    ScratchDir dir;
    const CliColumns c({"--type", "u64"}, 1000, dir);
    write_text(dir / "out", "the OUT that was there before");
    write_text(dir / "ragged", std::string(2999, 'r'));
    const std::string keys = dir / "keys", out = dir / "out", v3 = dir / "v3", o8 = dir / "o8";
    expect_refused(c, {keys, out, "--values", dir / "ragged:" + o8}, dir / "ragged", kFailed);
    expect_refused(c, {keys, out, "--values", v3 + ":" + o8 + ":4"}, v3, kFailed);
    expect_refused(c, {keys, out, "--values", dir / "missing:" + o8}, dir / "missing", kFailed);
    expect_refused(c, {keys, out, "--values", v3 + ":" + o8, "--index-out", o8}, o8, kFailed);
    expect_refused(c, {keys, out, "--values", v3 + ":" + out}, out, kFailed);
    // An output that cannot be written: none of the others appears either.
    expect_refused(c, {keys, out, "--values", v3 + ":" + o8, "--index-out", dir / "missing/index"}, dir / "missing/index",
                   kFailed);
    expect_refused(c, {keys, out, "--values", v3 + ":/proc/gpusort-column", "--index-out", dir / "index"},
                   "/proc/gpusort-column", kFailed);
}

// KEYS or a value file that grows, shrinks or is rewritten while it is sorted (the sort held stopped
// with a run open in --tmp-dir): the sort fails in one line naming it, status 1, as a plain sort's
// INPUT does (docs/guarantees.md), with no output and no temp file; not by a signal where a map of
// the file that shrank is read past its new end.
TEST(ColumnsCli, AColumnThatChangesWhileSortedFailsNamingIt) {
    struct Change {
        const char* what;
        std::function<void(const std::string&)> apply;
    };
    const std::vector<Change> changes = {
        {"appended to", [](const std::string& path) { std::ofstream(path, std::ios::app) << std::string(1 << 20, 'a'); }},
        {"cut to 1 MiB", [](const std::string& path) { std::filesystem::resize_file(path, 1 << 20); }},
        {"emptied", [](const std::string& path) { std::filesystem::resize_file(path, 0); }},
        {"overwritten in place", [](const std::string& path) {
             std::fstream(path, std::ios::in | std::ios::out | std::ios::binary) << std::string(1 << 20, 'z');
         }},
    };
    for (const char* changed : {"v8", "keys"})
        for (const Change& change : changes) {
            SCOPED_TRACE(std::string(changed) + " " + change.what);
            ScratchDir dir, tmp;
            const CliColumns c({"--type", "u64"}, 1'000'000, dir, 31);
            // An hour old: a rewrite gives it a modification time of its own however coarse the clock.
            const auto written = std::filesystem::last_write_time(dir / changed);
            std::filesystem::last_write_time(dir / changed, written - std::chrono::hours(1));
            ChildProcess child(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "1M", "--threads", "1", "--tmp-dir",
                                                  tmp.path(), dir / "keys", dir / "out", "--values", dir / "v8:" + dir / "o8",
                                                  "--index-out", dir / "index"});
            const bool stopped = stop_when(child, [&] { return has_file_open_in(child.pid(), tmp.path()); });
            if (stopped) {
                change.apply(dir / changed);
                ::kill(child.pid(), SIGCONT);
            }
            const Result r = child.wait(kHangBound);
            ASSERT_TRUE(stopped) << "the sort was never seen with a run open; it " << r.how_it_ended() << ": " << r.err;
            expect_one_error_line(r, dir / changed);
            EXPECT_EQ(dir.entries(), (std::set<std::string>{"keys", "v8", "v3"}));
            EXPECT_TRUE(tmp.entries().empty()) << "temp files left";
        }
}
