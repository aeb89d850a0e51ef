// GNU sort's comparison of lines in the C locale: where each key begins and ends (fields with and
// without -t, characters, b), how a key compares (bytes, folded bytes, exact decimal numbers), the
// last resort; and the order-preserving key prefix.
#include "src/text/line_order.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpusort {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
unsigned char fold_upper(char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 'a' && byte <= 'z' ? static_cast<unsigned char>(byte - ('a' - 'A')) : byte;
}

std::size_t skip_blanks(std::string_view line, std::size_t pos) {
    while (pos < line.size() && is_blank(line[pos])) ++pos;
    return pos;
}

// Moves pos by `count` more characters, no further than the line's end.
std::size_t advance(std::string_view line, std::size_t pos, std::size_t count) {
    return pos + std::min(count, line.size() - pos);
}

// The n lowest bits set (n <= 64).
std::uint64_t low_bits(std::size_t n) { return n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Bit i set where byte i of line[at, at + 64) is the separator, or a blank without one (bytes past
// the line's end never): 16 bytes compared at once where SSE2 is, so that a field costs no loop of
// its own. The last bytes of a line of 16 bytes or more that is not padded are compared as the
// line's last 16; a padded line's 64 bytes are all compared (no loop on its length).
std::uint64_t separator_mask(std::string_view line, std::size_t at, const std::optional<char>& separator, bool padded) {
    const std::size_t n = std::min<std::size_t>(64, line.size() - at);
    std::uint64_t mask = 0;
#if defined(__SSE2__)
    if (line.size() >= 16 || padded) {
        const __m128i separators = _mm_set1_epi8(separator.value_or(' '));
        for (std::size_t piece = 0; padded ? piece < 64 : piece < n; piece += 16) {
            const std::size_t from = padded ? at + piece : std::min(at + piece, line.size() - 16);
            const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(line.data() + from));
            __m128i hits = _mm_cmpeq_epi8(bytes, separators);
            if (!separator) hits = _mm_or_si128(hits, _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n'))));
            mask |= (std::uint64_t{static_cast<std::uint32_t>(_mm_movemask_epi8(hits))} >> (at + piece - from)) << piece;
        }
        return mask & low_bits(n);
    }
#endif
    for (std::size_t i = 0; i < n; ++i)
        if (separator ? line[at + i] == *separator : is_blank(line[at + i])) mask |= std::uint64_t{1} << i;
    return mask;
}

// The fields of one line, each field's end found once, in order, as its keys ask for them.
class LineFields {
public:
    // `padded`: as key_prefix takes it.
    LineFields(std::string_view line, const std::optional<char>& separator, bool padded = false)
        : line_(line), separator_(separator), padded_(padded) {}
    std::string_view line() const { return line_; }
    bool padded() const { return padded_; }

    // Where the k-th field ends (k >= 1): with -t at the k-th separator, without it at the end of
    // the k-th run of non-blanks (the blank after it); the line's end where there are fewer.
    std::size_t end(std::size_t k) {
        if (k <= std::min(found_, kKept)) return kept_[k - 1];
        if (k < found_) *this = LineFields(line_, separator_, padded_);  // found and not kept: looked for again
        while (found_ < k) {
            while (ends_ == 0)
                if (!next_block()) return line_.size();
            last_ = block_ + static_cast<std::size_t>(std::countr_zero(ends_));
            ends_ &= ends_ - 1;
            if (found_ < kKept) kept_[found_] = last_;
            ++found_;
        }
        return last_;
    }

    // Where the text after the first k fields begins: after the k-th separator with -t; without it
    // at the k-th field's end (the blanks that follow belong to the next field).
    std::size_t after(std::size_t k) {
        if (k == 0) return 0;
        const std::size_t at = end(k);
        return separator_ && at < line_.size() ? at + 1 : at;
    }

private:
    static constexpr std::size_t kKept = 16;  // the ends of the first fields are kept

    // The field ends in the next 64 bytes into ends_; false at the line's end.
    bool next_block() {
        if (next_ >= line_.size()) return false;
        const std::size_t n = std::min<std::size_t>(64, line_.size() - next_);
        ends_ = separator_mask(line_, next_, separator_, padded_);
        if (!separator_) {
            const std::uint64_t non_blanks = ~ends_ & low_bits(n);
            ends_ &= non_blanks << 1 | non_blank_before_;
            non_blank_before_ = non_blanks >> (n - 1);
        }
        block_ = next_;
        next_ += n;
        return true;
    }

    std::string_view line_;
    std::optional<char> separator_;
    bool padded_;
    std::size_t next_ = 0;               // bytes before it searched
    std::size_t block_ = 0;              // where the block of ends_ begins
    std::uint64_t ends_ = 0;             // the block's field ends not yet counted
    std::uint64_t non_blank_before_ = 0; // without -t: 1 where the byte before next_ is a non-blank
    std::size_t found_ = 0;              // field ends counted
    std::size_t last_ = 0;               // the last of them
    std::array<std::size_t, kKept> kept_;
};

// Where the key begins: after start_field fields, its blanks skipped with b, then start_char on.
std::size_t key_begin(LineFields& fields, const TextKey& key) {
    std::size_t pos = fields.after(key.start_field);
    if (key.modifiers.skip_start_blanks) pos = skip_blanks(fields.line(), pos);
    return advance(fields.line(), pos, key.start_char);
}

// Where the key ends: the end of field end_field (end_char 0), or end_char characters into it
// (after its blanks with b on POS2); the line's end without POS2.
std::size_t key_end(LineFields& fields, const TextKey& key) {
    if (key.end_field == TextKey::kLineEnd) return fields.line().size();
    if (key.end_char == 0) return fields.end(key.end_field + 1);
    std::size_t pos = fields.after(key.end_field);
    if (key.modifiers.skip_end_blanks) pos = skip_blanks(fields.line(), pos);
    return advance(fields.line(), pos, key.end_char);
}

// The key's text; a key that would end before it begins is empty.
std::string_view key_text(LineFields& fields, const TextKey& key) {
    const std::size_t begin = key_begin(fields, key);
    const std::size_t end = key_end(fields, key);
    return fields.line().substr(begin, end > begin ? end - begin : 0);
}

// The number at the front of a key as GNU's -n reads it in the C locale: blanks, an optional '-',
// digits, an optional '.' and digits. Kept in canonical form: the integer part without leading
// zeros, the fraction without trailing zeros, the sign 0 for any zero (text without a number).
struct Decimal {
    int sign = 0;
    std::string_view integer;
    std::string_view fraction;
};

// The run of digits at line[pos, end): where it ends, where its first digit other than '0' is
// (its end if none) and where its last one ends (pos if none).
struct DigitRun {
    std::size_t end;
    std::size_t first_significant;
    std::size_t significant_end;
};

DigitRun digit_run(std::string_view line, std::size_t pos, std::size_t end, bool padded) {
#if defined(__SSE2__)
    // Runs shorter than 16 digits of a line of 16 bytes or more, or padded: from one 16-byte
    // compare, with no branch on the digits (the line's bytes, so that a short key gains too).
    if (line.size() >= 16 || padded) {
        const std::size_t from = padded ? pos : std::min(pos, line.size() - 16);
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(line.data() + from));
        const __m128i values = _mm_sub_epi8(bytes, _mm_set1_epi8('0'));
        const __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(values, _mm_set1_epi8(9)), values);
        const __m128i is_zero = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('0'));
        const std::uint32_t digits = static_cast<std::uint32_t>(_mm_movemask_epi8(is_digit)) >> (pos - from);
        const std::uint32_t zeros = static_cast<std::uint32_t>(_mm_movemask_epi8(is_zero)) >> (pos - from);
        const auto run = static_cast<std::size_t>(std::countr_one(digits));
        if (run < 16 - (pos - from) || pos + run >= end) {
            const std::size_t length = std::min(run, end - pos);
            const std::uint32_t significant = digits & ~zeros & ((std::uint32_t{1} << length) - 1);
            return {pos + length, pos + (significant ? std::countr_zero(significant) : length),
                    pos + (significant ? 32 - std::countl_zero(significant) : 0)};
        }
    }
