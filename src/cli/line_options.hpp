// The options of gpusort-file --lines (CLI.md): text lines sorted as LC_ALL=C sort sorts them,
// with GNU sort's keys spelled as gpusort-file's options (--line-key, --field-separator,
// --numeric, ...) beside gpusort-file's own --descending, --unique and --stable; turned into the
// TextKeys of the text sort by one function, which also refuses the options of binary records.
#pragma once

#include "src/text/text_keys.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include <optional>

namespace gpusort {

// The help of --lines in gpusort-file.
inline constexpr const char* kSortLinesHelp =
    "sort text lines as LC_ALL=C sort does (the keys below; --descending, --unique and --stable as sort's -r, -u and -s)";

// Adds --lines (whose help is `lines_help`), --line-key, --field-separator, --numeric,
// --ignore-case, --ignore-leading-blanks and --zero-terminated to `options`.
void add_line_options(boost::program_options::options_description& options, const char* lines_help = kSortLinesHelp);

// The order of --lines (nullopt without it): --line-key as -k, --field-separator as -t,
// --numeric, --ignore-case and --ignore-leading-blanks as -n -f -b, --descending as -r, --stable
// as -s, --unique as -u, --zero-terminated as -z, with GNU's inheritance of the global
// modifiers. Throws std::invalid_argument with a one-line message for an option of binary records
// beside --lines (--type, --key, ...), a line option without --lines, or a malformed key.
std::optional<TextKeys> parse_line_options(const boost::program_options::variables_map& vm);

}  // namespace gpusort
