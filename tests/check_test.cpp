// gpusort-check as a user runs it on plain and compressed files (.gz, .bz2, .xz, .zst, written by
// the system's own compressors): sorted files pass, the first record out of order is the one an
// in-test reference finds, --input (plain or compressed) compares the records as multisets, and
// files that do not hold whole records or cannot be decompressed are errors (status 2). Files of
// every key type, key specs and gensort records made wrong from the reference order are rejected.
// Text lines (--lines) are checked against GNU sort's output and its own check (-c).
#include "cli_run.hpp"
#include "generated_keys.hpp"
#include "gnu_sort.hpp"
#include "reference_order.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// How the first record out of order differs from the one before it: in an ascending order it is
// smaller, in a descending one larger, and where the key fields go both ways it belongs before it.
const std::string kSmaller = "is smaller than the one before it";
const std::string kLarger = "is larger than the one before it";
std::string violation_of(const KeySpec& spec) {
    std::size_t descending = 0;
    for (const KeyField& f : spec.fields) descending += f.descending ? 1 : 0;
    if (descending == 0) return kSmaller;
    if (descending == spec.fields.size()) return kLarger;
    return "belongs before the one before it";
}

// What gpusort-check says of the first record out of order, of records of `size` bytes.
std::string out_of_order(std::uint64_t record, std::size_t size, const std::string& how = kSmaller) {
    return "record " + std::to_string(record) + " (counted from 0; at byte " + std::to_string(record * size) + ") " + how;
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
        EXPECT_NE(descending.out.find(out_of_order(static_cast<std::uint64_t>(first_rise - sorted.begin() + 1), 8, kLarger)),
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

// ---------------------------------------------------------------------------------------------
// gpusort-check rejects wrong files of every key type, of key specs and of gensort records: a
// pair of neighbours out of order (status 1 and the index of the second), and with --input a
// file in order that holds other records (one changed, one dropped). The files are made from
// the reference order (reference_order.hpp, reference_records.hpp), not from the key rules that
// gpusort-check shares with the sorter; so are the floats that differ only in the sign of a zero
// or the payload of a NaN, which IEEE 754 totalOrder tells apart.

namespace {

// The index of the first of `keys` that `before` puts before its predecessor, or keys.size().
template <class T, class Before>
std::size_t first_out_of_order_by(const std::vector<T>& keys, Before before) {
    for (std::size_t i = 1; i < keys.size(); ++i)
        if (before(keys[i], keys[i - 1])) return i;
    return keys.size();
}

// What gpusort-check says of FILE with --input ORIGINAL where the counts differ.
std::string count_differs(const std::string& file, std::size_t records, const std::string& original, std::size_t original_records) {
    return "'" + file + "' has " + std::to_string(records) + " records, '" + original + "' has " +
           std::to_string(original_records) + "\n";
}

const std::string kChecksumsDiffer = "does not hold the same records as";

// The float whose bits are `bits`.
template <class T>
T float_of_bits(std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t> bits) {
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

void write_records(const std::string& path, const std::vector<std::byte>& records) {
    write_text(path, std::string(reinterpret_cast<const char*>(records.data()), records.size()));
}

}  // namespace

template <class Traits>
class CheckToolRejects : public ::testing::Test {};
TYPED_TEST_SUITE(CheckToolRejects, AllKeyTypes);

TYPED_TEST(CheckToolRejects, AnOutOfOrderPairAndOtherRecordsInOrder) {
    using T = typename TypeParam::type;
    const std::string type(key_type_name(TypeParam::key));
    ScratchDir dir;
    constexpr std::size_t n = 20'000;
    const std::vector<T> keys = make_keys<T>(n, mixed_key_data<T>(), 31);
    write_keys(dir / "in", keys);
    for (const bool descending : {false, true}) {
        SCOPED_TRACE(type + (descending ? " descending" : " ascending"));
        const auto before = [descending](T a, T b) { return descending ? reference_less(b, a) : reference_less(a, b); };
        auto check = [&](std::vector<std::string> args) {
            args.insert(args.begin(), {"--type", type});
            if (descending) args.insert(args.begin(), "--descending");
            return run(GPUSORT_CHECK_BIN, args);
        };
        const std::vector<T> sorted = reference_sort(keys, descending);
        write_keys(dir / "sorted", sorted);
        Result r = check({"--input", dir / "in", dir / "sorted"});
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        // The places where the reference order rises: sorted[i - 1] strictly before sorted[i].
        std::vector<std::size_t> rises;
        for (std::size_t i = 1; i < n; ++i)
            if (before(sorted[i - 1], sorted[i])) rises.push_back(i);
        ASSERT_GE(rises.size(), 3u);

        // Two neighbours that differ, swapped: first, in the middle and last.
        for (const std::size_t i : {rises.front(), rises[rises.size() / 2], rises.back()}) {
            std::vector<T> swapped = sorted;
            std::swap(swapped[i - 1], swapped[i]);
            ASSERT_EQ(first_out_of_order_by(swapped, before), i);
            write_keys(dir / "swapped", swapped);
            for (const bool with_input : {false, true}) {
                r = with_input ? check({"--input", dir / "in", dir / "swapped"}) : check({dir / "swapped"});
                EXPECT_EQ(r.status(), 1) << "swapped at " << i << ": " << r.out << r.err;
                EXPECT_NE(r.out.find(out_of_order(i, sizeof(T), descending ? kLarger : kSmaller)), std::string::npos) << r.out;
            }
        }

        // In order, but one record changed (to its neighbour's key), one dropped, or both.
        const std::size_t k = rises[rises.size() / 2];
        std::vector<T> changed = sorted;
        changed[k] = changed[k - 1];
        std::vector<T> dropped = sorted;
        dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(k));
        std::vector<T> both = changed;
        both.erase(both.begin() + static_cast<std::ptrdiff_t>(rises.front()));
        for (const std::vector<T>* file : {&changed, &dropped, &both})
            ASSERT_EQ(first_out_of_order_by(*file, before), file->size());
        write_keys(dir / "changed", changed);
        write_keys(dir / "dropped", dropped);
        write_keys(dir / "both", both);
        r = check({"--input", dir / "in", dir / "changed"});
        EXPECT_EQ(r.status(), 1) << r.out << r.err;
        EXPECT_NE(r.out.find(kChecksumsDiffer), std::string::npos) << r.out;
        for (const std::string name : {"dropped", "both"}) {
            r = check({"--input", dir / "in", dir / name});
            EXPECT_EQ(r.status(), 1) << name << ": " << r.out << r.err;
            EXPECT_NE(r.out.find(count_differs(dir / name, n - 1, dir / "in", n)), std::string::npos) << r.out;
        }
        // Without --input the same files are in order.
        for (const std::string name : {"changed", "dropped", "both"}) {
            r = check({dir / name});
            EXPECT_EQ(r.status(), 0) << name << ": " << r.out << r.err;
        }
    }
}

// -0.0 and +0.0, and NaNs of other payloads or signs, are different keys in totalOrder:
// -NaN (larger payload first) < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (larger payload last).
template <class T>
void expect_signed_zeros_and_nan_payloads_told_apart(const std::string& type) {
    SCOPED_TRACE(type);
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    const Bits sign = Bits(1) << (8 * sizeof(T) - 1);
    Bits quiet;
    const T quiet_nan = std::numeric_limits<T>::quiet_NaN();
    std::memcpy(&quiet, &quiet_nan, sizeof quiet);
    quiet &= ~sign;
    const T zero = float_of_bits<T>(0), negative_zero = float_of_bits<T>(sign);
    const T nan = float_of_bits<T>(quiet), other_nan = float_of_bits<T>(quiet | 1);  // a larger payload
    const T negative_nan = float_of_bits<T>(quiet | sign), negative_other_nan = float_of_bits<T>(quiet | 1 | sign);
    const T inf = std::numeric_limits<T>::infinity();
    ScratchDir dir;
    // The reference sorts them as totalOrder says.
    const std::vector<T> all = {other_nan, zero, negative_nan, T(1), negative_zero, nan, negative_other_nan, -inf};
    const std::vector<T> in_order = {negative_other_nan, negative_nan, -inf, negative_zero, zero, T(1), nan, other_nan};
    ASSERT_TRUE(same_bytes(reference_sort(all, false), in_order));
    write_keys(dir / "all", all);
    write_keys(dir / "in-order", in_order);
    Result r = run(GPUSORT_CHECK_BIN, {"--type", type, "--input", dir / "all", dir / "in-order"});
    EXPECT_EQ(r.status(), 0) << r.out << r.err;

    // Out of order where only the sign of a zero or a NaN's payload is wrong.
    struct Disorder {
        const char* what;
        std::vector<T> keys;
        bool descending;
        std::size_t first_bad;
    };
    for (const Disorder& d : {Disorder{"+0.0 before -0.0", {T(-1), zero, negative_zero, T(1)}, false, 2},
                              Disorder{"-0.0 before +0.0, descending", {T(1), negative_zero, zero, T(-1)}, true, 2},
                              Disorder{"a NaN before one of a smaller payload", {T(1), other_nan, nan}, false, 2},
                              Disorder{"-NaN before one of a larger payload", {negative_nan, negative_other_nan, -inf}, false, 1},
                              Disorder{"a NaN before one of a larger payload, descending", {nan, other_nan, T(1)}, true, 1},
                              Disorder{"-0.0 before +0.0 among equal neighbours", {T(-1), negative_zero, negative_zero, zero,
                                                                                   zero, negative_zero}, false, 5}}) {
        SCOPED_TRACE(d.what);
        const auto before = [&](T a, T b) { return d.descending ? reference_less(b, a) : reference_less(a, b); };
        ASSERT_EQ(first_out_of_order_by(d.keys, before), d.first_bad);
        write_keys(dir / "disorder", d.keys);
        std::vector<std::string> args = {"--type", type, dir / "disorder"};
        if (d.descending) args.insert(args.begin(), "--descending");
        r = run(GPUSORT_CHECK_BIN, args);
        EXPECT_EQ(r.status(), 1) << r.out << r.err;
        EXPECT_NE(r.out.find(out_of_order(d.first_bad, sizeof(T), d.descending ? kLarger : kSmaller)), std::string::npos)
            << r.out;
    }

    // In order, but not the input's records: a zero or a NaN with another sign or payload.
    struct Other {
        const char* what;
        std::vector<T> input, file;
    };
    for (const Other& o : {Other{"+0.0 for -0.0", {T(1), negative_zero, T(-1)}, {T(-1), zero, T(1)}},
                           Other{"-0.0 for +0.0", {zero, T(1)}, {negative_zero, T(1)}},
                           Other{"a NaN of another payload", {nan, T(1)}, {T(1), other_nan}},
                           Other{"a -NaN of another payload", {negative_other_nan, T(1)}, {negative_nan, T(1)}},
                           Other{"-NaN for +NaN", {nan, -inf}, {negative_nan, -inf}}}) {
        SCOPED_TRACE(o.what);
        const auto before = [](T a, T b) { return reference_less(a, b); };
        ASSERT_EQ(first_out_of_order_by(o.file, before), o.file.size());
        ASSERT_FALSE(same_bytes(reference_sort(o.input, false), o.file));
        write_keys(dir / "input", o.input);
        write_keys(dir / "file", o.file);
        r = run(GPUSORT_CHECK_BIN, {"--type", type, "--input", dir / "input", dir / "file"});
        EXPECT_EQ(r.status(), 1) << r.out << r.err;
        EXPECT_NE(r.out.find(kChecksumsDiffer), std::string::npos) << r.out;
    }
}

TEST(CheckToolRejectsFloats, SignedZerosAndNanPayloadsAreDifferentKeys) {
    expect_signed_zeros_and_nan_payloads_told_apart<float>("f32");
    expect_signed_zeros_and_nan_payloads_told_apart<double>("f64");
}

// One record layout given to gpusort-check (its options), with an input of n records and the
// same records sorted by the reference, in `dir`.
struct RecordLayoutCase {
    RecordLayoutCase(const std::vector<std::string>& options, const ScratchDir& dir)
        : layout(options), spec(reference_key_of_options(options).spec), r(spec.record_size), dir(dir) {
        const std::vector<std::byte> data = make_records(n, spec, 41);
        sorted = reference_record_sort(data, spec, false);
        write_records(dir / "in", data);
        write_records(dir / "sorted", sorted);
    }
    // gpusort-check with the layout's options and `args`.
    Result check(std::vector<std::string> args) const {
        args.insert(args.begin(), layout.begin(), layout.end());
        return run(GPUSORT_CHECK_BIN, args);
    }
    const std::byte* record(const std::vector<std::byte>& records, std::size_t i) const { return &records[i * r]; }
    // The first record that belongs before the one before it, by the reference; the count if none.
    std::size_t first_out_of_order(const std::vector<std::byte>& records) const {
        for (std::size_t i = 1; i < records.size() / r; ++i)
            if (reference_compare(record(records, i), record(records, i - 1), spec) < 0) return i;
        return records.size() / r;
    }
    // The records of the sorted ones whose key is larger than the one before it.
    std::vector<std::size_t> rises() const {
        std::vector<std::size_t> found;
        for (std::size_t i = 1; i < n; ++i)
            if (reference_compare(record(sorted, i - 1), record(sorted, i), spec) < 0) found.push_back(i);
        return found;
    }

    static constexpr std::size_t n = 6000;
    std::vector<std::string> layout;
    KeySpec spec;
    std::size_t r;
    const ScratchDir& dir;
    std::vector<std::byte> sorted;
};

// The sorted records with the pair at each of three rises swapped: reported at that record.
void expect_swapped_pairs_found(const RecordLayoutCase& c, const std::vector<std::size_t>& rises) {
    const std::size_t r = c.r;
    for (const std::size_t i : {rises.front(), rises[rises.size() / 2], rises.back()}) {
        std::vector<std::byte> swapped = c.sorted;
        std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>((i - 1) * r),
                         swapped.begin() + static_cast<std::ptrdiff_t>(i * r),
                         swapped.begin() + static_cast<std::ptrdiff_t>(i * r));
        ASSERT_EQ(c.first_out_of_order(swapped), i);
        write_records(c.dir / "swapped", swapped);
        const Result result = c.check({"--input", c.dir / "in", c.dir / "swapped"});
        EXPECT_EQ(result.status(), 1) << "swapped at " << i << ": " << result.out << result.err;
        EXPECT_NE(result.out.find(out_of_order(i, r, violation_of(c.spec))), std::string::npos) << result.out;
    }
}

// In order, other records: record k's key changed to its neighbour's, a byte outside the key
// changed, a record dropped: the checksums, or the counts, differ.
void expect_other_records_found(const RecordLayoutCase& c, std::size_t k) {
    const std::size_t r = c.r, n = c.n;
    const ScratchDir& dir = c.dir;
    std::vector<std::byte> changed_key = c.sorted;
    std::copy_n(c.record(c.sorted, k - 1), r, changed_key.begin() + static_cast<std::ptrdiff_t>(k * r));
    std::vector<std::byte> changed_payload = c.sorted;
    std::vector<bool> in_key(r, false);
    for (const KeyField& f : c.spec.fields)
        for (std::size_t b = 0; b < f.length; ++b) in_key[f.offset + b] = true;
    const auto payload = std::find(in_key.begin(), in_key.end(), false);
    ASSERT_NE(payload, in_key.end()) << "no byte outside the key";
    changed_payload[k * r + static_cast<std::size_t>(payload - in_key.begin())] ^= std::byte{0x20};
    std::vector<std::byte> dropped = c.sorted;
    dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(k * r), dropped.begin() + static_cast<std::ptrdiff_t>((k + 1) * r));
    for (const auto& [name, records] : {std::pair{"changed-key", &changed_key}, std::pair{"changed-payload", &changed_payload}}) {
        ASSERT_EQ(c.first_out_of_order(*records), n) << name;
        write_records(dir / name, *records);
        const Result result = c.check({"--input", dir / "in", dir / name});
        EXPECT_EQ(result.status(), 1) << name << ": " << result.out << result.err;
        EXPECT_NE(result.out.find(kChecksumsDiffer), std::string::npos) << name << ": " << result.out;
    }
    ASSERT_EQ(c.first_out_of_order(dropped), n - 1);
    write_records(dir / "dropped", dropped);
    const Result result = c.check({"--input", dir / "in", dir / "dropped"});
    EXPECT_EQ(result.status(), 1) << result.out << result.err;
    EXPECT_NE(result.out.find(count_differs(dir / "dropped", n - 1, dir / "in", n)), std::string::npos) << result.out;
}

