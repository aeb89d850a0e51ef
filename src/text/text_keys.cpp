// parse_text_key(): GNU sort's -k syntax and messages; make_text_keys(): the inheritance of the
// global modifiers; quote_gnu(): GNU's quoting of arguments in messages (C locale).
#include "src/text/text_keys.hpp"

#include "src/text/gnu_number.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpusort {

namespace {

// A count at the front of `text` as GNU's -k reads one (spaces and a '+' allowed before the digits,
// a value too large saturated); sets `rest` to what follows the digits. Throws "WHAT: invalid count
// at start of 'TEXT'" when there are no digits.
std::size_t parse_count(std::string_view text, std::string_view& rest, const char* what) {
    const GnuNumber number = read_gnu_number(text, "");
    if (number.invalid)
        throw std::invalid_argument(std::string(what) + ": invalid count at start of " + quote_gnu(text));
    rest = text.substr(number.end);
    return static_cast<std::size_t>(std::min<std::uintmax_t>(number.value, SIZE_MAX));
}

[[noreturn]] void bad_spec(std::string_view spec, const char* why) {
    throw std::invalid_argument(std::string(why) + ": invalid field specification " + quote_gnu(spec));
}

// The modifier letters at the front of `rest` into `key`; 'b' marks the start or the end position.
void parse_modifiers(std::string_view spec, std::string_view& rest, KeyModifiers& key, bool at_end) {
    for (; !rest.empty(); rest.remove_prefix(1)) {
        switch (rest.front()) {
            case 'b': (at_end ? key.skip_end_blanks : key.skip_start_blanks) = true; break;
            case 'n': key.numeric = true; break;
            case 'f': key.fold = true; break;
            case 'r': key.reverse = true; break;
            case 'd': case 'g': case 'h': case 'i': case 'M': case 'R': case 'V':
                throw std::invalid_argument("key modifier '" + std::string(1, rest.front()) + "' in key " +
                                            quote_gnu(spec) + " is not supported (only b, f, n and r are)");
            default: return;
        }
    }
}

}  // namespace

TextKey parse_text_key(std::string_view spec) {
    TextKey key;
    std::string_view rest;
    const std::size_t start_field = parse_count(spec, rest, "invalid number at field start");
    if (start_field == 0) bad_spec(spec, "field number is zero");
    key.start_field = start_field - 1;
    if (!rest.empty() && rest.front() == '.') {
        const std::size_t start_char = parse_count(rest.substr(1), rest, "invalid number after '.'");
        if (start_char == 0) bad_spec(spec, "character offset is zero");
        key.start_char = start_char - 1;
    }
    parse_modifiers(spec, rest, key.modifiers, false);
    if (!rest.empty() && rest.front() == ',') {
        const std::size_t end_field = parse_count(rest.substr(1), rest, "invalid number after ','");
        if (end_field == 0) bad_spec(spec, "field number is zero");
        key.end_field = end_field - 1;
        if (!rest.empty() && rest.front() == '.') key.end_char = parse_count(rest.substr(1), rest, "invalid number after '.'");
        parse_modifiers(spec, rest, key.modifiers, true);
    }
    if (!rest.empty()) bad_spec(spec, "stray character in field spec");
    return key;
}

std::optional<char> separator_byte(std::string_view value) {
    if (value == "\\0") return '\0';
    if (value.size() != 1) return std::nullopt;
    return value.front();
}

TextKeys make_text_keys(const TextOptions& options) {
    TextKeys keys;
    keys.keys = options.keys;
    for (TextKey& key : keys.keys) {
        if (!key.modifiers.any_but_reverse() && !key.modifiers.reverse) key.modifiers = options.global;
    }
    if (keys.keys.empty() && options.global.any_but_reverse()) {
        TextKey whole_line;
        whole_line.modifiers = options.global;
        keys.keys.push_back(whole_line);
    }
    keys.reverse = options.global.reverse;
    keys.separator = options.separator;
    keys.stable = options.stable;
    keys.unique = options.unique;
    keys.zero_terminated = options.zero_terminated;
    return keys;
}

std::string quote_gnu(std::string_view text) {
    static constexpr char kNamed[] = "abtnvfr";  // the C escapes of bytes 7 to 13
    std::string quoted = "'";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\'' || c == '\\') {
            quoted += '\\';
            quoted += c;
        } else if (byte >= 0x20 && byte < 0x7f) {
            quoted += c;
        } else if (byte >= 7 && byte <= 13) {
            quoted += '\\';
            quoted += kNamed[byte - 7];
        } else {
            quoted += '\\';
            quoted += static_cast<char>('0' + (byte >> 6));
            quoted += static_cast<char>('0' + ((byte >> 3) & 7));
            quoted += static_cast<char>('0' + (byte & 7));
        }
    }
    return quoted + "'";
}

}  // namespace gpusort
