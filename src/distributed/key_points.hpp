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
    std::size_t record_size() const { return record_size_; }
    std::size_t key_bytes() const { return key_bytes_; }
    KeyPoint point(const std::byte* record, std::uint64_t position) const;
    // a before b: by key, then by position.
    bool before(const KeyPoint& a, const KeyPoint& b) const;

    // A point as key_bytes() + 8 bytes (for the exchange of samples between ranks), and back.
    std::size_t packed_bytes() const { return key_bytes_ + 8; }
    void pack(const KeyPoint& point, std::byte* out) const;
    KeyPoint unpack(const std::byte* in) const;

private:
    FixedKeySpec fixed_;
    std::size_t record_size_;
    std::size_t key_bytes_;
};

// The indexes of `count` records at regular positions of `records` (the middles of `count` equal
// shares), in order: a rank's samples. Fewer when there are fewer records.
std::vector<std::uint64_t> regular_sample_indexes(std::uint64_t records, std::size_t count);

// parts - 1 splitters from the samples of all ranks: the samples at ranks i * n / parts, i = 1 ..
// parts - 1, of all n in order. With no samples (no records at all), none.
std::vector<KeyPoint> choose_splitters(std::vector<KeyPoint> samples, std::size_t parts, const KeyReader& reader);

// The part that `point` goes to: the number of splitters at or before it (0 .. splitters.size()).
std::size_t part_of(const KeyPoint& point, const std::vector<KeyPoint>& splitters, const KeyReader& reader);

}  // namespace gpusort::distributed
