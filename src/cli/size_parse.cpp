// parse_size: decimal number, optional fraction, optional K/M/G/T suffix (powers of 1024), in
// exact integer arithmetic (the result is floor(number * unit)).
#include "src/cli/size_parse.hpp"

#include <cctype>
#include <string>

namespace gpusort {

namespace {

// The largest size accepted (bytes).
constexpr std::uint64_t kLargestSize = 18'000'000'000'000'000'000u;

std::string_view leading_digits(std::string_view text) {
    std::size_t n = 0;
    while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n]))) ++n;
    return text.substr(0, n);
}

// The size `text` gives, floor(number * unit); `exact` says whether nothing was cut off.
std::optional<std::uint64_t> parse(std::string_view text, bool& exact) {
    const std::string_view whole = leading_digits(text);
    std::size_t i = whole.size();
    std::string_view fraction;
    if (i < text.size() && text[i] == '.') {
        fraction = leading_digits(text.substr(i + 1));
        i += 1 + fraction.size();
    }
    if (whole.empty() && fraction.empty()) return std::nullopt;
    std::string suffix;
    for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    int power = 0;
    if (!suffix.empty()) {
        const std::string units = "BKMGT";
        const auto unit = units.find(suffix[0]);
        if (unit == std::string::npos) return std::nullopt;
        power = static_cast<int>(unit);
        const std::string rest = suffix.substr(1);
        if (!(rest.empty() || (power > 0 && (rest == "B" || rest == "IB")))) return std::nullopt;
    }
    const std::uint64_t unit = std::uint64_t{1} << (10 * power);
    // floor(0.fraction * unit): the fraction's digits times the unit, carried from the last one on.
    // The result is whole exactly when no step leaves a remainder (once a step is not whole, the
    // next ones cannot be).
    std::uint64_t fraction_bytes = 0;
    exact = true;
    for (auto d = fraction.rbegin(); d != fraction.rend(); ++d) {
        const std::uint64_t tenfold = static_cast<std::uint64_t>(*d - '0') * unit + fraction_bytes;
        exact = exact && tenfold % 10 == 0;
        fraction_bytes = tenfold / 10;
    }
    std::uint64_t number = 0;
    for (char c : whole) {
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (number > (kLargestSize - digit) / 10) return std::nullopt;
        number = number * 10 + digit;
    }
    if (number > (kLargestSize - fraction_bytes) / unit) return std::nullopt;
    return number * unit + fraction_bytes;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
    bool exact = true;
    return parse(text, exact);
}

std::optional<std::uint64_t> parse_whole_size(std::string_view text) {
    bool exact = true;
    const std::optional<std::uint64_t> size = parse(text, exact);
    if (!exact) return std::nullopt;
    return size;
}

}  // namespace gpusort
