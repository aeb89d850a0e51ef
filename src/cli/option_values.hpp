// One rule for the command lines of every program: an option's value given as the next word
// ("--stats FILE") may not look like an option. Boost.Program_options takes "--record-size=16" as
// the value of "--stats --record-size=16", since no option is named "record-size=16": the record
// size would be lost without a word. "--stats=--odd-name" still names such a file, as does "-".
#pragma once

#include <boost/program_options/parsers.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpusort {

// Whether `word`, the word after an option that takes a value, is an option rather than the value.
inline bool looks_like_option(std::string_view word) { return word.size() > 1 && word[0] == '-'; }

// The error for option `name` ("--stats") followed by `word`, an option, instead of its value.
inline std::invalid_argument value_is_an_option(const std::string& name, const std::string& word) {
    return std::invalid_argument(name + ": its value is missing ('" + word +
                                 "' looks like an option); to mean that word, write " + name + "=" + word);
}

// Throws value_is_an_option for the first option of `parsed` whose value is such a next word.
inline void refuse_options_as_values(const boost::program_options::parsed_options& parsed) {
    for (const auto& option : parsed.options) {
        // original_tokens: the option's own word, then the words it took as its value.
        for (std::size_t i = 1; i < option.original_tokens.size(); ++i)
            if (looks_like_option(option.original_tokens[i]))
                throw value_is_an_option("--" + option.string_key, option.original_tokens[i]);
    }
}

}  // namespace gpusort
