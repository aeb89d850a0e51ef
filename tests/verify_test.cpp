// The pieces of --verify and gpusort-check: MultisetChecksum (the same for every order of the
// same records and however they are added; different when a byte, a record or the count
// differs), OrderChecker (the exact first record out of order under reference_compare, across
// calls and inside large spans checked in parallel; strict mode for --unique outputs), and the
// file verifier (RecordVerifier, verify_file: plain and compressed files, read in blocks, against
// the same reference).
#include "reference_records.hpp"
#include "scratch_dir.hpp"
#include "io/io_error.hpp"
#include "io/stream_writer.hpp"
#include "src/verify/file_verifier.hpp"
#include "src/verify/order_check.hpp"
#include "src/verify/record_checksum.hpp"
#include "tools/gen/data_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// `size` random bytes: uniform u64 keys of the data generator, the last one cut short.
std::vector<std::byte> random_bytes(std::size_t size, std::uint64_t seed) {
    std::vector<std::byte> data = gen::generate({gen::RecordFormat::keys, {KeyType::u64, gen::Distribution::uniform, seed, (size + 7) / 8}});
    data.resize(size);
    return data;
}

std::span<const std::byte> record_at(const std::vector<std::byte>& data, std::size_t record_size, std::size_t i) {
    return std::span(data).subspan(i * record_size, record_size);
}

MultisetChecksum checksum_one_by_one(const std::vector<std::byte>& data, std::size_t record_size) {
    MultisetChecksum sum;
    for (std::size_t i = 0; i * record_size < data.size(); ++i) sum.add(record_at(data, record_size, i));
    return sum;
}

MultisetChecksum checksum_of(const std::vector<std::byte>& data, std::size_t record_size) {
    MultisetChecksum sum;
    sum.add_records(data, record_size);
    return sum;
}

// Cuts of [0, count) into pieces of random length (empty ones included), in records.
std::vector<std::size_t> random_cuts(std::size_t count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> cuts = {0};
    while (cuts.back() < count) {
        const std::size_t kinds[] = {0, 1, 2, 17, 1000, count / 3 + 1};
        cuts.push_back(std::min(count, cuts.back() + kinds[rng() % std::size(kinds)]));
    }
    return cuts;
}

std::vector<std::byte> shuffled_records(const std::vector<std::byte>& data, std::size_t record_size,
                                        std::uint64_t seed) {
    const std::size_t count = data.size() / record_size;
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    std::vector<std::byte> out(data.size());
    for (std::size_t i = 0; i < count; ++i)
        std::memcpy(&out[i * record_size], &data[order[i] * record_size], record_size);
    return out;
}

KeySpec spec_of(std::size_t record_size, std::initializer_list<const char*> fields) {
    KeySpec spec{record_size, {}};
    for (const char* field : fields) spec.fields.push_back(parse_key_field(field));
    spec.validate();
    return spec;
}

// Specs of every shape OrderChecker distinguishes: one piece or several, one to four key words,
// records under 8 bytes, fields at the record's end, both byte orders, all kinds, descending.
std::vector<KeySpec> specs_to_check() {
    return {
        whole_record_key(KeyType::u64, false),
        whole_record_key(KeyType::i16, true),
        whole_record_key(KeyType::f64, false),
        whole_record_key(KeyType::f32, true),
        whole_record_key(KeyType::u8, false),
        whole_record_key(KeyType::i64, true),
        gensort_key(),
        spec_of(24, {"8:u32:be", "2:i16:desc"}),
        spec_of(6, {"4:u16:be:desc", "0:i8"}),
        spec_of(7, {"0:bytes:7:desc"}),
        spec_of(9, {"1:f64:be"}),
        spec_of(12, {"10:u16"}),
        spec_of(20, {"1:bytes:9", "12:f32:be"}),
        spec_of(40, {"3:bytes:13:desc", "20:f64:be:desc", "30:i32"}),
        spec_of(33, {"1:bytes:32"}),
    };
}

