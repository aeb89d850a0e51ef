// parse_sort_args(): GNU sort's options table, the reading of short and long options as glibc's
// getopt_long reads them (in order, operands kept where they are), and each option's value with
// GNU's rules and messages.
#include "src/text/sort_args.hpp"

#include "src/text/gnu_number.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace gpusort {

namespace {

enum class Id {
    ignore_leading_blanks, check, compress_program, debug, dictionary_order, ignore_case, files0_from,
    general_numeric, ignore_nonprinting, key, merge, month, numeric, human_numeric, version_sort, random_sort,
    random_source, sort_word, output, reverse, stable, batch_size, buffer_size, field_separator, temporary_directory,
    unique, zero_terminated, parallel, help, version, check_diagnose, check_quiet, obsolete_y
};

enum class Value { none, required, optional };

struct Option {
    const char* long_name;  // nullptr: short form only
    char short_name;        // 0: long form only
    Value value;
    Id id;
};

// GNU sort's options, the long ones in GNU's order (which its messages about ambiguous
// abbreviations follow); Reading::apply() says which are supported.
constexpr std::array kOptions = {
    Option{"ignore-leading-blanks", 'b', Value::none, Id::ignore_leading_blanks},
    Option{"check", 0, Value::optional, Id::check},
    Option{"compress-program", 0, Value::required, Id::compress_program},
    Option{"debug", 0, Value::none, Id::debug},
    Option{"dictionary-order", 'd', Value::none, Id::dictionary_order},
    Option{"ignore-case", 'f', Value::none, Id::ignore_case},
    Option{"files0-from", 0, Value::required, Id::files0_from},
    Option{"general-numeric-sort", 'g', Value::none, Id::general_numeric},
    Option{"ignore-nonprinting", 'i', Value::none, Id::ignore_nonprinting},
    Option{"key", 'k', Value::required, Id::key},
    Option{"merge", 'm', Value::none, Id::merge},
    Option{"month-sort", 'M', Value::none, Id::month},
    Option{"numeric-sort", 'n', Value::none, Id::numeric},
    Option{"human-numeric-sort", 'h', Value::none, Id::human_numeric},
    Option{"version-sort", 'V', Value::none, Id::version_sort},
    Option{"random-sort", 'R', Value::none, Id::random_sort},
    Option{"random-source", 0, Value::required, Id::random_source},
    Option{"sort", 0, Value::required, Id::sort_word},
    Option{"output", 'o', Value::required, Id::output},
    Option{"reverse", 'r', Value::none, Id::reverse},
    Option{"stable", 's', Value::none, Id::stable},
    Option{"batch-size", 0, Value::required, Id::batch_size},
    Option{"buffer-size", 'S', Value::required, Id::buffer_size},
    Option{"field-separator", 't', Value::required, Id::field_separator},
    Option{"temporary-directory", 'T', Value::required, Id::temporary_directory},
    Option{"unique", 'u', Value::none, Id::unique},
    Option{"zero-terminated", 'z', Value::none, Id::zero_terminated},
    Option{"parallel", 0, Value::required, Id::parallel},
    Option{"help", 0, Value::none, Id::help},
    Option{"version", 0, Value::none, Id::version},
    Option{nullptr, 'c', Value::none, Id::check_diagnose},
    Option{nullptr, 'C', Value::none, Id::check_quiet},
    Option{nullptr, 'y', Value::required, Id::obsolete_y},
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[noreturn]] void usage_error(const std::string& message) { throw std::invalid_argument(message); }

[[noreturn]] void refuse(const Option& option) {
    std::string message = "option '";
    if (option.short_name != 0) {
        message.append("-").append(1, option.short_name).append("'");
        if (option.long_name) message.append(" (--").append(option.long_name).append(")");
    } else {
        message.append("--").append(option.long_name).append("'");
    }
    usage_error(message + " is not supported");
}

// The long option that `name` names: exactly, or as the one option it abbreviates.
const Option& find_long(std::string_view name, std::string_view arg) {
    std::vector<const Option*> matches;
    for (const Option& option : kOptions) {
        if (!option.long_name) continue;
        const std::string_view long_name = option.long_name;
        if (long_name == name) return option;
        if (long_name.starts_with(name)) matches.push_back(&option);
    }
    if (matches.empty()) usage_error("unrecognized option " + quote_gnu(arg));
    if (matches.size() > 1) {
        std::string message = "option '--" + std::string(name) + "' is ambiguous; possibilities:";
        for (const Option* option : matches) message.append(" '--").append(option->long_name).append("'");
        usage_error(message);
    }
    return *matches.front();
}

const Option* find_short(char name) {
    const auto found = std::find_if(kOptions.begin(), kOptions.end(), [&](const Option& o) { return o.short_name == name; });
    return found == kOptions.end() ? nullptr : &*found;
}

// -S SIZE: a count with an optional suffix (b: bytes, K M G T P E Z Y and k m g t: powers of
// 1024, %: of the physical memory; none: KiB).
std::uint64_t parse_buffer_size(const std::string& text, const std::string& option, std::uint64_t physical_memory) {
    GnuNumber size = read_gnu_number(text, "EgGkKmMPtTYZ");
    const bool after_digit = size.end > 0 && is_digit(text[size.end - 1]);
    if (!size.invalid && !size.overflow && !size.invalid_suffix && after_digit) {
        if (size.value > UINT64_MAX / 1024) size.overflow = true;
        else size.value *= 1024;
    }
    if (size.invalid_suffix && !size.overflow && after_digit && size.end + 1 == text.size()) {
        if (text.back() == 'b') size.invalid_suffix = false;
        if (text.back() == '%') {
            const long double bytes = static_cast<long double>(physical_memory) * size.value / 100;
            size.invalid_suffix = false;
            size.overflow = bytes >= 18446744073709551616.0L;
            size.value = size.overflow ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
        }
    }
    if (size.invalid) usage_error("invalid " + option + " argument " + quote_gnu(text));
    if (size.invalid_suffix) usage_error("invalid suffix in " + option + " argument " + quote_gnu(text));
    if (size.overflow) usage_error(option + " argument " + quote_gnu(text) + " too large");
    return size.value;
}

std::size_t parse_parallel(const std::string& text) {
    const GnuNumber count = read_gnu_number(text, "");
    if (count.overflow && !count.invalid_suffix) return SIZE_MAX;
    if (count.invalid) usage_error("invalid --parallel argument " + quote_gnu(text));
    if (count.invalid_suffix) usage_error("invalid suffix in --parallel argument " + quote_gnu(text));
    if (count.value == 0) usage_error("number in parallel must be nonzero");
    return static_cast<std::size_t>(std::min<std::uintmax_t>(count.value, SIZE_MAX));
}

// --check=WORD: 'C' for quiet and silent, 'c' for diagnose-first, each also abbreviated.
char parse_check_word(const std::string& word) {
    static constexpr std::array<std::pair<std::string_view, char>, 3> kWords = {
        {{"quiet", 'C'}, {"silent", 'C'}, {"diagnose-first", 'c'}}};
    char found = 0;
    bool ambiguous = false;
    for (const auto& [name, letter] : kWords) {
        if (name == word) return letter;
        if (!name.starts_with(word)) continue;
        ambiguous = ambiguous || (found != 0 && found != letter);
        found = letter;
    }
    if (found == 0 || ambiguous) {
        usage_error(std::string(ambiguous ? "ambiguous" : "invalid") + " argument " + quote_gnu(word) +
                    " for '--check' (valid arguments are 'quiet', 'silent' and 'diagnose-first')");
    }
    return found;
}

// The command as read so far.
struct Reading {
    SortCommand command;
    TextOptions text;
    char check_letter = 0;
    std::uint64_t physical_memory = 0;