// A key field that differs only in the sign of a zero: -0.0 sorts first.
void expect_signed_zero_field_out_of_order(const ScratchDir& dir) {
    const std::vector<std::string> layout = {"--record-size", "17", "--key", "1:f64:be"};
    const KeySpec spec = reference_key_of_options(layout).spec;
    std::vector<std::byte> zeros(2 * 17, std::byte{7});
    for (std::size_t b = 0; b < 8; ++b) zeros[1 + b] = zeros[17 + 1 + b] = std::byte{0};
    zeros[17 + 1] = std::byte{0x80};  // the second record's field: -0.0, big-endian
    ASSERT_GT(reference_compare(&zeros[0], &zeros[17], spec), 0);
    write_records(dir / "zeros", zeros);
    std::vector<std::string> args = layout;
    args.push_back(dir / "zeros");
    const Result result = run(GPUSORT_CHECK_BIN, args);
    EXPECT_EQ(result.status(), 1) << result.out << result.err;
    EXPECT_NE(result.out.find(out_of_order(1, 17)), std::string::npos) << result.out;
}

// Records with key specs (numbers of several types and byte orders, descending fields, byte
// strings) and gensort records, their key read by the reference's own parser of the options.
TEST(CheckToolRejectsRecords, AnOutOfOrderPairAndOtherRecordsInOrder) {
    ScratchDir dir;
    const std::vector<std::vector<std::string>> layouts = {
        {"--record-size", "13", "--key", "3:u32:be", "--key", "0:i16:desc"},
        {"--record-size", "17", "--key", "1:f64:be", "--key", "9:i8"},
        {"--record-size", "24", "--key", "2:bytes:5", "--key", "8:f32:desc", "--key", "12:u64:be"},
        {"--key", "0:u16", "--key", "4:i32:be", "--descending"},
        {"--format", "gensort"},
    };
    for (const auto& layout : layouts) {
        std::string options;
        for (const std::string& option : layout) options += option + " ";
        SCOPED_TRACE(options);
        const RecordLayoutCase c(layout, dir);
        const Result result = c.check({"--input", dir / "in", dir / "sorted"});
        EXPECT_EQ(result.status(), 0) << result.out << result.err;
        const std::vector<std::size_t> rises = c.rises();
        ASSERT_GE(rises.size(), 3u);
        expect_swapped_pairs_found(c, rises);
        expect_other_records_found(c, rises[rises.size() / 2]);
    }
    expect_signed_zero_field_out_of_order(dir);
}

