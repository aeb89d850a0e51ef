// Gensort records and their text lines, byte by byte (the layouts are in the header).
#include "tools/gen/gensort_records.hpp"

#include <cstring>

namespace gpusort::gen {

void make_gensort_record(const KeyGenerator& keys, std::uint64_t index, std::byte* out) {
    auto* record = reinterpret_cast<unsigned char*>(out);
    const std::uint64_t key = keys.key(index);
    for (int b = 0; b < 8; ++b) record[b] = static_cast<unsigned char>(key >> (56 - 8 * b));
    const bool repeats = keys.distribution == Distribution::equal || keys.distribution == Distribution::few_unique;
    const std::uint64_t tail = repeats ? 0 : keys.random(index, 9);
    record[8] = static_cast<unsigned char>(tail);
    record[9] = static_cast<unsigned char>(tail >> 8);
    std::memcpy(record + 10, &index, 8);
    for (std::size_t i = 18; i < kGensortRecordSize; ++i)
        record[i] = static_cast<unsigned char>('A' + (index + i) % 26);
}

void make_gensort_text_line(const KeyGenerator& keys, std::uint64_t index, std::byte* out) {
    auto* line = reinterpret_cast<unsigned char*>(out);
    unsigned char record[kGensortRecordSize];
    make_gensort_record(keys, index, reinterpret_cast<std::byte*>(record));
    constexpr char kHex[] = "0123456789abcdef";
    for (int b = 0; b < 10; ++b) {
        line[2 * b] = static_cast<unsigned char>(kHex[record[b] >> 4]);
        line[2 * b + 1] = static_cast<unsigned char>(kHex[record[b] & 15]);
    }
    line[20] = ' ';
    std::uint64_t rest = index;
    for (int d = 40; d >= 21; --d, rest /= 10) line[d] = static_cast<unsigned char>('0' + rest % 10);
    line[41] = ' ';
    for (std::size_t i = 42; i < kGensortRecordSize - 1; ++i) line[i] = record[i];  // letters 'A'..'Z'
    line[kGensortRecordSize - 1] = '\n';
}

}  // namespace gpusort::gen
