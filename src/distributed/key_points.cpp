// KeyReader, regular samples, splitters and the part of a point.
#include "src/distributed/key_points.hpp"

#include "src/keys/record_layout.hpp"

#include <algorithm>
#include <cstring>

namespace gpusort::distributed {

KeyReader::KeyReader(const KeySpec& spec)
    : fixed_(fixed_key_spec(spec)), record_size_(spec.record_size), key_bytes_(spec.normalized_bytes()) {}

KeyPoint KeyReader::point(const std::byte* record, std::uint64_t position) const {
    KeyPoint point;
    point.position = position;
    unsigned char* out = point.key.data();
    for (std::uint32_t p = 0; p < fixed_.piece_count; ++p) {
        const FixedKeyPiece& piece = fixed_.pieces[p];
        const std::uint64_t key = normalized_piece(reinterpret_cast<const unsigned char*>(record), piece);
        for (std::uint32_t i = 0; i < piece.bytes; ++i)
            *out++ = static_cast<unsigned char>((key >> (8 * (piece.bytes - 1 - i))) & 0xff);
    }
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

std::size_t part_of(const KeyPoint& point, const std::vector<KeyPoint>& splitters, const KeyReader& reader) {
    const auto after = std::upper_bound(splitters.begin(), splitters.end(), point,
                                        [&](const KeyPoint& p, const KeyPoint& s) { return reader.before(p, s); });
    return static_cast<std::size_t>(after - splitters.begin());
}

}  // namespace gpusort::distributed
