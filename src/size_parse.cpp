// parse_size: decimal number, optional fraction, optional K/M/G/T suffix (powers of 1024).
#include "src/size_parse.hpp"

#include <cctype>
#include <cmath>
#include <string>

namespace gpusort {

std::optional<std::uint64_t> parse_size(std::string_view text) {
    std::size_t i = 0;
    long double value = 0;
    bool digits = false;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, digits = true)
        value = value * 10 + (text[i] - '0');
    if (i < text.size() && text[i] == '.') {
        long double scale = 0.1L;
        for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, digits = true) {
            value += (text[i] - '0') * scale;
            scale /= 10;
        }
    }
    if (!digits) return std::nullopt;
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
    const long double bytes = std::floor(value * std::pow(1024.0L, power));
    if (bytes > 18e18L) return std::nullopt;
    return static_cast<std::uint64_t>(bytes);
}

}  // namespace gpusort
