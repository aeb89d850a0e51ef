// GNU sort's command line (coreutils 9.1) for gpusort-sort, read with GNU's syntax: short options
// bundled ("-nr", "-k2,2n", "-t,") or with their value in the next argument ("-t ,"), long
// options with "=VALUE" or the next argument and as unambiguous abbreviations ("--rev"), options
// after operands, "--" ending the options, "-" for stdin. The options outside the supported set
// (-d -g -h -i -M -R -V -y, --sort, --random-source, --files0-from, --compress-program,
// --batch-size, --debug, the obsolete "+POS1 -POS2" keys) are refused by name.
#pragma once

#include "src/text/text_keys.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusort {

// -c, --check, --check=diagnose-first: report the first line out of order; -C, --check=quiet,
// --check=silent: only the exit status.
enum class CheckMode { none, diagnose, quiet };

struct SortCommand {
    std::vector<std::string> inputs;              // operands in order; {"-"} (stdin) when none
    std::optional<std::string> output;            // -o FILE, --output=FILE
    std::optional<std::uint64_t> buffer_bytes;    // -S SIZE: the largest given, in bytes
    std::vector<std::string> temp_dirs;           // -T DIR, in order
    std::optional<std::size_t> parallel;          // --parallel=N (N >= 1)
    CheckMode check = CheckMode::none;            // -c, -C, --check
    bool merge = false;                           // -m, --merge
    bool help = false;                            // --help: to be printed, nothing else done
    bool version = false;                         // --version: likewise
    TextKeys keys;                                // the order (always that of LC_ALL=C)
};

// Reads the arguments that follow the program's name. Throws std::invalid_argument with a
// one-line message, without the program's name, for a command line GNU sort would refuse ("option
// requires an argument -- 'k'", "multi-character tab ','", "invalid -S argument 'x'", ...) or that
// asks for what this sort does not do ("option '-g' (--general-numeric-sort) is not supported").
// Reading stops at --help or --version, as GNU's does. -S's "N%" is N percent of
// `physical_memory` (bytes; 0: the machine's, from sysconf).
SortCommand parse_sort_args(const std::vector<std::string>& args, std::uint64_t physical_memory = 0);
SortCommand parse_sort_args(int argc, const char* const* argv);

}  // namespace gpusort
