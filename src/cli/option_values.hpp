// One rule for the command lines of every program: an option's value given as the next word
// ("--stats FILE") may not look like an option. Boost.Program_options takes "--record-size=16" as
// the value of "--stats --record-size=16", since no option is named "record-size=16": the record
// size would be lost without a word. "--stats=--odd-name" still names such a file, as does "-".
// So that this check comes first, the operands (the words that are neither options nor values)
// are taken however many there are and counted only after it: in "--stats --type u32 IN OUT"
// the missing value is the error, not the three operands that Boost would see. Also the layout of
// the options in --help, shared by the programs.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

// The options of `options` as --help lists them: Boost's layout with one more space before the
// descriptions, so that even the longest option is two spaces from its description, which is how
// help2man (the manual pages) tells one from the other.
inline std::string options_help(const boost::program_options::options_description& options) {
    std::ostringstream text;
    options.print(text, options.get_option_column_width() + 1);
    return text.str();
}

// Adds --help and --version, the last options of every program.
inline void add_help_and_version(boost::program_options::options_description& options) {
    options.add_options()("help,h", "show this help")("version", "show the version");
}

// A program's --help page: its options, then its exit statuses and examples (lines of "  CODE  what"
// and "  COMMAND  what"), each under its heading as help2man reads them.
inline std::string help_page(const boost::program_options::options_description& options,
                             const std::string& exit_statuses, const std::string& examples) {
    return options_help(options) + "\nExit status:\n" + exit_statuses + "\nExamples:\n" + examples;
}

// The hidden option that takes every operand.
inline constexpr const char* kOperands = "operands";

// Adds the hidden option that takes the operands, any number of them, to `options` and `positional`.
inline void add_operands(boost::program_options::options_description& options,
                         boost::program_options::positional_options_description& positional) {
    options.add_options()(kOperands, boost::program_options::value<std::vector<std::string>>());
    positional.add(kOperands, -1);
}

// The words `args` (the program's name left out) read as the options of `visible` and any number
// of operands, an option's value that looks like an option refused first (value_is_an_option);
// Boost's own errors are thrown as they are.
inline boost::program_options::variables_map parse_words(const std::vector<std::string>& args,
                                                         const boost::program_options::options_description& visible) {
    namespace po = boost::program_options;
    po::options_description all;
    po::positional_options_description positional;
    all.add(visible);
    add_operands(all, positional);
    const po::parsed_options parsed = po::command_line_parser(args).options(all).positional(positional).run();
    refuse_options_as_values(parsed);
    po::variables_map vm;
    po::store(parsed, vm);
    po::notify(vm);
    return vm;
}

// The operands stored in `vm` (none when none was given). More than `most` is an error whose
// message is `too_many`.
inline std::vector<std::string> operands(const boost::program_options::variables_map& vm, std::size_t most,
                                         const std::string& too_many) {
    std::vector<std::string> words;
    if (vm.count(kOperands)) words = vm[kOperands].as<std::vector<std::string>>();
    if (words.size() > most) throw std::invalid_argument(too_many);
    return words;
}

}  // namespace gpusort
