// A program of a user of the installed library: sorts a file of random signed 32-bit keys and a
// file of 24-byte records by two key fields through gpusort::sort_file(), and an array in memory
// (gpusort::argsort, gpusort::sort_keys), and checks the outputs
// against std::stable_sort, and that a missing input fails as gpusort::IoError. Exit status 0 when
// all holds; the failure is printed otherwise.
#include <gpusort/gpusort.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

template <class T>
void write_file(const std::string& path, const std::vector<T>& values) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(T)));
}

template <class T>
std::vector<T> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
}

using Record = std::array<unsigned char, 24>;

// The record's key: a little-endian u32 at offset 4, then, descending, a big-endian u16 at offset 20.
std::pair<std::uint32_t, int> record_key(const Record& r) {
    std::uint32_t a;
    std::memcpy(&a, r.data() + 4, 4);
    const int b = (r[20] << 8) | r[21];
    return {a, -b};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: consumer DIR\n";
        return 2;
    }
    const std::string dir = argv[1];
    std::mt19937_64 random(42);

    std::vector<std::int32_t> keys(2000000);
    for (auto& k : keys) k = std::int32_t(random());
    write_file(dir + "/keys.bin", keys);
    gpusort::SortOptions options;
    options.input = dir + "/keys.bin";
    options.output = dir + "/keys.sorted";
    options.order = gpusort::KeyOrder{gpusort::KeyType::i32, false};
    options.backend = gpusort::Backend::cpu;
    options.memory_bytes = std::uint64_t{4} << 20;  // several runs and a merge
    const gpusort::SortReport report = gpusort::sort_file(options);
    std::stable_sort(keys.begin(), keys.end());
    if (read_file<std::int32_t>(options.output) != keys) {
        std::cerr << "consumer: keys.sorted is not the sorted input\n";
        return 1;
    }

    std::vector<Record> records(50000);
    for (auto& r : records)
        for (auto& byte : r) byte = static_cast<unsigned char>(random() % 7);  // many equal keys
    write_file(dir + "/records.bin", records);
    gpusort::SortOptions by_fields = options;
    by_fields.input = dir + "/records.bin";
    by_fields.output = dir + "/records.sorted";
    by_fields.records = gpusort::KeySpec{24, {gpusort::parse_key_field("4:u32"), gpusort::parse_key_field("20:u16:be:desc")}};
    gpusort::sort_file(by_fields);
    std::stable_sort(records.begin(), records.end(),
                     [](const Record& x, const Record& y) { return record_key(x) < record_key(y); });
    if (read_file<Record>(by_fields.output) != records) {
        std::cerr << "consumer: records.sorted is not the stably sorted input\n";
        return 1;
    }
    // In memory: the argsort of the keys orders them as the sorted file does.
    std::vector<std::int32_t> in_memory(2000);
    for (auto& k : in_memory) k = std::int32_t(random() % 100);
    const std::vector<std::uint64_t> order = gpusort::argsort<std::int32_t>(in_memory);
    gpusort::sort_keys<std::int32_t>(in_memory);
    for (std::size_t i = 1; i < order.size(); ++i)
        if (in_memory[i - 1] > in_memory[i] || order[i] >= order.size()) {
            std::cerr << "consumer: the in-memory sort is not in order\n";
            return 1;
        }
    // A failure is a public error type: an input that does not exist is an IoError.
    gpusort::SortOptions missing = options;
    missing.input = dir + "/no-such-file";
    try {
        gpusort::sort_file(missing);
        std::cerr << "consumer: sorting a missing file did not fail\n";
        return 1;
    } catch (const gpusort::IoError&) {
    }
    std::printf("gpusort %s: %llu keys in %llu runs, and %zu records, sorted\n", gpusort::version(),
                static_cast<unsigned long long>(report.records), static_cast<unsigned long long>(report.runs),
                records.size());
    return 0;
}