// ---------------------------------------------------------------------------------------------
// The column checks: --index INDEX (record numbers of KEYS, u32 or u64), FILE against it, value
// files (--values V:OUT[:WIDTH]) with and without it, and --unique. The references are computed
// here: the record numbers of KEYS stably sorted by the reference comparison of their keys (with
// --unique, the first of each key), and the files gathered in that order.

namespace {

// The record numbers of `records` in the stable order of their keys under `spec`; with `unique`,
// only the first record of each key.
std::vector<std::uint64_t> reference_index(const std::vector<std::byte>& records, const KeySpec& spec, bool unique) {
    const std::size_t r = spec.record_size;
    std::vector<std::uint64_t> index(records.size() / r);
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
    const auto compare = [&](std::uint64_t a, std::uint64_t b) { return reference_compare(&records[a * r], &records[b * r], spec); };
    std::stable_sort(index.begin(), index.end(), [&](std::uint64_t a, std::uint64_t b) { return compare(a, b) < 0; });
    if (unique)
        index.erase(std::unique(index.begin(), index.end(), [&](std::uint64_t a, std::uint64_t b) { return compare(a, b) == 0; }),
                    index.end());
    return index;
}

// The records of `data` (`width` bytes each) in the order of `index`.
std::vector<std::byte> gather(const std::vector<std::byte>& data, std::size_t width, const std::vector<std::uint64_t>& index) {
    std::vector<std::byte> out;
    for (const std::uint64_t i : index) out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(i * width),
                                                   data.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
    return out;
}

// INDEX as gpusort-file writes it: each record number as a native-endian T.
template <class T>
void write_index(const std::string& path, const std::vector<std::uint64_t>& index) {
    write_keys(path, std::vector<T>(index.begin(), index.end()));
}

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::byte> bytes(n);
    for (auto& b : bytes) b = std::byte(random());
    return bytes;
}

