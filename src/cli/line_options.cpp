// The options of gpusort-file --lines and the one mapping of them onto TextKeys.
#include "src/cli/line_options.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort {

namespace po = boost::program_options;

namespace {

// The options only a sort of lines takes.
constexpr const char* kLineOnly[] = {"line-key", "field-separator", "numeric", "ignore-case", "ignore-leading-blanks",
                                     "zero-terminated"};
// gpusort-file's options that a sort of lines has no use for: those of binary records and
// columns, of the GPU (the text sort chooses where its chunks are sorted), and of direct I/O.
constexpr const char* kBinaryOnly[] = {"type",    "key",    "record-size",   "format",        "values",
                                       "index-out", "index-type", "gather",  "backend",       "device",
                                       "device-memory", "spill-io", "input-io", "output-io"};

bool given(const po::variables_map& vm, const char* name) { return vm.count(name) > 0 && !vm[name].defaulted(); }

// --line-key SPEC, read as GNU sort reads -k SPEC, with its message named after the option.
TextKey line_key(const std::string& spec) {
    try {
        return parse_text_key(spec);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--line-key: ") + e.what());
    }
}

}  // namespace

void add_line_options(po::options_description& options, const char* lines_help) {
    options.add_options()
        ("lines", lines_help)
        ("line-key", po::value<std::vector<std::string>>()->value_name("POS1[,POS2]")->composing(),
         "with --lines: a key, as sort's -k: F[.C][OPTS][,F[.C][OPTS]], fields and characters from 1, OPTS of b, f, n, r; "
         "repeatable, the first most significant (default: the whole line)")
        ("field-separator", po::value<std::string>()->value_name("SEP"),
         "with --lines: fields end at the byte SEP (or \\0), as sort's -t (default: where blanks begin)")
        ("numeric", "with --lines: compare keys as decimal numbers (sort's -n)")
        ("ignore-case", "with --lines: compare lower-case letters as upper-case ones (sort's -f)")
        ("ignore-leading-blanks", "with --lines: skip the blanks before each key (sort's -b)")
        ("zero-terminated", "with --lines: lines end with a NUL byte, not a newline (sort's -z)");
}

std::optional<TextKeys> parse_line_options(const po::variables_map& vm) {
    if (!vm.count("lines")) {
        for (const char* name : kLineOnly)
            if (vm.count(name)) throw std::invalid_argument(std::string("--") + name + " is for --lines (see --help)");
        return std::nullopt;
    }
    for (const char* name : kBinaryOnly)
        if (given(vm, name))
            throw std::invalid_argument(std::string("--lines excludes --") + name + ", an option of binary records (see --help)");
    TextOptions text;
    if (vm.count("line-key"))
        for (const std::string& spec : vm["line-key"].as<std::vector<std::string>>()) text.keys.push_back(line_key(spec));
    if (vm.count("field-separator")) {
        const std::string& value = vm["field-separator"].as<std::string>();
        text.separator = separator_byte(value);
        if (!text.separator) throw std::invalid_argument("--field-separator: '" + value + "' is not one byte (or \\0)");
    }
    text.global.numeric = vm.count("numeric") > 0;
    text.global.fold = vm.count("ignore-case") > 0;
    text.global.skip_start_blanks = text.global.skip_end_blanks = vm.count("ignore-leading-blanks") > 0;
    text.global.reverse = vm.count("descending") > 0;
    text.stable = vm.count("stable") > 0;
    text.unique = vm.count("unique") > 0;
    text.zero_terminated = vm.count("zero-terminated") > 0;
    return make_text_keys(text);
}

}  // namespace gpusort
