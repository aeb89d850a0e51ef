// Key specs: parsing and refusal of nonsense, and the normalised key of a record, whose memcmp
// order must equal an independent field-by-field reference comparison.
#include "reference_order.hpp"
#include "reference_records.hpp"
#include "gpusort/key_spec.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace gpusort;
using namespace gpusort::testing;

TEST(KeySpec, ParsesEveryForm) {
    KeyField f = parse_key_field("0:u32");
    EXPECT_EQ(f.offset, 0u);
    EXPECT_EQ(f.type, KeyType::u32);
    EXPECT_EQ(f.length, 4u);
    EXPECT_FALSE(f.big_endian);
    EXPECT_FALSE(f.descending);
    f = parse_key_field("3:u32:be");
    EXPECT_EQ(f.offset, 3u);
    EXPECT_TRUE(f.big_endian);
    f = parse_key_field("9:f64:le:desc");
    EXPECT_EQ(f.type, KeyType::f64);
    EXPECT_FALSE(f.big_endian);
    EXPECT_TRUE(f.descending);
    f = parse_key_field("17:i16:desc");
    EXPECT_TRUE(f.descending);
    f = parse_key_field("5:bytes:12:desc");
    EXPECT_TRUE(f.is_bytes);
    EXPECT_EQ(f.length, 12u);
    EXPECT_TRUE(f.descending);
}

TEST(KeySpec, RefusesMalformedSpecsWithTheSpecInTheMessage) {
    for (const char* spec : {"", "0", "x:u32", "-1:u32", "0:u128", "0:bytes", "0:bytes:0", "0:bytes:x", "0:u32:desc:be",
                             "0:u32:be:le", "0:bytes:4:be", "0:u32:foo", "0:u32:desc:desc", "0::u32", "0:u32:"}) {
        try {
            parse_key_field(spec);
            ADD_FAILURE() << "accepted '" << spec << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("'") + spec + "'"), std::string::npos) << e.what();
        }
    }
}

TEST(KeySpec, ValidatesAgainstTheRecord) {
    KeySpec spec{12, {parse_key_field("8:u32")}};
    EXPECT_NO_THROW(spec.validate());
    spec.fields = {parse_key_field("10:u32")};
    EXPECT_THROW(spec.validate(), std::invalid_argument);  // beyond the record
    spec.fields = {parse_key_field("12:u8")};
    EXPECT_THROW(spec.validate(), std::invalid_argument);
    spec = KeySpec{64, {parse_key_field("0:bytes:32")}};
    EXPECT_NO_THROW(spec.validate());
    spec.fields.push_back(parse_key_field("40:u8"));
    EXPECT_THROW(spec.validate(), std::invalid_argument);  // 33 bytes of key
    EXPECT_THROW((KeySpec{0, {}}).validate(), std::invalid_argument);
    EXPECT_THROW((KeySpec{8, {}}).validate(), std::invalid_argument);
    EXPECT_EQ(gensort_key().record_size, 100u);
    EXPECT_EQ(whole_record_key(KeyType::i16, true).normalized_bytes(), 2u);
}

namespace {

void expect_memcmp_order_matches(const KeySpec& spec, std::uint64_t seed) {
    spec.validate();
    std::mt19937_64 rng(seed);
    const std::size_t n = 400, r = spec.record_size, width = spec.normalized_bytes();
    std::vector<std::byte> records(n * r);
    // Few distinct byte values, so that ties and equal fields occur; floats get specials too.
    const auto specials = special_values<double>();
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < r; ++j) records[i * r + j] = std::byte(rng() % 4 == 0 ? rng() : rng() % 3);
        for (const auto& f : spec.fields) {
            if (f.type == KeyType::f64 && !f.is_bytes && rng() % 3 == 0) {
                double v = specials[rng() % specials.size()];
                std::byte bytes[8];
                std::memcpy(bytes, &v, 8);
                for (int b = 0; b < 8; ++b) records[i * r + f.offset + (f.big_endian ? 7 - b : b)] = bytes[b];
            }
        }
    }
    std::vector<std::byte> keys(n * width);
    for (std::size_t i = 0; i < n; ++i) normalize_record_key(spec, &records[i * r], &keys[i * width]);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            int got = std::memcmp(&keys[i * width], &keys[j * width], width);
            got = got < 0 ? -1 : got > 0 ? 1 : 0;
            ASSERT_EQ(got, reference_compare(&records[i * r], &records[j * r], spec)) << "records " << i << ", " << j;
        }
}

}  // namespace

TEST(KeySpec, NormalizedKeysOrderLikeTheFields) {
    // A 13-byte record with a big-endian u32 at offset 3, then a descending i16.
    expect_memcmp_order_matches({13, {parse_key_field("3:u32:be"), parse_key_field("0:i16:desc")}}, 1);
    // f64 at an odd offset, both byte orders, and a descending one.
    expect_memcmp_order_matches({17, {parse_key_field("1:f64")}}, 2);
    expect_memcmp_order_matches({17, {parse_key_field("9:f64:be:desc"), parse_key_field("0:u8")}}, 3);
    // Byte strings, one descending, and signed fields of every width.
    expect_memcmp_order_matches({24, {parse_key_field("2:bytes:5"), parse_key_field("8:bytes:3:desc"),
                                      parse_key_field("11:i8"), parse_key_field("12:i64:be")}},
                                4);
    expect_memcmp_order_matches({20, {parse_key_field("0:f32:desc"), parse_key_field("4:i32:be"),
                                      parse_key_field("8:u16:be"), parse_key_field("10:u64:desc")}},
                                5);
    for (KeyType type : kAllKeyTypes)
        for (bool descending : {false, true})
            expect_memcmp_order_matches(whole_record_key(type, descending), 6);
}
