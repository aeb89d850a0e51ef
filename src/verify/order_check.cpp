// OrderChecker: the normalised key of each record as W 64-bit words, the first most
// significant (as record_layout.hpp holds it), each built in a register from its precomputed
// pieces by shifts and masks, and a scan comparing each record's key with the one before.
// Common key shapes get their own compiled scans; large spans are cut into parts checked in
// parallel, each part's first record against the record before the part.
#include "src/verify/order_check.hpp"

#include "src/keys/key_dispatch.hpp"
#include "src/keys/record_layout.hpp"
#include "src/keys/unaligned_load.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace gpusort {

namespace {

static_assert(std::endian::native == std::endian::little, "records are loaded in the host's byte order");

using u64 = std::uint64_t;
using KeyPiece = OrderChecker::KeyPiece;

// Spans this large are checked in parallel, in parts of about kPartBytes.
constexpr std::size_t kParallelBytes = std::size_t{4} << 20;
constexpr std::size_t kPartBytes = std::size_t{1} << 20;

// The pieces of `key_piece` whose bits start at key_bit of the key: one, or two when it straddles
// key words; each with its word.
void add_pieces(const FixedKeyPiece& key_piece, std::size_t key_bit, std::size_t record_size,
                std::vector<std::pair<std::size_t, KeyPiece>>& out) {
    const std::size_t offset = key_piece.offset, length = key_piece.bytes;
    KeyPiece piece;
    // One 8-byte load inside the record covers the piece; records under 8 bytes are loaded whole.
    piece.load_offset = record_size >= 8 ? std::min(offset, record_size - 8) : 0;
    const std::size_t byte_in_load = offset - piece.load_offset;
    piece.big_endian = key_piece.big_endian;
    piece.bits = static_cast<unsigned>(8 * length);
    // Little-endian loads hold the piece's byte i at bits 8 * (byte_in_load + i); byte-swapped
    // ones hold its first byte at the top, shifted down by 8 * byte_in_load.
    piece.load_shift =
        static_cast<unsigned>(piece.big_endian ? 8 * byte_in_load : 64 - 8 * byte_in_load - 8 * length);
    piece.masks = key_piece.masks;

    const std::size_t word = key_bit / 64, bit = key_bit % 64;  // bit: from the word's top
    if (bit + piece.bits <= 64) {
        piece.place_left = static_cast<unsigned>(64 - bit - piece.bits);
        out.emplace_back(word, piece);
        return;
    }
    piece.place_right = static_cast<unsigned>(bit + piece.bits - 64);  // its high part ends word `word`
    out.emplace_back(word, piece);
    piece.place_right = 0;
    piece.place_left = static_cast<unsigned>(128 - bit - piece.bits);  // its low part starts the next
    out.emplace_back(word + 1, piece);
}

// The piece, normalised, from the load that covers it.
inline u64 piece_value(u64 loaded, const KeyPiece& piece) {
    const u64 ordered = piece.big_endian ? __builtin_bswap64(loaded) : loaded;
    return normalize_field((ordered << piece.load_shift) >> (64 - piece.bits), piece.masks, piece.bits);
}

// The piece's bits in its key word.
inline u64 piece_bits(u64 loaded, const KeyPiece& piece) {
    return (piece_value(loaded, piece) << piece.place_left) >> piece.place_right;
}

// Reads and compares the keys of W words of records; OnePiecePerWord: each word is one piece
// (whole-record numbers, gensort keys, ...); ShortRecords: the records are under 8 bytes long.
template <std::size_t W, bool OnePiecePerWord, bool ShortRecords>
struct KeyReader {
    const KeyPiece* pieces;
    const std::size_t* word_begin;
    std::size_t record_size;

    using Key = std::array<u64, W>;

    u64 load(const std::byte* record, const KeyPiece& piece) const {
        if constexpr (ShortRecords) return load_short(record, record_size);
        else return load_word(record + piece.load_offset);
    }

    void read(const std::byte* record, Key& key) const {
        if constexpr (W == 1 && OnePiecePerWord) {
            // The key is one field, which compares as it does in its place: no need to move it.
            key[0] = piece_value(load(record, pieces[0]), pieces[0]);
            return;
        }
        for (std::size_t w = 0; w < W; ++w) {
            if constexpr (OnePiecePerWord) {
                key[w] = piece_bits(load(record, pieces[w]), pieces[w]);
            } else {
                u64 word = 0;
                for (std::size_t i = word_begin[w]; i < word_begin[w + 1]; ++i)
                    word |= piece_bits(load(record, pieces[i]), pieces[i]);
                key[w] = word;
            }
        }
    }

    static bool less(const Key& a, const Key& b) {
        for (std::size_t i = 0; i + 1 < W; ++i)
            if (a[i] != b[i]) return a[i] < b[i];
        return a[W - 1] < b[W - 1];
    }

