// gpusort-gen: writes test data, N keys of one type drawn from a distribution, or N Sort
// Benchmark style records (--format gensort), or the same records as text lines for line-based
// sorters such as GNU sort (--format gensort-text). The data are made by the generator library
// (tools/gen/): the same seed gives the same bytes, on any machine and with any number of threads.
#include "tools/gen/data_generator.hpp"
#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"
#include "src/cli/size_parse.hpp"
#include "src/cli/option_values.hpp"
#include "src/output/sort_output.hpp"
#include "src/plan/plan_report.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

// Writes all of data to a stream or device, in order.
void write_all(int fd, const std::string& name, std::span<const std::byte> data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) io::throw_errno("cannot write", name, n < 0 ? errno : EIO);
        data = data.subspan(static_cast<std::size_t>(n));
    }
}

// The names of the distributions, for --help and errors: "uniform sorted ...".
std::string distribution_list() {
    std::string list;
    for (const gen::Distribution d : gen::kAllDistributions) list += std::string(list.empty() ? "" : " ") + gen::distribution_name(d);
    return list;
}

// The data that the options ask for: --count records, or as many whole records as --size bytes hold.
gen::DataSpec data_spec_of(const po::variables_map& vm) {
    gen::DataSpec spec;
    auto type = parse_key_type(vm["type"].as<std::string>());
    if (!type)
        throw std::invalid_argument("unknown --type '" + vm["type"].as<std::string>() + "' (one of: " + key_type_list() + ")");
    spec.keys.type = *type;
    auto distribution = gen::parse_distribution(vm["dist"].as<std::string>());
    if (!distribution)
        throw std::invalid_argument("unknown --dist '" + vm["dist"].as<std::string>() + "' (one of: " + distribution_list() +
                                    ")");
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
    if (vm.count("count") == vm.count("size"))
        throw std::invalid_argument("give either --count N (records) or --size BYTES");
    const std::string option = vm.count("count") ? "count" : "size";
    const std::string value = vm[option].as<std::string>();
    const auto number = parse_size(value);
    if (!number) throw std::invalid_argument("--" + option + " '" + value + "': not a size (such as 1000, 64K, 2G)");
    spec.keys.count = option == "count" ? *number : *number / spec.record_size();
    spec.validate();
    return spec;
}

// Writes the records in blocks to put(offset, bytes).
template <class Put>
void write_records(const gen::DataSpec& spec, Put&& put) {
    const std::size_t width = spec.record_size();
    constexpr std::uint64_t kBlockRecords = 1 << 20;
    std::vector<std::byte> block(static_cast<std::size_t>(std::min(kBlockRecords, spec.keys.count)) * width);
    for (std::uint64_t first = 0; first < spec.keys.count; first += kBlockRecords) {
        const std::size_t bytes = static_cast<std::size_t>(std::min(kBlockRecords, spec.keys.count - first)) * width;
        gen::generate(spec, first, std::span(block.data(), bytes));
        put(first * width, std::span<const std::byte>(block.data(), bytes));
    }
}

// A file appears at OUTPUT only once it is whole (as gpusort-file's output: nothing is left by an
// error or a kill, and an existing OUTPUT stays until then), after a check of the free space.
// Standard output ("-"), pipes and devices are written in place.
void write_output(const gen::DataSpec& spec, const std::string& output) {
    const std::uint64_t bytes = spec.keys.count * spec.record_size();
    const OutputShape shape = output_shape(output, Compression::none);
    if (!shape.sequential) {
        const std::optional<std::uint64_t> free = io::free_space(shape.folder);
        if (free && *free < bytes)
            throw std::runtime_error("not enough free space in '" + shape.folder + "': '" + output + "' needs " +
                                     size_text(bytes) + ", " + size_text(*free) + " are free");
        io::AtomicOutputFile file(output);
        write_records(spec, [&](std::uint64_t offset, std::span<const std::byte> data) {
            file.file().write_at(offset, data);
        });
        file.commit(false);  // not flushed to disk: the same seed makes the same data again
        return;
    }
    // Binary data are not shown on a terminal, as gpusort-file does not show them; text lines are.
    if (output == "-" && spec.format != gen::RecordFormat::gensort_text && io::is_terminal(STDOUT_FILENO))
        throw std::runtime_error("refusing to write binary records to a terminal: redirect standard output or name an "
                                 "OUTPUT file");
    io::File device;
    if (output != "-") device = io::File::open_write(output);
    const int fd = output == "-" ? STDOUT_FILENO : device.fd();
    const std::string name = output == "-" ? "standard output" : output;
    write_records(spec, [&](std::uint64_t, std::span<const std::byte> data) { write_all(fd, name, data); });
    if (device.is_open()) device.close();
}

