// Fuzz target: gpusort-sort beside GNU sort (`LC_ALL=C sort`, coreutils), both run as programs
// with the same options on the same input files; their exit statuses, outputs and messages (after
// the programs' names) must be the same. The first bytes choose the options, the rest is the text:
//   byte 0  flags: bit 0 -r, 1 -u, 2 -s, 3 -n, 4 -b, 5 -f, 6 -z, 7 -t SEP
//   byte 1  bits 0-2 SEP: , . space tab - 0 newline \0; bits 3-5 the way (below); bits 6-7 the
//           number of keys -k (0 to 3)
//   byte 2  for ways 2 and 4, where the text is cut into its three inputs: at value/256 of it,
//           then halfway through the rest
//   byte 3  bit 0 -o onto the input (way 0); bit 1 --parallel=1 (ways other than 2 and 4); bit 2
//           the text repeated to 1000 lines (ways 0, 1, 5, 6, 7: large groups of lines with equal
//           keys, in one chunk); bits 3-4 26 bytes put before each line, longer than the key
//           prefix the engine sorts by (none, 0s, 1s, '-' and 9s)
//   then 3 bytes per key: a: bits 0-1 POS1's field - 1, bits 2-3 its character (0: none), bits
//           4-7 its modifiers b n r f; b: bits 0-1 whether there is a POS2 (0: none), bits 2-3
//           its field - 1, bits 4-5 its character (none, .0, .1, .3); c: bits 0-3 POS2's
//           modifiers b n r f, bits 4-7 all set: POS1 spelled F.0 (refused by both)
//   the rest: the text, each byte < 0xf0 one of a few characters (letters of both cases, digits,
//           '-', '.', ',', ':', '+', blanks, newline, NUL), each byte >= 0xf0 itself; at most 4 KiB.
// The ways: 0 one input file; 1 stdin; 2 three input files; 3 -S 1M -T DIR on the text repeated
// (each copy ending in a terminator) to 30000 lines or 3 MiB, so that sorted runs are merged;
// 4 -m on three pieces of the text each sorted first by GNU sort with the same options (a piece
// that had no last terminator left without one); 5 -c, 6 -C, 7 -c on the text sorted first.
// Nothing is checked where there is no GNU sort.
#include "fuzz_targets.hpp"

#include "../gnu_sort.hpp"
#include "../scratch_dir.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gpusort::fuzz {

namespace {

using testing::read_text;
using testing::shell_quote;
using testing::write_text;
using Args = std::vector<std::string>;

constexpr std::size_t kMaxText = 4096;

enum class Way { file, stdin_only, files, runs, merge, check, check_quiet, check_sorted };

// What a program did.
struct Outcome {
    int status = -1;  // the exit status; 128 + N for signal N
    std::string out;
    std::string err;
};

// The environment of both programs: this one's without the locale's variables, and LC_ALL=C.
const std::vector<std::string>& child_environment() {
    static const std::vector<std::string> env = [] {
        std::vector<std::string> vars;
        for (char** e = environ; *e; ++e) {
            const std::string_view var(*e);
            if (var.starts_with("LC_") || var.starts_with("LANG=") || var.starts_with("LANGUAGE=")) continue;
            vars.emplace_back(var);
        }
        vars.emplace_back("LC_ALL=C");
        return vars;
    }();
    return env;
}

// Runs `program` with `args`, stdin from `input` (empty: /dev/null), stdout and stderr into files
// of `dir`.
Outcome run(const testing::ScratchDir& dir, const std::string& program, const Args& args, const std::string& input) {
    const std::string out = dir / ".stdout", err = dir / ".stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, input.empty() ? "/dev/null" : input.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& var : child_environment()) envp.push_back(const_cast<char*>(var.c_str()));
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int error = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) throw std::runtime_error("cannot run " + program + ": " + std::strerror(error));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error("waitpid failed");
    }
    Outcome outcome{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text(out), read_text(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return outcome;
}

std::string without_name(std::string text, const std::string& name) {
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at)) text.erase(at, name.size());
    return text;
}

// The characters of the text: each byte below 0xf0 picks one of these, others stand for themselves.
constexpr char kCharacters[] = "\n\n\n\n  \t\t0011223456789--..,,aAbBcCxXyYzZ\0\0+eE_:";
constexpr std::string_view kAlphabet(kCharacters, sizeof kCharacters - 1);

