// gpusort-check as a user runs it on plain and compressed files (.gz, .bz2, .xz, .zst, written by
// the system's own compressors): sorted files pass, the first record out of order is the one an
// in-test reference finds, --input (plain or compressed) compares the records as multisets, and
// files that do not hold whole records or cannot be decompressed are errors (status 2).
#include "cli_run.hpp"
#include "generated_keys.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// What gpusort-check says of the first record out of order, of records of `size` bytes.
std::string out_of_order(std::uint64_t record, std::size_t size) {
    return "record " + std::to_string(record) + " (counted from 0; at byte " + std::to_string(record * size) +
           ") is smaller than the one before it";
}

struct Compressor {
    const char* ending;
    const char* tool;
};
const Compressor kCompressors[] = {{".gz", "gzip"}, {".bz2", "bzip2"}, {".xz", "xz"}, {".zst", "zstd"}};

bool have_tool(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

// Writes `path` + the compressor's ending: `path` compressed by the system's tool.
std::string compress(const Compressor& c, const std::string& path) {
    const Result r = run("/usr/bin/env", {c.tool, "-c", path});
    EXPECT_EQ(r.status(), 0) << c.tool << ": " << r.err;
    write_text(path + c.ending, r.out);
    return path + c.ending;
}

Result check(std::vector<std::string> args) { return run(GPUSORT_CHECK_BIN, args); }

// The reference: the index of the first key that sorts before the one before it, or keys.size().
template <class T>
std::size_t first_out_of_order(const std::vector<T>& keys) {
    for (std::size_t i = 1; i < keys.size(); ++i)
        if (reference_less(keys[i], keys[i - 1])) return i;
    return keys.size();
}

class CheckTool : public ::testing::Test {
protected:
    void SetUp() override {
        for (const Compressor& c : kCompressors)
            if (have_tool(c.tool)) compressors.push_back(c);
        if (compressors.empty()) GTEST_SKIP() << "none of gzip, bzip2, xz and zstd is installed";
    }

    ScratchDir dir;
    std::vector<Compressor> compressors;
};

}  // namespace

