// Command line of gpusort-file (CLI.md): parsed into SortOptions plus what only the CLI uses.
#pragma once

#include "gpusort/sort_file.hpp"
#include "src/text/text_keys.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpusort {

struct CliCommand {
    // plan: print the plan of the sort (--plan) instead of sorting.
    enum class Action { sort, plan, help, version } action = Action::sort;
    SortOptions sort;
    std::optional<std::string> stats_path;  // --stats FILE ('-' = stderr; with --plan, stdout)
    // --gather INDEX: apply that saved permutation to sort.input into sort.output instead of sorting.
    std::optional<std::string> gather_index;
    // --lines: sort.input's text lines sorted in this order (src/text) instead of binary records.
    std::optional<TextKeys> lines;
    // --progress / --quiet; neither: a progress line when stderr is a terminal.
    std::optional<bool> progress;
    bool quiet = false;
    std::string help_text;
};

// Throws std::invalid_argument with a one-line message for a malformed command line.
CliCommand parse_command_line(const std::vector<std::string>& args);

// The --stats report: one JSON object.
std::string stats_json(const SortOptions& options, const SortReport& report);
// Of that report: the sort's wall clock and phases, {"total": s, "read": s, ...}; and the merge's
// phases, {"gather": {"seconds": s, "bytes": b}, ...}.
std::string phase_seconds_json(const SortReport& report);
std::string merge_phases_json(const MergeTimes& merge);
// The --plan report as JSON: INPUT, OUTPUT and the whole plan, one object.
std::string plan_report_json(const SortOptions& options, const SortPlan& plan);

}  // namespace gpusort