// A failure: status 1 and one line on stdout that holds `text`.
void expect_failure(const Result& r, const std::string& text) {
    EXPECT_EQ(r.status(), 1) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("gpusort-check: ", 0), 0u) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_NE(r.out.find(text), std::string::npos) << "missing '" << text << "' in: " << r.out;
}

// A bad command line or a file refused: status 2 and a message on stderr that holds `text`.
void expect_refused(const Result& r, const std::string& text) {
    EXPECT_EQ(r.status(), 2) << r.out << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << "missing '" << text << "' in: " << r.err;
}

// KEYS of n records of a layout (key options) in `dir`, with the reference index (u32) and the
// sorted records (FILE) written as "index" and "sorted".
struct ColumnCase {
    ColumnCase(std::vector<std::string> options, std::size_t records, const ScratchDir& dir, bool unique = false)
        : layout(std::move(options)), spec(reference_key_of_options(layout).spec), n(records), dir(dir) {
        keys = make_records(n, spec, 51);
        index = reference_index(keys, spec, unique);
        write_records(dir / "keys", keys);
        write_index<std::uint32_t>(dir / "index", index);
        write_records(dir / "sorted", gather(keys, spec.record_size, index));
    }
    // gpusort-check with the layout's options, --input KEYS and `args`.
    Result check(std::vector<std::string> args) const {
        args.insert(args.begin(), {"--input", dir / "keys"});
        args.insert(args.begin(), layout.begin(), layout.end());
        return run(GPUSORT_CHECK_BIN, args);
    }
    int compare(std::uint64_t a, std::uint64_t b) const {
        return reference_compare(&keys[a * spec.record_size], &keys[b * spec.record_size], spec);
    }
    // The first output position > 0 whose key is equal to (or, with `equal` false, larger than)
    // the one before it.
    std::size_t first_step(bool equal) const {
        for (std::size_t i = 1; i < index.size(); ++i)
            if ((compare(index[i - 1], index[i]) == 0) == equal) return i;
        ADD_FAILURE() << "no such step";
        return 1;
    }

