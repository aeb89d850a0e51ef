// The column checks of gpusort-check. Keys compare as their normalised forms (record_key of the
// key rules, the order the sorter uses); records and values compare byte for byte. INDEX is
// checked to be a permutation with a bitmap of one bit per record of KEYS, then the rest in
// parallel parts, each reporting the first output position that fails. Without an index, the value
// columns are compared as multisets of joined records, one checksum per key range of FILE, so
// that a difference is reported at the output positions of its range.
#include "tools/check_columns.hpp"

#include "gpusort/compression.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/io_error.hpp"
#include "src/keys/record_layout.hpp"
#include "src/verify/record_checksum.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

namespace gpusort::columns {

namespace {

using Key = RecordKey<kMaxKeyWords>;
using Failure = std::optional<std::string>;

// Output positions (or records) per part of a parallel check.
constexpr std::uint64_t kGrain = std::uint64_t{1} << 14;
// Key ranges of FILE that the checksums of the value columns are kept for, at most: 64 Ki ranges
// hold 1.5 MiB of checksums (per thread while the input is read), and a difference is reported
// within 1/65536 of FILE, or at its group of equal keys where there are fewer groups.
constexpr std::uint64_t kMaxKeyRanges = std::uint64_t{1} << 16;

// A plain regular file mapped read only, whole; its pages are read as they are touched.
class MappedFile {
public:
    explicit MappedFile(const std::string& path)
        : file_(io::File::open_read(path)), map_(file_, 0, file_.size(), io::FileMapping::Access::read) {}
    const std::byte* data() const { return map_.data(); }
    std::uint64_t size() const { return map_.size(); }
    std::string shown() const { return io::input_shown(file_.path()); }

private:
    io::File file_;
    io::FileMapping map_;
};

// `count` records of `size` bytes each, end to end.
struct Records {
    const std::byte* data = nullptr;
    std::uint64_t count = 0;
    std::uint64_t size = 0;

    const std::byte* operator[](std::uint64_t i) const { return data + i * size; }
    // Whether record i holds the same bytes as record j of `other` (of the same size).
    bool same(std::uint64_t i, const Records& other, std::uint64_t j) const {
        return size == 0 || std::memcmp((*this)[i], other[j], size) == 0;
    }
};

// The records of a file of records of `size` bytes; a file that ends mid-record throws.
Records records_of(const MappedFile& file, std::uint64_t size) {
    if (file.size() % size != 0)
        throw std::invalid_argument(file.shown() + " is " + std::to_string(file.size()) +
                                    " bytes long, not a multiple of the record size " + std::to_string(size));
    return {file.data(), file.size() / size, size};
}

// The record numbers of INDEX, 4 or 8 bytes each, in the host's (little-endian) byte order.
struct IndexEntries {
    const std::byte* data = nullptr;
    std::uint64_t count = 0;
    std::size_t bytes = 4;

    std::uint64_t operator[](std::uint64_t i) const {
        if (bytes == 4) {
            std::uint32_t entry;
            std::memcpy(&entry, data + 4 * i, 4);
            return entry;
        }
        std::uint64_t entry;
        std::memcpy(&entry, data + 8 * i, 8);
        return entry;
    }
};

IndexEntries index_entries(const MappedFile& index, IndexType type, std::uint64_t records) {
    if (type == IndexType::automatic) type = records <= (std::uint64_t{1} << 32) ? IndexType::u32 : IndexType::u64;
    const std::size_t bytes = type == IndexType::u32 ? 4 : 8;
    if (index.size() % bytes != 0)
        throw std::invalid_argument(index.shown() + " is " + std::to_string(index.size()) +
                                    " bytes long, not a whole number of " + std::to_string(bytes) + "-byte (u" +
                                    std::to_string(8 * bytes) + ") record numbers (see --index-type)");
    return {index.data(), index.size() / bytes, bytes};
}

// The normalised key of a record under the key options.
struct KeyReader {
    FixedKeySpec fixed;
    Key operator()(const std::byte* record) const {
        return record_key<kMaxKeyWords>(reinterpret_cast<const unsigned char*>(record), fixed);
    }
};

// The first i in [begin, end) for which bad(i) holds, or end; parts are checked in parallel.
template <class Bad>
std::uint64_t first_where(std::uint64_t begin, std::uint64_t end, const Bad& bad) {
    std::atomic<std::uint64_t> found{end};
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(begin, end, kGrain), [&](const auto& part) {
        for (std::uint64_t i = part.begin(); i < part.end() && i < found.load(std::memory_order_relaxed); ++i) {
            if (!bad(i)) continue;
            std::uint64_t seen = found.load();
            while (i < seen && !found.compare_exchange_weak(seen, i)) {
            }
            return;
        }
    });
    return found.load();
}

std::string position(std::uint64_t i) { return "output position " + std::to_string(i); }
std::string record_number(std::uint64_t r) { return "record number " + std::to_string(r); }

int fail(const std::string& message) {
    std::cout << "gpusort-check: " << message << "\n";
    return 1;
}

// ---- --index -----------------------------------------------------------------------------------

// The files of a check with --index, mapped.
struct IndexCheck {
    const ColumnRequest& request;
    const MappedFile& keys_file;
    const MappedFile& index_file;
    Records keys;
    IndexEntries index;
    KeyReader key;

