// What a sort of columns (SortOptions::values, index_output) reads and writes, by its options: the
// value files, the outputs and where each output's bytes lie in a joined record.
#pragma once

#include "gpusort/sort_file.hpp"
#include "src/input/column_input.hpp"
#include "src/output/column_output.hpp"
#include "src/output/sort_output.hpp"

#include <string>
#include <vector>

namespace gpusort {

// The value files read, in order.
std::vector<std::string> value_inputs(const SortOptions& options);
// The files written: OUTPUT (where given), each value's output, the index.
std::vector<std::string> column_outputs(const SortOptions& options);
// The columns of the joined records of `layout` and where each goes (none without columns).
std::vector<OutputColumn> output_columns(const SortOptions& options, const std::optional<ColumnLayout>& layout);
// The outputs' shape: regular, uncompressed files (else SortError naming the output), the folder
// of the first (where spilled runs go by default).
OutputShape column_output_shape(const SortOptions& options);

}  // namespace gpusort