    // The first record in [begin, end) out of order with the one before it, whose key is
    // `before` (none: record `begin` is the first of the stream), or `end`.
    std::size_t first_out_of_order(const std::byte* records, std::size_t begin, std::size_t end, const Key* before,
                                   bool strict) const {
        Key previous{}, current{};
        if (before) {
            previous = *before;
        } else {
            if (begin == end) return end;
            read(records + begin * record_size, previous);
            ++begin;
        }
        for (std::size_t i = begin; i < end; ++i) {
            read(records + i * record_size, current);
            if (strict ? !less(previous, current) : less(current, previous)) return i;
            previous = current;
        }
        return end;
    }

    // Checks `count` records at `records` (parallel parts when large), the first against
    // `before` as above; returns the first out of order or `count`, and leaves the key of the
    // last record in `last` (count > 0).
    std::size_t check(const std::byte* records, std::size_t count, const Key* before, bool strict, Key& last) const {
        std::size_t first_bad = count;
        if (count * record_size < kParallelBytes) {
            first_bad = first_out_of_order(records, 0, count, before, strict);
        } else {
            std::atomic<std::size_t> found{count};
            const std::size_t grain = std::max<std::size_t>(1, kPartBytes / record_size);
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, grain), [&](const auto& part) {
                if (part.begin() >= found.load(std::memory_order_relaxed)) return;  // one before it is out of order
                Key edge{};
                const Key* part_before = before;
                if (part.begin() > 0) {
                    read(records + (part.begin() - 1) * record_size, edge);
                    part_before = &edge;
                }
                const std::size_t bad = first_out_of_order(records, part.begin(), part.end(), part_before, strict);
                if (bad == part.end()) return;
                std::size_t seen = found.load(std::memory_order_relaxed);
                while (bad < seen && !found.compare_exchange_weak(seen, bad, std::memory_order_relaxed)) {
                }
            });
            first_bad = found.load();
        }
        read(records + (count - 1) * record_size, last);
        return first_bad;
    }
};

// previous_words: the key words of the record before these (when have_previous); on return,
// those of the last of them.
template <std::size_t W, bool OnePiecePerWord, bool ShortRecords>
std::size_t check_with(const KeyPiece* pieces, const std::size_t* word_begin, std::size_t record_size,
                       const std::byte* records, std::size_t count, bool have_previous, u64* previous_words,
                       bool strict) {
    using Reader = KeyReader<W, OnePiecePerWord, ShortRecords>;
    const Reader reader{pieces, word_begin, record_size};
    typename Reader::Key before{}, last{};
    std::copy_n(previous_words, W, before.begin());
    const std::size_t first_bad = reader.check(records, count, have_previous ? &before : nullptr, strict, last);
    std::copy_n(last.begin(), W, previous_words);
    return first_bad;
}

template <std::size_t W>
auto choose_check(bool one_piece_per_word) {
    return one_piece_per_word ? check_with<W, true, false> : check_with<W, false, false>;
}

}  // namespace

OrderChecker::OrderChecker(const KeySpec& spec, bool strict) : record_size_(spec.record_size), strict_(strict) {
    const FixedKeySpec fixed = fixed_key_spec(spec);
    key_words_ = fixed.key_words();
    std::vector<std::pair<std::size_t, KeyPiece>> pieces;  // with their key words
    std::size_t key_bit = 0;
    for (std::uint32_t p = 0; p < fixed.piece_count; ++p) {
        const FixedKeyPiece& piece = fixed.pieces[p];
        add_pieces(piece, key_bit, record_size_, pieces);
        key_bit += 8 * piece.bytes;
    }
    std::stable_sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t w = 0, i = 0; w <= key_words_; ++w) {
        while (i < pieces.size() && pieces[i].first < w) ++i;
        word_begin_[w] = i;
    }
    for (const auto& piece : pieces) pieces_.push_back(piece.second);
}

std::optional<std::uint64_t> OrderChecker::check(std::span<const std::byte> records) {
    if (records.size() % record_size_ != 0)
        throw std::invalid_argument("OrderChecker: " + std::to_string(records.size()) +
                                    " bytes are not a whole number of " + std::to_string(record_size_) +
                                    "-byte records");
    const std::size_t count = records.size() / record_size_;
    if (count == 0) return std::nullopt;
    const bool one_piece_per_word = pieces_.size() == key_words_;
    decltype(&check_with<1, true, false>) check_records = nullptr;
    if (record_size_ < 8) {  // then the key is one word
        check_records = one_piece_per_word ? check_with<1, true, true> : check_with<1, false, true>;
    } else {
        check_records = with_key_words(key_words_, [&](auto words) {
            return choose_check<decltype(words)::value>(one_piece_per_word);
        });
    }
    const std::size_t first_bad = check_records(pieces_.data(), word_begin_, record_size_, records.data(), count,
                                                records_checked_ > 0, previous_key_, strict_);
    const std::uint64_t first_index = records_checked_;
    records_checked_ += count;
    if (first_bad == count) return std::nullopt;
    return first_index + first_bad;
}

}  // namespace gpusort
