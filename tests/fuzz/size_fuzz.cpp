// Fuzz target: parse_size on the input as text. A reference written here decides by the grammar
// of size_parse.hpp (digits, an optional fraction, an optional suffix B, K, M, G or T, the last
// four also with B or iB after them, in any case) and computes the exact value floor(number *
// 1024^power) with decimal long multiplication; parse_size must accept exactly the texts of the
// grammar whose value is at most 18e18, with that value, and read its own decimal result back.
#include "fuzz_targets.hpp"

#include "src/cli/size_parse.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort::fuzz {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct SizeText {
    std::string digits;   // the integer part then the fraction, without the point
    std::size_t fraction_digits = 0;
    int power = 0;        // of 1024
};

std::optional<SizeText> match_grammar(std::string_view text) {
    SizeText size;
    std::size_t i = 0;
    for (; i < text.size() && is_digit(text[i]); ++i) size.digits += text[i];
    if (i < text.size() && text[i] == '.') {
        for (++i; i < text.size() && is_digit(text[i]); ++i, ++size.fraction_digits) size.digits += text[i];
    }
    if (size.digits.empty()) return std::nullopt;
    std::string suffix;
    for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    static const std::string kSuffixes[][3] = {{"", "B", ""}, {"K", "KB", "KIB"}, {"M", "MB", "MIB"},
                                               {"G", "GB", "GIB"}, {"T", "TB", "TIB"}};
    for (int power = 0; power < 5; ++power) {
        for (const auto& s : kSuffixes[power]) {
            if ((power == 0 || !s.empty()) && suffix == s) {
                size.power = power;
                return size;
            }
        }
    }
    return std::nullopt;
}

// floor(digits / 10^fraction_digits * 1024^power) in decimal, without leading zeros ("0" for 0).
std::string exact_value(const SizeText& size) {
    std::vector<int> number;  // decimal digits, least significant first
    for (auto c = size.digits.rbegin(); c != size.digits.rend(); ++c) number.push_back(*c - '0');
    for (int p = 0; p < size.power; ++p) {
        int carry = 0;
        for (auto& d : number) {
            const int t = d * 1024 + carry;
            d = t % 10;
            carry = t / 10;
        }
        for (; carry > 0; carry /= 10) number.push_back(carry % 10);
    }
    number.erase(number.begin(), number.begin() + static_cast<std::ptrdiff_t>(size.fraction_digits));
    while (!number.empty() && number.back() == 0) number.pop_back();
    if (number.empty()) return "0";
    std::string text;
    for (auto d = number.rbegin(); d != number.rend(); ++d) text += static_cast<char>('0' + *d);
    return text;
}

bool decimal_at_most(const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a <= b;
}

}  // namespace

void size_target(Input data) {
    const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
    const std::string shown = "parse_size('" + std::string(text) + "')";
    const std::optional<std::uint64_t> value = parse_size(text);
    const std::optional<SizeText> grammar = match_grammar(text);
    if (!grammar) {
        check(!value, shown + " accepted a text outside the grammar");
        return;
    }
    const std::string exact = exact_value(*grammar);
    if (!decimal_at_most(exact, "18000000000000000000")) {
        check(!value, shown + " accepted a size above 18e18");
        return;
    }
    check(value.has_value(), shown + " refused a size of the grammar: " + exact);
    check(std::to_string(*value) == exact, shown + " gave " + std::to_string(*value) + ", not " + exact);
    check(parse_size(std::to_string(*value)) == value, shown + ": its decimal result reads back otherwise");
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::size_target)