std::string text_of(Input data) {
    std::string text;
    for (const std::uint8_t b : data.first(std::min(data.size(), kMaxText)))
        text += b >= 0xf0 ? static_cast<char>(b) : kAlphabet[b % kAlphabet.size()];
    return text;
}

constexpr std::array<std::string_view, 8> kSeparators = {",", ".", " ", "\t", "-", "0", "\n", "\\0"};

// A key position: F[.C][OPTS].
std::string position(unsigned field, std::string_view character, unsigned modifiers) {
    std::string pos = std::to_string(field);
    if (!character.empty()) pos.append(".").append(character);
    for (unsigned i = 0; i < 4; ++i)
        if (modifiers >> i & 1) pos += "bnrf"[i];
    return pos;
}

// The ordering options the header chooses (-c, -m, -S, inputs and outputs aside); advances `data`
// past the keys' bytes. Returns false when the bytes run out.
bool read_order(Input& data, Args& order, char& end) {
    const unsigned flags = data[0], how = data[1];
    const std::size_t keys = how >> 6;
    if (data.size() < 4 + 3 * keys) return false;
    std::string letters = "-";
    for (unsigned i = 0; i < 7; ++i)
        if (flags >> i & 1) letters += "rusnbfz"[i];
    if (letters.size() > 1) order.push_back(letters);
    if (flags & 128) order.insert(order.end(), {"-t", std::string(kSeparators[how & 7])});
    end = flags & 64 ? '\0' : '\n';
    const Input key_bytes = data.subspan(4, 3 * keys);
    for (std::size_t k = 0; k < keys; ++k) {
        const unsigned a = key_bytes[3 * k], b = key_bytes[3 * k + 1], c = key_bytes[3 * k + 2];
        static constexpr std::array<std::string_view, 4> kStart = {"", "1", "2", "3"}, kEnd = {"", "0", "1", "3"};
        std::string key = position(1 + (a & 3), (c >> 4) == 15 ? "0" : kStart[a >> 2 & 3], a >> 4);
        if (b & 3) key += "," + position(1 + (b >> 2 & 3), kEnd[b >> 4 & 3], c & 15);
        order.insert(order.end(), {"-k", key});
    }
    data = data.subspan(4 + 3 * keys);
    return true;
}

// The text cut in three at `at`/256 of it and halfway through the rest.
std::array<std::string, 3> pieces_of(const std::string& text, unsigned at) {
    const std::size_t first = text.size() * at / 256, second = first + (text.size() - first) / 2;
    return {text.substr(0, first), text.substr(first, second - first), text.substr(second)};
}

// Each line of the text (each terminator but the last followed by) `prefix` before it.
std::string prefixed(const std::string& text, const std::string& prefix, char end) {
    std::string all = prefix;
    for (std::size_t i = 0; i < text.size(); ++i) {
        all += text[i];
        if (text[i] == end && i + 1 < text.size()) all += prefix;
    }
    return all;
}

// The text repeated, each copy ending in a terminator, to `lines` lines or `bytes` bytes.
std::string repeated(const std::string& text, char end, std::size_t lines, std::size_t bytes) {
    std::string copy = text;
    if (copy.empty() || copy.back() != end) copy += end;
    const std::size_t copy_lines = static_cast<std::size_t>(std::count(copy.begin(), copy.end(), end));
    std::string all;
    for (std::size_t n = 0; n < lines && all.size() < bytes; n += copy_lines) all += copy;
    return all;
}

// GNU sort's output of `text` under `order`, with no last terminator where `text` had none.
std::string sorted_by_gnu(const testing::ScratchDir& dir, const Args& order, const std::string& text, char end) {
    const std::string path = dir / "presort";
    write_text(path, text);
    Args args = order;
    args.push_back(path);
    const Outcome sorted = run(dir, testing::gnu_sort(), args, "");
    std::filesystem::remove(path);
    std::string out = sorted.status == 0 ? sorted.out : text;
    if (!text.empty() && text.back() != end && !out.empty() && out.back() == end) out.pop_back();
    return out;
}

// One folder for the runs of this process, emptied before each.
const testing::ScratchDir& scratch() {
    static const testing::ScratchDir dir;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) std::filesystem::remove_all(entry.path());
    std::filesystem::create_directory(dir / "tmp");
    return dir;
}

std::string command_line(const Args& args, const std::string& input) {
    std::string line = "LC_ALL=C sort";
    for (const std::string& arg : args) line += " " + shell_quote(arg);
    if (!input.empty()) line += " < " + shell_quote(input);
    return line;
}

