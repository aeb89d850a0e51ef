// GNU sort as the reference of the text tests: where it is (/usr/bin/sort, else `sort` on PATH,
// only if it is GNU coreutils'), shell quoting, and a shell command run with its outputs kept.
#pragma once

#include "tests/scratch_dir.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace gpusort::testing {

// The first line that `command` prints on stdout, without its newline.
inline std::string first_output_line(const std::string& command) {
    std::string line;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buffer[4096] = {};
        if (std::fgets(buffer, sizeof buffer, pipe)) line.assign(buffer, std::strcspn(buffer, "\n"));
        ::pclose(pipe);
    }
    return line;
}

// The path of GNU sort, or empty when there is none.
inline const std::string& gnu_sort() {
    static const std::string path = [] {
        const std::string found = ::access("/usr/bin/sort", X_OK) == 0 ? "/usr/bin/sort" : first_output_line("command -v sort");
        if (found.empty()) return found;
        return first_output_line(found + " --version 2>/dev/null").find("GNU coreutils") != std::string::npos
                   ? found : std::string();
    }();
    return path;
}

inline std::string shell_quote(const std::string& arg) {
    std::string quoted = "'";
    for (const char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// What a shell command did: its exit status, stdout and stderr.
struct Outcome {
    int status = -1;
    std::string out;
    std::string err;
};

// Runs the shell command line `line` in `folder`, its stdout and stderr kept (through two files
// there, removed after).
inline Outcome run_in(const std::string& folder, const std::string& line) {
    const std::string out = folder + "/.stdout", err = folder + "/.stderr";
    const std::string command = "cd " + shell_quote(folder) + " && (" + line + ") > .stdout 2> .stderr";
    const int status = std::system(command.c_str());
    Outcome outcome{WIFEXITED(status) ? WEXITSTATUS(status) : 128, read_text(out), read_text(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return outcome;
}

}  // namespace gpusort::testing
