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
#include <cerrno>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

// Reads the records of the file at `path` (decompressed by its name's ending) into `verifier`;
// a file that does not hold whole records is an error.
void read_records(const std::string& path, RecordVerifier& verifier) {
    const bool standard_input = path == "-";
    const io::File file = standard_input ? io::File(::dup(STDIN_FILENO), "standard input") : io::File::open_read(path);
    if (!file.is_open()) io::throw_errno("cannot read", "standard input", errno);
    const Compression compression = standard_input ? Compression::none : compression_of(path);
    const std::uint64_t bytes = verify_file({file, file.path(), compression}, verifier);
    if (bytes % verifier.record_size() != 0)
        throw std::runtime_error(io::input_shown(path) + " is " + std::to_string(bytes) + " bytes long" +
                                 (compression == Compression::none ? "" : " decompressed") +
                                 ", not a multiple of the record size " + std::to_string(verifier.record_size()));
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description visible(
        "Usage: gpusort-check [--type T | --key SPEC... | --format gensort] [--record-size N] [--descending]\n"
        "                     [--input ORIGINAL] FILE\n"
        "Checks that FILE is in order and, with --input, holds exactly the records of ORIGINAL. Names ending in\n"
        ".gz, .bz2, .xz or .zst are read decompressed; - is standard input, read as it is.\n"
        "\nOptions");
    add_key_options(visible);
    visible.add_options()
        ("input", po::value<std::string>(), "ORIGINAL: FILE must hold exactly its records")
        ("help,h", "show this help");
    po::options_description all;
    all.add(visible).add_options()("file", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("file", 1);
    try {
        po::variables_map vm;
        try {
            const auto parsed = po::command_line_parser(argc, argv).options(all).positional(positional).run();
            refuse_options_as_values(parsed);
            po::store(parsed, vm);
        } catch (const po::too_many_positional_options_error&) {
            throw std::invalid_argument("too many operands: expected one FILE (see --help)");
        }
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << visible
                      << "\nExit status: 0 in order (and the same records); 1 not (the first record out of order, or\n"
                         "what differs, is printed); 2 a bad command line or a file that cannot be read.\n"
                         "\nExamples:\n"
                         "  gpusort-check --type u64 --input keys.bin sorted.bin  sorted.bin is keys.bin in order\n";
            return 0;
        }
        if (!vm.count("file")) throw std::invalid_argument("expected FILE");
        const KeySpec spec = parse_key_options(vm).spec();
        const std::size_t record_size = spec.record_size;
        const std::string path = vm["file"].as<std::string>();

        RecordVerifier sorted(spec, false);
        read_records(path, sorted);
        if (const auto first_bad = sorted.first_out_of_order()) {
            std::cout << "gpusort-check: " << io::input_shown(path) << " is not in order: record " << *first_bad
                      << " (counted from 0; at byte " << *first_bad * record_size
                      << ") is smaller than the one before it\n";
            return 1;
        }
        if (vm.count("input")) {
            const std::string original = vm["input"].as<std::string>();
            RecordVerifier original_records(record_size);
            read_records(original, original_records);
            if (original_records.records() != sorted.records()) {
                std::cout << "gpusort-check: " << io::input_shown(path) << " has " << sorted.records() << " records, "
                          << io::input_shown(original) << " has " << original_records.records() << "\n";
                return 1;
            }
            if (!(original_records.checksum() == sorted.checksum())) {
                std::cout << "gpusort-check: " << io::input_shown(path) << " does not hold the same records as " << io::input_shown(original)
                          << " (checksums differ)\n";
                return 1;
            }
        }
        std::cout << "ok: " << sorted.records() << " records in order" << (vm.count("input") ? ", same records as the input" : "")
                  << "\n";
    } catch (const std::exception& e) {
        std::cerr << "gpusort-check: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