// The options that --help lists.
po::options_description visible_options() {
    po::options_description visible(
        "Usage: gpusort-gen [--type T | --format gensort|gensort-text] (--count N | --size BYTES) [OPTIONS] OUTPUT\n"
        "Writes test data to OUTPUT (- for standard output). A file appears at OUTPUT only once it is complete.\n"
        "\nOptions");
    visible.add_options()
        ("type", po::value<std::string>()->value_name("T")->default_value("u64"), ("key type: " + key_type_list()).c_str())
        ("format", po::value<std::string>()->value_name("NAME"),
         "gensort: 100-byte records with a 10-byte binary key: bytes 0-7 the key big-endian (so that "
         "memcmp order is the key order), 8-9 random (zero with --dist equal or few-unique), 10-17 the "
         "record's index (little-endian), 18-99 printable characters made from the index; gensort-text: "
         "the same records as 100-byte text lines (the key as 20 hex digits, a space, the index as 20 "
         "decimal digits, a space, 57 letters, '\\n'), for line sorters such as LC_ALL=C sort")
        ("count", po::value<std::string>()->value_name("N"), "number of records (suffixes K, M, G, T: powers of 1024)")
        ("size", po::value<std::string>()->value_name("BYTES"), "bytes of data instead of --count: as many whole records as fit (suffixes as --count)")
        ("dist", po::value<std::string>()->value_name("NAME")->default_value("uniform"), ("key distribution: " + distribution_list()).c_str())
        ("seed", po::value<std::uint64_t>()->value_name("N")->default_value(1), "random seed; the same seed gives the same bytes")
        ("special", "floats: about one key in eight is NaN, -NaN, +-inf, +-0, a denormal or -1");
    add_help_and_version(visible);
    return visible;
}

// The --help text, laid out for help2man (see src/cli/option_values.hpp).
std::string help_text(const po::options_description& visible) {
    return help_page(visible,
                     "  0  written (or --help, --version shown)\n"
                     "  1  an error while writing (such as a full disk)\n"
                     "  2  a bad command line\n",
                     "  gpusort-gen --size 1G keys.bin                        1 GiB of random u64 keys\n"
                     "  gpusort-gen --format gensort --count 10M records.dat  10M Sort Benchmark records\n");
}

// What gpusort-gen is asked to do: the data and OUTPUT, or only the help or the version shown.
struct Command {
    gen::DataSpec spec;
    std::string output;
    std::string shown;  // the text of --help or --version, when one was asked for
};

Command parse_command_line(const std::vector<std::string>& args) {
    const po::options_description visible = visible_options();
    const po::variables_map vm = parse_words(args, visible);
    const std::vector<std::string> words = operands(vm, 1, "too many operands: expected one OUTPUT (see --help)");
    Command command;
    if (vm.count("help")) command.shown = help_text(visible);
    else if (vm.count("version")) command.shown = std::string("gpusort-gen ") + GPUSORT_VERSION + "\n";
    if (!command.shown.empty()) return command;
    if (words.empty()) throw std::invalid_argument("expected OUTPUT (a file, or - for standard output)");
    command.spec = data_spec_of(vm);
    command.output = words[0];
    return command;
}

}  // namespace

int main(int argc, char** argv) {
    Command command;
    try {
        io::install_signal_cleanup();
        command = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        std::cerr << "gpusort-gen: " << e.what() << "\n";
        return 2;
    }
    if (!command.shown.empty()) {
        std::cout << command.shown;
        return 0;
    }
    try {
        write_output(command.spec, command.output);
    } catch (const std::exception& e) {
        std::cerr << "gpusort-gen: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
