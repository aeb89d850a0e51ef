// sort_memory(): a sort of arrays in host memory is sort_part() with its input and outputs in
// memory (PartSortOptions::input_memory, output_memory, memory_columns).
#include "gpusort/sort_memory.hpp"

#include "src/plan/plan_sort.hpp"
#include "src/sort/sort_part.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpusort {

namespace {

// The names the arrays go by in messages.
constexpr const char* kKeysName = "the keys in memory";

// The records of `sort.keys`, checked to be whole.
std::uint64_t key_count(const MemorySort& sort) {
    const std::size_t width = sort.records ? sort.records->record_size : key_width(sort.order.type);
    if (width == 0 || sort.keys.size() % width != 0)
        throw std::invalid_argument("the keys in memory are " + std::to_string(sort.keys.size()) +
                                    " bytes, not a whole number of records of " + std::to_string(width) + " bytes");
    return sort.keys.size() / width;
}

// The value arrays and the index as columns of `options` (the names stand for the arrays).
void add_columns(const MemorySort& sort, std::uint64_t records, PartSortOptions& options) {
    MemoryColumns columns;
    for (std::size_t i = 0; i < sort.values.size(); ++i) {
        const MemoryValues& values = sort.values[i];
        if (values.output.size() != values.input.size())
            throw std::invalid_argument("value array " + std::to_string(i + 1) + ": its output holds " +
                                        std::to_string(values.output.size()) + " bytes, its input " +
                                        std::to_string(values.input.size()));
        if (values.input.size() % records != 0)
            throw std::invalid_argument("value array " + std::to_string(i + 1) + " holds " + std::to_string(values.input.size()) +
                                        " bytes, not a whole number of values for the " + std::to_string(records) + " keys");
        options.values.push_back({"value array " + std::to_string(i + 1), "", std::nullopt});
        columns.values.push_back(values.input);
        columns.value_outputs.push_back(values.output);
    }
    if (!sort.index_output.empty()) {
        const std::size_t entry = sort.index_output.size() / records;
        if ((entry != 4 && entry != 8) || sort.index_output.size() != records * entry)
            throw std::invalid_argument("the index in memory holds " + std::to_string(sort.index_output.size()) +
                                        " bytes: 4 or 8 per key are needed (u32 or u64)");
        options.index_output = "the index in memory";
        options.index_type = entry == 4 ? IndexType::u32 : IndexType::u64;
        columns.index = sort.index_output;
    }
    options.memory_columns = std::move(columns);
}

// The budget: room for what the arrays take (so that keys of that size are sorted as one chunk),
// within the default budget (and at least its least).
std::uint64_t default_budget(const MemorySort& sort) {
    std::uint64_t bytes = sort.keys.size() + sort.index_output.size();
    for (const MemoryValues& values : sort.values) bytes += values.input.size();
    return std::max(kMinMemoryBudget, std::min(budget_for_usable(bytes), default_memory_budget()));
}

PartSortOptions part_options(const MemorySort& sort, const MemoryOptions& memory) {
    PartSortOptions options;
    options.input = kKeysName;
    options.input_memory = sort.keys;
    options.order = sort.order;
    options.records = sort.records;
    options.unique = sort.unique;
    options.backend = memory.backend;
    options.device = memory.device;
    options.threads = memory.threads;
    options.memory_bytes = memory.memory_bytes.value_or(default_budget(sort));
    options.device_memory_bytes = memory.device_memory_bytes;
    options.tmp_dir = memory.tmp_dir;
    options.progress = memory.progress;
    options.notice = memory.notice;
    const std::uint64_t records = key_count(sort);
    const bool columns = !sort.values.empty() || !sort.index_output.empty();
    if (!sort.keys_output.empty() || !columns) {
        if (sort.keys_output.size() != sort.keys.size())
            throw std::invalid_argument("the keys' output holds " + std::to_string(sort.keys_output.size()) +
                                        " bytes, the keys " + std::to_string(sort.keys.size()));
        options.output = "the sorted keys in memory";
        options.output_memory = sort.keys_output;
    }
    if (columns) add_columns(sort, records, options);
    return options;
}

}  // namespace

SortReport sort_memory(const MemorySort& sort, const MemoryOptions& options) {
    if (key_count(sort) == 0) {  // nothing to sort; the outputs must be empty too
        for (const MemoryValues& values : sort.values)
            if (!values.input.empty() || !values.output.empty())
                throw std::invalid_argument("value arrays of no keys must be empty");
        if (!sort.keys_output.empty() || !sort.index_output.empty())
            throw std::invalid_argument("the outputs of no keys must be empty");
        return {};
    }
    return sort_part(part_options(sort, options));
}

}  // namespace gpusort
