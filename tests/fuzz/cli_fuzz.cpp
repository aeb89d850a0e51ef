// Fuzz target: parse_command_line on the input split into words at newlines, and the --stats JSON
// of what it parsed. It must return or throw std::invalid_argument with a one-line message; what
// it accepts must keep the documented limits, give the numbers that the words "--NAME=N" spell
// (for the unsigned options, where Boost would read "-1" as a huge number), and stats_json must
// give back the INPUT and OUTPUT names through JSON string escaping.
#include "fuzz_targets.hpp"

#include "src/cli/cli_options.hpp"
#include "src/cli/size_parse.hpp"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusort::fuzz {

namespace {

// The words "--NAME=VALUE" before any "--" give VALUE; the last one wins (Boost refuses repeats).
std::optional<std::string_view> value_word(const std::vector<std::string>& words, std::string_view name) {
    std::optional<std::string_view> value;
    const std::string prefix = "--" + std::string(name) + "=";
    for (const auto& word : words) {
        if (word == "--") break;
        if (word.rfind(prefix, 0) == 0) value = std::string_view(word).substr(prefix.size());
    }
    return value;
}

// The unsigned number a word spells (digits, a '+' before them allowed), nullopt for anything else.
std::optional<std::uint64_t> unsigned_number(std::string_view text) {
    if (!text.empty() && text[0] == '+') text.remove_prefix(1);
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// The JSON string value of "key" in a one-level object as stats_json writes it, decoded.
std::optional<std::string> json_string_value(const std::string& json, const std::string& key) {
    const std::string start = "\"" + key + "\": \"";
    std::size_t i = json.find(start);
    if (i == std::string::npos) return std::nullopt;
    std::string value;
    for (i += start.size(); i < json.size(); ++i) {
        const char c = json[i];
        if (c == '"') return value;
        if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;  // must have been escaped
        if (c != '\\') {
            value += c;
            continue;
        }
        if (++i == json.size()) return std::nullopt;
        if (json[i] == '"' || json[i] == '\\' || json[i] == '/') {
            value += json[i];
        } else if (json[i] == 'u' && i + 4 < json.size()) {
            unsigned code = 0;
            const auto [end, error] = std::from_chars(json.data() + i + 1, json.data() + i + 5, code, 16);
            if (error != std::errc() || end != json.data() + i + 5 || code > 0xff) return std::nullopt;
            value += static_cast<char>(code);
            i += 4;
        } else {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// `text` as a failure shows it: bytes outside printable ASCII as \xHH, so that a NUL does not cut
// the message short.
std::string printable(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string shown;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) {
            shown += c;
        } else {
            shown += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
        }
    }
    return shown;
}

}  // namespace

void cli_target(Input data) {
    std::vector<std::string> words;
    std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
    for (;;) {
        const std::size_t end = text.find('\n');
        words.emplace_back(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    std::string shown;
    for (const auto& word : words) shown += (shown.empty() ? "'" : " '") + printable(word) + "'";

    CliCommand command;
    try {
        command = parse_command_line(words);
    } catch (const std::invalid_argument& e) {
        const std::string message = e.what();
        check(!message.empty() && message.find('\n') == std::string::npos,
              "the error for " + shown + " is not one line: " + message);
        return;
    }
    if (command.action == CliCommand::Action::help) {
        check(command.help_text.find("--key") != std::string::npos, "the help text lacks the options");
        return;
    }
    if (command.action == CliCommand::Action::version) return;

    const SortOptions& sort = command.sort;
    if (sort.records) {
        try {
            sort.records->validate();
        } catch (const std::invalid_argument& e) {
            check(false, shown + " was accepted with an invalid key spec: " + e.what());
        }
    }
    check(!sort.memory_bytes || *sort.memory_bytes >= kMinMemoryBudget,
          shown + ": a memory budget below 1M was accepted");
    check(!sort.threads || *sort.threads >= 1, shown + ": 0 threads were accepted");
    check(sort.device >= 0, shown + ": a negative device was accepted");
    check(sort.compression_level == -1 || (sort.compression_level >= 0 && sort.compression_level <= 19),
          shown + ": a compression level outside 0-19 was accepted");
    check(!(command.quiet && command.progress.value_or(false)), shown + ": --progress and --quiet were both accepted");
    if (const auto threads = value_word(words, "threads"))
        check(sort.threads && unsigned_number(*threads) == *sort.threads,
              shown + ": --threads=" + printable(*threads) + " was taken as " +
                  std::to_string(sort.threads.value_or(0)));
    if (const auto size = value_word(words, "record-size")) {
        const std::size_t taken = sort.records ? sort.records->record_size : key_width(sort.order.type);
        check(parse_whole_size(*size) == taken,
              shown + ": --record-size=" + printable(*size) + " was taken as " + std::to_string(taken));
    }

    const std::string json = stats_json(sort, SortReport{});
    check(json_string_value(json, "input") == sort.input, shown + ": the JSON does not give INPUT back: " + json);
    check(json_string_value(json, "output") == sort.output, shown + ": the JSON does not give OUTPUT back: " + json);
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::cli_target)
