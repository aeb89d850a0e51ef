// Fuzz target: the whole sort (gpusort::sort_file, CPU backend) on a few records. The first bytes
// choose how, the rest are the records:
//   byte 0  bit 0 --unique, bit 1 descending, bit 2 two threads (else one), bits 3-4 the budget
//           (0: one chunk; 1: runs of at most N records; 2, 3: the same merged with a fan-in of 2
//           or 3, so in several passes), bits 5-6 the input (0: a file; 1, 2: a .zst or .gz file,
//           read as a stream; 3: a file that ends in the middle of a record), bit 7 --verify
//   byte 1  bits 0-1 the output (0: a new file; 1: a pipe; 2: a .zst file; 3: a file that exists
//           already), bits 2-7 N - 1
//   byte 2  the layout: value % 12 below 10 is a file of keys of that type (kAllKeyTypes);
//           otherwise records: byte 3 gives the field count (1 + value % 3) and the bytes after the
//           last field (bits 2-5), then two bytes per field: type (low nibble % 11, 10 for a byte
//           string), big-endian (bit 4), descending (bit 5), a byte string's length - 1 (bits 6-7
//           and bits 5-7 of the next byte), offset (bits 0-4 of the next byte)
// The output must be, byte for byte, what std::stable_sort gives under the field-by-field
// reference comparison (tests/reference_records.hpp), with --unique the first record of each
// group; the input must be unchanged and no file left behind. An input that ends in the middle
// of a record must fail with SortError and leave no output (an existing one unchanged).
#include "fuzz_targets.hpp"

#include "../reference_records.hpp"
#include "../scratch_dir.hpp"
#include "fuzz_io.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "gpusort/sort_file.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <fcntl.h>
#include <unistd.h>

namespace gpusort::fuzz {

namespace {

enum class InputKind { file, zst, gz, ragged };
enum class OutputKind { file, pipe, zst, existing };

struct Layout {
    std::optional<KeyType> keys;  // a file of keys of one type; else records with `spec`
    KeySpec spec;                 // the order either way (for the reference)
};

// The layout the bytes at `data` describe; advances `data` past them. nullopt when they run out.
std::optional<Layout> read_layout(Input& data, bool descending) {
    if (data.empty()) return std::nullopt;
    const unsigned kind = data[0] % 12;
    data = data.subspan(1);
    Layout layout;
    if (kind < 10) {
        layout.keys = kAllKeyTypes[kind];
        layout.spec = whole_record_key(*layout.keys, descending);
        return layout;
    }
    if (data.empty()) return std::nullopt;
    const std::size_t fields = 1 + data[0] % 3, extra = (data[0] >> 2) & 15;
    data = data.subspan(1);
    std::size_t key_bytes = 0;
    for (std::size_t i = 0; i < fields; ++i) {
        if (data.size() < 2) return std::nullopt;
        const unsigned a = data[0], b = data[1];
        data = data.subspan(2);
        KeyField f;
        f.offset = b & 31;
        f.descending = ((a >> 5) & 1) != descending;
        if (a % 16 % 11 == 10) {
            f.is_bytes = true;
            f.length = 1 + ((a >> 6) | (b >> 5) << 2);
        } else {
            f.type = kAllKeyTypes[a % 16 % 11];
            f.length = key_width(f.type);
            f.big_endian = (a >> 4) & 1;
        }
        if (key_bytes + f.length > kMaxNormalizedKeyBytes) break;
        key_bytes += f.length;
        layout.spec.fields.push_back(f);
        layout.spec.record_size = std::max(layout.spec.record_size, f.offset + f.length);
    }
    layout.spec.record_size += extra;
    return layout;
}

std::vector<std::byte> read_file(const std::string& path) {
    const std::string text = testing::read_text(path);
    const auto* begin = reinterpret_cast<const std::byte*>(text.data());
    return std::vector<std::byte>(begin, begin + text.size());
}

void write_file(const std::string& path, std::span<const std::byte> bytes, Compression compression) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + path);
    io::File file(fd, path);
    io::StreamWriter writer(fd, path, compression, 1, compression == Compression::none ? -1 : 1, 1024);
    writer.write(bytes);
    writer.finish();
}

std::vector<std::byte> read_compressed(const std::string& path, Compression compression) {
    io::StreamReader reader(path, compression);
    std::vector<std::byte> bytes;
    std::byte buffer[65536];
    while (const std::size_t n = reader.read(buffer)) bytes.insert(bytes.end(), buffer, buffer + n);
    return bytes;
}

// One folder for the sorts of this process, emptied before each.
const testing::ScratchDir& scratch() {
    static const testing::ScratchDir dir;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) std::filesystem::remove_all(entry.path());
    std::filesystem::create_directory(dir / "tmp");
    return dir;
}

}  // namespace