#endif
    DigitRun run{pos, end, pos};
    for (; run.end < end && is_digit(line[run.end]); ++run.end) {
        if (line[run.end] == '0') continue;
        run.first_significant = std::min(run.first_significant, run.end);
        run.significant_end = run.end + 1;
    }
    run.first_significant = std::min(run.first_significant, run.end);
    return run;
}

// The number at the front of `key`, a part of the line of `fields`.
Decimal parse_decimal(const LineFields& fields, std::string_view key) {
    const std::string_view line = fields.line();
    const auto begin = static_cast<std::size_t>(key.data() - line.data());
    const std::size_t end = begin + key.size();
    std::size_t pos = begin;
    while (pos < end && is_blank(line[pos])) ++pos;
    const bool negative = pos < end && line[pos] == '-';
    pos += negative;
    Decimal number;
    const DigitRun integer = digit_run(line, pos, end, fields.padded());
    number.integer = line.substr(integer.first_significant, integer.end - integer.first_significant);
    if (integer.end < end && line[integer.end] == '.') {
        const DigitRun fraction = digit_run(line, integer.end + 1, end, fields.padded());
        number.fraction = line.substr(integer.end + 1, fraction.significant_end - (integer.end + 1));
    }
    if (!number.integer.empty() || !number.fraction.empty()) number.sign = negative ? -1 : 1;
    return number;
}

