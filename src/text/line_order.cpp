// GNU sort's comparison of lines in the C locale: where each key begins and ends (fields with and
// without -t, characters, b), how a key compares (bytes, folded bytes, exact decimal numbers), the
// last resort; and the order-preserving key prefix.
#include "src/text/line_order.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

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

std::size_t skip_non_blanks(std::string_view line, std::size_t pos) {
    while (pos < line.size() && !is_blank(line[pos])) ++pos;
    return pos;
}

// Where the separator at or after pos lies (the line's end if none).
std::size_t find_separator(std::string_view line, std::size_t pos, char separator) {
    const std::size_t found = line.find(separator, pos);
    return found == std::string_view::npos ? line.size() : found;
}

// Moves pos by `count` more characters, no further than the line's end.
std::size_t advance(std::string_view line, std::size_t pos, std::size_t count) {
    return pos + std::min(count, line.size() - pos);
}

// Where the key begins: after start_field fields, its blanks skipped with b, then start_char on.
std::size_t key_begin(std::string_view line, const TextKey& key, const std::optional<char>& separator) {
    std::size_t pos = 0;
    for (std::size_t fields = key.start_field; fields > 0 && pos < line.size(); --fields) {
        if (separator) {
            pos = find_separator(line, pos, *separator);
            if (pos < line.size()) ++pos;
        } else {
            pos = skip_non_blanks(line, skip_blanks(line, pos));
        }
    }
    if (key.modifiers.skip_start_blanks) pos = skip_blanks(line, pos);
    return advance(line, pos, key.start_char);
}

// Where the key ends: the end of field end_field (end_char 0), or end_char characters into it
// (after its blanks with b on POS2); the line's end without POS2.
std::size_t key_end(std::string_view line, const TextKey& key, const std::optional<char>& separator) {
    if (key.end_field == TextKey::kLineEnd) return line.size();
    std::size_t fields = key.end_char == 0 ? key.end_field + 1 : key.end_field;
    std::size_t pos = 0;
    while (fields > 0 && pos < line.size()) {
        --fields;
        if (separator) {
            pos = find_separator(line, pos, *separator);
            if (pos < line.size() && (fields > 0 || key.end_char != 0)) ++pos;
        } else {
            pos = skip_non_blanks(line, skip_blanks(line, pos));
        }
    }
    if (key.end_char == 0) return pos;
    if (key.modifiers.skip_end_blanks) pos = skip_blanks(line, pos);
    return advance(line, pos, key.end_char);
}

// The key's text; a key that would end before it begins is empty.
std::string_view key_text(std::string_view line, const TextKey& key, const std::optional<char>& separator) {
    const std::size_t begin = key_begin(line, key, separator);
    const std::size_t end = key_end(line, key, separator);
    return line.substr(begin, end > begin ? end - begin : 0);
}

// The number at the front of a key as GNU's -n reads it in the C locale: blanks, an optional '-',
// digits, an optional '.' and digits. Kept in canonical form: the integer part without leading
// zeros, the fraction without trailing zeros, the sign 0 for any zero (text without a number).
struct Decimal {
    int sign = 0;
    std::string_view integer;
    std::string_view fraction;
};

std::string_view take_digits(std::string_view text, std::size_t& pos) {
    const std::size_t start = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    return text.substr(start, pos - start);
}

