// read_gnu_number(): digits, saturation and the multiplying suffix letters of GNU's xstrtoumax.
#include "src/text/gnu_number.hpp"

namespace gpusort {

namespace {

bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The power of 1024 that a suffix letter stands for.
int suffix_power(char letter) {
    switch (letter) {
        case 'k': case 'K': return 1;
        case 'm': case 'M': return 2;
        case 'g': case 'G': return 3;
        case 't': case 'T': return 4;
        case 'P': return 5;
        case 'E': return 6;
        case 'Z': return 7;
        case 'Y': return 8;
        default: return 0;
    }
}

void multiply(GnuNumber& number, std::uintmax_t factor) {
    if (number.value > UINTMAX_MAX / factor) {
        number.value = UINTMAX_MAX;
        number.overflow = true;
    } else {
        number.value *= factor;
    }
}

}  // namespace

GnuNumber read_gnu_number(std::string_view text, std::string_view suffixes) {
    GnuNumber number;
    std::size_t pos = 0;
    while (pos < text.size() && is_c_space(text[pos])) ++pos;
    if (pos < text.size() && text[pos] == '+') ++pos;
    if (pos < text.size() && is_digit(text[pos])) {
        for (; pos < text.size() && is_digit(text[pos]); ++pos) {
            multiply(number, 10);
            const auto digit = static_cast<std::uintmax_t>(text[pos] - '0');
            if (number.value > UINTMAX_MAX - digit) number.overflow = true;
            number.value = number.overflow ? UINTMAX_MAX : number.value + digit;
        }
    } else if (!text.empty() && suffixes.find(text.front()) != std::string_view::npos) {
        number.value = 1;  // a unit alone, read from the very start as GNU does
        pos = 0;
    } else {
        number.invalid = true;
        return number;
    }
    number.end = pos;
    if (pos == text.size()) return number;
    if (suffixes.find(text[pos]) == std::string_view::npos) {
        number.invalid_suffix = true;
        return number;
    }
    for (int power = suffix_power(text[pos]); power > 0; --power) multiply(number, 1024);
    number.end = ++pos;
    number.invalid_suffix = pos != text.size();
    return number;
}

}  // namespace gpusort