    Key key_at(std::uint64_t position) const { return key(keys[index[position]]); }
};

// INDEX's record numbers, in range and none twice (one bit per record of KEYS: n / 8 bytes); and
// unless --unique, every record number there.
Failure permutation_failure(const IndexCheck& c) {
    const std::uint64_t n = c.keys.count;
    std::vector<std::uint64_t> seen((n + 63) / 64, 0);
    for (std::uint64_t i = 0; i < c.index.count; ++i) {
        const std::uint64_t r = c.index[i];
        if (r >= n)
            return c.index_file.shown() + " at " + position(i) + " holds " + record_number(r) + ", out of range: " +
                   c.keys_file.shown() + " has " + std::to_string(n) + " records";
        const std::uint64_t bit = std::uint64_t{1} << (r % 64);
        if (seen[r / 64] & bit)
            return c.index_file.shown() + " at " + position(i) + " repeats " + record_number(r) +
                   " (an earlier output position holds it)";
        seen[r / 64] |= bit;
    }
    if (c.request.unique) return std::nullopt;
    for (std::uint64_t w = 0; w < seen.size(); ++w) {
        const std::uint64_t all = w + 1 < seen.size() || n % 64 == 0 ? ~std::uint64_t{0} : (std::uint64_t{1} << (n % 64)) - 1;
        if (seen[w] == all) continue;
        const std::uint64_t r = 64 * w + static_cast<std::uint64_t>(__builtin_ctzll(~seen[w]));
        return c.index_file.shown() + " lacks " + record_number(r) + " of " + c.keys_file.shown() + " (it has " +
               std::to_string(c.index.count) + " entries for " + std::to_string(n) + " records)";
    }
    return std::nullopt;
}

// Each key after the first is larger than the one before it or, where equal, of a later record
// (of a larger one only, with --unique).
Failure order_failure(const IndexCheck& c) {
    const bool unique = c.request.unique;
    const std::uint64_t i = first_where(1, std::max<std::uint64_t>(c.index.count, 1), [&](std::uint64_t p) {
        const Key before = c.key_at(p - 1), here = c.key_at(p);
        if (here < before) return true;
        return !(before < here) && (unique || c.index[p] < c.index[p - 1]);
    });
    if (i >= c.index.count) return std::nullopt;
    const std::string here = " at " + position(i) + ": " + record_number(c.index[i]);
    const std::string before = record_number(c.index[i - 1]) + " (the one before it)";
    if (c.key_at(i) < c.key_at(i - 1)) return c.index_file.shown() + " is not in order" + here + " belongs before " + before;
    if (unique) return c.index_file.shown() + " is not unique" + here + " has the key of " + before;
    return c.index_file.shown() + " is not stable" + here + " has the key of " + before + ", a later record";
}

// With --unique: the record of each key in INDEX is the first of KEYS with that key, and every key
// of KEYS is there. Each record's key is looked up in INDEX (in order, so by binary search, in the
// maps): this takes no memory beyond the maps, at the cost of log2(entries) key reads per record.
Failure unique_failure(const IndexCheck& c) {
    const auto entry_of = [&](std::uint64_t j) {  // the first output position whose key is not below KEYS[j]'s
        const Key k = c.key(c.keys[j]);
        std::uint64_t low = 0, high = c.index.count;
        while (low < high) {
            const std::uint64_t middle = low + (high - low) / 2;
            if (c.key_at(middle) < k) low = middle + 1;
            else high = middle;
        }
        return std::pair{low, low < c.index.count && !(k < c.key_at(low))};
    };
    const std::uint64_t j = first_where(0, c.keys.count, [&](std::uint64_t r) {
        const auto [p, found] = entry_of(r);
        return !found || c.index[p] > r;
    });
    if (j >= c.keys.count) return std::nullopt;
    const auto [p, found] = entry_of(j);
    if (!found)
        return c.index_file.shown() + " lacks the key of " + record_number(j) + " of " + c.keys_file.shown() +
               " (it belongs at " + position(p) + ")";
    return c.index_file.shown() + " at " + position(p) + " holds " + record_number(c.index[p]) +
           ", not the first record of its key: " + record_number(j) + " has the same key";
}

// FILE holds KEYS's records in INDEX's order.
Failure file_failure(const IndexCheck& c, const std::string& path) {
    const MappedFile file(path);
    const Records sorted = records_of(file, c.keys.size);
    if (sorted.count != c.index.count)
        return file.shown() + " has " + std::to_string(sorted.count) + " records, " + c.index_file.shown() + " has " +
               std::to_string(c.index.count) + " entries";
    const std::uint64_t i = first_where(0, sorted.count, [&](std::uint64_t p) { return !sorted.same(p, c.keys, c.index[p]); });
    if (i >= sorted.count) return std::nullopt;
    return file.shown() + " at " + position(i) + " is not " + record_number(c.index[i]) + " of " + c.keys_file.shown();
}

// The width of a value column's records: WIDTH, or the size of V over the records of KEYS.
std::uint64_t value_width(const ValueColumn& column, const MappedFile& values, std::uint64_t records) {
    const std::string size = std::to_string(values.size()) + " bytes";
    if (column.width) {
        if (values.size() / *column.width != records || values.size() % *column.width != 0)
            throw std::invalid_argument(values.shown() + " is " + size + " long, not " + std::to_string(records) +
                                        " values of " + std::to_string(*column.width) + " bytes");
        return *column.width;
    }
    if (records == 0 && values.size() == 0) return 0;
    if (records == 0 || values.size() == 0 || values.size() % records != 0)
        throw std::invalid_argument(values.shown() + " is " + size + " long, which does not divide into " +
                                    std::to_string(records) + " values (give the width: --values V:OUT:WIDTH)");
    return values.size() / records;
}

// OUT's records, `count` of the column's width; nothing when OUT's size is another.
Failure out_size_failure(const MappedFile& out, std::uint64_t count, std::uint64_t width, const MappedFile& values) {
    if (out.size() == count * width) return std::nullopt;
    return out.shown() + " is " + std::to_string(out.size()) + " bytes long, not " + std::to_string(count) +
           " values of " + std::to_string(width) + " bytes (the width of " + values.shown() + ")";
}

// OUT holds V's records in INDEX's order.
Failure column_failure(const IndexCheck& c, const ValueColumn& column) {
    const MappedFile values_file(column.values), out_file(column.out);
    const std::uint64_t width = value_width(column, values_file, c.keys.count);
    if (Failure size = out_size_failure(out_file, c.index.count, width, values_file)) return size;
    const Records values{values_file.data(), c.keys.count, width}, out{out_file.data(), c.index.count, width};
    const std::uint64_t i = first_where(0, out.count, [&](std::uint64_t p) { return !out.same(p, values, c.index[p]); });
    if (i >= out.count) return std::nullopt;
    return out_file.shown() + " at " + position(i) + " is not the value of " + record_number(c.index[i]) + " in " +
           values_file.shown();
}

std::string index_ok(const IndexCheck& c) {
    const ColumnRequest& r = c.request;
    std::string ok = "ok: " + std::to_string(c.index.count) +
                     (r.unique ? " records, the first of each key of the " + std::to_string(c.keys.count) + " records,"
                               : " records, a permutation of the input's,") +
                     " in order by the index";
    if (!r.unique) ok += " (stable)";
    if (r.file) ok += ", the file holds them in that order";
    if (!r.values.empty()) ok += ", " + std::to_string(r.values.size()) + " value column(s) follow their keys";
    return ok;
}

// ---- --values without --index --------------------------------------------------------------------

// Ranges of FILE's output positions, each starting at the first record of its key: range b holds
// positions [starts[b], starts[b + 1]) and the keys from first_keys[b] up to first_keys[b + 1].
struct KeyRanges {
    std::vector<std::uint64_t> starts;
    std::vector<Key> first_keys;

