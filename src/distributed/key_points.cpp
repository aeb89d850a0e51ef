// KeyReader, regular samples, splitters and the part of a point.
#include "src/distributed/key_points.hpp"

#include "src/keys/key_dispatch.hpp"
#include "src/keys/record_layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <cstring>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort::distributed {

KeyReader::KeyReader(const KeySpec& spec) : spec_(spec), key_bytes_(spec.normalized_bytes()) { spec_.validate(); }

KeyPoint KeyReader::point(const std::byte* record, std::uint64_t position) const {
    KeyPoint point;
    point.position = position;
    normalize_record_key(spec_, record, reinterpret_cast<std::byte*>(point.key.data()));
    return point;
}

bool KeyReader::before(const KeyPoint& a, const KeyPoint& b) const {
    const int order = std::memcmp(a.key.data(), b.key.data(), key_bytes_);
    return order < 0 || (order == 0 && a.position < b.position);
}

void KeyReader::pack(const KeyPoint& point, std::byte* out) const {
    std::memcpy(out, point.key.data(), key_bytes_);
    std::memcpy(out + key_bytes_, &point.position, 8);
}

KeyPoint KeyReader::unpack(const std::byte* in) const {
    KeyPoint point;
    std::memcpy(point.key.data(), in, key_bytes_);
    std::memcpy(&point.position, in + key_bytes_, 8);
    return point;
}

std::vector<std::uint64_t> regular_sample_indexes(std::uint64_t records, std::size_t count) {
    count = static_cast<std::size_t>(std::min<std::uint64_t>(count, records));
    std::vector<std::uint64_t> indexes;
    indexes.reserve(count);
    for (std::size_t i = 0; i < count; ++i) indexes.push_back((2 * i + 1) * records / (2 * count));
    return indexes;
}

std::vector<KeyPoint> choose_splitters(std::vector<KeyPoint> samples, std::size_t parts, const KeyReader& reader) {
    if (samples.empty() || parts < 2) return {};
    std::sort(samples.begin(), samples.end(), [&](const KeyPoint& a, const KeyPoint& b) { return reader.before(a, b); });
    std::vector<KeyPoint> splitters;
    for (std::size_t i = 1; i < parts; ++i) splitters.push_back(samples[i * samples.size() / parts]);
    return splitters;
}

PartFinder::PartFinder(const KeySpec& spec, const std::vector<KeyPoint>& splitters)
    : fixed_(fixed_key_spec(spec)), record_size_(spec.record_size), words_(key_words(spec)) {
    if (splitters.size() >= kMaxParts)
        throw std::invalid_argument("at most " + std::to_string(kMaxParts) + " parts (" +
                                    std::to_string(splitters.size() + 1) + " asked for)");
    for (const KeyPoint& splitter : splitters) {
        // A point's key bytes are the words, big-endian, zero-padded.
        for (std::size_t w = 0; w < words_; ++w) {
            std::uint64_t word = 0;
            for (std::size_t b = 0; b < 8; ++b) word = word << 8 | splitter.key[8 * w + b];
            key_words_.push_back(word);
        }
        positions_.push_back(splitter.position);
    }
}

void PartFinder::find(std::span<const std::byte> records, std::uint64_t first, std::span<PartIndex> parts) const {
    if (parts.size() != records.size() / record_size_) throw std::logic_error("PartFinder::find: one part per record");
    const std::size_t splitters = positions_.size();
    if (splitters == 0) {  // one part: every record's is 0
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, parts.size(), 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
            std::fill(parts.begin() + static_cast<std::ptrdiff_t>(r.begin()), parts.begin() + static_cast<std::ptrdiff_t>(r.end()), PartIndex{0});
        });
        return;
    }
    // Every record's part by key_of(record): the splitters at or before (key, position), counted one
    // by one without branches when they are few, else by a binary search.
    auto find_by = [&]<std::size_t W>(auto key_of) {
        std::vector<RecordKey<W>> keys(splitters);
        for (std::size_t s = 0; s < splitters; ++s)
            for (std::size_t w = 0; w < W; ++w) keys[s].word[w] = key_words_[s * words_ + w];
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, parts.size(), 4096), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) {
                const RecordKey<W> key = key_of(reinterpret_cast<const unsigned char*>(records.data() + i * record_size_));
                const std::uint64_t position = first + i;
                std::uint32_t part = 0;
                if (splitters <= kFewSplitters) {
                    for (std::size_t s = 0; s < splitters; ++s)
                        part += static_cast<std::uint32_t>(keys[s] < key) |
                                (static_cast<std::uint32_t>(keys[s] == key) & static_cast<std::uint32_t>(positions_[s] <= position));
                } else {
                    std::size_t lo = 0, hi = splitters;
                    while (lo < hi) {
                        const std::size_t mid = (lo + hi) / 2;
                        if (key < keys[mid] || (key == keys[mid] && position < positions_[mid]))
                            hi = mid;
                        else
                            lo = mid + 1;
                    }
                    part = static_cast<std::uint32_t>(lo);
                }
                parts[i] = static_cast<PartIndex>(part);
            }
        });
    };
    if (fixed_.piece_count == 1 && words_ == 1) {  // a whole-record number, or one like it
        const FixedKeyPiece piece = fixed_.pieces[0];
        switch (piece.bytes) {
        case 8: return find_by.operator()<1>([&](const unsigned char* record) { return one_piece_key<8>(record, piece); });
        case 4: return find_by.operator()<1>([&](const unsigned char* record) { return one_piece_key<4>(record, piece); });
        case 2: return find_by.operator()<1>([&](const unsigned char* record) { return one_piece_key<2>(record, piece); });
        case 1: return find_by.operator()<1>([&](const unsigned char* record) { return one_piece_key<1>(record, piece); });
        default: break;
        }
    }
    with_key_words(words_, [&](auto words) {
        constexpr std::size_t W = decltype(words)::value;
        find_by.template operator()<W>([&](const unsigned char* record) { return record_key<W>(record, fixed_); });
    });
}

}  // namespace gpusort::distributed
