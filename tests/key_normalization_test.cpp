// Normalised keys: unsigned order of the normalised keys == the reference order of the keys,
// ascending and descending, and mapping back restores every bit.
#include "generated_keys.hpp"
#include "reference_order.hpp"
#include "src/keys/key_normalization.hpp"

#include <gtest/gtest.h>

using namespace gpusort;
using namespace gpusort::testing;

template <class Traits>
class KeyNormalizationTest : public ::testing::Test {};

TYPED_TEST_SUITE(KeyNormalizationTest, AllKeyTypes);

template <class T>
auto unsigned_of(T value) {
    using U = std::make_unsigned_t<std::conditional_t<std::is_floating_point_v<T>,
                                                      std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>, T>>;
    U bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

TYPED_TEST(KeyNormalizationTest, UnsignedOrderMatchesReferenceOrder) {
    using T = typename TypeParam::type;
    auto keys = special_values<T>();
    auto random = make_keys<T>(300, mixed_key_data<T>(), 7);
    keys.insert(keys.end(), random.begin(), random.end());
    const KeyKind kind = key_kind(TypeParam::key);
    for (bool descending : {false, true}) {
        for (T a : keys) {
            for (T b : keys) {
                const auto na = to_normalized(unsigned_of(a), kind, descending);
                const auto nb = to_normalized(unsigned_of(b), kind, descending);
                const bool expected = descending ? reference_less(b, a) : reference_less(a, b);
                ASSERT_EQ(na < nb, expected) << "a=" << +a << " b=" << +b << " descending=" << descending;
            }
        }
    }
}

TYPED_TEST(KeyNormalizationTest, MappingBackRestoresEveryBit) {
    using T = typename TypeParam::type;
    auto keys = make_keys<T>(10000, mixed_key_data<T>(), 11);
    auto specials = special_values<T>();
    keys.insert(keys.end(), specials.begin(), specials.end());
    using U = decltype(unsigned_of(T{}));
    std::vector<U> bits(keys.size());
    std::memcpy(bits.data(), keys.data(), keys.size() * sizeof(T));
    const std::vector<U> original = bits;
    for (bool descending : {false, true}) {
        KeyOrder order{TypeParam::key, descending};
        normalize_keys(std::span<U>(bits), order);
        if (!normalization_is_identity(order)) {
            EXPECT_NE(bits, original);
        }
        denormalize_keys(std::span<U>(bits), order);
        EXPECT_EQ(bits, original);
    }
}

TEST(KeyType, NamesRoundTrip) {
    for (KeyType type : kAllKeyTypes) {
        auto parsed = parse_key_type(key_type_name(type));
        ASSERT_TRUE(parsed.has_value());
        EXPECT_EQ(*parsed, type);
    }
    EXPECT_FALSE(parse_key_type("u128").has_value());
    EXPECT_FALSE(parse_key_type("").has_value());
    EXPECT_EQ(key_width(KeyType::i16), 2u);
    EXPECT_EQ(key_width(KeyType::f64), 8u);
}
