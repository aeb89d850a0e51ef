// MultisetChecksum: a byte-wise 64-bit hash per record, summed two ways.
#include "tools/record_hash.hpp"

#include <cstring>

namespace gpusort::tools {

namespace {
std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}
}  // namespace

void MultisetChecksum::add(std::span<const std::byte> record) {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ record.size();
    std::size_t i = 0;
    for (; i + 8 <= record.size(); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, record.data() + i, 8);
        h = mix(h ^ word);
    }
    if (i < record.size()) {
        std::uint64_t word = 0;
        std::memcpy(&word, record.data() + i, record.size() - i);
        h = mix(h ^ word ^ 0xff);
    }
    ++count;
    sum_a += h;
    sum_b += mix(h ^ 0x5851f42d4c957f2dULL);
}

}  // namespace gpusort::tools