    std::size_t count() const { return first_keys.size(); }
    std::size_t range_of(const Key& k) const {
        const auto after = std::upper_bound(first_keys.begin(), first_keys.end(), k);
        return after == first_keys.begin() ? 0 : static_cast<std::size_t>(after - first_keys.begin() - 1);
    }
};

// Up to kMaxKeyRanges ranges of about equal size, of the sorted records (FILE is in order).
KeyRanges key_ranges(const Records& sorted, const KeyReader& key) {
    KeyRanges ranges;
    const std::uint64_t n = sorted.count, count = std::min(n, kMaxKeyRanges);
    for (std::uint64_t b = 0; b < count; ++b) {
        const Key k = key(sorted[b * n / count]);
        std::uint64_t low = 0, high = b * n / count;  // the first record of that key
        while (low < high) {
            const std::uint64_t middle = low + (high - low) / 2;
            if (key(sorted[middle]) < k) low = middle + 1;
            else high = middle;
        }
        if (!ranges.starts.empty() && ranges.starts.back() == low) continue;
        ranges.starts.push_back(low);
        ranges.first_keys.push_back(k);
    }
    ranges.starts.push_back(n);
    return ranges;
}

// Record i of each column, end to end, into `joined`.
void join(const std::vector<Records>& columns, std::uint64_t i, std::vector<std::byte>& joined) {
    joined.clear();
    for (const Records& column : columns) joined.insert(joined.end(), column[i], column[i] + column.size);
}

// The checksums of the joined records of the input (columns[0] holds the keys) by key range.
std::vector<MultisetChecksum> input_checksums(const std::vector<Records>& columns, const KeyRanges& ranges,
                                              const KeyReader& key) {
    using Local = std::pair<std::vector<MultisetChecksum>, std::vector<std::byte>>;
    tbb::enumerable_thread_specific<Local> locals([&] { return Local{std::vector<MultisetChecksum>(ranges.count()), {}}; });
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, columns[0].count, kGrain), [&](const auto& part) {
        auto& [sums, joined] = locals.local();
        for (std::uint64_t j = part.begin(); j < part.end(); ++j) {
            join(columns, j, joined);
            sums[ranges.range_of(key(columns[0][j]))].add(joined);
        }
    });
    std::vector<MultisetChecksum> sums(ranges.count());
    for (const Local& local : locals)
        for (std::size_t b = 0; b < sums.size(); ++b) sums[b] += local.first[b];
    return sums;
}