    std::vector<std::string> layout;
    KeySpec spec;
    std::size_t n;
    const ScratchDir& dir;
    std::vector<std::byte> keys;
    std::vector<std::uint64_t> index;
};

std::string at(std::size_t position) { return "at output position " + std::to_string(position); }
std::string number(std::uint64_t record) { return "record number " + std::to_string(record); }

// The layouts the column checks are tried with: a whole-record number, the same descending, and
// records with a key spec of two fields (one descending).
const std::vector<std::vector<std::string>> kColumnLayouts = {
    {"--type", "u32"},
    {"--type", "i64", "--descending"},
    {"--record-size", "13", "--key", "3:u32:be", "--key", "0:i16:desc"},
};

}  // namespace

TEST(CheckToolIndex, RightIndexOfEitherTypePasses) {
    ScratchDir dir;
    for (const auto& layout : kColumnLayouts) {
        SCOPED_TRACE(layout[1]);
        const ColumnCase c(layout, 5000, dir);
        write_index<std::uint64_t>(dir / "index64", c.index);
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"--index", dir / "index"}, {"--index", dir / "index", "--index-type", "u32"},
              {"--index", dir / "index64", "--index-type", "u64"}, {"--index", dir / "index", dir / "sorted"}}) {
            const Result r = c.check(args);
            EXPECT_EQ(r.status(), 0) << r.out << r.err;
            EXPECT_EQ(r.out.rfind("ok: 5000 records, a permutation of the input's, in order by the index (stable)", 0), 0u) << r.out;
        }
        // An index of u64 read as auto (u32 here): each record number, then a 0, then the next.
        expect_failure(c.check({"--index", dir / "index64"}), at(c.index[0] == 0 ? 1 : 3) + " repeats " + number(0));
        // A size that is not a whole number of entries.
        write_text(dir / "ragged", read_text(dir / "index64").substr(0, 8 * 4999 + 4));
        expect_refused(c.check({"--index", dir / "ragged", "--index-type", "u64"}),
                       "is 39996 bytes long, not a whole number of 8-byte (u64) record numbers");
    }
}

TEST(CheckToolIndex, IndexThatIsNotAPermutationFails) {
    ScratchDir dir;
    const ColumnCase c(kColumnLayouts[0], 3000, dir);
    auto out_of_range = c.index, repeated = c.index, missing = c.index;
    out_of_range[1234] = 3000;
    repeated[2000] = repeated[700];
    missing.erase(missing.begin() + 1500);
    write_index<std::uint32_t>(dir / "out-of-range", out_of_range);
    write_index<std::uint32_t>(dir / "repeated", repeated);
    write_index<std::uint32_t>(dir / "missing", missing);
    expect_failure(c.check({"--index", dir / "out-of-range"}), at(1234) + " holds " + number(3000) + ", out of range");
    expect_failure(c.check({"--index", dir / "repeated"}), at(2000) + " repeats " + number(c.index[700]));
    expect_failure(c.check({"--index", dir / "missing"}), "lacks " + number(c.index[1500]));
    // Out of range as u64 too, past 2^32.
    auto huge = c.index;
    huge[17] = std::uint64_t{1} << 33;
    write_index<std::uint64_t>(dir / "huge", huge);
    expect_failure(c.check({"--index", dir / "huge", "--index-type", "u64"}), at(17) + " holds " + number(huge[17]));
}

