// gpusort-check: exits 0 when FILE is in order (and, with --input, holds exactly the records of
// ORIGINAL: same count and the same order-independent checksum); otherwise prints the index of
// the first record out of order, or what differs, and exits 1. Exit 2: bad usage or I/O error.
#include "io/file.hpp"
#include "gpusort/key_spec.hpp"
#include "src/verify/order_check.hpp"
#include "src/verify/record_checksum.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <vector>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

// Bytes read at once (whole records, at least one, no more than the file holds).
constexpr std::size_t kBlockBytes = std::size_t{64} << 20;

// Calls visit(block) for consecutive blocks of whole records of the file.
template <class Visit>
void for_each_block(const std::string& path, std::size_t record_size, Visit visit) {
    io::File file = io::File::open_read(path);
    const std::uint64_t size = file.size();
    if (size % record_size != 0)
        throw std::runtime_error("'" + path + "' is " + std::to_string(size) +
                                 " bytes long, not a multiple of the record size " + std::to_string(record_size));
    const std::uint64_t block_records =
        std::clamp<std::uint64_t>(size / record_size, 1, std::max<std::size_t>(kBlockBytes / record_size, 1));
    std::vector<std::byte> block(static_cast<std::size_t>(block_records) * record_size);
    for (std::uint64_t offset = 0; offset < size; offset += block.size()) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), size - offset));
        file.read_at(offset, std::span(block.data(), n));
        visit(std::span<const std::byte>(block.data(), n));
    }
}

// The key spec from --format, --key or --type, with --record-size and --descending applied.
KeySpec key_spec_of(const po::variables_map& vm) {
    KeySpec spec;
    const bool has_format = vm.count("format") > 0, has_keys = vm.count("key") > 0;
    if (has_format + has_keys + !vm["type"].defaulted() > 1)
        throw std::invalid_argument("--type, --key and --format exclude each other");
    if (has_format) {
        if (vm["format"].as<std::string>() != "gensort")
            throw std::invalid_argument("unknown --format '" + vm["format"].as<std::string>() + "' (only gensort)");
        spec = gensort_key();
    } else if (has_keys) {
        if (!vm.count("record-size")) throw std::invalid_argument("--key needs --record-size");
        for (const auto& text : vm["key"].as<std::vector<std::string>>()) spec.fields.push_back(parse_key_field(text));
    } else {
        auto type = parse_key_type(vm["type"].as<std::string>());
        if (!type) throw std::invalid_argument("unknown --type '" + vm["type"].as<std::string>() + "'");
        spec = whole_record_key(*type, false);
    }
    if (vm.count("record-size")) spec.record_size = vm["record-size"].as<std::size_t>();
    if (vm.count("descending"))
        for (auto& field : spec.fields) field.descending = !field.descending;
    spec.validate();
    return spec;
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description visible(
        "Usage: gpusort-check [--type T | --key SPEC... | --format gensort] [--record-size N] [--descending]\n"
        "                     [--input ORIGINAL] FILE\nOptions");
    visible.add_options()
        ("type", po::value<std::string>()->default_value("u64"), "every record is one key: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64")
        ("key", po::value<std::vector<std::string>>(), "OFFSET:TYPE[:be|le][:desc] or OFFSET:bytes:LEN[:desc]; repeatable, first most significant")
        ("record-size", po::value<std::size_t>(), "bytes per record (default: the key type's width; needed with --key)")
        ("format", po::value<std::string>(), "gensort: 100-byte records, 10-byte key at offset 0")
        ("descending", "FILE should be in descending order")
        ("input", po::value<std::string>(), "ORIGINAL: FILE must hold exactly its records")
        ("help,h", "show this help");
    po::options_description all;
    all.add(visible).add_options()("file", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("file", 1);
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << visible;
            return 0;
        }
        if (!vm.count("file")) throw std::invalid_argument("expected FILE");
        const KeySpec spec = key_spec_of(vm);
        const std::size_t record_size = spec.record_size;
        const std::string path = vm["file"].as<std::string>();

        MultisetChecksum sorted_sum;
        OrderChecker order(spec, false);
        std::optional<std::uint64_t> first_bad;
        for_each_block(path, record_size, [&](std::span<const std::byte> block) {
            sorted_sum.add_records(block, record_size);
            const auto bad = order.check(block);
            if (!first_bad) first_bad = bad;
        });
        if (first_bad) {
            std::cout << "gpusort-check: '" << path << "' is not in order: record " << *first_bad
                      << " is smaller than the one before it\n";
            return 1;
        }
        if (vm.count("input")) {
            const std::string original = vm["input"].as<std::string>();
            MultisetChecksum original_sum;
            for_each_block(original, record_size, [&](std::span<const std::byte> block) {
                original_sum.add_records(block, record_size);
            });
            if (original_sum.count != sorted_sum.count) {
                std::cout << "gpusort-check: '" << path << "' has " << sorted_sum.count << " records, '" << original
                          << "' has " << original_sum.count << "\n";
                return 1;
            }
            if (!(original_sum == sorted_sum)) {
                std::cout << "gpusort-check: '" << path << "' does not hold the same records as '" << original
                          << "' (checksums differ)\n";
                return 1;
            }
        }
        std::cout << "ok: " << sorted_sum.count << " records in order" << (vm.count("input") ? ", same records as the input" : "")
                  << "\n";
    } catch (const std::exception& e) {
        std::cerr << "gpusort-check: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
