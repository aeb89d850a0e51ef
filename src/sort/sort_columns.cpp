// What a sort of columns reads and writes.
#include "src/sort/sort_columns.hpp"

#include "gpusort/errors.hpp"
#include "io/file.hpp"

namespace gpusort {

std::vector<std::string> value_inputs(const SortOptions& options) {
    std::vector<std::string> paths;
    for (const ValueColumn& value : options.values) paths.push_back(value.input);
    return paths;
}

std::vector<std::string> column_outputs(const SortOptions& options) {
    std::vector<std::string> paths;
    if (!options.output.empty()) paths.push_back(options.output);
    for (const ValueColumn& value : options.values) paths.push_back(value.output);
    if (options.index_output) paths.push_back(*options.index_output);
    return paths;
}

std::vector<OutputColumn> output_columns(const SortOptions& options, const std::optional<ColumnLayout>& layout) {
    if (!layout) return {};
    std::vector<OutputColumn> columns = {{options.output, layout->key_width, 0}};
    for (std::size_t i = 0; i < options.values.size(); ++i)
        columns.push_back({options.values[i].output, layout->value_widths[i], layout->value_offset(i)});
    if (options.index_output) columns.push_back({*options.index_output, layout->index_width, layout->index_offset()});
    return columns;
}

OutputShape column_output_shape(const SortOptions& options) {
    const std::vector<std::string> outputs = column_outputs(options);
    if (outputs.empty()) throw std::invalid_argument("no output: give OUTPUT, --values or --index-out");
    for (const std::string& path : outputs) {
        const OutputShape shape = output_shape(path, std::nullopt);
        if (shape.sequential || path.empty())
            throw SortError("'" + (path == "-" ? std::string("standard output") : path) +
                            "': the outputs of columns are regular, uncompressed files (not standard output, a pipe "
                            "or device, or a compressed name)");
    }
    if (options.output_compression.value_or(Compression::none) != Compression::none)
        throw std::invalid_argument("the outputs of columns are written uncompressed");
    return output_shape(outputs.front(), std::nullopt);
}

}  // namespace gpusort