int sign_of(int value) { return (value > 0) - (value < 0); }

int compare_numbers(const Decimal& a, const Decimal& b) {
    if (a.sign != b.sign) return a.sign < b.sign ? -1 : 1;
    if (a.integer.size() != b.integer.size()) return a.integer.size() < b.integer.size() ? -a.sign : a.sign;
    // Same count of integer digits: the digits in turn, then the fractions (a prefix is smaller,
    // as trailing zeros are gone).
    int magnitude = sign_of(a.integer.compare(b.integer));
    if (magnitude == 0) magnitude = sign_of(a.fraction.compare(b.fraction));
    return a.sign * magnitude;
}

int compare_folded(std::string_view a, std::string_view b) {
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) {
        const unsigned char x = fold_upper(a[i]);
        const unsigned char y = fold_upper(b[i]);
        if (x != y) return x < y ? -1 : 1;
    }
    return (a.size() > b.size()) - (a.size() < b.size());
}

// One key of two lines, before its r.
int compare_key(LineFields& a, LineFields& b, const TextKey& key) {
    const std::string_view x = key_text(a, key);
    const std::string_view y = key_text(b, key);
    if (key.modifiers.numeric) return compare_numbers(parse_decimal(a, x), parse_decimal(b, y));
    if (key.modifiers.fold) return compare_folded(x, y);
    return sign_of(x.compare(y));
}

// Writes bytes [skip, skip + window) of a sort code into the window, each XORed with `mask`; a
// byte past the window's end marks the code as cut short.
class CodeWriter {
public:
    CodeWriter(std::span<std::byte> window, std::size_t skip) : pos_(window.data()), end_(window.data() + window.size()), skip_(skip) {}
    unsigned char mask = 0;

