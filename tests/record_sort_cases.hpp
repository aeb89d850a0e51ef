// Record sorts shared by the CPU and GPU backend tests: the key specs of the cases, and a
// runner that sorts generated records through sort_file and compares the output byte for byte
// with the stable reference (reference_records.hpp).
#pragma once

#include "reference_records.hpp"
#include "scratch_dir.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace gpusort::testing {

struct RecordCase {
    std::string name;
    KeySpec spec;
    std::size_t records;  // how many to sort: several runs under the smallest host budget
};

inline KeySpec spec_of(std::size_t record_size, const std::vector<std::string>& keys) {
    KeySpec spec;
    spec.record_size = record_size;
    for (const auto& k : keys) spec.fields.push_back(parse_key_field(k));
    return spec;
}

inline std::vector<RecordCase> record_cases() {
    return {
        {"two keys, one descending", spec_of(16, {"0:u32", "4:i64:desc"}), 80000},
        {"byte key", spec_of(24, {"2:bytes:5"}), 60000},
        {"13-byte record, big-endian u32 at 3", spec_of(13, {"3:u32:be"}), 80000},
        {"f64 at an odd offset", spec_of(17, {"1:f64"}), 70000},
        {"f32 big-endian descending then i8", spec_of(9, {"4:f32:be:desc", "8:i8"}), 90000},
        {"gensort", gensort_key(), 20000},
        {"1-byte records", spec_of(1, {"0:u8"}), 150000},
        {"4 KiB records, u16 near the end", spec_of(4096, {"4090:u16:be"}), 700},
        {"3 key words", spec_of(40, {"0:bytes:20:desc"}), 30000},
        {"4 key words", spec_of(40, {"4:bytes:30", "36:u16"}), 30000},
        {"whole-record i16", whole_record_key(KeyType::i16, true), 130000},
    };
}

inline void write_bytes(const std::string& path, const std::vector<std::byte>& data) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()),
                                                static_cast<std::streamsize>(data.size()));
}

inline std::vector<std::byte> read_bytes(const std::string& path) {
    const std::string text = read_text(path);
    std::vector<std::byte> data(text.size());
    if (!data.empty()) std::memcpy(data.data(), text.data(), text.size());  // an empty vector's data() may be null
    return data;
}

// Sorts `data` with `options` (input, output, records and unique are set here) and expects the
// reference's bytes, the input intact and no files left behind. Returns the report.
inline SortReport sort_records_and_compare(const std::vector<std::byte>& data, const KeySpec& spec, bool unique,
                                           PartSortOptions options, const std::string& what) {
    ScratchDir dir, tmp;
    write_bytes(dir / "in", data);
    options.input = dir / "in";
    options.output = dir / "out";
    options.records = spec;
    options.unique = unique;
    options.tmp_dir = tmp.path();
    SortReport report = sort_part(options);
    const std::vector<std::byte> expected = reference_record_sort(data, spec, unique);
    const std::vector<std::byte> actual = read_bytes(dir / "out");
    EXPECT_EQ(actual.size(), expected.size()) << what;
    EXPECT_TRUE(actual == expected) << "output differs from the stable reference: " << what;
    EXPECT_EQ(report.output_records, expected.size() / spec.record_size) << what;
    EXPECT_TRUE(read_bytes(dir / "in") == data) << "input changed: " << what;
    EXPECT_TRUE(tmp.entries().empty()) << "temp files left: " << what;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "out"})) << what;
    return report;
}

}  // namespace gpusort::testing
