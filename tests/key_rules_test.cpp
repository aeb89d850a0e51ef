// The key rules (src/keys/key_rules.hpp), the one code with which the CPU sorters, the GPU
// kernels and the order checker normalise keys, checked on the host against the reference of
// reference_keys.hpp, written from the definition: every key type with its special values (NaN of
// both signs and payloads, +-0, +-inf, denormals, extremes), both directions, both byte orders,
// fields at every offset within a word, byte strings of every length up to 32, keys padded to
// more words than they need, and narrow fields inside wider words. (The GPU tests check the
// device's key words against the same reference.)
#include "src/keys/key_rules.hpp"

#include "reference_keys.hpp"
#include "reference_order.hpp"
#include "reference_records.hpp"
#include "src/keys/record_layout.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

template <class Traits>
class KeyRulesTest : public ::testing::Test {};
TYPED_TEST_SUITE(KeyRulesTest, AllKeyTypes);

template <class T>
using Bits = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                   std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

// Special values and random bit patterns of T, as bits.
template <class T>
std::vector<Bits<T>> test_bits() {
    std::vector<Bits<T>> bits;
    for (const T value : special_values<T>()) {
        Bits<T> b;
        std::memcpy(&b, &value, sizeof b);
        bits.push_back(b);
    }
    std::mt19937_64 rng(sizeof(T));
    for (int i = 0; i < 2000; ++i) bits.push_back(static_cast<Bits<T>>(rng()));
    return bits;
}

}  // namespace

// Whole keys (the plain mode): the rule's value is the reference's, and mapping back restores it.
TYPED_TEST(KeyRulesTest, WholeKeysAreNormalisedAsDefined) {
    using T = typename TypeParam::type;
    using U = Bits<T>;
    const KeyKind kind = key_kind(TypeParam::key);
    for (const bool descending : {false, true}) {
        const FieldMasks<U> masks = field_masks<U>(kind, descending);
        for (const U raw : test_bits<T>()) {
            const U expected = static_cast<U>(reference_normalized_number(raw, sizeof(U), TypeParam::key, descending));
            ASSERT_EQ(to_normalized(raw, kind, descending), expected) << std::hex << +raw << " desc " << descending;
            ASSERT_EQ(normalize_field(raw, masks), expected) << std::hex << +raw;
            ASSERT_EQ(from_normalized(expected, kind, descending), raw) << std::hex << +raw;
            ASSERT_EQ(restore_field(expected, masks), raw) << std::hex << +raw;
        }
    }
}

// Fields narrower than the word they are computed in (record pieces, in 64-bit words) give the
// same bits as at their own width, and every 8- and 16-bit value maps back.
TEST(KeyRules, NarrowFieldsInWideWordsMatchTheirOwnWidth) {
    for (const KeyKind kind : {KeyKind::unsigned_int, KeyKind::signed_int, KeyKind::floating}) {
        for (const bool descending : {false, true}) {
            const FieldMasks<std::uint64_t> m8 = field_masks<std::uint64_t>(kind, descending, 8);
            const FieldMasks<std::uint64_t> m16 = field_masks<std::uint64_t>(kind, descending, 16);
            const FieldMasks<std::uint64_t> m32 = field_masks<std::uint64_t>(kind, descending, 32);
            for (std::uint32_t v = 0; v < (1u << 16); ++v) {
                if (v < 256) {
                    const auto narrow = to_normalized<std::uint8_t>(static_cast<std::uint8_t>(v), kind, descending);
                    ASSERT_EQ(normalize_field<std::uint64_t>(v, m8, 8), narrow);
                    ASSERT_EQ(restore_field<std::uint64_t>(narrow, m8, 8), v);
                }
                const auto narrow = to_normalized<std::uint16_t>(static_cast<std::uint16_t>(v), kind, descending);
                ASSERT_EQ(normalize_field<std::uint64_t>(v, m16, 16), narrow);
                ASSERT_EQ(restore_field<std::uint64_t>(narrow, m16, 16), v);
                ASSERT_EQ(from_normalized<std::uint16_t>(narrow, kind, descending), v);
            }
            std::mt19937_64 rng(3);
            for (int i = 0; i < 10000; ++i) {
                const auto v = static_cast<std::uint32_t>(rng());
                const auto narrow = to_normalized<std::uint32_t>(v, kind, descending);
                ASSERT_EQ(normalize_field<std::uint64_t>(v, m32, 32), narrow);
                ASSERT_EQ(restore_field<std::uint64_t>(narrow, m32, 32), v);
            }
        }
    }
}