TEST(CheckToolIndex, UnstableOrUnorderedIndexFails) {
    ScratchDir dir;
    for (const auto& layout : kColumnLayouts) {
        SCOPED_TRACE(layout[1]);
        const ColumnCase c(layout, 4000, dir);
        // Two records of equal keys swapped: in order, not stable.
        const std::size_t tie = c.first_step(true);
        auto unstable = c.index;
        std::swap(unstable[tie - 1], unstable[tie]);
        write_index<std::uint32_t>(dir / "unstable", unstable);
        expect_failure(c.check({"--index", dir / "unstable"}), "is not stable " + at(tie) + ": " + number(unstable[tie]));
        // Two records of different keys swapped: out of order.
        const std::size_t rise = c.first_step(false);
        auto unordered = c.index;
        std::swap(unordered[rise - 1], unordered[rise]);
        write_index<std::uint32_t>(dir / "unordered", unordered);
        expect_failure(c.check({"--index", dir / "unordered"}), "is not in order " + at(rise) + ": " + number(unordered[rise]));
    }
}

TEST(CheckToolIndex, FileOtherThanTheIndexSaysFails) {
    ScratchDir dir;
    const ColumnCase c(kColumnLayouts[2], 4000, dir);
    const std::size_t r = c.spec.record_size;
    std::vector<std::byte> wrong = gather(c.keys, r, c.index);
    const std::size_t k = c.first_step(false) + 100;
    wrong[k * r + 12] ^= std::byte{1};  // a byte outside the key: still in order
    write_records(dir / "wrong", wrong);
    expect_failure(c.check({"--index", dir / "index", dir / "wrong"}), "'" + dir / "wrong" + "' " + at(k) + " is not " + number(c.index[k]));
    wrong.resize(wrong.size() - r);
    write_records(dir / "short", wrong);
    expect_failure(c.check({"--index", dir / "index", dir / "short"}), "has 3999 records, '" + dir / "index" + "' has 4000 entries");
}

TEST(CheckToolIndex, ValuesOfEveryWidthFollowTheirKeys) {
    ScratchDir dir;
    for (const auto& layout : kColumnLayouts) {
        SCOPED_TRACE(layout[1]);
        const ColumnCase c(layout, 3000, dir);
        std::vector<std::string> all_columns;
        for (const std::size_t width : {1, 3, 8, 100}) {
            SCOPED_TRACE(width);
            const std::string v = dir / "v" + std::to_string(width), out = v + ".out", bad = v + ".bad";
            const std::vector<std::byte> values = random_bytes(3000 * width, width);
            write_records(v, values);
            write_records(out, gather(values, width, c.index));
            all_columns.insert(all_columns.end(), {"--values", v + ":" + out});
            // With and without --index (and with WIDTH given), right.
            for (const std::vector<std::string>& args :
                 {std::vector<std::string>{"--index", dir / "index", "--values", v + ":" + out},
                  {"--values", v + ":" + out + ":" + std::to_string(width), dir / "sorted"}}) {
                const Result r = c.check(args);
                EXPECT_EQ(r.status(), 0) << r.out << r.err;
                EXPECT_NE(r.out.find("1 value column(s) follow their keys"), std::string::npos) << r.out;
            }
            // Two values of records of different keys (and different values) swapped.
            std::size_t i = c.first_step(false) + 5, j = c.index.size() - 3;
            while (c.compare(c.index[i], c.index[j]) == 0 ||
                   std::equal(&values[c.index[i] * width], &values[c.index[i] * width] + width, &values[c.index[j] * width]))
                --j;
            std::vector<std::byte> swapped = gather(values, width, c.index);
            std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>(i * width),
                             swapped.begin() + static_cast<std::ptrdiff_t>((i + 1) * width),
                             swapped.begin() + static_cast<std::ptrdiff_t>(j * width));
            write_records(bad, swapped);
            expect_failure(c.check({"--index", dir / "index", "--values", v + ":" + bad}),
                           "'" + bad + "' " + at(i) + " is not the value of " + number(c.index[i]));
            // Without --index: the output positions of i's key.
            std::size_t first = i, last = i;
            while (first > 0 && c.compare(c.index[first - 1], c.index[i]) == 0) --first;
            while (last + 1 < c.index.size() && c.compare(c.index[last + 1], c.index[i]) == 0) ++last;
            expect_failure(c.check({"--values", v + ":" + bad, dir / "sorted"}),
                           "do not follow their keys at output positions " + std::to_string(first) + " to " + std::to_string(last));
        }
        // All four columns at once.
        auto args = all_columns;
        args.insert(args.begin(), {"--index", dir / "index", dir / "sorted"});
        Result r = c.check(args);
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        all_columns.push_back(dir / "sorted");
        r = c.check(all_columns);
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        EXPECT_EQ(r.out, "ok: 3000 records in order, same records as the input, 4 value column(s) follow their keys\n");
    }
}