// The checksums of the joined records of the output (columns[0] holds FILE) by key range.
std::vector<MultisetChecksum> output_checksums(const std::vector<Records>& columns, const KeyRanges& ranges) {
    std::vector<MultisetChecksum> sums(ranges.count());
    tbb::parallel_for(std::size_t{0}, sums.size(), [&](std::size_t b) {
        std::vector<std::byte> joined;
        for (std::uint64_t i = ranges.starts[b]; i < ranges.starts[b + 1]; ++i) {
            join(columns, i, joined);
            sums[b].add(joined);
        }
    });
    return sums;
}

}  // namespace

IndexType parse_index_type(const std::string& text) {
    if (text == "u32") return IndexType::u32;
    if (text == "u64") return IndexType::u64;
    if (text == "auto") return IndexType::automatic;
    throw std::invalid_argument("--index-type: '" + text + "' is not u32, u64 or auto");
}

ValueColumn parse_value_column(const std::string& text) {
    std::vector<std::string> parts(1);
    for (const char c : text) {
        if (c == ':') parts.emplace_back();
        else parts.back() += c;
    }
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument("--values '" + text + "': " + why + " (expected V:OUT or V:OUT:WIDTH)");
    };
    if (parts.size() < 2 || parts.size() > 3) throw bad("not two or three parts");
    if (parts[0].empty() || parts[1].empty()) throw bad("a file name is missing");
    ValueColumn column{parts[0], parts[1], std::nullopt};
    if (parts.size() == 3) {
        const std::string& w = parts[2];
        if (w.empty() || w.size() > 12 || !std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            std::stoull(w) == 0)
            throw bad("WIDTH is not a positive number");
        column.width = std::stoull(w);
    }
    return column;
}