// Record keys: the words of record_key<W> (for every W that holds the key) and the bytes of
// normalize_record_key are the reference's, and the words order records as reference_compare.
TEST(KeyRules, RecordKeysAreNormalisedAsDefined) {
    std::vector<KeySpec> specs;
    // Every type at every offset within a word, both byte orders, both directions.
    for (const KeyType type : kAllKeyTypes)
        for (std::size_t offset = 0; offset < 8; ++offset)
            for (const bool big_endian : {false, true})
                for (const bool descending : {false, true}) {
                    KeyField field = parse_key_field(std::to_string(offset) + ":" + std::string(key_type_name(type)));
                    field.big_endian = big_endian;
                    field.descending = descending;
                    specs.push_back({offset + field.length + 3, {field}});
                }
    // Byte strings of every length, at odd offsets, both directions.
    for (std::size_t length = 1; length <= 32; ++length)
        for (const bool descending : {false, true})
            specs.push_back({length + 5, {parse_key_field("3:bytes:" + std::to_string(length) + (descending ? ":desc" : ""))}});
    // Several fields, crossing word boundaries, up to the full 32 bytes.
    const std::vector<std::vector<const char*>> multi = {
        {"3:u32:be", "0:i16:desc"},
        {"1:bytes:9", "12:f32:be", "20:i8:desc"},
        {"3:bytes:13:desc", "20:f64:be:desc", "30:i32"},
        {"0:f32:desc", "4:i32:be", "8:u16:be", "10:u64:desc", "18:bytes:7", "30:i8"},
        {"1:bytes:3", "5:f64", "13:bytes:5:desc", "20:f64:be", "29:u16:desc", "31:bytes:1", "33:i8", "40:i32:be"},
        {"0:bytes:10"},
    };
    for (const auto& fields : multi) {
        KeySpec spec;
        for (const char* text : fields) spec.fields.push_back(parse_key_field(text));
        spec.record_size = 48;
        specs.push_back(spec);
    }

    for (const KeySpec& spec : specs) {
        SCOPED_TRACE(describe(spec));
        const FixedKeySpec fixed = fixed_key_spec(spec);
        ASSERT_EQ(fixed.key_bytes, spec.normalized_bytes());
        ASSERT_EQ(fixed.key_words(), key_words(spec));
        const std::size_t n = 300;
        const std::vector<std::byte> records = make_records(n, spec, spec.record_size * 7 + spec.fields.size());
        auto record = [&](std::size_t i) { return records.data() + i * spec.record_size; };
        auto bytes = [&](std::size_t i) { return reinterpret_cast<const unsigned char*>(record(i)); };
        std::vector<std::byte> normalized(spec.normalized_bytes());
        for (std::size_t i = 0; i < n; ++i) {
            const std::vector<std::uint8_t> expected = reference_normalized_key(record(i), spec);
            normalize_record_key(spec, record(i), normalized.data());
            ASSERT_EQ(std::memcmp(normalized.data(), expected.data(), expected.size()), 0) << "record " << i;
            auto expect_words = [&](const auto& key) {
                const std::size_t w = std::size(key.word);
                const std::vector<std::uint64_t> want = reference_key_words(record(i), spec, w);
                for (std::size_t j = 0; j < w; ++j) ASSERT_EQ(key.word[j], want[j]) << "record " << i << " word " << j << " of " << w;
            };
            switch (fixed.key_words()) {
            case 1: expect_words(record_key<1>(bytes(i), fixed)); [[fallthrough]];
            case 2: expect_words(record_key<2>(bytes(i), fixed)); [[fallthrough]];
            case 3: expect_words(record_key<3>(bytes(i), fixed)); [[fallthrough]];
            default: expect_words(record_key<4>(bytes(i), fixed));
            }
        }
        for (std::size_t i = 1; i < n; ++i) {
            const RecordKey<4> a = record_key<4>(bytes(i - 1), fixed), b = record_key<4>(bytes(i), fixed);
            const int by_words = a < b ? -1 : b < a ? 1 : 0;
            ASSERT_EQ(by_words, reference_compare(record(i - 1), record(i), spec)) << "records " << i - 1 << ", " << i;
        }
    }
}