    void set_check(char letter) {
        if (check_letter != 0 && check_letter != letter) usage_error("options '-cC' are incompatible");
        check_letter = letter;
    }

    void set_separator(const std::string& value) {
        if (value.empty()) usage_error("empty tab");
        const std::optional<char> separator = separator_byte(value);
        if (!separator) usage_error("multi-character tab " + quote_gnu(value));
        if (text.separator && *text.separator != separator) usage_error("incompatible tabs");
        text.separator = separator;
    }

    void set_output(const std::string& value) {
        if (command.output && *command.output != value) usage_error("multiple output files specified");
        command.output = value;
    }

    // One option with its value, if it has one; `name` is its form written ("-S", "--buffer-size").
    void apply(const Option& option, const std::optional<std::string>& given, const std::string& name) {
        const std::string value = given.value_or("");
        KeyModifiers& global = text.global;
        switch (option.id) {
            case Id::ignore_leading_blanks: global.skip_start_blanks = global.skip_end_blanks = true; break;
            case Id::ignore_case: global.fold = true; break;
            case Id::numeric: global.numeric = true; break;
            case Id::reverse: global.reverse = true; break;
            case Id::stable: text.stable = true; break;
            case Id::unique: text.unique = true; break;
            case Id::zero_terminated: text.zero_terminated = true; break;
            case Id::key: text.keys.push_back(parse_text_key(value)); break;
            case Id::field_separator: set_separator(value); break;
            case Id::output: set_output(value); break;
            case Id::buffer_size: {
                const std::uint64_t bytes = parse_buffer_size(value, name, physical_memory);
                command.buffer_bytes = std::max(command.buffer_bytes.value_or(0), bytes);
                break;
            }
            case Id::temporary_directory: command.temp_dirs.push_back(value); break;
            case Id::parallel: command.parallel = parse_parallel(value); break;
            case Id::merge: command.merge = true; break;
            case Id::check: set_check(given ? parse_check_word(value) : 'c'); break;
            case Id::check_diagnose: set_check('c'); break;
            case Id::check_quiet: set_check('C'); break;
            case Id::help: command.help = true; break;
            case Id::version: command.version = true; break;
            default: refuse(option);
        }
    }