// The reference: the first record (from index 1) that sorts before the record before it, or
// with it when strict.
std::optional<std::uint64_t> reference_first_out_of_order(const std::vector<std::byte>& data, const KeySpec& spec,
                                                          bool strict) {
    const std::size_t r = spec.record_size;
    for (std::size_t i = 1; i * r < data.size(); ++i) {
        const int c = reference_compare(&data[(i - 1) * r], &data[i * r], spec);
        if (c > 0 || (strict && c == 0)) return i;
    }
    return std::nullopt;
}

// Feeds `data` to `checker` in the pieces between `cuts` (record indices); the first report.
std::optional<std::uint64_t> check_in_pieces(OrderChecker& checker, const std::vector<std::byte>& data,
                                             std::size_t record_size, const std::vector<std::size_t>& cuts) {
    std::optional<std::uint64_t> first;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const auto bad = checker.check(
            std::span(data).subspan(cuts[i] * record_size, (cuts[i + 1] - cuts[i]) * record_size));
        if (!first) first = bad;
    }
    return first;
}

std::vector<std::byte> u64_records(const std::vector<std::uint64_t>& keys) {
    std::vector<std::byte> data(keys.size() * 8);
    if (!keys.empty()) std::memcpy(data.data(), keys.data(), data.size());
    return data;
}

}  // namespace

TEST(MultisetChecksum, SameForEveryOrderHoweverTheRecordsAreAdded) {
    for (std::size_t record_size : {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 100, 1000}) {
        SCOPED_TRACE(record_size);
        // Over 4 MiB for some sizes, so that add_records hashes in parallel.
        const std::size_t count = record_size % 8 == 0 || record_size >= 100 ? (9u << 20) / record_size : 20000;
        const auto data = random_bytes(count * record_size, record_size);
        const MultisetChecksum one_by_one = checksum_one_by_one(data, record_size);
        EXPECT_EQ(one_by_one.count, count);
        EXPECT_EQ(checksum_of(data, record_size), one_by_one);

        const auto shuffled = shuffled_records(data, record_size, 7);
        EXPECT_EQ(checksum_one_by_one(shuffled, record_size), one_by_one);
        MultisetChecksum pieces, combined;
        const auto cuts = random_cuts(count, record_size + 1);
        for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
            const auto piece = std::span(shuffled).subspan(cuts[i] * record_size, (cuts[i + 1] - cuts[i]) * record_size);
            pieces.add_records(piece, record_size);
            MultisetChecksum part;  // as a thread of its own would
            part.add_records(piece, record_size);
            combined += part;
        }
        EXPECT_EQ(pieces, one_by_one);
        EXPECT_EQ(combined, one_by_one);
    }
}

TEST(MultisetChecksum, DuplicatesCountAsOftenAsTheyOccur) {
    // Equal records in a different order, and the same records with other multiplicities.
    const std::vector<std::uint64_t> keys = {5, 5, 9, 5, 1, 9};
    const std::vector<std::uint64_t> permuted = {9, 5, 1, 5, 9, 5};
    const std::vector<std::uint64_t> other_counts = {5, 9, 9, 5, 1, 9};
    EXPECT_EQ(checksum_of(u64_records(keys), 8), checksum_of(u64_records(permuted), 8));
    EXPECT_NE(checksum_of(u64_records(keys), 8), checksum_of(u64_records(other_counts), 8));
}

TEST(MultisetChecksum, DiffersWhenOneByteOfOneRecordChanges) {
    for (std::size_t record_size : {1, 2, 5, 8, 12, 16, 24, 100}) {
        SCOPED_TRACE(record_size);
        const std::size_t count = 500;
        const auto data = random_bytes(count * record_size, 100 + record_size);
        const MultisetChecksum original = checksum_of(data, record_size);
        for (std::size_t byte = 0; byte < record_size; ++byte) {
            for (unsigned change : {0x01u, 0x80u, 0xffu}) {
                auto changed = data;
                changed[250 * record_size + byte] ^= std::byte(change);
                const MultisetChecksum sum = checksum_of(changed, record_size);
                EXPECT_EQ(sum.count, original.count);
                // Each hash on its own notices.
                EXPECT_NE(sum.sum_a, original.sum_a) << "byte " << byte << " ^ " << change;
                EXPECT_NE(sum.sum_b, original.sum_b) << "byte " << byte << " ^ " << change;
            }
        }
    }
}

