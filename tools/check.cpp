// gpusort-check: exits 0 when FILE is in order (and, with --input, holds exactly the records of
// ORIGINAL: same count and the same order-independent checksum); otherwise prints the index of
// the first record out of order, or what differs, and exits 1. Exit 2: bad usage or I/O error.
// FILE and ORIGINAL are read decompressed when their names end in .gz, .bz2, .xz or .zst; "-" is
// standard input, and a pipe or device is read front to back. The outputs of gpusort-file's
// --index-out and --values are checked against KEYS (--input) by the column checks
// (check_columns.hpp): --index INDEX, its FILE optional, and --values V:OUT[:WIDTH]. With --lines,
// FILE holds text lines, checked in the order of gpusort-file --lines (check_lines.hpp).
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "gpusort/compression.hpp"
#include "gpusort/key_spec.hpp"
#include "src/cli/key_options.hpp"
#include "src/cli/line_options.hpp"
#include "src/cli/option_values.hpp"
#include "src/verify/file_verifier.hpp"
#include "tools/check_columns.hpp"
#include "tools/check_lines.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

// Reads the records of the file at `path` (decompressed by its name's ending) into `verifier`;
// a file that does not hold whole records is an error.
void read_records(const std::string& path, RecordVerifier& verifier) {
    const bool standard_input = path == "-";
    const io::File file = standard_input ? io::File::duplicate(STDIN_FILENO, "standard input") : io::File::open_read(path);
    const Compression compression = standard_input ? Compression::none : compression_of(path);
    const std::uint64_t bytes = verify_file({file, file.path(), compression}, verifier);
    if (bytes % verifier.record_size() != 0)
        throw std::runtime_error(io::input_shown(path) + " is " + std::to_string(bytes) + " bytes long" +
                                 (compression == Compression::none ? "" : " decompressed") +
                                 ", not a multiple of the record size " + std::to_string(verifier.record_size()));
}

// How the first record out of order differs from the one before it, under `spec`: smaller in an
// ascending order, larger in a descending one; with fields of both directions, before it.
std::string violation(const KeySpec& spec) {
    auto descending = [](const KeyField& field) { return field.descending; };
    if (std::all_of(spec.fields.begin(), spec.fields.end(), descending)) return "is larger than the one before it";
    if (std::none_of(spec.fields.begin(), spec.fields.end(), descending)) return "is smaller than the one before it";
    return "belongs before the one before it (by the key fields and their directions)";
}

// The options that --help lists.
po::options_description visible_options() {
    po::options_description visible(
        "Usage: gpusort-check [--type T | --key SPEC... | --format gensort] [--record-size N] [--descending]\n"
        "                     [--input ORIGINAL] FILE\n"
        "  or:  gpusort-check [KEY OPTIONS] --input KEYS --index INDEX [--index-type u32|u64|auto] [--unique]\n"
        "                     [--values V:OUT[:WIDTH]]... [FILE]\n"
        "  or:  gpusort-check [KEY OPTIONS] --input KEYS --values V:OUT[:WIDTH]... FILE\n"
        "  or:  gpusort-check --lines [--line-key POS1[,POS2]]... [LINE OPTIONS] [--input ORIGINAL] FILE\n"
        "Checks that FILE is in order and, with --input, holds exactly the records of ORIGINAL. Names ending in\n"
        ".gz, .bz2, .xz or .zst are read decompressed; - is standard input, read as it is.\n"
        "\n"
        "With --index, checks the record numbers that gpusort-file --index-out wrote: INDEX must order KEYS\n"
        "stably (with --unique, hold the first record of each key), and FILE, when given, hold KEYS's records\n"
        "in that order. With --values, OUT must hold V's records (one per record of KEYS) in the order of the\n"
        "sort: by INDEX where it is given, else as FILE's keys are ordered. KEYS, INDEX, FILE and the value\n"
        "files of these checks must be uncompressed regular files; they are read through memory maps.\n"
        "\n"
        "With --lines, FILE holds text lines that must be in the order that gpusort-file --lines gives with the\n"
        "same options (LC_ALL=C sort's), and with --input, the lines of ORIGINAL (a last line without its\n"
        "terminator counts as a line).\n"
        "\nOptions");
    add_key_options(visible);
    add_line_options(visible, "FILE holds text lines, in LC_ALL=C sort's order by the keys below (--descending, --unique "
                              "and --stable as sort's -r, -u and -s)");
    visible.add_options()
        ("input", po::value<std::string>()->value_name("ORIGINAL"), "FILE must hold exactly the records of ORIGINAL")
        ("index", po::value<std::string>()->value_name("INDEX"),
         "INDEX holds, for each sorted position, the number (from 0) of its record in KEYS (--input)")
        ("index-type", po::value<std::string>()->value_name("TYPE")->default_value("auto"),
         "INDEX's record numbers: u32, u64, or auto (u32 where KEYS has at most 2^32 records)")
        ("unique", "INDEX holds the first record of each distinct key only; with --lines: the keys strictly increase")
        ("stable", "with --lines: lines with equal keys may come in any order (no last-resort comparison), as sort's -s")
        ("values", po::value<std::vector<std::string>>()->value_name("V:OUT[:WIDTH]"),
         "OUT must hold V's values in the order of the sort; WIDTH: bytes per value (default: the size of V "
         "over the records of KEYS); repeatable");
    add_help_and_version(visible);
    return visible;
}