// The fixed-size form holds the fields as pieces of at most 8 bytes, most significant first.
TEST(KeyRules, FixedKeySpecCutsFieldsIntoPieces) {
    const FixedKeySpec gensort = fixed_key_spec(gensort_key());
    EXPECT_EQ(gensort.record_size, 100u);
    EXPECT_EQ(gensort.key_bytes, 10u);
    EXPECT_EQ(gensort.key_words(), 2u);
    ASSERT_EQ(gensort.piece_count, 2u);
    EXPECT_EQ(gensort.pieces[0].offset, 0u);
    EXPECT_EQ(gensort.pieces[0].bytes, 8u);
    EXPECT_EQ(gensort.pieces[1].offset, 8u);
    EXPECT_EQ(gensort.pieces[1].bytes, 2u);
    EXPECT_TRUE(gensort.pieces[0].big_endian && gensort.pieces[1].big_endian);  // memcmp order

    const FixedKeySpec mixed = fixed_key_spec({64, {parse_key_field("1:bytes:17:desc"), parse_key_field("20:i16:be"),
                                                    parse_key_field("30:f64")}});
    EXPECT_EQ(mixed.key_bytes, 27u);
    EXPECT_EQ(mixed.key_words(), 4u);
    ASSERT_EQ(mixed.piece_count, 5u);
    const std::uint32_t offsets[] = {1, 9, 17, 20, 30}, sizes[] = {8, 8, 1, 2, 8};
    for (std::size_t p = 0; p < 5; ++p) {
        EXPECT_EQ(mixed.pieces[p].offset, offsets[p]) << p;
        EXPECT_EQ(mixed.pieces[p].bytes, sizes[p]) << p;
    }
    EXPECT_EQ(mixed.pieces[2].masks.flip, 0xffu);  // the last byte of a descending string
    EXPECT_EQ(mixed.pieces[3].masks.flip, 0x8000u);
    EXPECT_TRUE(mixed.pieces[3].big_endian);
    EXPECT_EQ(mixed.pieces[4].masks.negative, ~std::uint64_t{0} >> 1);
    EXPECT_FALSE(mixed.pieces[4].big_endian);
}

// Specs that the GPU could not use are refused by the one validator, before any device sees them.
TEST(KeyRules, FixedKeySpecRefusesInvalidSpecs) {
    KeyField three_byte_number = parse_key_field("0:u32");
    three_byte_number.length = 3;
    const KeySpec invalid[] = {
        {0, {parse_key_field("0:u8")}},                                          // no record
        {(std::size_t{1} << 20) + 1, {parse_key_field("0:u8")}},                 // record too large
        {100, {}},                                                               // no field
        {100, {parse_key_field("0:bytes:33")}},                                  // 5 words
        {100, {parse_key_field("0:bytes:30"), parse_key_field("40:i32")}},       // 34 bytes
        {100, {three_byte_number}},                                              // odd number width
        {100, {parse_key_field("96:f64")}},                                      // outside
        {100, {parse_key_field("95:bytes:6")}},                                  // outside
        {100, {parse_key_field("18446744073709551612:u64")}},                    // offset overflows
    };
    for (const KeySpec& spec : invalid) {
        EXPECT_THROW(fixed_key_spec(spec), std::invalid_argument) << describe(spec);
        EXPECT_THROW(spec.validate(), std::invalid_argument) << describe(spec);
    }
    EXPECT_NO_THROW(fixed_key_spec({std::size_t{1} << 20, {parse_key_field("1048544:bytes:32")}}));
    EXPECT_NO_THROW(fixed_key_spec(whole_record_key(KeyType::f32, true)));
}
