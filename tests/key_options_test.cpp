// The key options shared by gpusort-file and gpusort-check (src/cli/key_options.hpp): what each
// combination gives (the record size inferred from the --key fields or the --type, --format
// gensort, --descending) and the one-line messages for malformed ones.
#include "src/cli/key_options.hpp"

#include <boost/program_options.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace gpusort;
namespace po = boost::program_options;

namespace {

KeyOptions parse(const std::vector<std::string>& args) {
    po::options_description options;
    add_key_options(options);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(options).run(), vm);
    po::notify(vm);
    return parse_key_options(vm);
}

// The message of the std::invalid_argument that parse(args) throws, or "" when it throws none.
std::string refusal(const std::vector<std::string>& args) {
    try {
        parse(args);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(KeyOptions, WholeRecordKeysByDefault) {
    const KeyOptions plain = parse({});
    EXPECT_EQ(plain.order.type, KeyType::u64);
    EXPECT_FALSE(plain.order.descending);
    EXPECT_FALSE(plain.records.has_value());
    EXPECT_EQ(plain.spec().record_size, 8u);

    const KeyOptions i16 = parse({"--type", "i16", "--descending"});
    EXPECT_EQ(i16.order.type, KeyType::i16);
    EXPECT_TRUE(i16.order.descending);
    EXPECT_FALSE(i16.records.has_value());
    const KeySpec spec = i16.spec();
    EXPECT_EQ(spec.record_size, 2u);
    ASSERT_EQ(spec.fields.size(), 1u);
    EXPECT_TRUE(spec.fields[0].descending);
    // A --record-size equal to the type's width changes nothing.
    EXPECT_FALSE(parse({"--type", "u32", "--record-size", "4"}).records.has_value());
}

TEST(KeyOptions, TheRecordSizeIsInferredFromTheKeyFields) {
    const KeyOptions two_fields = parse({"--key", "3:u32:be", "--key", "0:i16:desc"});
    ASSERT_TRUE(two_fields.records.has_value());
    EXPECT_EQ(two_fields.records->record_size, 7u);
    ASSERT_EQ(two_fields.records->fields.size(), 2u);
    EXPECT_EQ(two_fields.records->fields[0].offset, 3u);
    EXPECT_TRUE(two_fields.records->fields[0].big_endian);
    EXPECT_TRUE(two_fields.records->fields[1].descending);
    EXPECT_EQ(parse({"--key", "4:bytes:2"}).records->record_size, 6u);
    // Given, it is taken as it is; --descending reverses every field.
    const KeyOptions given = parse({"--key", "3:u32:be", "--key", "0:i16:desc", "--record-size", "13", "--descending"});
    EXPECT_EQ(given.records->record_size, 13u);
    EXPECT_TRUE(given.records->fields[0].descending);
    EXPECT_FALSE(given.records->fields[1].descending);
    EXPECT_EQ(given.spec().record_size, 13u);
}

TEST(KeyOptions, TypesInLargerRecordsAndGensort) {
    const KeyOptions u16 = parse({"--type", "u16", "--record-size", "100"});
    ASSERT_TRUE(u16.records.has_value());
    EXPECT_EQ(u16.records->record_size, 100u);
    EXPECT_EQ(u16.records->fields[0].type, KeyType::u16);
    EXPECT_EQ(u16.records->fields[0].offset, 0u);

    for (const auto& args : {std::vector<std::string>{"--format", "gensort"},
                             std::vector<std::string>{"--format", "gensort", "--record-size", "100"}}) {
        const KeyOptions gensort = parse(args);
        ASSERT_TRUE(gensort.records.has_value());
        EXPECT_EQ(gensort.records->record_size, 100u);
        EXPECT_TRUE(gensort.records->fields[0].is_bytes);
        EXPECT_EQ(gensort.records->fields[0].length, 10u);
    }
    EXPECT_TRUE(parse({"--format", "gensort", "--descending"}).records->fields[0].descending);
}

// --record-size takes the suffixes of the other sizes (powers of 1024), and fractions that come to
// whole bytes.
TEST(KeyOptions, TheRecordSizeTakesTheSuffixesOfTheOtherSizes) {
    const std::vector<std::pair<std::vector<std::string>, std::size_t>> cases = {
        {{"--record-size", "4K", "--key", "0:u32"}, 4096},
        {{"--record-size", "1M", "--key", "0:u8"}, 1048576},
        {{"--record-size", "1.5k", "--key", "0:u8"}, 1536},
        {{"--record-size", "64B", "--type", "u64"}, 64},
        {{"--record-size", "100", "--format", "gensort"}, 100},
    };
    for (const auto& [args, bytes] : cases) {
        const KeyOptions key = parse(args);
        ASSERT_TRUE(key.records.has_value()) << args[1];
        EXPECT_EQ(key.records->record_size, bytes) << args[1];
    }
}

TEST(KeyOptions, MalformedOptionsAreRefusedInOneLineNamingTheOption) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--type", "u128"}, "--type: unknown type 'u128'"},
        {{"--record-size", "13", "--key", "12:u32"}, "beyond the 13-byte record"},
        {{"--key", "0:u24"}, "unknown type 'u24'"},
        {{"--key", "0:bytes:0"}, "'0:bytes:0'"},
        {{"--key", "0:bytes:30", "--key", "30:u32"}, "at most 32"},
        {{"--record-size", "0", "--key", "0:u8"}, "--record-size: must be at least 1"},
        {{"--record-size", "-1"}, "--record-size: '-1' is not a whole number"},
        {{"--record-size", "1048577"}, "--record-size: at most 1048576"},
        {{"--type", "u32", "--key", "0:u32"}, "--key replaces --type"},
        {{"--format", "gensort", "--key", "0:u32"}, "--format gensort excludes --type and --key"},
        {{"--format", "gensort", "--type", "u8"}, "--format gensort excludes --type and --key"},
        {{"--format", "gensort", "--record-size", "99"}, "records are 100 bytes, not 99"},
        {{"--format", "csv"}, "--format: unknown format 'csv'"},
        {{"--record-size", "2", "--type", "u32"}, "--record-size: records of 2 bytes cannot hold the key, a u32 (--type u32)"},
        // --type left to its default: the record size is blamed with the default named.
        {{"--record-size", "4"},
         "--record-size: records of 4 bytes cannot hold the default key, a u64 (--type): give --type or --key"},
        {{"--record-size", "2M", "--key", "0:u8"}, "--record-size: at most 1048576 bytes (1M) are supported"},
        {{"--record-size", "1.3", "--key", "0:u8"}, "--record-size: '1.3' is not a whole number of bytes (such as 100, 4K or 1M): records are 1 to 1048576 bytes"},
        {{"--record-size", "0.4K", "--key", "0:u8"}, "--record-size: '0.4K' is not a whole number of bytes"},
        {{"--record-size", "8X", "--key", "0:u8"}, "--record-size: '8X' is not a whole number of bytes"},
        {{"--key", "1048576:u8"}, "--key '1048576:u8': the field ends beyond"},
    };
    for (const auto& [args, message] : cases) {
        const std::string got = refusal(args);
        EXPECT_NE(got.find(message), std::string::npos) << args[0] << " " << args[1] << ": " << got;
        EXPECT_EQ(got.find('\n'), std::string::npos) << got;
    }
}