TEST(CheckToolIndex, UniqueIndexHoldsTheFirstRecordOfEachKey) {
    ScratchDir dir;
    for (const auto& layout : kColumnLayouts) {
        SCOPED_TRACE(layout[1]);
        const ColumnCase c(layout, 4000, dir, true);
        const std::vector<std::uint64_t> full = reference_index(c.keys, c.spec, false);
        ASSERT_LT(c.index.size(), full.size()) << "no equal keys";
        const std::vector<std::byte> values = random_bytes(4000 * 3, 9);
        write_records(dir / "v", values);
        write_records(dir / "out", gather(values, 3, c.index));
        const Result r = c.check({"--index", dir / "index", "--unique", "--values", dir / "v:" + dir / "out", dir / "sorted"});
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        EXPECT_EQ(r.out.rfind("ok: " + std::to_string(c.index.size()) + " records, the first of each key", 0), 0u) << r.out;
        // A later record of the same key in place of the first.
        std::size_t p = 0, later = 0;
        for (; p < c.index.size() && later == 0; ++p)
            for (std::uint64_t j = c.index[p] + 1; j < c.n && later == 0; ++j)
                if (c.compare(j, c.index[p]) == 0) later = j;
        --p;
        ASSERT_NE(later, 0u);
        auto not_first = c.index;
        not_first[p] = later;
        write_index<std::uint32_t>(dir / "not-first", not_first);
        expect_failure(c.check({"--index", dir / "not-first", "--unique"}),
                       at(p) + " holds " + number(later) + ", not the first record of its key: " + number(c.index[p]));
        // A key left out; the index of every record.
        auto lacking = c.index;
        lacking.erase(lacking.begin() + 7);
        write_index<std::uint32_t>(dir / "lacking", lacking);
        expect_failure(c.check({"--index", dir / "lacking", "--unique"}),
                       "lacks the key of " + number(c.index[7]) + " of '" + dir / "keys" + "' (it belongs " + "at output position 7)");
        write_index<std::uint32_t>(dir / "full", full);
        const std::size_t tie = std::adjacent_find(full.begin(), full.end(), [&](auto a, auto b) { return c.compare(a, b) == 0; }) -
                                full.begin() + 1;
        expect_failure(c.check({"--index", dir / "full", "--unique"}), "is not unique " + at(tie) + ": " + number(full[tie]));
    }
}

TEST(CheckToolIndex, WidthsThatDoNotDivideAndBadUsageAreRefused) {
    ScratchDir dir;
    const ColumnCase c(kColumnLayouts[0], 1000, dir);
    write_records(dir / "v", random_bytes(3001, 3));
    write_records(dir / "out", random_bytes(3001, 3));
    expect_refused(c.check({"--index", dir / "index", "--values", dir / "v:" + dir / "out"}),
                   "'" + dir / "v" + "' is 3001 bytes long, which does not divide into 1000 values");
    expect_refused(c.check({"--values", dir / "v:" + dir / "out:3", dir / "sorted"}), "is 3001 bytes long, not 1000 values of 3 bytes");
    expect_refused(c.check({"--index", dir / "index", "--values", dir / "v:" + dir / "out:0"}), "WIDTH is not a positive number");
    expect_refused(c.check({"--values", dir / "v:" + dir / "out"}), "--values needs FILE or --index INDEX");
    expect_refused(c.check({"--unique", dir / "sorted"}), "--unique needs --index INDEX");
    expect_refused(run(GPUSORT_CHECK_BIN, {"--type", "u32", "--index", dir / "index", dir / "sorted"}), "need --input KEYS");
    // Compressed files and pipes are refused.
    write_text(dir / "index.gz", read_text(dir / "index"));
    expect_refused(c.check({"--index", dir / "index.gz"}), "'" + dir / "index.gz" + "' is compressed");
    expect_refused(c.check({"--index", "-"}), "standard input is not a regular file");
    // An OUT of another size than the index's records of that width.
    write_records(dir / "v3", random_bytes(3000, 3));
    write_records(dir / "out3", random_bytes(2997, 3));
    expect_failure(c.check({"--index", dir / "index", "--values", dir / "v3:" + dir / "out3"}),
                   "'" + dir / "out3" + "' is 2997 bytes long, not 1000 values of 3 bytes");
}

TEST(CheckToolIndex, EmptyInputPasses) {
    ScratchDir dir;
    for (const std::string name : {"keys", "index", "sorted", "v", "out"}) write_text(dir / name, "");
    const std::vector<std::string> layout = {"--type", "u32", "--input", dir / "keys"};
    auto check = [&](std::vector<std::string> args) {
        args.insert(args.begin(), layout.begin(), layout.end());
        return run(GPUSORT_CHECK_BIN, args);
    };
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--index", dir / "index", "--values", dir / "v:" + dir / "out", dir / "sorted"},
          {"--index", dir / "index", "--unique"}, {"--values", dir / "v:" + dir / "out:4", dir / "sorted"}}) {
        const Result r = check(args);
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        EXPECT_EQ(r.out.rfind("ok: 0 records", 0), 0u) << r.out;
    }
    // An index entry for an empty input is out of range.
    write_index<std::uint32_t>(dir / "one", {0});
    expect_failure(check({"--index", dir / "one"}), at(0) + " holds " + number(0) + ", out of range");
}