TEST(MultisetChecksum, DiffersWhenARecordIsDuplicatedInsteadOfAnother) {
    for (std::size_t record_size : {4, 8, 100}) {
        SCOPED_TRACE(record_size);
        const std::size_t count = 1000;
        const auto data = random_bytes(count * record_size, 200 + record_size);
        auto duplicated = data;
        std::memcpy(&duplicated[700 * record_size], &duplicated[300 * record_size], record_size);
        const MultisetChecksum original = checksum_of(data, record_size), sum = checksum_of(duplicated, record_size);
        EXPECT_EQ(sum.count, original.count);
        EXPECT_NE(sum, original);
    }
}

TEST(MultisetChecksum, DiffersWhenKeysMoveToOtherPayloads) {
    // Two records exchange their keys: every byte position holds the same values as before.
    for (std::size_t record_size : {16, 100}) {
        SCOPED_TRACE(record_size);
        const auto data = random_bytes(100 * record_size, 300 + record_size);
        auto swapped = data;
        std::swap_ranges(&swapped[10 * record_size], &swapped[10 * record_size + 10], &swapped[60 * record_size]);
        EXPECT_NE(checksum_of(swapped, record_size), checksum_of(data, record_size));
    }
}

TEST(MultisetChecksum, DiffersWhenBytesMoveWithinARecord) {
    const std::size_t record_size = 100;
    const auto data = random_bytes(50 * record_size, 350);
    const auto with_record_20 = [&](auto change) {
        auto changed = data;
        change(&changed[20 * record_size]);
        return checksum_of(changed, record_size);
    };
    const MultisetChecksum original = checksum_of(data, record_size);
    // Two 16-byte pairs of words, the two words of a pair, all words moved by one.
    EXPECT_NE(with_record_20([](std::byte* r) { std::swap_ranges(r, r + 16, r + 16); }), original);
    EXPECT_NE(with_record_20([](std::byte* r) { std::swap_ranges(r, r + 8, r + 8); }), original);
    EXPECT_NE(with_record_20([&](std::byte* r) { std::rotate(r, r + 8, r + record_size); }), original);
}

TEST(MultisetChecksum, DiffersWhenTheCountDiffers) {
    const std::size_t record_size = 100;
    const auto data = random_bytes(1000 * record_size, 400);
    const MultisetChecksum original = checksum_of(data, record_size);
    const std::vector<std::byte> missing(data.begin(), data.end() - record_size);
    EXPECT_EQ(checksum_of(missing, record_size).count, original.count - 1);
    EXPECT_NE(checksum_of(missing, record_size), original);
    auto extra = data;
    extra.insert(extra.end(), data.begin(), data.begin() + record_size);
    EXPECT_EQ(checksum_of(extra, record_size).count, original.count + 1);
    EXPECT_NE(checksum_of(extra, record_size), original);
    // An all-zero record added is not "nothing".
    auto zero = data;
    zero.insert(zero.end(), record_size, std::byte{0});
    EXPECT_NE(checksum_of(zero, record_size), original);
}

TEST(MultisetChecksum, RefusesPartialRecords) {
    const auto data = random_bytes(100, 1);
    MultisetChecksum sum;
    EXPECT_THROW(sum.add_records(data, 8), std::invalid_argument);
    EXPECT_THROW(sum.add_records(data, 0), std::invalid_argument);
    EXPECT_NO_THROW(sum.add_records(data, 10));
    EXPECT_EQ(sum.count, 10u);
}

TEST(OrderChecker, AgreesWithTheReferenceOnEveryPairOfRecords) {
    // Many pairs with common ties and special floats: the normalised comparison, field by field.
    for (const KeySpec& spec : specs_to_check()) {
        SCOPED_TRACE(describe(spec));
        const std::size_t r = spec.record_size;
        const auto data = make_records(4000, spec, r * 31 + spec.fields.size(), 2);
        for (std::size_t i = 0; i + 1 < 4000; i += 2) {
            const int c = reference_compare(&data[i * r], &data[(i + 1) * r], spec);
            const auto pair = std::span(data).subspan(i * r, 2 * r);
            OrderChecker loose(spec, false), strict(spec, true);
            EXPECT_EQ(loose.check(pair), c > 0 ? std::optional<std::uint64_t>(1) : std::nullopt) << "pair " << i;
            EXPECT_EQ(strict.check(pair), c >= 0 ? std::optional<std::uint64_t>(1) : std::nullopt) << "pair " << i;
        }
    }
}