TEST_F(CheckTool, ChecksTheOrderOfCompressedFiles) {
    // f64 keys with NaNs, infinities and zeros among them: the order is IEEE 754 totalOrder.
    const auto keys = make_keys<double>(200'001, mixed_key_data<double>(), 21);
    const auto sorted = reference_sort(keys, false);
    const std::size_t first_bad = first_out_of_order(keys);
    ASSERT_LT(first_bad, keys.size());
    write_keys(dir / "unsorted", keys);
    write_keys(dir / "sorted", sorted);
    for (const Compressor& c : compressors) {
        SCOPED_TRACE(c.tool);
        const Result ok = check({"--type", "f64", compress(c, dir / "sorted")});
        EXPECT_EQ(ok.status(), 0) << ok.out << ok.err;
        EXPECT_EQ(ok.out, "ok: 200001 records in order\n");
        const Result bad = check({"--type", "f64", compress(c, dir / "unsorted")});
        EXPECT_EQ(bad.status(), 1) << bad.out << bad.err;
        EXPECT_NE(bad.out.find(out_of_order(first_bad, 8)), std::string::npos) << bad.out;
        // Descending: the sorted file is out of order at the first key larger than the one before.
        const Result descending = check({"--type", "f64", "--descending", dir / ("sorted" + std::string(c.ending))});
        EXPECT_EQ(descending.status(), 1) << descending.out << descending.err;
        const auto first_rise = std::adjacent_find(sorted.begin(), sorted.end(),
                                                   [](double a, double b) { return reference_less(a, b); });
        ASSERT_NE(first_rise, sorted.end());
        EXPECT_NE(descending.out.find(out_of_order(static_cast<std::uint64_t>(first_rise - sorted.begin() + 1), 8)),
                  std::string::npos)
            << descending.out;
    }
}

TEST_F(CheckTool, ComparesWithACompressedOrPlainInput) {
    const auto keys = make_keys<std::int32_t>(150'000, {gen::Distribution::zipf}, 22);
    const auto sorted = reference_sort(keys, false);
    write_keys(dir / "in", keys);
    write_keys(dir / "sorted", sorted);
    // The same keys in order but one record in place of another (its neighbour, so the order
    // holds), and one record short.
    auto changed = sorted;
    const auto step = std::adjacent_find(changed.begin(), changed.end(), std::not_equal_to<>());
    ASSERT_NE(step, changed.end());
    *(step + 1) = *step;
    write_keys(dir / "changed", changed);
    write_keys(dir / "short", std::vector<std::int32_t>(sorted.begin(), sorted.end() - 1));
    for (const Compressor& c : compressors) {
        SCOPED_TRACE(c.tool);
        const std::string in = compress(c, dir / "in"), out = compress(c, dir / "sorted");
        for (const auto& [input, file] : {std::pair{in, out}, std::pair{dir / "in", out}, std::pair{in, dir / "sorted"}}) {
            const Result ok = check({"--type", "i32", "--input", input, file});
            EXPECT_EQ(ok.status(), 0) << input << " " << file << ": " << ok.out << ok.err;
            EXPECT_EQ(ok.out, "ok: 150000 records in order, same records as the input\n");
        }
        const Result differs = check({"--type", "i32", "--input", in, compress(c, dir / "changed")});
        EXPECT_EQ(differs.status(), 1) << differs.out << differs.err;
        EXPECT_NE(differs.out.find("checksums differ"), std::string::npos) << differs.out;
        const Result fewer = check({"--type", "i32", "--input", in, compress(c, dir / "short")});
        EXPECT_EQ(fewer.status(), 1) << fewer.out << fewer.err;
        EXPECT_NE(fewer.out.find("has 149999 records, '" + in + "' has 150000"), std::string::npos) << fewer.out;
    }
}

TEST_F(CheckTool, ChecksCompressedGensortRecords) {
    const auto records = gen::generate({gen::RecordFormat::gensort, {KeyType::u64, gen::Distribution::uniform, 5, 20'000}});
    std::string in(reinterpret_cast<const char*>(records.data()), records.size());
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < 20'000; ++i) lines.push_back(in.substr(i * 100, 100));
    std::stable_sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) { return a.compare(0, 10, b, 0, 10) < 0; });
    std::string sorted;
    for (const auto& line : lines) sorted += line;
    std::size_t first_bad = 1;
    while (first_bad < 20'000 && in.compare(first_bad * 100, 10, in, (first_bad - 1) * 100, 10) >= 0) ++first_bad;
    ASSERT_LT(first_bad, 20'000u);
    write_text(dir / "in", in);
    write_text(dir / "sorted", sorted);
    const Compressor& c = compressors.back();
    const std::string packed_in = compress(c, dir / "in"), packed_sorted = compress(c, dir / "sorted");
    const Result ok = check({"--format", "gensort", "--input", packed_in, packed_sorted});
    EXPECT_EQ(ok.status(), 0) << ok.out << ok.err;
    const Result bad = check({"--format", "gensort", packed_in});
    EXPECT_EQ(bad.status(), 1) << bad.out << bad.err;
    EXPECT_NE(bad.out.find(out_of_order(first_bad, 100)), std::string::npos) << bad.out;
}

TEST_F(CheckTool, PartialRecordsAndCorruptDataAreErrors) {
    write_keys(dir / "ragged", std::vector<std::uint64_t>{1, 2, 3});
    write_text(dir / "ragged", read_text(dir / "ragged") + "xyz");  // 27 bytes
    const Result plain = check({"--type", "u64", dir / "ragged"});
    EXPECT_EQ(plain.status(), 2) << plain.out << plain.err;
    EXPECT_NE(plain.err.find("is 27 bytes long, not a multiple of the record size 8"), std::string::npos) << plain.err;
    const Compressor& c = compressors.front();
    const std::string packed = compress(c, dir / "ragged");
    const Result decompressed = check({"--type", "u64", packed});
    EXPECT_EQ(decompressed.status(), 2) << decompressed.out << decompressed.err;
    EXPECT_NE(decompressed.err.find("is 27 bytes long decompressed, not a multiple of the record size 8"),
              std::string::npos)
        << decompressed.err;
    // A compressed file cut short, and a plain file under a compressed name.
    write_text(dir / "cut" + std::string(c.ending), read_text(packed).substr(0, read_text(packed).size() / 2));
    write_keys(dir / "plain" + std::string(c.ending), std::vector<std::uint64_t>(1000, 7));
    for (const std::string& name : {dir / "cut" + std::string(c.ending), dir / "plain" + std::string(c.ending)}) {
        const Result r = check({"--type", "u64", name});
        EXPECT_EQ(r.status(), 2) << name << ": " << r.out << r.err;
        EXPECT_EQ(r.err.rfind("gpusort-check: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    }
}

// FILE (and ORIGINAL) may be "-" or a pipe: read front to back, never taken for an empty file
// (a pipe's size is 0, which once made gpusort-check report "ok: 0 records").
TEST(CheckToolPipes, ReadsStandardInputAndPipes) {
    ScratchDir dir;
    std::vector<std::uint64_t> keys(300001);
    std::mt19937_64 random(11);
    for (auto& key : keys) key = random();
    write_keys(dir / "unsorted", keys);
    const std::size_t first_bad = first_out_of_order(keys);
    std::sort(keys.begin(), keys.end());
    write_keys(dir / "sorted", keys);
    auto piped = [&](const std::string& file, const std::string& check_args) {
        return run("/bin/sh", {"-c", "cat '" + file + "' | '" GPUSORT_CHECK_BIN "' --type u64 " + check_args});
    };
    for (const std::string name : {"-", "/dev/stdin"}) {
        SCOPED_TRACE(name);
        Result r = piped(dir / "sorted", name);
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        EXPECT_EQ(r.out, "ok: 300001 records in order\n");
        r = piped(dir / "unsorted", name);
        EXPECT_EQ(r.status(), 1) << r.out << r.err;
        EXPECT_NE(r.out.find(out_of_order(first_bad, 8)), std::string::npos) << r.out;
        r = piped(dir / "sorted", "--input '" + dir / "unsorted" + "' " + name);
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        EXPECT_EQ(r.out, "ok: 300001 records in order, same records as the input\n");
    }
    // ORIGINAL from standard input; a pipe that ends mid-record.
    Result r = piped(dir / "unsorted", "--input - '" + dir / "sorted" + "'");
    EXPECT_EQ(r.status(), 0) << r.out << r.err;
    r = run("/bin/sh", {"-c", "head -c 13 '" + dir / "sorted" + "' | '" GPUSORT_CHECK_BIN "' --type u64 -"});
    EXPECT_EQ(r.status(), 2) << r.out << r.err;
    EXPECT_EQ(r.err, "gpusort-check: standard input is 13 bytes long, not a multiple of the record size 8\n");
}
