// The plan of a sort printed whole: as text for people (gpusort-file --plan) and as one JSON object
// (--plan with --stats -, and the "plan" of --stats); with the two formatting helpers they share
// with the sort's messages and the --stats report.
#pragma once

#include "gpusort/compression.hpp"
#include "gpusort/sort_plan.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gpusort {

// Several lines, each a part of the sort: chunks and runs, merge, host memory by what takes it,
// device, stream queues, disk space per folder (with the free space there now).
std::string plan_text(const SortPlan& plan);

// Every field of the plan as one JSON object, its lines after the first indented by `indent` spaces.
std::string plan_json(const SortPlan& plan, int indent = 0);

// "3.1 GiB", "12.0 MiB", "512 bytes".
std::string size_text(std::uint64_t bytes);

// `text` as a JSON string literal, quoted and escaped.
std::string json_string(const std::string& text);
// `true` or `false`.
const char* json_flag(bool value);
// The compression of the file `path` (`forced`, else by its name's ending) as a JSON string.
std::string json_compression(const std::optional<Compression>& forced, const std::string& path);

}  // namespace gpusort