    bool done() const { return command.help || command.version; }
};

// A long option, "--NAME[=VALUE]"; `next` is the index of the argument after it.
void read_long(Reading& reading, const std::vector<std::string>& args, std::size_t& next) {
    const std::string& arg = args[next - 1];
    const std::size_t equals = arg.find('=');
    const std::string_view name = std::string_view(arg).substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const Option& option = find_long(name, arg);
    const std::string full_name = std::string("--") + option.long_name;
    std::optional<std::string> value;
    if (equals != std::string::npos) {
        if (option.value == Value::none) usage_error("option '" + full_name + "' doesn't allow an argument");
        value = arg.substr(equals + 1);
    } else if (option.value == Value::required) {
        if (next == args.size()) usage_error("option '" + full_name + "' requires an argument");
        value = args[next++];
    }
    reading.apply(option, value, full_name);
}

// A cluster of short options, "-nrk2,2"; the one that takes a value takes the rest of the cluster
// or the next argument.
void read_short(Reading& reading, const std::vector<std::string>& args, std::size_t& next) {
    const std::string& arg = args[next - 1];
    for (std::size_t i = 1; i < arg.size(); ++i) {
        const Option* option = find_short(arg[i]);
        if (!option) usage_error("invalid option -- " + quote_gnu(std::string(1, arg[i])));
        const std::string name = std::string("-") + arg[i];
        if (option->value == Value::none) {
            reading.apply(*option, std::nullopt, name);
            continue;
        }
        if (i + 1 < arg.size()) {
            reading.apply(*option, arg.substr(i + 1), name);
        } else {
            if (next == args.size()) usage_error("option requires an argument -- " + quote_gnu(std::string(1, arg[i])));
            reading.apply(*option, args[next++], name);
        }
        return;
    }
}

// Whether args[i] and args[i + 1] are an obsolete key, "+POS1 -POS2", as GNU sort reads them.
bool obsolete_key(const std::vector<std::string>& args, std::size_t i) {
    const auto numbered = [](const std::string& arg, char sign) {
        return arg.size() > 1 && arg[0] == sign && is_digit(arg[1]);
    };
    return numbered(args[i], '+') && i + 1 < args.size() && numbered(args[i + 1], '-');
}

void finish(Reading& reading) {
    SortCommand& command = reading.command;
    if (reading.check_letter != 0) {
        const std::string letter(1, reading.check_letter);
        if (command.inputs.size() > 1)
            usage_error("extra operand " + quote_gnu(command.inputs[1]) + " not allowed with -" + letter);
        if (command.output) usage_error("options '-" + letter + "o' are incompatible");
        command.check = reading.check_letter == 'c' ? CheckMode::diagnose : CheckMode::quiet;
    }
    if (command.inputs.empty()) command.inputs.push_back("-");
    command.keys = make_text_keys(reading.text);
}

std::uint64_t machine_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
}

}  // namespace

SortCommand parse_sort_args(const std::vector<std::string>& args, std::uint64_t physical_memory) {
    Reading reading;
    reading.physical_memory = physical_memory != 0 ? physical_memory : machine_memory();
    bool operands_only = false;
    for (std::size_t next = 0; next < args.size() && !reading.done();) {
        const std::string& arg = args[next++];
        if (operands_only || arg.size() < 2 || arg[0] != '-') {
            if (!operands_only && obsolete_key(args, next - 1))
                usage_error("obsolete key syntax " + quote_gnu(arg + " " + args[next]) + " is not supported (use -k)");
            reading.command.inputs.push_back(arg);
        } else if (arg == "--") {
            operands_only = true;
        } else if (arg[1] == '-') {
            read_long(reading, args, next);
        } else {
            read_short(reading, args, next);
        }
    }
    if (!reading.done()) finish(reading);
    return reading.command;
}

SortCommand parse_sort_args(int argc, const char* const* argv) {
    return parse_sort_args(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
}

}  // namespace gpusort
