// MultisetChecksum: two independent 64-bit hashes per record, read 8 bytes at a time.
//
// Each hash ("lane") of a record longer than 8 bytes sums, over the record's 16-byte pairs of
// words, the 128-bit product of the two words (each XORed with a lane secret that changes from
// pair to pair) folded to 64 bits, and then avalanches the sum; a tail shorter than 16 bytes is
// read as the last 16 bytes of the record (overlapping the pair before). Records of at most 8
// bytes are one word, which each lane maps through a bijection, so distinct records of such a
// size never collide in either lane. The record length is mixed in first. The lanes differ in
// secrets and in their final mix, so a product that one lane loses (a word equal to its secret)
// the other keeps.
#include "src/verify/record_checksum.hpp"

#include "src/keys/unaligned_load.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

namespace gpusort {

namespace {

using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;

// Spans this large are hashed in parallel, in parts of about kPartBytes.
constexpr std::size_t kParallelBytes = std::size_t{4} << 20;
constexpr std::size_t kPartBytes = std::size_t{1} << 20;

constexpr u64 kLengthFactor = 0x9e3779b97f4a7c15ULL;

struct LaneSecrets {
    u64 seed;              // the start of the sum, mixed with the record length
    u64 first_lo, first_hi;  // XORed into the words of the first pair
    u64 step_lo, step_hi;    // added to those for each further pair (odd: no repeats)
};

constexpr LaneSecrets kLaneA{0xd1a6e55e9b9b1325ULL, 0x566bf9d7c55a45f9ULL, 0xcf0c26ef4243ed53ULL,
                             0x5d96cf7f265beda9ULL, 0xc1d77cffb7decc0dULL};
constexpr LaneSecrets kLaneB{0x5e6a0a2edd70e34dULL, 0x0463513755ac0ecdULL, 0xb37523a53b4a3ee3ULL,
                             0x4de45321ad915a37ULL, 0x9823beb1e6ba3ad7ULL};

// Bijective final mixes, a different one per lane (SplitMix64's and MurmurHash3's finalisers).
inline u64 finish_a(u64 x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

inline u64 finish_b(u64 x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

inline u64 multiply_fold(u64 x, u64 y) {
    const u128 product = static_cast<u128>(x) * y;
    return static_cast<u64>(product) ^ static_cast<u64>(product >> 64);
}

struct RecordHashes {
    u64 a, b;
};

inline RecordHashes hash_record(const std::byte* p, std::size_t n) {
    const u64 length = n * kLengthFactor;
    if (n <= 8) {
        const u64 word = n == 8 ? load_word(p) : load_short(p, n);
        return {finish_a(word + (kLaneA.seed ^ length)), finish_b(word + (kLaneB.seed ^ length))};
    }
    u64 sum_a = kLaneA.seed ^ length, sum_b = kLaneB.seed ^ length;
    u64 a_lo = kLaneA.first_lo, a_hi = kLaneA.first_hi, b_lo = kLaneB.first_lo, b_hi = kLaneB.first_hi;
    const auto add_pair = [&](u64 lo, u64 hi) {
        sum_a += multiply_fold(lo ^ a_lo, hi ^ a_hi);
        sum_b += multiply_fold(lo ^ b_lo, hi ^ b_hi);
        a_lo += kLaneA.step_lo;
        a_hi += kLaneA.step_hi;
        b_lo += kLaneB.step_lo;
        b_hi += kLaneB.step_hi;
    };
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) add_pair(load_word(p + i), load_word(p + i + 8));
    if (i < n) add_pair(load_word(p + (n >= 16 ? n - 16 : 0)), load_word(p + n - 8));
    return {finish_a(sum_a), finish_b(sum_b)};
}

// The checksum of `count` records of `record_size` bytes at p; FixedSize, when not 0, is
// record_size known at compile time.
template <std::size_t FixedSize>
MultisetChecksum checksum_of(const std::byte* p, std::size_t count, std::size_t record_size) {
    const std::size_t size = FixedSize ? FixedSize : record_size;
    MultisetChecksum sum;
    for (std::size_t i = 0; i < count; ++i, p += size) {
        const RecordHashes h = hash_record(p, size);
        sum.sum_a += h.a;
        sum.sum_b += h.b;
    }
    sum.count = count;
    return sum;
}

MultisetChecksum checksum_of_records(const std::byte* p, std::size_t count, std::size_t record_size) {
    switch (record_size) {  // the sizes of whole-record keys, compiled for each
    case 1: return checksum_of<1>(p, count, record_size);
    case 2: return checksum_of<2>(p, count, record_size);
    case 4: return checksum_of<4>(p, count, record_size);
    case 8: return checksum_of<8>(p, count, record_size);
    default: return checksum_of<0>(p, count, record_size);
    }
}

}  // namespace

void MultisetChecksum::add(std::span<const std::byte> record) {
    const RecordHashes h = hash_record(record.data(), record.size());
    ++count;
    sum_a += h.a;
    sum_b += h.b;
}

void MultisetChecksum::add_records(std::span<const std::byte> records, std::size_t record_size) {
    if (record_size == 0 || records.size() % record_size != 0)
        throw std::invalid_argument("MultisetChecksum: " + std::to_string(records.size()) +
                                    " bytes are not a whole number of " + std::to_string(record_size) +
                                    "-byte records");
    const std::size_t count = records.size() / record_size;
    if (records.size() < kParallelBytes) {
        *this += checksum_of_records(records.data(), count, record_size);
        return;
    }
    const std::size_t grain = std::max<std::size_t>(1, kPartBytes / record_size);
    *this += tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, count, grain), MultisetChecksum{},
        [&](const tbb::blocked_range<std::size_t>& part, MultisetChecksum sum) {
            sum += checksum_of_records(records.data() + part.begin() * record_size, part.size(), record_size);
            return sum;
        },
        [](MultisetChecksum left, const MultisetChecksum& right) { return left += right; });
}

MultisetChecksum& MultisetChecksum::operator+=(const MultisetChecksum& other) {
    count += other.count;
    sum_a += other.sum_a;
    sum_b += other.sum_b;
    return *this;
}

}  // namespace gpusort
