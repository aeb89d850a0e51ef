// The reports of gpusort-file --lines: --plan as text and as JSON, and --stats (docs/stats.md).
#pragma once

#include "gpusort/sort_file.hpp"
#include "src/text/line_file.hpp"

#include <string>

namespace gpusort {

// The plan as --plan prints it: a line per part (input, budgets, chunks, merge, memory, disk).
std::string line_plan_text(const LinePlan& plan);
// The plan as one JSON object, its lines after the first indented by `indent` spaces.
std::string line_plan_json(const LinePlan& plan, int indent = 0);
// --plan --stats: INPUT, OUTPUT and the plan, one object.
std::string line_plan_report_json(const SortOptions& options, const LinePlan& plan);
// The --stats report of a sort of lines: one JSON object.
std::string line_stats_json(const SortOptions& options, const TextKeys& keys, const LineFileReport& report);

}  // namespace gpusort