void refuse_unmappable_files(const ColumnRequest& request) {
    std::vector<std::string> paths = {request.keys};
    if (request.index) paths.push_back(*request.index);
    if (request.file) paths.push_back(*request.file);
    for (const ValueColumn& column : request.values) paths.insert(paths.end(), {column.values, column.out});
    for (const std::string& path : paths) {
        const char* why = compression_of(path) != Compression::none ? "is compressed"
                          : path == "-" || !io::File::open_read(path).is_regular() ? "is not a regular file"
                                                                                   : nullptr;
        if (why)
            throw std::invalid_argument(io::input_shown(path) + " " + why +
                                        ": --index and --values read uncompressed regular files only");
    }
}

int check_index(const ColumnRequest& request) {
    const MappedFile keys_file(request.keys), index_file(*request.index);
    const Records keys = records_of(keys_file, request.spec.record_size);
    const IndexCheck c{request, keys_file, index_file, keys, index_entries(index_file, request.index_type, keys.count),
                       {fixed_key_spec(request.spec)}};
    Failure failure = permutation_failure(c);
    if (!failure) failure = order_failure(c);
    if (!failure && request.unique) failure = unique_failure(c);
    if (!failure && request.file) failure = file_failure(c, *request.file);
    for (std::size_t v = 0; !failure && v < request.values.size(); ++v) failure = column_failure(c, request.values[v]);
    if (failure) return fail(*failure);
    std::cout << index_ok(c) << "\n";
    return 0;
}

int check_values_by_checksum(const ColumnRequest& request) {
    const MappedFile keys_file(request.keys), sorted_file(*request.file);
    std::vector<Records> inputs = {records_of(keys_file, request.spec.record_size)};
    std::vector<Records> outputs = {records_of(sorted_file, request.spec.record_size)};
    const std::uint64_t n = inputs[0].count;
    if (outputs[0].count != n)
        return fail(sorted_file.shown() + " has " + std::to_string(outputs[0].count) + " records, " + keys_file.shown() +
                    " has " + std::to_string(n));
    std::vector<std::unique_ptr<MappedFile>> maps;  // the value files, kept mapped
    std::string outs;
    for (const ValueColumn& column : request.values) {
        const MappedFile& values = *maps.emplace_back(std::make_unique<MappedFile>(column.values));
        const MappedFile& out = *maps.emplace_back(std::make_unique<MappedFile>(column.out));
        const std::uint64_t width = value_width(column, values, n);
        if (Failure size = out_size_failure(out, n, width, values)) return fail(*size);
        inputs.push_back({values.data(), n, width});
        outputs.push_back({out.data(), n, width});
        outs += (outs.empty() ? "" : ", ") + out.shown();
    }
    const KeyReader key{fixed_key_spec(request.spec)};
    const KeyRanges ranges = key_ranges(outputs[0], key);
    const std::vector<MultisetChecksum> expected = input_checksums(inputs, ranges, key), found = output_checksums(outputs, ranges);
    const auto differs = std::mismatch(expected.begin(), expected.end(), found.begin());
    if (differs.first == expected.end()) return 0;
    const auto b = static_cast<std::size_t>(differs.first - expected.begin());
    return fail("the values of " + outs + " do not follow their keys at output positions " +
                std::to_string(ranges.starts[b]) + " to " + std::to_string(ranges.starts[b + 1] - 1) + " of " +
                sorted_file.shown() + ": not those of the records of " + keys_file.shown() +
                " with those keys (checksums differ)");
}

}  // namespace gpusort::columns