TEST(OrderChecker, AcceptsSortedRecordsForEverySpec) {
    for (const KeySpec& spec : specs_to_check()) {
        SCOPED_TRACE(describe(spec));
        const std::size_t r = spec.record_size;
        const auto data = make_records(20000, spec, r, 3);
        const auto sorted = reference_record_sort(data, spec, false);
        OrderChecker whole(spec, false);
        EXPECT_EQ(whole.check(sorted), std::nullopt);
        EXPECT_EQ(whole.records_checked(), 20000u);
        OrderChecker pieces(spec, false);
        EXPECT_EQ(check_in_pieces(pieces, sorted, r, random_cuts(20000, r)), std::nullopt);

        // Narrow keys with few distinct values tie, which strict mode reports, the first exactly.
        OrderChecker strict(spec, true);
        EXPECT_EQ(strict.check(sorted), reference_first_out_of_order(sorted, spec, true));
        const auto unique = reference_record_sort(data, spec, true);
        OrderChecker strict_unique(spec, true);
        EXPECT_EQ(check_in_pieces(strict_unique, unique, r, random_cuts(unique.size() / r, r + 5)), std::nullopt);

        // The whole unsorted input: the first record out of order, as the reference finds it.
        OrderChecker unsorted(spec, false);
        EXPECT_EQ(check_in_pieces(unsorted, data, r, random_cuts(20000, r + 9)),
                  reference_first_out_of_order(data, spec, false));
    }
}

TEST(OrderChecker, AcceptsFloatsInTotalOrder) {
    // -NaN < -inf < -1 < -0 < +0 < denormal < 1 < inf < +NaN, and the same reversed when descending.
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> keys = {-nan, -inf, -1.0, -std::numeric_limits<double>::denorm_min(), -0.0, 0.0,
                                std::numeric_limits<double>::denorm_min(), 1.0, inf, nan};
    std::vector<std::byte> data(keys.size() * 8);
    std::memcpy(data.data(), keys.data(), data.size());
    OrderChecker ascending(whole_record_key(KeyType::f64, false), true);
    EXPECT_EQ(ascending.check(data), std::nullopt);
    OrderChecker descending(whole_record_key(KeyType::f64, true), false);
    EXPECT_EQ(descending.check(data), std::optional<std::uint64_t>(1));
    std::reverse(keys.begin(), keys.end());
    std::memcpy(data.data(), keys.data(), data.size());
    OrderChecker descending_reversed(whole_record_key(KeyType::f64, true), true);
    EXPECT_EQ(descending_reversed.check(data), std::nullopt);
}

TEST(OrderChecker, ReportsTheExactIndexAcrossCalls) {
    std::vector<std::uint64_t> keys(1000);
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 10 * i + 10;
    keys[500] = 5;  // smaller than record 499, and than all before it
    keys[800] = 7;
    const auto data = u64_records(keys);
    const KeySpec spec = whole_record_key(KeyType::u64, false);
    for (const std::vector<std::size_t>& cuts : std::vector<std::vector<std::size_t>>{
             {0, 1000}, {0, 500, 1000}, {0, 499, 1000}, {0, 501, 1000}, {0, 1, 2, 500, 501, 1000}, {0, 0, 500, 500, 1000}}) {
        OrderChecker checker(spec, false);
        EXPECT_EQ(check_in_pieces(checker, data, 8, cuts), std::optional<std::uint64_t>(500))
            << "cut at " << cuts[1];
        EXPECT_EQ(checker.records_checked(), 1000u);
    }
    // Checking goes on after a report: the next call reports the next record out of order.
    OrderChecker checker(spec, false);
    EXPECT_EQ(checker.check(std::span(data).first(700 * 8)), std::optional<std::uint64_t>(500));
    EXPECT_EQ(checker.check(std::span(data).subspan(700 * 8)), std::optional<std::uint64_t>(800));
    // The first record of a call is compared with the last of the call before.
    OrderChecker boundary(spec, false);
    EXPECT_EQ(boundary.check(u64_records({1, 2, 30})), std::nullopt);
    EXPECT_EQ(boundary.check(u64_records({29, 40})), std::optional<std::uint64_t>(3));
    EXPECT_EQ(boundary.check(u64_records({})), std::nullopt);
    EXPECT_EQ(boundary.check(u64_records({39})), std::optional<std::uint64_t>(5));
}