// The first line where `got` and `expected` differ, for the message.
std::string first_difference(const std::string& got, const std::string& expected) {
    const auto [g, e] = std::mismatch(got.begin(), got.end(), expected.begin(), expected.end());
    const std::size_t at = static_cast<std::size_t>(g - got.begin());
    const std::size_t from = at > 40 ? at - 40 : 0;
    return "at byte " + std::to_string(at) + ": " + shell_quote(got.substr(from, 80)) + " against " +
           shell_quote(expected.substr(from, 80));
}

}  // namespace

void text_target(Input data) {
    if (data.size() < 4 || testing::gnu_sort().empty()) return;
    Args order;
    char end = '\n';
    const unsigned how = data[1], cut = data[2], extra = data[3];
    if (!read_order(data, order, end)) return;
    const auto way = static_cast<Way>(how >> 3 & 7);
    const bool split = way == Way::files || way == Way::merge;
    std::string text = text_of(data);
    if (const unsigned prefix = extra >> 3 & 3; prefix != 0 && !text.empty())
        text = prefixed(text, prefix == 3 ? "-" + std::string(25, '9') : std::string(26, " 01"[prefix]), end);
    if (!split && way != Way::runs && (extra & 4)) text = repeated(text, end, 1000, std::size_t{1} << 20);

    const testing::ScratchDir& dir = scratch();
    const std::string in = dir / "in";
    Args args = order;
    std::string stdin_file;
    std::vector<std::string> files_to_compare;  // written by the programs: compared too
    switch (way) {
        case Way::file:
            write_text(in, text);
            args.push_back(in);
            if (extra & 1) {
                args.insert(args.end(), {"-o", in});
                files_to_compare.push_back(in);
            }
            break;
        case Way::stdin_only:
            write_text(in, text);
            stdin_file = in;
            break;
        case Way::files:
        case Way::merge: {
            const std::array<std::string, 3> pieces = pieces_of(text, cut);
            if (way == Way::merge) args.push_back("-m");
            for (std::size_t i = 0; i < pieces.size(); ++i) {
                const std::string path = dir / ("in" + std::to_string(i));
                write_text(path, way == Way::merge ? sorted_by_gnu(dir, order, pieces[i], end) : pieces[i]);
                args.push_back(path);
            }
            break;
        }
        case Way::runs:
            write_text(in, repeated(text, end, 30000, std::size_t{3} << 20));
            args.insert(args.end(), {"-S", "1M", "-T", dir / "tmp", in});
            break;
        case Way::check:
        case Way::check_quiet:
        case Way::check_sorted:
            write_text(in, way == Way::check_sorted ? sorted_by_gnu(dir, order, text, end) : text);
            args.insert(args.end(), {way == Way::check_quiet ? "-C" : "-c", in});
            break;
    }
    if (!split && (extra & 2)) args.push_back("--parallel=1");

    // Each program on a fresh copy of the inputs (-o may have replaced one).
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        if (entry.is_regular_file()) inputs.emplace_back(entry.path(), read_text(entry.path()));
    const Outcome expected = run(dir, testing::gnu_sort(), args, stdin_file);
    std::vector<std::string> expected_files;
    for (const std::string& path : files_to_compare) expected_files.push_back(read_text(path));
    for (const auto& [path, bytes] : inputs) write_text(path, bytes);
    const Outcome got = run(dir, GPUSORT_SORT_BIN, args, stdin_file);

    const std::string what = command_line(args, stdin_file);
    check(got.status == expected.status, "exit status " + std::to_string(got.status) + ", GNU sort's " +
                                             std::to_string(expected.status) + ": " + what + "\n" + got.err);
    check(got.out == expected.out, "the outputs differ (" + std::to_string(got.out.size()) + " bytes against " +
                                       std::to_string(expected.out.size()) + ", " + first_difference(got.out, expected.out) +
                                       "): " + what);
    check(without_name(got.err, "gpusort-sort: ") == without_name(expected.err, testing::gnu_sort() + ": "),
          "the messages differ: " + shell_quote(got.err) + " against " + shell_quote(expected.err) + ": " + what);
    for (std::size_t i = 0; i < files_to_compare.size(); ++i) {
        const std::string written = read_text(files_to_compare[i]);
        check(written == expected_files[i], "-o wrote another output (" + first_difference(written, expected_files[i]) + "): " + what);
    }
    check(std::filesystem::is_empty(dir / "tmp"), "temp files were left behind: " + what);
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::text_target)