    bool cut() const { return cut_; }
    void put(unsigned char value) {
        if (skip_ > 0) {
            --skip_;
        } else if (pos_ != end_) {
            *pos_++ = std::byte{static_cast<unsigned char>(value ^ mask)};
        } else {
            cut_ = true;
        }
    }
    // put() of each byte of `text`, at once where the bytes skipped and those that fit hold no 0
    // byte; returns how many were put so (0 where put() must take them).
    std::size_t put_plain(std::string_view text) {
        const std::size_t looked_at = std::min<std::size_t>(text.size(), skip_ + static_cast<std::size_t>(end_ - pos_));
        if (text.empty() || std::memchr(text.data(), 0, looked_at)) return 0;
        put_run(text);
        return text.size();
    }
    // put() of each byte of `text`, which holds no 0 byte, at once.
    void put_run(std::string_view text) {
        if (text.empty()) return;  // its data may be null, which memcpy must not be given
        const std::size_t skipped = std::min(skip_, text.size());
        const std::size_t n = std::min<std::size_t>(text.size() - skipped, static_cast<std::size_t>(end_ - pos_));
        skip_ -= skipped;
        std::memcpy(pos_, text.data() + skipped, n);
        if (mask != 0)
            for (std::size_t i = 0; i < n; ++i) pos_[i] ^= std::byte{mask};
        pos_ += n;
        if (skipped + n < text.size()) cut_ = true;
    }
    // Zeros after the code's end; whether the code ends within the window.
    bool finish() {
        std::fill(pos_, end_, std::byte{0});
        return !cut_;
    }

private:
    std::byte* pos_;
    std::byte* end_;
    std::size_t skip_;
    bool cut_ = false;
};

#if defined(__SSE2__)
// CodeWriter's work for the first window of a padded line's code, of kPaddedWindow bytes,
// without a branch on lengths: the code is built in a buffer with room past the window, each run
// of the line's bytes copied as 32 bytes (read past its end, which padding allows), the bytes past
// the run overwritten by what follows and cleared at the end.
class PaddedCodeWriter {
public:
    unsigned char mask = 0;

    // pos_ stops at window_ + 1: a byte was put past the window.
    bool cut() const { return pos_ > window_; }
    void put(unsigned char value) {
        buffer_[pos_] = static_cast<char>(value ^ mask);
        pos_ = std::min(pos_ + 1, window_ + 1);
    }
    std::size_t put_plain(std::string_view text) {
        if (text.empty()) return 0;  // its data may be null
        // A 0 byte matters only where it would be put within the window.
        const std::size_t room = cut() ? 0 : window_ - pos_;
        const auto [low, high] = load(text);
        const __m128i zero = _mm_setzero_si128();
        const std::uint32_t zeros = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(low, zero))) |
                                    static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(high, zero))) << 16;
        if (zeros & static_cast<std::uint32_t>(low_bits(std::min(text.size(), room)))) return 0;
        store(low, high, text.size());
        return text.size();
    }
    void put_run(std::string_view text) {
        if (text.empty()) return;  // its data may be null
        const auto [low, high] = load(text);
        store(low, high, text.size());
    }
    // The window into `out`, zeros after the code's end; whether the code ends there.
    bool finish(std::span<std::byte, kPaddedWindow> out) {
        const __m128i end = _mm_set1_epi8(static_cast<char>(pos_));
        const __m128i first = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m128i second = _mm_add_epi8(first, _mm_set1_epi8(16));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data()), _mm_and_si128(load16(buffer_.data()), _mm_cmplt_epi8(first, end)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + 16), _mm_and_si128(load16(buffer_.data() + 16), _mm_cmplt_epi8(second, end)));
        return !cut();
    }

private:
    struct Bytes32 {
        __m128i low, high;
    };
    static __m128i load16(const char* at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)); }
    // The 32 bytes from the text's start: within the line and its padding.
    static Bytes32 load(std::string_view text) { return {load16(text.data()), load16(text.data() + 16)}; }
    // The run's bytes (32 of them, covering the rest of the window) XORed with the mask at pos_.
    void store(__m128i low, __m128i high, std::size_t length) {
        const __m128i masks = _mm_set1_epi8(static_cast<char>(mask));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(buffer_.data() + pos_), _mm_xor_si128(low, masks));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(buffer_.data() + pos_ + 16), _mm_xor_si128(high, masks));
        pos_ = std::min(pos_ + length, window_ + 1);
    }

    static constexpr std::size_t window_ = kPaddedWindow;
    std::size_t pos_ = 0;
    std::array<char, kPaddedWindow + 1 + 32> buffer_;
};
static_assert(kPaddedWindow == 32, "PaddedCodeWriter covers the window with 32 bytes");
#endif