// The --help text, laid out for help2man (see src/cli/option_values.hpp).
std::string help_text(const po::options_description& visible) {
    return help_page(visible,
                     "  0  in order (and the same records)\n"
                     "  1  not (the first record out of order, or what differs, is printed)\n"
                     "  2  a bad command line or a file that cannot be read\n",
                     "  gpusort-check --type u64 --input keys.bin sorted.bin  sorted.bin is keys.bin in order\n"
                     "  gpusort-check --type u64 --input keys.bin --index order.idx sorted.bin\n"
                     "          order.idx orders keys.bin stably, and sorted.bin holds keys.bin in that order\n"
                     "  gpusort-check --type u32 --input keys.bin --index order.idx --values pay.bin:pay.sorted\n"
                     "          pay.sorted holds the records of pay.bin in the order of order.idx\n"
                     "  gpusort-check --type u32 --input keys.bin --values pay.bin:pay.sorted:16 sorted.bin\n"
                     "          sorted.bin is keys.bin in order, and pay.sorted holds pay.bin's 16-byte values with\n"
                     "          their keys\n"
                     "  gpusort-check --lines --field-separator , --line-key 3,3n --input data.csv sorted.csv\n"
                     "          sorted.csv is data.csv sorted as LC_ALL=C sort -t, -k3,3n sorts it\n");
}

// Checks FILE's order (and, with --input, its records against ORIGINAL's); prints the first failure
// and returns 1, or returns nothing, FILE's record count in `records`.
std::optional<int> check_file(const po::variables_map& vm, const std::string& path, const KeySpec& spec,
                              std::uint64_t& records) {
    RecordVerifier sorted(spec, false);
    read_records(path, sorted);
    records = sorted.records();
    if (const auto first_bad = sorted.first_out_of_order()) {
        std::cout << "gpusort-check: " << io::input_shown(path) << " is not in order: record " << *first_bad
                  << " (counted from 0; at byte " << *first_bad * spec.record_size << ") " << violation(spec) << "\n";
        return 1;
    }
    if (vm.count("input")) {
        const std::string original = vm["input"].as<std::string>();
        RecordVerifier original_records(spec.record_size);
        read_records(original, original_records);
        if (original_records.records() != sorted.records()) {
            std::cout << "gpusort-check: " << io::input_shown(path) << " has " << sorted.records() << " records, "
                      << io::input_shown(original) << " has " << original_records.records() << "\n";
            return 1;
        }
        if (!(original_records.checksum() == sorted.checksum())) {
            std::cout << "gpusort-check: " << io::input_shown(path) << " does not hold the same records as "
                      << io::input_shown(original) << " (checksums differ)\n";
            return 1;
        }
    }
    return std::nullopt;
}

