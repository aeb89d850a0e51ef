// The column checks of gpusort-check, for the outputs of gpusort-file --values and --index-out:
// an INDEX that orders KEYS stably (--index, with --unique the first record of each key), FILE
// that holds KEYS in INDEX's order, and value files that follow their keys (--values). KEYS,
// INDEX and the value files are read through read-only maps, so that files larger than memory
// can be checked; they must be uncompressed regular files.
#pragma once

#include "gpusort/key_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusort::columns {

// The width of INDEX's record numbers; automatic: u32 where KEYS has at most 2^32 records (every
// record number fits), else u64.
enum class IndexType { u32, u64, automatic };

// "u32", "u64" or "auto"; anything else throws std::invalid_argument.
IndexType parse_index_type(const std::string& text);

// One --values V:OUT[:WIDTH]: OUT must hold V's records in the order of the sort.
struct ValueColumn {
    std::string values;                  // V, as many records as KEYS
    std::string out;                     // OUT
    std::optional<std::uint64_t> width;  // bytes per record; else size(V) / records(KEYS)
};

// Reads "V:OUT" or "V:OUT:WIDTH" (WIDTH a positive number); throws std::invalid_argument.
ValueColumn parse_value_column(const std::string& text);

// What the column checks are asked to check.
struct ColumnRequest {
    KeySpec spec;
    std::string keys;                  // --input KEYS
    std::optional<std::string> index;  // --index INDEX
    IndexType index_type = IndexType::automatic;
    bool unique = false;               // INDEX keeps the first record of each key only
    std::optional<std::string> file;   // FILE: KEYS's records in the sorted order
    std::vector<ValueColumn> values;
};

// Refuses (std::invalid_argument) a file of the request that is not an uncompressed regular file,
// before anything is checked.
void refuse_unmappable_files(const ColumnRequest& request);

// With --index: checks INDEX (and FILE and the value columns against it). Prints one line, the
// first failure ("gpusort-check: ...") or what was checked ("ok: ..."), and returns the exit
// status (0 or 1). Files that do not hold whole records, or widths that do not divide, throw
// std::invalid_argument (exit status 2).
int check_index(const ColumnRequest& request);

// Without --index, once FILE is known to be in order and to hold KEYS's records: checks that the
// value columns follow their keys, by comparing the joined records (FILE's record followed by
// each OUT's) with KEYS's, as multisets, key range by key range. Prints the first failure and
// returns 1, or returns 0 and prints nothing.
int check_values_by_checksum(const ColumnRequest& request);

}  // namespace gpusort::columns