Decimal parse_decimal(std::string_view key) {
    std::size_t pos = skip_blanks(key, 0);
    const bool negative = pos < key.size() && key[pos] == '-';
    if (negative) ++pos;
    Decimal number;
    number.integer = take_digits(key, pos);
    if (pos < key.size() && key[pos] == '.') number.fraction = take_digits(key, ++pos);
    while (!number.integer.empty() && number.integer.front() == '0') number.integer.remove_prefix(1);
    while (!number.fraction.empty() && number.fraction.back() == '0') number.fraction.remove_suffix(1);
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
int compare_key(std::string_view a, std::string_view b, const TextKey& key, const std::optional<char>& separator) {
    const std::string_view x = key_text(a, key, separator);
    const std::string_view y = key_text(b, key, separator);
    if (key.modifiers.numeric) return compare_numbers(parse_decimal(x), parse_decimal(y));
    if (key.modifiers.fold) return compare_folded(x, y);
    return sign_of(x.compare(y));
}

// Writes bytes [skip, skip + window) of a sort code into the window, each XORed with `mask`; a
// byte past the window's end marks the code as cut short.
struct CodeWriter {
    std::byte* pos;
    std::byte* end;
    std::size_t skip;
    unsigned char mask = 0;
    bool cut = false;

    void put(unsigned char value) {
        if (skip > 0) {
            --skip;
        } else if (pos != end) {
            *pos++ = std::byte{static_cast<unsigned char>(value ^ mask)};
        } else {
            cut = true;
        }
    }
    // put() of each byte of `text`, at once where none is skipped and those that fit hold no 0
    // byte; returns how many were put so (0 where put() must take them).
    std::size_t put_plain(std::string_view text) {
        const std::size_t n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(end - pos));
        if (skip > 0 || std::memchr(text.data(), 0, n)) return 0;
        std::memcpy(pos, text.data(), n);
        if (mask != 0)
            for (std::size_t i = 0; i < n; ++i) pos[i] ^= std::byte{mask};
        pos += n;
        cut = n < text.size();
        return cut ? text.size() : n;
    }
    void put_digits(std::string_view digits) {
        for (std::size_t i = 0; i < digits.size() && !cut; ++i) put(static_cast<unsigned char>(digits[i]));
    }
};

// A number as bytes whose memcmp order is its order, self-delimiting: a class byte (negative,
// zero, positive), then for non-zero numbers the magnitude (count of integer digits, one byte
// below 255, else 255 and 8 bytes big-endian; the significant digits; a 0 byte), complemented for
// negative numbers.
void encode_number(const Decimal& number, CodeWriter& out) {
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
    out.put_digits(number.integer);
    out.put_digits(number.fraction);
    out.put(0);
    out.mask = mask;
}

// Bytes (folded with f) as a self-delimiting code in their order: a 0 byte as 0 0xff, and 0 0 at
// the end, so that a string sorts before its extensions.
void encode_bytes(std::string_view text, bool fold, CodeWriter& out) {
    for (std::size_t i = fold ? 0 : out.put_plain(text); i < text.size() && !out.cut; ++i) {
        const unsigned char byte = fold ? fold_upper(text[i]) : static_cast<unsigned char>(text[i]);
        out.put(byte);
        if (byte == 0) out.put(0xff);
    }
    out.put(0);
    out.put(0);
}

void encode_key(std::string_view line, const TextKey& key, const std::optional<char>& separator, CodeWriter& out) {
    const std::string_view text = key_text(line, key, separator);
    out.mask = key.modifiers.reverse ? 0xff : 0;
    if (key.modifiers.numeric) {
        encode_number(parse_decimal(text), out);
    } else {
        encode_bytes(text, key.modifiers.fold, out);
    }
}

}  // namespace

int compare_lines(std::string_view a, std::string_view b, const TextKeys& keys) {
    for (const TextKey& key : keys.keys) {
        const int order = compare_key(a, b, key, keys.separator);
        if (order != 0) return key.modifiers.reverse ? -order : order;
    }
    if (!keys.keys.empty() && (keys.stable || keys.unique)) return 0;
    const int order = sign_of(a.compare(b));
    return keys.reverse ? -order : order;
}

bool equal_keys(std::string_view a, std::string_view b, const TextKeys& keys) {
    if (keys.keys.empty()) return a == b;
    return std::all_of(keys.keys.begin(), keys.keys.end(),
                       [&](const TextKey& key) { return compare_key(a, b, key, keys.separator) == 0; });
}

bool key_prefix(std::string_view line, const TextKeys& keys, std::span<std::byte> out, std::size_t skip) {
    CodeWriter writer{out.data(), out.data() + out.size(), skip};
    for (const TextKey& key : keys.keys) {
        if (writer.cut) break;
        encode_key(line, key, keys.separator, writer);
    }
    if (!writer.cut && (keys.keys.empty() || !(keys.stable || keys.unique))) {
        writer.mask = keys.reverse ? 0xff : 0;
        encode_bytes(line, false, writer);
    }
    std::fill(writer.pos, writer.end, std::byte{0});
    return !writer.cut;
}

}  // namespace gpusort