// What the column checks are asked (--index, --values), from the command line; refuses a request
// that lacks what they need.
columns::ColumnRequest column_request(const po::variables_map& vm, const std::vector<std::string>& words) {
    columns::ColumnRequest request;
    request.spec = parse_key_options(vm).spec();
    if (!vm.count("input")) throw std::invalid_argument("--index and --values need --input KEYS");
    request.keys = vm["input"].as<std::string>();
    if (vm.count("index")) request.index = vm["index"].as<std::string>();
    request.index_type = columns::parse_index_type(vm["index-type"].as<std::string>());
    request.unique = vm.count("unique") > 0;
    if (!words.empty()) request.file = words[0];
    if (vm.count("values"))
        for (const std::string& text : vm["values"].as<std::vector<std::string>>())
            request.values.push_back(columns::parse_value_column(text));
    if (!request.index && !request.file) throw std::invalid_argument("--values needs FILE or --index INDEX");
    if (!request.index && request.unique) throw std::invalid_argument("--unique needs --index INDEX");
    if (!request.index && !vm["index-type"].defaulted()) throw std::invalid_argument("--index-type needs --index INDEX");
    columns::refuse_unmappable_files(request);
    return request;
}

// The column checks; without --index, FILE's order and records are checked first, as without them.
int run_column_checks(const po::variables_map& vm, const std::vector<std::string>& words) {
    const columns::ColumnRequest request = column_request(vm, words);
    if (request.index) return columns::check_index(request);
    std::uint64_t records = 0;
    if (const auto failed = check_file(vm, words[0], request.spec, records)) return *failed;
    if (const int failed = columns::check_values_by_checksum(request)) return failed;
    std::cout << "ok: " << records << " records in order, same records as the input, " << request.values.size()
              << " value column(s) follow their keys\n";
    return 0;
}

// Checks FILE (and, with --input, against ORIGINAL), or the columns, printing the verdict; returns
// the exit status.
// --lines: FILE's lines (and ORIGINAL's); the options of records and columns are refused.
int run_line_check(const po::variables_map& vm, const std::vector<std::string>& words) {
    const TextKeys keys = *parse_line_options(vm);
    if (vm.count("index")) throw std::invalid_argument("--lines excludes --index, an option of binary records (see --help)");
    if (words.empty()) throw std::invalid_argument("expected FILE");
    if (keys.unique && vm.count("input"))
        throw std::invalid_argument("--lines --unique: which lines of ORIGINAL are kept cannot be told without sorting it; "
                                    "leave out --input to check the order");
    const std::optional<std::string> original = vm.count("input") ? std::optional(vm["input"].as<std::string>()) : std::nullopt;
    return lines::check(words[0], original, keys);
}

int check(const po::variables_map& vm, const std::vector<std::string>& words) {
    if (vm.count("lines")) return run_line_check(vm, words);
    parse_line_options(vm);  // refuses the options of --lines without it
    if (vm.count("stable")) throw std::invalid_argument("--stable is for --lines (see --help)");
    if (vm.count("index") || vm.count("values")) return run_column_checks(vm, words);
    if (vm.count("unique")) throw std::invalid_argument("--unique needs --index INDEX");
    if (!vm["index-type"].defaulted()) throw std::invalid_argument("--index-type needs --index INDEX");
    if (words.empty()) throw std::invalid_argument("expected FILE");
    std::uint64_t records = 0;
    if (const auto failed = check_file(vm, words[0], parse_key_options(vm).spec(), records)) return *failed;
    std::cout << "ok: " << records << " records in order" << (vm.count("input") ? ", same records as the input" : "")
              << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const po::options_description visible = visible_options();
        const po::variables_map vm = parse_words(std::vector<std::string>(argv + 1, argv + argc), visible);
        const std::vector<std::string> words = operands(vm, 1, "too many operands: expected one FILE (see --help)");
        if (vm.count("help")) {
            std::cout << help_text(visible);
            return 0;
        }
        if (vm.count("version")) {
            std::cout << "gpusort-check " << GPUSORT_VERSION << "\n";
            return 0;
        }
        return check(vm, words);
    } catch (const std::exception& e) {
        std::cerr << "gpusort-check: " << e.what() << "\n";
        return 2;
    }
}
