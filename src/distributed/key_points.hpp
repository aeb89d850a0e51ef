// Where a record stands in the global order of a distributed sort: a KeyPoint is its normalised
// key (the bytes that memcmp orders: key_rules.hpp) and its position in the whole input. Equal keys
// are ordered by position, so every record has a point of its own and parts cut between points stay
// balanced even when all keys are equal; a part's records keep their input order, so the sort is
// stable across ranks as it is within one. The splitters of the sample sort are such points, chosen
// from regular samples of every rank's records.
#pragma once

#include "gpusort/key_spec.hpp"
#include "src/keys/key_rules.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpusort::distributed {

struct KeyPoint {
    std::array<unsigned char, kMaxNormalizedKeyBytes> key{};  // zero past the key's bytes
    std::uint64_t position = 0;                                // record index in the whole input
};

// The normalised keys of records under one key spec (whole-record keys included: whole_record_key).
class KeyReader {
public:
    explicit KeyReader(const KeySpec& spec);
    std::size_t record_size() const { return spec_.record_size; }
    std::size_t key_bytes() const { return key_bytes_; }
    KeyPoint point(const std::byte* record, std::uint64_t position) const;
    // a before b: by key, then by position.
    bool before(const KeyPoint& a, const KeyPoint& b) const;

    // A point as key_bytes() + 8 bytes (for the exchange of samples between ranks), and back.
    std::size_t packed_bytes() const { return key_bytes_ + 8; }
    void pack(const KeyPoint& point, std::byte* out) const;
    KeyPoint unpack(const std::byte* in) const;

private:
    KeySpec spec_;
    std::size_t key_bytes_;
};

// The indexes of `count` records at regular positions of `records` (the middles of `count` equal
// shares), in order: a rank's samples. Fewer when there are fewer records.
std::vector<std::uint64_t> regular_sample_indexes(std::uint64_t records, std::size_t count);

// parts - 1 splitters from the samples of all ranks: the samples at ranks i * n / parts, i = 1 ..
// parts - 1, of all n in order. With no samples (no records at all), none.
std::vector<KeyPoint> choose_splitters(std::vector<KeyPoint> samples, std::size_t parts, const KeyReader& reader);

// A record's part: the rank it goes to. Two bytes per record, kept for a whole range in the
// counting pass, so a job has at most kMaxParts ranks.
using PartIndex = std::uint16_t;
inline constexpr std::size_t kMaxParts = std::size_t{1} << 16;

// The parts of many records at once: the splitters as key words (key_rules.hpp: what the sorters
// compare), so that a record's part costs its key words and a binary search of integers: the number
// of splitters at or before the record's point (0 .. splitters.size()).
class PartFinder {
public:
    PartFinder(const KeySpec& spec, const std::vector<KeyPoint>& splitters);
    // parts[i] = the part of record i of `records`, whose input position is first + i, for every
    // record (parts holds one entry per record); on all threads.
    void find(std::span<const std::byte> records, std::uint64_t first, std::span<PartIndex> parts) const;

private:
    static constexpr std::size_t kFewSplitters = 16;  // counted one by one; more: a binary search
    FixedKeySpec fixed_;
    std::size_t record_size_;
    std::size_t words_;                      // key words per splitter
    std::vector<std::uint64_t> key_words_;   // words_ per splitter, most significant first
    std::vector<std::uint64_t> positions_;
};

}  // namespace gpusort::distributed
