// parse_size: suffixes are powers of 1024; junk is refused.
#include "src/cli/size_parse.hpp"

#include <gtest/gtest.h>

using gpusort::parse_size;
using gpusort::parse_whole_size;

TEST(ParseSize, NumbersAndSuffixes) {
    EXPECT_EQ(parse_size("0"), 0u);
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("1K"), 1024u);
    EXPECT_EQ(parse_size("512M"), 512ull << 20);
    EXPECT_EQ(parse_size("8g"), 8ull << 30);
    EXPECT_EQ(parse_size("2T"), 2ull << 40);
    EXPECT_EQ(parse_size("1.5G"), 3ull << 29);
    EXPECT_EQ(parse_size("64MiB"), 64ull << 20);
    EXPECT_EQ(parse_size("64MB"), 64ull << 20);
    EXPECT_EQ(parse_size("10B"), 10u);
}

TEST(ParseSize, RefusesJunk) {
    for (const char* text : {"", "M", "abc", "12X", "-5", "5 M", "1e9", "99999999999T"})
        EXPECT_FALSE(parse_size(text).has_value()) << text;
}

TEST(ParseSize, FractionsAreExact) {
    // floor(number * unit) exactly, also where binary floating point would round up or down.
    EXPECT_EQ(parse_size("0.0009765625K"), 1u);
    EXPECT_EQ(parse_size("1.0009765625K"), 1025u);
    EXPECT_EQ(parse_size("0.999999999999999999999999K"), 1023u);
    EXPECT_EQ(parse_size("0.00000095367431640625M"), 1u);
    EXPECT_EQ(parse_size(".5k"), 512u);
    EXPECT_EQ(parse_size("0.5B"), 0u);
    EXPECT_EQ(parse_size("18000000000000000000"), 18000000000000000000ull);
    EXPECT_FALSE(parse_size("18000000000000000001").has_value());
    EXPECT_EQ(parse_size("16370000T"), 16370000ull << 40);
    EXPECT_FALSE(parse_size("16371000T").has_value());
}

TEST(ParseWholeSize, TakesWhatComesToWholeBytesOnly) {
    EXPECT_EQ(parse_whole_size("100"), 100u);
    EXPECT_EQ(parse_whole_size("2M"), 2ull << 20);
    EXPECT_EQ(parse_whole_size("1.5K"), 1536u);
    EXPECT_EQ(parse_whole_size("0.0009765625K"), 1u);  // 1/1024 of a KiB
    EXPECT_EQ(parse_whole_size("2.50B"), std::nullopt);
    EXPECT_EQ(parse_whole_size("2.0"), 2u);
    for (const char* text : {"1.3", "0.5B", "0.999K", "1.00097656K", "0.4K", "abc", "", "-1"})
        EXPECT_FALSE(parse_whole_size(text).has_value()) << text;
}