TEST(OrderChecker, StrictRejectsEqualNeighboursAndLooseAcceptsThem) {
    const KeySpec spec = whole_record_key(KeyType::u64, false);
    const auto data = u64_records({1, 2, 2, 3});
    OrderChecker loose(spec, false), strict(spec, true);
    EXPECT_EQ(loose.check(data), std::nullopt);
    EXPECT_EQ(strict.check(data), std::optional<std::uint64_t>(2));
    // Across a call boundary too.
    OrderChecker strict_calls(spec, true);
    EXPECT_EQ(strict_calls.check(u64_records({1, 2})), std::nullopt);
    EXPECT_EQ(strict_calls.check(u64_records({2, 3})), std::optional<std::uint64_t>(2));
    // Equal keys of records that differ elsewhere are equal.
    const KeySpec keyed = spec_of(16, {"0:u64"});
    std::vector<std::byte> records(32, std::byte{0});
    records[8] = std::byte{1};
    records[24] = std::byte{2};
    EXPECT_EQ(OrderChecker(keyed, false).check(records), std::nullopt);
    EXPECT_EQ(OrderChecker(keyed, true).check(records), std::optional<std::uint64_t>(1));
}

TEST(OrderChecker, FindsTheFirstOutOfOrderInsideLargeSpans) {
    // 32 MiB of u64 keys, checked in parallel parts; several records out of order, one of them
    // at a power of two (where parts tend to start).
    const std::size_t count = std::size_t{1} << 22;
    std::vector<std::uint64_t> keys(count);
    for (std::size_t i = 0; i < count; ++i) keys[i] = 4 * i + 100;
    auto expect_first = [&](const std::vector<std::uint64_t>& k, std::optional<std::uint64_t> expected, bool strict) {
        const auto data = u64_records(k);
        OrderChecker whole(whole_record_key(KeyType::u64, false), strict);
        EXPECT_EQ(whole.check(data), expected);
        OrderChecker pieces(whole_record_key(KeyType::u64, false), strict);
        EXPECT_EQ(check_in_pieces(pieces, data, 8, {0, count / 3, count / 3 + 1, count}), expected);
    };
    expect_first(keys, std::nullopt, false);
    keys[3'000'017] = 0;
    keys[1u << 20] = keys[(1u << 20) - 1] - 1;
    keys[3'500'000] = 1;
    expect_first(keys, std::optional<std::uint64_t>(1u << 20), false);
    keys[700'001] = keys[700'000];  // equal neighbours: out of order only when strict
    expect_first(keys, std::optional<std::uint64_t>(1u << 20), false);
    expect_first(keys, std::optional<std::uint64_t>(700'001), true);
    keys[count / 3 + 1] = 0;  // the first record of a piece
    keys[1u << 20] = keys[(1u << 20) - 1] + 1;
    expect_first(keys, std::optional<std::uint64_t>(count / 3 + 1), false);

    // 100-byte records: about 20 MB, against the reference.
    const KeySpec spec = gensort_key();
    auto records = reference_record_sort(make_records(200000, spec, 11, 255), spec, false);
    OrderChecker sorted(spec, false);
    EXPECT_EQ(sorted.check(records), std::nullopt);
    std::memset(&records[150'001 * 100], 0, 10);
    std::memset(&records[170'000 * 100], 0, 10);
    const auto expected = reference_first_out_of_order(records, spec, false);
    ASSERT_TRUE(expected.has_value());
    OrderChecker changed(spec, false);
    EXPECT_EQ(changed.check(records), expected);
}

TEST(OrderChecker, RefusesPartialRecordsAndInvalidSpecs) {
    OrderChecker checker(gensort_key(), false);
    EXPECT_THROW(checker.check(random_bytes(150, 1)), std::invalid_argument);
    EXPECT_THROW(OrderChecker(KeySpec{8, {}}, false), std::invalid_argument);
}

// ---- The file verifier ----------------------------------------------------------------------

namespace {

const Compression kEveryCompression[] = {Compression::none, Compression::gzip, Compression::bzip2, Compression::xz,
                                         Compression::zstd};

// Writes `data` to a new file at `path`, compressed as asked (by io::StreamWriter, in several
// blocks), and returns the file open for reading and writing, its offset at its end.
io::File write_file(const std::string& path, std::span<const std::byte> data, Compression compression) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + path);
    io::File file(fd, path);
    io::StreamWriter writer(fd, path, compression, 2, 1, std::size_t{1} << 20);
    writer.write(data);
    writer.finish();
    return file;
}

struct FileFindings {
    std::uint64_t bytes = 0;
    std::uint64_t records = 0;
    std::optional<std::uint64_t> first_out_of_order;
    MultisetChecksum checksum;
    std::uint64_t progress = 0;
};

FileFindings verify(const io::File& file, Compression compression, RecordVerifier verifier) {
    ProgressCounters progress;
    progress.start_phase(ProgressPhase::verifying, 0);
    FileFindings found;
    found.bytes = verify_file({file, file.path(), compression}, verifier, &progress);
    found.records = verifier.records();
    found.first_out_of_order = verifier.first_out_of_order();
    found.checksum = verifier.checksum();
    found.progress = progress.snapshot().done;
    return found;
}

}  // namespace

TEST(RecordVerifier, FindsWhatTheReferenceFindsHoweverTheRecordsCome) {
    for (const KeySpec& spec : specs_to_check()) {
        SCOPED_TRACE(describe(spec));
        const std::size_t r = spec.record_size;
        const auto data = make_records(6000, spec, r + 77, 3);
        const auto sorted = reference_record_sort(data, spec, false);
        const auto unique = reference_record_sort(data, spec, true);
        const MultisetChecksum all_records = checksum_one_by_one(shuffled_records(data, r, 5), r);
        struct Case {
            const std::vector<std::byte>& records;
            bool strict;
        };
        for (const Case& c : {Case{data, false}, Case{sorted, false}, Case{sorted, true}, Case{unique, true}}) {
            const std::size_t count = c.records.size() / r;
            RecordVerifier verifier(spec, c.strict);
            const auto cuts = random_cuts(count, r + count);
            for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
                verifier.add(std::span(c.records).subspan(cuts[i] * r, (cuts[i + 1] - cuts[i]) * r));
            EXPECT_EQ(verifier.first_out_of_order(), reference_first_out_of_order(c.records, spec, c.strict));
            EXPECT_EQ(verifier.records(), count);
            EXPECT_EQ(verifier.checksum(), checksum_one_by_one(c.records, r));
            if (&c.records != &unique) {
                EXPECT_EQ(verifier.checksum(), all_records);
            }
        }
        // Without an order: count and checksum only.
        RecordVerifier unordered(r);
        unordered.add(data);
        EXPECT_EQ(unordered.first_out_of_order(), std::nullopt);
        EXPECT_EQ(unordered.records(), 6000u);
        EXPECT_EQ(unordered.checksum(), all_records);
    }
}

TEST(RecordVerifier, RefusesPartialRecordsAndInvalidSpecs) {
    RecordVerifier verifier(gensort_key(), false);
    EXPECT_THROW(verifier.add(random_bytes(150, 1)), std::invalid_argument);
    EXPECT_THROW(RecordVerifier(KeySpec{8, {}}, false), std::invalid_argument);
    EXPECT_THROW(RecordVerifier(0), std::invalid_argument);
}

TEST(VerifyFile, FindsWhatTheReferenceFindsInPlainAndCompressedFiles) {
    ScratchDir dir;
    for (const KeySpec& spec : {gensort_key(), spec_of(13, {"3:u32:be", "0:i16:desc"}), whole_record_key(KeyType::f32, false)}) {
        SCOPED_TRACE(describe(spec));
        const std::size_t r = spec.record_size;
        const auto data = make_records(30000, spec, r, 3);
        const auto sorted = reference_record_sort(data, spec, false);
        for (Compression compression : kEveryCompression) {
            SCOPED_TRACE(compression_name(compression));
            for (const auto* records : {&data, &sorted}) {
                const io::File file = write_file(dir / "file", *records, compression);
                const FileFindings found = verify(file, compression, RecordVerifier(spec, false));
                EXPECT_EQ(found.bytes, records->size());
                EXPECT_EQ(found.records, 30000u);
                EXPECT_EQ(found.first_out_of_order, reference_first_out_of_order(*records, spec, false));
                EXPECT_EQ(found.checksum, checksum_one_by_one(data, r));
                EXPECT_EQ(found.progress, records->size());
            }
        }
    }
}

TEST(VerifyFile, LeavesAPartialRecordAtTheEndToTheCaller) {
    ScratchDir dir;
    auto data = u64_records({1, 2, 3, 4});
    data.resize(data.size() + 5, std::byte{9});
    for (Compression compression : kEveryCompression) {
        SCOPED_TRACE(compression_name(compression));
        const io::File file = write_file(dir / "ragged", data, compression);
        const FileFindings found = verify(file, compression, RecordVerifier(whole_record_key(KeyType::u64, false), true));
        EXPECT_EQ(found.bytes, 37u);
        EXPECT_EQ(found.records, 4u);
        EXPECT_EQ(found.first_out_of_order, std::nullopt);
        EXPECT_EQ(found.checksum, checksum_of(u64_records({1, 2, 3, 4}), 8));
    }
    const io::File empty = write_file(dir / "empty", {}, Compression::none);
    const FileFindings found = verify(empty, Compression::none, RecordVerifier(8));
    EXPECT_EQ(found.bytes, 0u);
    EXPECT_EQ(found.records, 0u);
}

TEST(VerifyFile, FindsDisorderAcrossItsReadBlocks) {
    // 72 MiB of rising u64 keys: more than one 64 MiB block read. Records out of order as the
    // first of the second block and later; the first must be reported, at its exact index.
    ScratchDir dir;
    const std::size_t count = std::size_t{9} << 20, block_records = std::size_t{8} << 20;
    std::vector<std::uint64_t> keys(count);
    for (std::size_t i = 0; i < count; ++i) keys[i] = 3 * i + 10;
    keys[block_records] = 0;
    keys[block_records + 1000] = 1;
    const auto data = u64_records(keys);
    for (Compression compression : {Compression::none, Compression::zstd}) {
        SCOPED_TRACE(compression_name(compression));
        const io::File file = write_file(dir / "big", data, compression);
        const FileFindings found = verify(file, compression, RecordVerifier(whole_record_key(KeyType::u64, false), false));
        EXPECT_EQ(found.records, count);
        EXPECT_EQ(found.first_out_of_order, std::optional<std::uint64_t>(block_records));
        EXPECT_EQ(found.checksum, checksum_of(data, 8));
    }
}

TEST(VerifyFile, CorruptCompressedDataIsAnErrorNamingTheFile) {
    ScratchDir dir;
    const auto data = random_bytes(800'000, 3);
    for (Compression compression : {Compression::gzip, Compression::bzip2, Compression::xz, Compression::zstd}) {
        SCOPED_TRACE(compression_name(compression));
        {
            const io::File whole = write_file(dir / "whole", data, compression);
            whole.truncate(whole.size() / 2);
        }
        const io::File cut = io::File::open_read(dir / "whole");
        try {
            verify(cut, compression, RecordVerifier(8));
            ADD_FAILURE() << "no error";
        } catch (const io::IoError& e) {
            EXPECT_NE(std::string(e.what()).find(dir / "whole"), std::string::npos) << e.what();
        }
    }
}