void sort_target(Input data) {
    if (data.size() < 3) return;
    const unsigned flags = data[0], out_flags = data[1];
    data = data.subspan(2);
    const bool unique = flags & 1, descending = flags & 2, verify = flags & 128;
    const unsigned budget = (flags >> 3) & 3;
    const auto input_kind = static_cast<InputKind>((flags >> 5) & 3);
    const auto output_kind = static_cast<OutputKind>(out_flags & 3);
    const std::uint64_t run_records = 1 + (out_flags >> 2);
    const std::optional<Layout> layout = read_layout(data, descending);
    if (!layout || layout->spec.fields.empty()) return;
    const KeySpec& spec = layout->spec;
    const std::size_t r = spec.record_size;

    std::vector<std::byte> records(std::as_bytes(data).begin(), std::as_bytes(data).end());
    const bool ragged = input_kind == InputKind::ragged && r > 1;
    if (ragged && records.size() % r == 0) records.push_back(std::byte{0x5a});
    if (!ragged) records.resize(records.size() / r * r);
    const std::uint64_t n = records.size() / r;

    const testing::ScratchDir& dir = scratch();
    const Compression input_compression = input_kind == InputKind::zst ? Compression::zstd
                                              : input_kind == InputKind::gz ? Compression::gzip
                                                                            : Compression::none;
    const std::string input = dir / (input_compression == Compression::zstd ? "in.zst"
                                     : input_compression == Compression::gzip ? "in.gz"
                                                                                  : "in");
    write_file(input, records, input_compression);
    const std::vector<std::byte> input_bytes = read_file(input);
    const std::vector<std::byte> old_output = {std::byte{'o'}, std::byte{'l'}, std::byte{'d'}};

    SortOptions options;
    options.input = input;
    options.backend = Backend::cpu;
    options.threads = flags & 4 ? 2 : 1;
    options.memory_bytes = kMinMemoryBudget;
    options.tmp_dir = dir / "tmp";
    options.verify = verify;
    options.unique = unique;
    if (layout->keys) {
        options.order = {*layout->keys, descending};
    } else {
        options.records = spec;
    }
    if (budget > 0) options.max_run_records = run_records;
    if (budget > 1) options.max_fan_in = budget;
    std::optional<PipeCollector> pipe;
    std::set<std::string> expected_entries = {std::filesystem::path(input).filename(), "tmp"};
    switch (output_kind) {
    case OutputKind::file: options.output = dir / "out"; break;
    case OutputKind::existing:
        options.output = dir / "out";
        testing::write_text(options.output, "old");
        break;
    case OutputKind::zst: options.output = dir / "out.zst"; break;
    case OutputKind::pipe:
        pipe.emplace();
        options.output = fd_path(pipe->write_fd());
        break;
    }
    const bool to_file = output_kind != OutputKind::pipe;
    const std::string out_name = to_file ? std::string(std::filesystem::path(options.output).filename()) : "";

    const std::string what = "records of " + std::to_string(r) + " bytes, " + std::to_string(n) + (ragged ? "+" : "") +
                             " of them, unique " + std::to_string(unique) + ", budget " + std::to_string(budget) +
                             ", input " + std::to_string(static_cast<int>(input_kind)) + ", output " +
                             std::to_string(static_cast<int>(output_kind)) + ", verify " + std::to_string(verify);
    if (ragged) {
        try {
            sort_file(options);
            check(false, "an input ending in the middle of a record was sorted: " + what);
        } catch (const SortError& e) {
            check(std::string(e.what()).find(input) != std::string::npos, "the error does not name the input: " + what);
        }
        if (pipe) pipe->take();
        if (output_kind == OutputKind::existing) {
            check(testing::read_text(options.output) == "old", "a failed sort changed the existing output: " + what);
            expected_entries.insert(out_name);
        }
    } else {
        const SortReport report = sort_file(options);
        const std::vector<std::byte> expected = testing::reference_record_sort(records, spec, unique);
        std::vector<std::byte> output;
        if (pipe) output = pipe->take();
        else if (output_kind == OutputKind::zst) output = read_compressed(options.output, Compression::zstd);
        else output = read_file(options.output);
        check(output == expected, "the output differs from the reference: " + what);
        check(report.records == n && report.output_records == expected.size() / r,
              "the report's counts are wrong: " + what);
        if (budget > 0 && n > 2 * run_records) check(report.runs >= 2, "no runs were formed: " + what);
        if (to_file) expected_entries.insert(out_name);
    }
    check(read_file(input) == input_bytes, "the input changed: " + what);
    check(dir.entries() == expected_entries, "files were left behind or are missing: " + what);
    check(std::filesystem::is_empty(dir / "tmp"), "temp files were left behind: " + what);
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::sort_target)
