// The points of the distributed sort (src/distributed/key_points.hpp): their order (key, then input
// position) against std::sort of the records under the key spec, regular sample indexes, and the
// parts that splitters cut: in order, balanced when every key is equal.
#include "src/distributed/key_points.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace gpusort;
using namespace gpusort::distributed;

namespace {

// The reference part of a point: the number of splitters at or before it, by the points' order.
std::size_t part_of(const KeyPoint& point, const std::vector<KeyPoint>& splitters, const KeyReader& reader) {
    const auto after = std::upper_bound(splitters.begin(), splitters.end(), point,
                                        [&](const KeyPoint& p, const KeyPoint& s) { return reader.before(p, s); });
    return static_cast<std::size_t>(after - splitters.begin());
}

// n records of 16 bytes: a u16 at byte 2 (few values), 4 bytes at 8 (compared descending).
std::vector<std::byte> records_of(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::byte> data(n * 16);
    for (auto& b : data) b = static_cast<std::byte>(rng() % 4);
    return data;
}

KeySpec record_spec() {
    KeySpec spec;
    spec.record_size = 16;
    KeyField number;
    number.offset = 2;
    number.length = 2;
    number.type = KeyType::u16;
    KeyField bytes;
    bytes.offset = 8;
    bytes.is_bytes = true;
    bytes.length = 4;
    bytes.descending = true;
    spec.fields = {number, bytes};
    return spec;
}

}  // namespace

TEST(KeyPoints, OrderByKeyThenPositionAsTheReferenceOrdersRecords) {
    const KeySpec spec = record_spec();
    const KeyReader reader(spec);
    const std::size_t n = 2000;
    const std::vector<std::byte> data = records_of(n, 1);
    std::vector<std::size_t> by_points(n), by_reference(n);
    std::iota(by_points.begin(), by_points.end(), 0);
    by_reference = by_points;
    std::vector<KeyPoint> points;
    for (std::size_t i = 0; i < n; ++i) points.push_back(reader.point(data.data() + i * 16, i));
    std::sort(by_points.begin(), by_points.end(), [&](std::size_t a, std::size_t b) { return reader.before(points[a], points[b]); });
    // The reference: the u16 little-endian ascending, then bytes 8..11 by memcmp descending, then position.
    auto u16 = [&](std::size_t i) { return std::to_integer<unsigned>(data[i * 16 + 2]) | std::to_integer<unsigned>(data[i * 16 + 3]) << 8; };
    std::stable_sort(by_reference.begin(), by_reference.end(), [&](std::size_t a, std::size_t b) {
        if (u16(a) != u16(b)) return u16(a) < u16(b);
        return std::memcmp(data.data() + a * 16 + 8, data.data() + b * 16 + 8, 4) > 0;
    });
    EXPECT_EQ(by_points, by_reference);
    // Packed and unpacked, a point is the same point.
    std::vector<std::byte> packed(reader.packed_bytes());
    reader.pack(points[7], packed.data());
    const KeyPoint back = reader.unpack(packed.data());
    EXPECT_FALSE(reader.before(back, points[7]) || reader.before(points[7], back));
    EXPECT_EQ(back.position, 7u);
}

TEST(KeyPoints, RegularSampleIndexesAreTheMiddlesOfEqualShares) {
    EXPECT_EQ(regular_sample_indexes(100, 4), (std::vector<std::uint64_t>{12, 37, 62, 87}));
    EXPECT_EQ(regular_sample_indexes(3, 10), (std::vector<std::uint64_t>{0, 1, 2}));
    EXPECT_TRUE(regular_sample_indexes(0, 10).empty());
}

