// A whole number from the digits of an option's value (Boost.Program_options), shared by the
// options of gpusort-file (--threads): "-1" is refused (Boost would read it into an
// unsigned type as its largest value), as is a number too large for T.
#pragma once

#include <boost/program_options/variables_map.hpp>

#include <charconv>
#include <stdexcept>
#include <string>

namespace gpusort {

// The value of option `name`, which must be present; throws std::invalid_argument naming it.
template <class T>
T count_option(const boost::program_options::variables_map& vm, const char* name) {
    const auto& text = vm[name].as<std::string>();
    T value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        throw std::invalid_argument(std::string("--") + name + ": '" + text + "' is not a whole number");
    return value;
}

}  // namespace gpusort
