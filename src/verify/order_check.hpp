// OrderChecker: checks that a stream of fixed-size records, fed in consecutive spans, is in the
// order of a KeySpec (gpusort-file --verify, gpusort-check). Records compare as their normalised
// keys do (the key rules of key_rules.hpp: totalOrder for floats, byte orders, descending
// fields), which it computes branch-free as up to four 64-bit words per record, each key piece
// read with one 8-byte load; large spans are checked in parallel parts, each part against the
// record before it.
#pragma once

#include "gpusort/key_spec.hpp"
#include "src/keys/key_rules.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace gpusort {

class OrderChecker {
public:
    // strict: each key must be larger than the one before (outputs of --unique); otherwise equal
    // neighbours are in order. Throws std::invalid_argument when the spec is not valid.
    OrderChecker(const KeySpec& spec, bool strict);

    // Checks the next records of the stream (whole records; throws std::invalid_argument
    // otherwise), the first of them against the last record of the previous call. Returns the
    // index, counted from the first record ever fed, of the first of them that is out of order
    // (smaller than the record before it, or not larger when strict), or nothing. Checking goes
    // on with later calls either way.
    std::optional<std::uint64_t> check(std::span<const std::byte> records);

    // Records fed so far.
    std::uint64_t records_checked() const { return records_checked_; }

    // A piece of one word of the normalised key: a FixedKeyPiece of the key rules (a numeric
    // field, or up to 8 bytes of a byte string) read from one 8-byte load of the record,
    // normalised and shifted to its place in the word; a FixedKeyPiece that straddles two words
    // is a piece of each. (Implementation detail, public for the checking functions.)
    struct KeyPiece {
        std::size_t load_offset = 0;  // of the 8-byte load in the record
        bool big_endian = false;      // the piece's bytes are read most significant first
        unsigned load_shift = 0;      // of the (byte-swapped when big-endian) load: the piece on top
        unsigned bits = 64;           // the piece's width
        FieldMasks<std::uint64_t> masks;  // its normalisation (FixedKeyPiece::masks)
        unsigned place_left = 0;          // its place in the word: (piece << place_left) >> place_right
        unsigned place_right = 0;
    };

private:
    std::vector<KeyPiece> pieces_;  // by key word: those of word w are [word_begin_[w], word_begin_[w + 1])
    std::size_t word_begin_[5] = {};
    std::size_t record_size_ = 0;
    std::size_t key_words_ = 1;
    bool strict_ = false;
    std::uint64_t previous_key_[4] = {};  // key words of the last record fed
    std::uint64_t records_checked_ = 0;
};

}  // namespace gpusort
