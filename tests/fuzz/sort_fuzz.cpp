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
#include "src/sort/sort_part.hpp"

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

// What the first two bytes choose.
struct Choice {
    bool unique = false, descending = false, verify = false;
    unsigned threads = 1;
    unsigned budget = 0;  // 0: one chunk; 1: runs of at most run_records; 2, 3: and that fan-in
    InputKind input = InputKind::file;
    OutputKind output = OutputKind::file;
    std::uint64_t run_records = 1;
};

Choice read_choice(unsigned flags, unsigned out_flags) {
    Choice c;
    c.unique = flags & 1;
    c.descending = flags & 2;
    c.verify = flags & 128;
    c.threads = flags & 4 ? 2 : 1;
    c.budget = (flags >> 3) & 3;
    c.input = static_cast<InputKind>((flags >> 5) & 3);
    c.output = static_cast<OutputKind>(out_flags & 3);
    c.run_records = 1 + (out_flags >> 2);
    return c;
}

// The records to sort: the bytes left, cut to whole records of r bytes; a ragged input is made to
// end in the middle of one.
std::vector<std::byte> records_of(Input data, std::size_t r, bool ragged) {
    std::vector<std::byte> records(std::as_bytes(data).begin(), std::as_bytes(data).end());
    if (ragged && records.size() % r == 0) records.push_back(std::byte{0x5a});
    if (!ragged) records.resize(records.size() / r * r);
    return records;
}

// The input file of the records, compressed as chosen; returns its path.
std::string write_input(const testing::ScratchDir& dir, InputKind kind, std::span<const std::byte> records) {
    const Compression compression = kind == InputKind::zst ? Compression::zstd
                                    : kind == InputKind::gz ? Compression::gzip
                                                            : Compression::none;
    const std::string input = dir / (compression == Compression::zstd ? "in.zst" : compression == Compression::gzip ? "in.gz" : "in");
    write_file(input, records, compression);
    return input;
}

// The sort's options: the CPU, the smallest budget, the layout's order, the testing aids and the
// output chosen (a pipe: through `pipe`).
PartSortOptions options_for(const Choice& c, const Layout& layout, const std::string& input, const testing::ScratchDir& dir,
                        std::optional<PipeCollector>& pipe) {
    PartSortOptions options;
    options.input = input;
    options.backend = Backend::cpu;
    options.threads = c.threads;
    options.memory_bytes = kMinMemoryBudget;
    options.tmp_dir = dir / "tmp";
    options.verify = c.verify;
    options.unique = c.unique;
    if (layout.keys) {
        options.order = {*layout.keys, c.descending};
    } else {
        options.records = layout.spec;
    }
    if (c.budget > 0) options.max_run_records = c.run_records;
    if (c.budget > 1) options.max_fan_in = c.budget;
    switch (c.output) {
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
    return options;
}

std::string describe(const Choice& c, std::size_t r, std::uint64_t n, bool ragged) {
    return "records of " + std::to_string(r) + " bytes, " + std::to_string(n) + (ragged ? "+" : "") + " of them, unique " +
           std::to_string(c.unique) + ", budget " + std::to_string(c.budget) + ", input " +
           std::to_string(static_cast<int>(c.input)) + ", output " + std::to_string(static_cast<int>(c.output)) +
           ", verify " + std::to_string(c.verify);
}

// An input that ends in the middle of a record: refused with an error naming it, an existing
// output unchanged. Returns whether the output's name is still to be found in the folder.
bool check_refused(const PartSortOptions& options, OutputKind output, std::optional<PipeCollector>& pipe, const std::string& what) {
    try {
        sort_part(options);
        check(false, "an input ending in the middle of a record was sorted: " + what);
    } catch (const SortError& e) {
        check(std::string(e.what()).find(options.input) != std::string::npos, "the error does not name the input: " + what);
    }
    if (pipe) pipe->take();
    if (output != OutputKind::existing) return false;
    check(testing::read_text(options.output) == "old", "a failed sort changed the existing output: " + what);
    return true;
}

// The sort's output is, byte for byte, the reference's, and its report counts right.
void check_sorted(const PartSortOptions& options, const Choice& c, const KeySpec& spec, const std::vector<std::byte>& records,
                  std::optional<PipeCollector>& pipe, const std::string& what) {
    const std::size_t r = spec.record_size;
    const std::uint64_t n = records.size() / r;
    const SortReport report = sort_part(options);
    const std::vector<std::byte> expected = testing::reference_record_sort(records, spec, c.unique);
    std::vector<std::byte> output;
    if (pipe) output = pipe->take();
    else if (c.output == OutputKind::zst) output = read_compressed(options.output, Compression::zstd);
    else output = read_file(options.output);
    check(output == expected, "the output differs from the reference: " + what);
    check(report.records == n && report.output_records == expected.size() / r, "the report's counts are wrong: " + what);
    if (c.budget > 0 && n > 2 * c.run_records) check(report.runs >= 2, "no runs were formed: " + what);
}

}  // namespace

void sort_target(Input data) {
    if (data.size() < 3) return;
    const Choice choice = read_choice(data[0], data[1]);
    data = data.subspan(2);
    const std::optional<Layout> layout = read_layout(data, choice.descending);
    if (!layout || layout->spec.fields.empty()) return;
    const KeySpec& spec = layout->spec;
    const std::size_t r = spec.record_size;
    const bool ragged = choice.input == InputKind::ragged && r > 1;
    const std::vector<std::byte> records = records_of(data, r, ragged);
    const std::uint64_t n = records.size() / r;

    const testing::ScratchDir& dir = scratch();
    const std::string input = write_input(dir, choice.input, records);
    const std::vector<std::byte> input_bytes = read_file(input);
    std::optional<PipeCollector> pipe;
    const PartSortOptions options = options_for(choice, *layout, input, dir, pipe);
    std::set<std::string> expected_entries = {std::filesystem::path(input).filename(), "tmp"};
    const bool to_file = choice.output != OutputKind::pipe;
    const std::string out_name = to_file ? std::string(std::filesystem::path(options.output).filename()) : "";

    const std::string what = describe(choice, r, n, ragged);
    bool output_left = to_file;  // the output's name is to be found in the folder
    if (ragged)
        output_left = check_refused(options, choice.output, pipe, what);
    else
        check_sorted(options, choice, spec, records, pipe, what);
    if (output_left) expected_entries.insert(out_name);
    check(read_file(input) == input_bytes, "the input changed: " + what);
    check(dir.entries() == expected_entries, "files were left behind or are missing: " + what);
    check(std::filesystem::is_empty(dir / "tmp"), "temp files were left behind: " + what);
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::sort_target)