TEST(KeyPoints, SplittersCutPartsInOrderAndEvenWhenEveryKeyIsEqual) {
    const KeyReader reader(whole_record_key(KeyType::u64, false));
    for (const bool all_equal : {false, true}) {
        const std::size_t n = 100000, parts = 7;
        std::mt19937_64 rng(3);
        std::vector<std::uint64_t> keys(n);
        for (auto& k : keys) k = all_equal ? 42 : rng() % 1000;
        std::vector<KeyPoint> points;
        for (std::size_t i = 0; i < n; ++i) points.push_back(reader.point(reinterpret_cast<const std::byte*>(&keys[i]), i));
        std::vector<KeyPoint> samples;
        for (const std::uint64_t i : regular_sample_indexes(n, n / 2)) samples.push_back(points[i]);
        const std::vector<KeyPoint> splitters = choose_splitters(samples, parts, reader);
        ASSERT_EQ(splitters.size(), parts - 1);
        std::vector<std::size_t> sizes(parts, 0);
        for (const KeyPoint& p : points) ++sizes[part_of(p, splitters, reader)];
        for (const std::size_t size : sizes)
            EXPECT_NEAR(static_cast<double>(size), static_cast<double>(n) / parts, 0.05 * n / parts) << all_equal;
        // In the order of the points, the parts never go down.
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return reader.before(points[a], points[b]); });
        for (std::size_t i = 1; i < n; ++i)
            ASSERT_LE(part_of(points[order[i - 1]], splitters, reader), part_of(points[order[i]], splitters, reader));
    }
    EXPECT_TRUE(choose_splitters({}, 4, reader).empty());
}

// Keys of few values (bytes 0 to 3) and all equal: the input position decides most parts.
// Every key type (numbers of 1, 2, 4 and 8 bytes take a path of their own) and records of two
// fields; splitters few enough to be counted one by one (up to 16) and more, searched.
TEST(KeyPoints, ThePartFinderGivesThePartsOfPartOf) {
    std::vector<std::pair<std::string, KeySpec>> specs = {{"records", record_spec()}};
    for (const KeyType type : {KeyType::u8, KeyType::i16, KeyType::u32, KeyType::f32, KeyType::i64, KeyType::f64})
        for (const bool descending : {false, true})
            specs.emplace_back(std::string(key_type_name(type)) + (descending ? " descending" : ""), whole_record_key(type, descending));
    for (const auto& [name, spec] : specs)
        for (const bool all_equal : {false, true}) {
            const KeyReader reader(spec);
            const std::size_t n = 20000;
            std::vector<std::byte> data = records_of(n, 2);  // 16 bytes each: as numbers, 16 / size per record
            if (all_equal) std::fill(data.begin(), data.end(), std::byte{3});
            const std::size_t width = spec.record_size;
            const std::size_t count = data.size() / width;
            const std::uint64_t first = 1000;  // input positions of this block start here
            std::vector<KeyPoint> samples;
            for (const std::uint64_t i : regular_sample_indexes(count, 500)) samples.push_back(reader.point(data.data() + i * width, first + i));
            for (const std::size_t parts : {1, 2, 5, 17, 18, 64}) {
                const std::vector<KeyPoint> splitters = choose_splitters(samples, parts, reader);
                const PartFinder finder(spec, splitters);
                std::vector<PartIndex> found(count, 12345);  // every entry overwritten
                finder.find(data, first, found);
                for (std::size_t i = 0; i < count; ++i)
                    ASSERT_EQ(found[i], part_of(reader.point(data.data() + i * width, first + i), splitters, reader))
                        << "record " << i << " of " << parts << " parts, " << name << (all_equal ? ", all equal" : "");
            }
        }
}

// A part takes 2 bytes (PartIndex): the most parts, 65536, all distinguished where every key is
// equal and the input position decides (the last part's index is 65535); one more is refused.
TEST(KeyPoints, ThePartFinderTellsApartTheMostParts) {
    const KeySpec spec = whole_record_key(KeyType::u64, false);
    const KeyReader reader(spec);
    std::vector<std::byte> zero(8);
    std::vector<KeyPoint> splitters;
    for (std::uint64_t position = 1; position < kMaxParts; ++position) splitters.push_back(reader.point(zero.data(), position));
    const PartFinder finder(spec, splitters);
    const std::size_t count = 8;
    const std::vector<std::byte> data(count * 8);  // all keys 0
    std::vector<PartIndex> found(count);
    finder.find(data, kMaxParts - 4, found);  // positions 65532 .. 65539
    for (std::size_t i = 0; i < count; ++i)
        EXPECT_EQ(found[i], std::min<std::size_t>(kMaxParts - 4 + i, kMaxParts - 1)) << i;
    finder.find(data, 0, found);
    for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(found[i], i) << i;
    splitters.push_back(reader.point(zero.data(), kMaxParts));
    EXPECT_THROW(PartFinder(spec, splitters), std::invalid_argument);
}
