// gpusort-check: exits 0 when FILE is in order (and, with --input, holds exactly the records of
// ORIGINAL: same count and the same order-independent checksum); otherwise prints the index of
// the first record out of order, or what differs, and exits 1. Exit 2: bad usage or I/O error.
// FILE and ORIGINAL are read decompressed when their names end in .gz, .bz2, .xz or .zst; "-" is
// standard input, and a pipe or device is read front to back.
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "gpusort/compression.hpp"
#include "gpusort/key_spec.hpp"
#include "src/cli/key_options.hpp"
#include "src/cli/option_values.hpp"
#include "src/verify/file_verifier.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <iostream>
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
        "Checks that FILE is in order and, with --input, holds exactly the records of ORIGINAL. Names ending in\n"
        ".gz, .bz2, .xz or .zst are read decompressed; - is standard input, read as it is.\n"
        "\nOptions");
    add_key_options(visible);
    visible.add_options()
        ("input", po::value<std::string>()->value_name("ORIGINAL"), "FILE must hold exactly the records of ORIGINAL");
    add_help_and_version(visible);
    return visible;
}

// The --help text, laid out for help2man (see src/cli/option_values.hpp).
std::string help_text(const po::options_description& visible) {
    return help_page(visible,
                     "  0  in order (and the same records)\n"
                     "  1  not (the first record out of order, or what differs, is printed)\n"
                     "  2  a bad command line or a file that cannot be read\n",
                     "  gpusort-check --type u64 --input keys.bin sorted.bin  sorted.bin is keys.bin in order\n");
}

// Checks FILE (and, with --input, against ORIGINAL), printing the verdict; returns the exit status.
int check(const po::variables_map& vm, const std::string& path) {
    const KeySpec spec = parse_key_options(vm).spec();
    RecordVerifier sorted(spec, false);
    read_records(path, sorted);
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
    std::cout << "ok: " << sorted.records() << " records in order" << (vm.count("input") ? ", same records as the input" : "")
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
        if (words.empty()) throw std::invalid_argument("expected FILE");
        return check(vm, words[0]);
    } catch (const std::exception& e) {
        std::cerr << "gpusort-check: " << e.what() << "\n";
        return 2;
    }
}
