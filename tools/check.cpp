// gpusort-check: exits 0 when FILE is in order (and, with --input, holds exactly the records of
// ORIGINAL: same count and the same order-independent checksum); otherwise prints the index of
// the first record out of order, or what differs, and exits 1. Exit 2: bad usage or I/O error.
#include "io/file.hpp"
#include "src/key_normalization.hpp"
#include "src/key_type.hpp"
#include "tools/record_hash.hpp"

#include <boost/program_options.hpp>
#include <cstring>
#include <iostream>
#include <vector>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

constexpr std::uint64_t kBlockRecords = 1 << 20;

// Calls visit(block) for consecutive blocks of whole records of the file.
template <class Visit>
void for_each_block(const std::string& path, std::size_t record_size, Visit visit) {
    io::File file = io::File::open_read(path);
    const std::uint64_t size = file.size();
    if (size % record_size != 0)
        throw std::runtime_error("'" + path + "' is " + std::to_string(size) +
                                 " bytes long, not a multiple of the record size " + std::to_string(record_size));
    std::vector<std::byte> block(kBlockRecords * record_size);
    for (std::uint64_t offset = 0; offset < size; offset += block.size()) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), size - offset));
        file.read_at(offset, std::span(block.data(), n));
        visit(std::span<const std::byte>(block.data(), n), offset / record_size);
    }
}

std::uint64_t normalized_key(std::span<const std::byte> record, const KeyOrder& order) {
    const KeyKind kind = key_kind(order.type);
    switch (record.size()) {
    case 1: { std::uint8_t v; std::memcpy(&v, record.data(), 1); return to_normalized(v, kind, order.descending); }
    case 2: { std::uint16_t v; std::memcpy(&v, record.data(), 2); return to_normalized(v, kind, order.descending); }
    case 4: { std::uint32_t v; std::memcpy(&v, record.data(), 4); return to_normalized(v, kind, order.descending); }
    default: { std::uint64_t v; std::memcpy(&v, record.data(), 8); return to_normalized(v, kind, order.descending); }
    }
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description visible("Usage: gpusort-check [--type T] [--descending] [--input ORIGINAL] FILE\nOptions");
    visible.add_options()
        ("type", po::value<std::string>()->default_value("u64"), "key type: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64")
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
        KeyOrder order;
        auto type = parse_key_type(vm["type"].as<std::string>());
        if (!type) throw std::invalid_argument("unknown --type '" + vm["type"].as<std::string>() + "'");
        order.type = *type;
        order.descending = vm.count("descending") > 0;
        const std::size_t record_size = key_width(order.type);
        const std::string path = vm["file"].as<std::string>();

        tools::MultisetChecksum sorted_sum;
        bool have_previous = false;
        std::uint64_t previous = 0;
        std::uint64_t first_bad = ~0ULL;
        for_each_block(path, record_size, [&](std::span<const std::byte> block, std::uint64_t first) {
            for (std::size_t i = 0; i * record_size < block.size(); ++i) {
                auto record = block.subspan(i * record_size, record_size);
                sorted_sum.add(record);
                const std::uint64_t key = normalized_key(record, order);
                if (have_previous && key < previous && first_bad == ~0ULL) first_bad = first + i;
                previous = key;
                have_previous = true;
            }
        });
        if (first_bad != ~0ULL) {
            std::cout << "gpusort-check: '" << path << "' is not in order: record " << first_bad
                      << " is smaller than the one before it\n";
            return 1;
        }
        if (vm.count("input")) {
            const std::string original = vm["input"].as<std::string>();
            tools::MultisetChecksum original_sum;
            for_each_block(original, record_size, [&](std::span<const std::byte> block, std::uint64_t) {
                for (std::size_t i = 0; i * record_size < block.size(); ++i)
                    original_sum.add(block.subspan(i * record_size, record_size));
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
