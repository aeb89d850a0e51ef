// gpusort-gen: writes test data, N keys of one type drawn from a distribution, or N Sort
// Benchmark style records (--format gensort), or the same records as text lines for line-based
// sorters such as GNU sort (--format gensort-text). The data are made by the generator library
// (tools/gen/): the same seed gives the same bytes, on any machine and with any number of threads.
#include "tools/gen/data_generator.hpp"
#include "src/cli/size_parse.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

void write_all(int fd, const std::string& name, const std::byte* data, std::size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("cannot write '" + name + "': " + std::strerror(errno));
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

// The data that the options ask for.
gen::DataSpec data_spec_of(const po::variables_map& vm) {
    gen::DataSpec spec;
    auto type = parse_key_type(vm["type"].as<std::string>());
    if (!type) throw std::invalid_argument("unknown --type '" + vm["type"].as<std::string>() + "'");
    spec.keys.type = *type;
    auto count = parse_size(vm["count"].as<std::string>());
    if (!count) throw std::invalid_argument("--count: not a number");
    spec.keys.count = *count;
    auto distribution = gen::parse_distribution(vm["dist"].as<std::string>());
    if (!distribution) throw std::invalid_argument("unknown --dist '" + vm["dist"].as<std::string>() + "'");
    spec.keys.distribution = *distribution;
    spec.keys.seed = vm["seed"].as<std::uint64_t>();
    spec.keys.special = vm.count("special") > 0;
    if (vm.count("format")) {
        const std::string name = vm["format"].as<std::string>();
        auto format = gen::parse_record_format(name);
        if (!format) throw std::invalid_argument("unknown --format '" + name + "' (gensort or gensort-text)");
        if (!vm["type"].defaulted()) throw std::invalid_argument("--format " + name + " and --type exclude each other");
        spec.format = *format;
    }
    spec.validate();
    return spec;
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description visible(
        "Usage: gpusort-gen [--type T | --format gensort|gensort-text] --count N [--dist D] [--seed S] [--special] OUTPUT\nOptions");
    visible.add_options()
        ("type", po::value<std::string>()->default_value("u64"), "key type: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64")
        ("format", po::value<std::string>(),
         "gensort: 100-byte records with a 10-byte binary key (see tools/gen/gensort_records.hpp for the layout); "
         "gensort-text: the same records as 100-byte text lines (the key as 20 hex digits, a space, the index "
         "as 20 decimal digits, a space, 57 letters, '\\n'), for line sorters such as LC_ALL=C sort")
        ("count", po::value<std::string>(), "number of keys (suffixes K, M, G allowed: powers of 1024)")
        ("dist", po::value<std::string>()->default_value("uniform"),
         "uniform, sorted, reversed, equal, few-unique, nearly-sorted, zipf, normal")
        ("seed", po::value<std::uint64_t>()->default_value(1), "random seed; the same seed gives the same bytes")
        ("special", "floats: about one key in eight is NaN, -NaN, +-inf, +-0, a denormal or -1")
        ("help,h", "show this help");
    po::options_description all;
    all.add(visible).add_options()("output", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("output", 1);
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << visible;
            return 0;
        }
        if (!vm.count("count") || !vm.count("output")) throw std::invalid_argument("expected --count N and OUTPUT");
        const gen::DataSpec spec = data_spec_of(vm);

        const std::string output = vm["output"].as<std::string>();
        int fd = output == "-" ? STDOUT_FILENO : ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) throw std::runtime_error("cannot create '" + output + "': " + std::strerror(errno));
        const std::size_t width = spec.record_size();
        constexpr std::uint64_t kBlockRecords = 1 << 20;
        std::vector<std::byte> block(kBlockRecords * width);
        for (std::uint64_t first = 0; first < spec.keys.count; first += kBlockRecords) {
            const std::size_t bytes = static_cast<std::size_t>(std::min(kBlockRecords, spec.keys.count - first)) * width;
            gen::generate(spec, first, std::span(block.data(), bytes));
            write_all(fd, output, block.data(), bytes);
        }
        if (fd != STDOUT_FILENO && ::close(fd) != 0)
            throw std::runtime_error("cannot write '" + output + "': " + std::strerror(errno));
    } catch (const std::exception& e) {
        std::cerr << "gpusort-gen: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
