// Sorting arrays that lie in host memory: keys of a type, records by a key spec, the permutation
// (argsort), and keys with value arrays carried along. The same sort as sort_file(): both
// backends, chunks no larger than the device's budget merged, stable, the same bytes.
//
// Memory: besides the arrays, a sort takes at most `memory_bytes` of host memory (default: room
// for the keys' and values' size, the sixteenth that any budget keeps back for scratch space
// included, within default_memory_budget()); an array larger than that is sorted in runs spilled
// to `tmp_dir` and merged. The arrays must stay unchanged (and alive) until the sort
// returns; an output may be its input (in place). Throws as sort_file() does (gpusort/errors.hpp);
// on failure an output array holds unspecified bytes.
#pragma once

#include "gpusort/key_spec.hpp"
#include "gpusort/key_type.hpp"
#include "gpusort/progress.hpp"
#include "gpusort/sort_file.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpusort {

// The options of a sort in memory: those of SortOptions that make sense there.
struct MemoryOptions {
    Backend backend = Backend::automatic;
    int device = 0;
    std::optional<unsigned> threads;                   // default: default_threads()
    std::optional<std::uint64_t> memory_bytes;          // extra host memory (see above)
    std::optional<std::uint64_t> device_memory_bytes;   // default: most of the GPU's free memory
    std::optional<std::string> tmp_dir;                 // default: $TMPDIR, else /tmp
    ProgressCounters* progress = nullptr;               // counters of the sort, and cancel()
    std::function<void(const std::string&)> notice;     // one-line notices that are not errors
};

// A value array carried along with the keys: `input` holds one value of `width` bytes per key
// (input.size() == keys * width) and `output` (the same size; may be `input`) receives them in the
// order of the sorted keys.
struct MemoryValues {
    std::span<const std::byte> input;
    std::span<std::byte> output;
};

// The general form. `keys` holds the keys (records of order.type's width, or of records->record_size);
// `keys_output` (empty: not written; may be `keys`) receives them sorted, `values` are carried along,
// and `index_output` (empty: not written) receives for each output position the number of its input
// record, as u32 or u64 entries by its size (4 or 8 bytes per record). With `unique` only the first
// record of each group of equal keys is kept, in every output alike: the report's output_records
// says how many (the rest of each output is unspecified).
struct MemorySort {
    std::span<const std::byte> keys;
    KeyOrder order;
    std::optional<KeySpec> records;
    bool unique = false;
    std::span<std::byte> keys_output;
    std::vector<MemoryValues> values;
    std::span<std::byte> index_output;
};
SortReport sort_memory(const MemorySort& sort, const MemoryOptions& options = {});

// Keys of one type in place, ascending (or descending).
template <class T>
SortReport sort_keys(std::span<T> keys, bool descending = false, const MemoryOptions& options = {}) {
    MemorySort sort;
    sort.keys = std::as_bytes(keys);
    sort.order = {key_type_of<T>(), descending};
    sort.keys_output = std::as_writable_bytes(keys);
    return sort_memory(sort, options);
}

// The permutation that sorts `keys` stably: index[i] = the position of the i-th smallest (largest).
template <class T>
std::vector<std::uint64_t> argsort(std::span<const T> keys, bool descending = false, const MemoryOptions& options = {}) {
    std::vector<std::uint64_t> index(keys.size());
    MemorySort sort;
    sort.keys = std::as_bytes(keys);
    sort.order = {key_type_of<T>(), descending};
    sort.index_output = std::as_writable_bytes(std::span<std::uint64_t>(index));
    sort_memory(sort, options);
    return index;
}

}  // namespace gpusort