// A number as bytes whose memcmp order is its order, self-delimiting: a class byte (negative,
// zero, positive), then for non-zero numbers the magnitude (count of integer digits, one byte
// below 255, else 255 and 8 bytes big-endian; the significant digits; a 0 byte), complemented for
// negative numbers.
template <class Writer>
void encode_number(const Decimal& number, Writer& out) {
    out.put(static_cast<unsigned char>(number.sign + 2));
    if (number.sign == 0) return;
    const unsigned char mask = out.mask;
    if (number.sign < 0) out.mask = static_cast<unsigned char>(~mask);
    const std::uint64_t digits = number.integer.size();
    if (digits < 0xff) {
        out.put(static_cast<unsigned char>(digits));
    } else {
        out.put(0xff);
        for (int shift = 56; shift >= 0; shift -= 8) out.put(static_cast<unsigned char>(digits >> shift));
    }
    out.put_run(number.integer);
    out.put_run(number.fraction);
    out.put(0);
    out.mask = mask;
}

// Bytes (folded with f) as a self-delimiting code in their order: a 0 byte as 0 0xff, and 0 0 at
// the end, so that a string sorts before its extensions.
template <class Writer>
void encode_bytes(std::string_view text, bool fold, Writer& out) {
    for (std::size_t i = fold ? 0 : out.put_plain(text); i < text.size() && !out.cut(); ++i) {
        const unsigned char byte = fold ? fold_upper(text[i]) : static_cast<unsigned char>(text[i]);
        out.put(byte);
        if (byte == 0) out.put(0xff);
    }
    out.put(0);
    out.put(0);
}

template <class Writer>
void encode_key(LineFields& fields, const TextKey& key, Writer& out) {
    const std::string_view text = key_text(fields, key);
    out.mask = key.modifiers.reverse ? 0xff : 0;
    if (key.modifiers.numeric) {
        encode_number(parse_decimal(fields, text), out);
    } else {
        encode_bytes(text, key.modifiers.fold, out);
    }
}

// The keys in turn, then the whole line unless -s or -u with keys, until the window is full.
template <class Writer>
void encode_line(std::string_view line, const TextKeys& keys, bool padded, Writer& out) {
    LineFields fields(line, keys.separator, padded);
    for (const TextKey& key : keys.keys) {
        if (out.cut()) return;
        encode_key(fields, key, out);
    }
    if (!out.cut() && (keys.keys.empty() || !(keys.stable || keys.unique))) {
        out.mask = keys.reverse ? 0xff : 0;
        encode_bytes(line, false, out);
    }
}

}  // namespace

int compare_lines(std::string_view a, std::string_view b, const TextKeys& keys) {
    LineFields a_fields(a, keys.separator), b_fields(b, keys.separator);
    for (const TextKey& key : keys.keys) {
        const int order = compare_key(a_fields, b_fields, key);
        if (order != 0) return key.modifiers.reverse ? -order : order;
    }
    if (!keys.keys.empty() && (keys.stable || keys.unique)) return 0;
    const int order = sign_of(a.compare(b));
    return keys.reverse ? -order : order;
}

bool equal_keys(std::string_view a, std::string_view b, const TextKeys& keys) {
    if (keys.keys.empty()) return a == b;
    LineFields a_fields(a, keys.separator), b_fields(b, keys.separator);
    return std::all_of(keys.keys.begin(), keys.keys.end(),
                       [&](const TextKey& key) { return compare_key(a_fields, b_fields, key) == 0; });
}

bool key_prefix(std::string_view line, const TextKeys& keys, std::span<std::byte> out, std::size_t skip, bool padded) {
#if defined(__SSE2__)
    if (padded && skip == 0 && out.size() == kPaddedWindow) {
        PaddedCodeWriter writer;
        encode_line(line, keys, true, writer);
        return writer.finish(out.first<kPaddedWindow>());
    }
#endif
    CodeWriter writer(out, skip);
    encode_line(line, keys, padded, writer);
    return writer.finish();
}

}  // namespace gpusort