// ---------------------------------------------------------------------------------------------
// gpusort-check --lines against GNU sort: what `LC_ALL=C sort` writes passes with the same keys;
// a file made out of order is caught at the line `sort -c` names; lines changed, dropped or left
// without a last terminator, and bad usage, are refused.
namespace {

class CheckToolLines : public ::testing::Test {
protected:
    void SetUp() override {
        if (gnu_sort().empty()) GTEST_SKIP() << "no GNU sort to compare with";
        std::mt19937_64 random(1501);
        std::string text;
        for (int i = 0; i < 30000; ++i)
            text += std::string(1, "abAB"[random() % 4]) + "," + std::to_string(static_cast<int>(random() % 2000) - 1000) + "," +
                    std::string(random() % 30, "xyz"[random() % 3]) + "\n";
        write_text(dir / "in", text);
    }
    // GNU sort's output of `in` under `sort_options` into `name`.
    void gnu(const std::string& sort_options, const std::string& name) const {
        ASSERT_EQ(run_in(dir.path(), "LC_ALL=C " + gnu_sort() + " " + sort_options + " in -o " + name).status, 0);
    }
    // gpusort-check --lines with `args`, where the names of files in the scratch folder ("in",
    // "sorted", ...) stand for their paths.
    Result check(const std::vector<std::string>& args) const {
        static const std::set<std::string> files = {"in", "sorted", "swapped", "dropped", "doubled", "unterminated", "in-unterminated"};
        std::vector<std::string> all = {"--lines"};
        for (const std::string& arg : args) all.push_back(files.count(arg) ? dir / arg : arg);
        return run(GPUSORT_CHECK_BIN, all);
    }
    ScratchDir dir;
};

TEST_F(CheckToolLines, GnuSortsOutputPassesWithTheSameKeys) {
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {"", {}},
        {"-t, -k2,2n", {"--field-separator", ",", "--line-key", "2,2n"}},
        {"-t, -k1,1f -k2,2nr -s", {"--field-separator", ",", "--line-key", "1,1f", "--line-key", "2,2nr", "--stable"}},
        {"-r", {"--descending"}},
        {"-t, -k1,1 -u", {"--field-separator", ",", "--line-key", "1,1", "--unique"}}};
    for (const auto& [sort_options, check_options] : cases) {
        SCOPED_TRACE(sort_options);
        gnu(sort_options, "sorted");
        std::vector<std::string> args = check_options;
        if (sort_options.find("-u") == std::string::npos) args.insert(args.end(), {"--input", "in"});
        args.push_back("sorted");
        const Result r = check(args);
        EXPECT_EQ(r.status(), 0) << r.out << r.err;
        EXPECT_EQ(r.out.rfind("ok: ", 0), 0u) << r.out;
    }
}

TEST_F(CheckToolLines, FirstLineOutOfOrderIsTheOneSortCheckNames) {
    gnu("-t, -k2,2n", "sorted");
    std::string text = read_text(dir / "sorted");
    // Two neighbouring lines swapped a third of the way in, where their keys differ.
    std::size_t at = text.find('\n', text.size() / 3) + 1;
    for (;;) {
        const std::size_t second = text.find('\n', at) + 1, end = text.find('\n', second) + 1;
        const std::string a = text.substr(at, second - at), b = text.substr(second, end - second);
        if (a.substr(a.find(','), a.find(',', a.find(',') + 1) - a.find(',')) != b.substr(b.find(','), b.find(',', b.find(',') + 1) - b.find(','))) {
            text.replace(at, end - at, b + a);
            break;
        }
        at = second;
    }
    write_text(dir / "swapped", text);
    const Outcome sort_check = run_in(dir.path(), "LC_ALL=C " + gnu_sort() + " -t, -k2,2n -c swapped");
    ASSERT_EQ(sort_check.status, 1);
    const std::string line = sort_check.err.substr(sort_check.err.find("swapped:") + 8);
    const Result r = check({"--field-separator", ",", "--line-key", "2,2n", "swapped"});
    EXPECT_EQ(r.status(), 1) << r.err;
    EXPECT_NE(r.out.find("line " + line.substr(0, line.find(':')) + " (counted from 1)"), std::string::npos) << r.out << sort_check.err;
}

TEST_F(CheckToolLines, OtherLinesAndAMissingTerminatorFail) {
    gnu("", "sorted");
    const std::string text = read_text(dir / "sorted");
    const std::size_t second = text.find('\n') + 1;
    write_text(dir / "dropped", text.substr(second));                                   // a line fewer
    write_text(dir / "doubled", text.substr(0, second) + text.substr(0, text.size() - (text.size() - text.rfind('\n', text.size() - 2) - 1)));
    write_text(dir / "unterminated", text.substr(0, text.size() - 1));
    for (const std::string name : {"dropped", "doubled"}) {
        const Result r = check({"--input", "in", name});
        EXPECT_EQ(r.status(), 1) << name << ": " << r.out << r.err;
    }
    Result r = check({"--input", "in", "unterminated"});
    EXPECT_EQ(r.status(), 1) << r.out;
    EXPECT_NE(r.out.find("does not end with a line's terminator"), std::string::npos) << r.out;
    // ORIGINAL without its last terminator still has the same lines.
    write_text(dir / "in-unterminated", read_text(dir / "in").substr(0, read_text(dir / "in").size() - 1));
    r = check({"--input", "in-unterminated", "sorted"});
    EXPECT_EQ(r.status(), 0) << r.out << r.err;
}

TEST_F(CheckToolLines, BadUsageIsRefused) {
    gnu("", "sorted");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--index", "in", "sorted"}, {"--unique", "--input", "in", "sorted"}, {"--key", "0:u64", "sorted"}, {}}) {
        const Result r = check(args);
        EXPECT_EQ(r.status(), 2) << ::testing::PrintToString(args) << r.out;
    }
    const Result r = run(GPUSORT_CHECK_BIN, {"--line-key", "1", dir / "sorted"});
    EXPECT_EQ(r.status(), 2) << r.out;
}

}  // namespace
