// gpusort-gen: writes test data, N keys of one type drawn from a distribution, or N Sort
// Benchmark style records (--format gensort), or the same records as text lines for line-based
// sorters such as GNU sort (--format gensort-text), or text lines of one kind (--lines KIND). The
// data are made by the generator library (tools/gen/): the same seed gives the same bytes, on any
// machine and with any number of threads.
#include "tools/gen/data_generator.hpp"
#include "tools/gen/line_generator.hpp"
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
#include <functional>
#include <iostream>
#include <string>
#include <unistd.h>
#include <utility>
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

// The limit that the options give: ("count", N) or ("size", BYTES).
std::pair<std::string, std::uint64_t> limit_of(const po::variables_map& vm) {
    if (vm.count("count") == vm.count("size"))
        throw std::invalid_argument("give either --count N (records or lines) or --size BYTES");
    const std::string option = vm.count("count") ? "count" : "size";
    const std::string value = vm[option].as<std::string>();
    const auto number = parse_size(value);
    if (!number) throw std::invalid_argument("--" + option + " '" + value + "': not a size (such as 1000, 64K, 2G)");
    return {option, *number};
}

// The names of the kinds of lines, for --help and errors: "fixed words ...".
std::string line_kind_list() {
    std::string list;
    for (const gen::LineKind k : gen::kAllLineKinds) list += std::string(list.empty() ? "" : " ") + gen::line_kind_name(k);
    return list;
}

// The lines that --lines KIND asks for: --count lines, or as many whole lines as --size bytes hold.
gen::LineSpec line_spec_of(const po::variables_map& vm) {
    const std::string name = vm["lines"].as<std::string>();
    const auto kind = gen::parse_line_kind(name);
    if (!kind) throw std::invalid_argument("unknown --lines '" + name + "' (one of: " + line_kind_list() + ")");
    for (const char* other : {"type", "format", "dist", "special"})
        if (vm.count(other) && !vm[other].defaulted())
            throw std::invalid_argument(std::string("--lines and --") + other + " exclude each other");
    gen::LineSpec spec;
    spec.kind = *kind;
    spec.seed = vm["seed"].as<std::uint64_t>();
    const auto [option, number] = limit_of(vm);
    (option == "count" ? spec.count : spec.size) = number;
    spec.terminator = vm.count("zero-terminated") ? '\0' : '\n';
    spec.final_terminator = vm.count("no-final-newline") == 0;
    return spec;
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
    const auto [option, number] = limit_of(vm);
    spec.keys.count = option == "count" ? number : number / spec.record_size();
    spec.validate();
    return spec;
}

// The data to write: how many bytes (where known before they are made), whether they are text,
// and what makes them, handing them in order to a gen::LinePut.
struct Data {
    std::optional<std::uint64_t> bytes;
    bool text = false;
    std::function<void(const gen::LinePut&)> make;
};

// Writes the records to put(), a piece of up to 1Mi records at a time.
void write_records(const gen::DataSpec& spec, const gen::LinePut& put) {
    const std::size_t width = spec.record_size();
    constexpr std::uint64_t kBlockRecords = 1 << 20;
    std::vector<std::byte> block(static_cast<std::size_t>(std::min(kBlockRecords, spec.keys.count)) * width);
    for (std::uint64_t first = 0; first < spec.keys.count; first += kBlockRecords) {
        const std::size_t bytes = static_cast<std::size_t>(std::min(kBlockRecords, spec.keys.count - first)) * width;
        gen::generate(spec, first, std::span(block.data(), bytes));
        const std::span<const std::byte> piece(block.data(), bytes);
        put(first * width, std::span(&piece, 1));
    }
}

Data data_of(const gen::DataSpec& spec) {
    return {spec.keys.count * spec.record_size(), spec.format == gen::RecordFormat::gensort_text,
            [spec](const gen::LinePut& put) { write_records(spec, put); }};
}

// Lines are text, of a size known in advance only with --size (at most that many bytes).
Data data_of(const gen::LineSpec& spec) {
    return {spec.size, true, [spec](const gen::LinePut& put) { gen::generate_lines(spec, put); }};
}

// A file appears at OUTPUT only once it is whole (as gpusort-file's output: nothing is left by an
// error or a kill, and an existing OUTPUT stays until then), after a check of the free space.
// Standard output ("-"), pipes and devices are written in place.
void write_output(const Data& data, const std::string& output) {
    const OutputShape shape = output_shape(output, Compression::none);
    if (!shape.sequential) {
        const std::optional<std::uint64_t> free = io::free_space(shape.folder);
        if (free && data.bytes && *free < *data.bytes)
            throw std::runtime_error("not enough free space in '" + shape.folder + "': '" + output + "' needs " +
                                     size_text(*data.bytes) + ", " + size_text(*free) + " are free");
        io::AtomicOutputFile file(output);
        data.make([&](std::uint64_t offset, std::span<const std::span<const std::byte>> pieces) {
            for (const auto& piece : pieces) {
                file.file().write_at(offset, piece);
                offset += piece.size();
            }
        });
        file.commit(false);  // not flushed to disk: the same seed makes the same data again
        return;
    }
    // Binary data are not shown on a terminal, as gpusort-file does not show them; text lines are.
    if (output == "-" && !data.text && io::is_terminal(STDOUT_FILENO))
        throw std::runtime_error("refusing to write binary records to a terminal: redirect standard output or name an "
                                 "OUTPUT file");
    io::File device;
    if (output != "-") device = io::File::open_write(output);
    const int fd = output == "-" ? STDOUT_FILENO : device.fd();
    const std::string name = output == "-" ? "standard output" : output;
    data.make([&](std::uint64_t, std::span<const std::span<const std::byte>> pieces) {
        for (const auto& piece : pieces) write_all(fd, name, piece);
    });
    if (device.is_open()) device.close();
}

// The options that --help lists.
po::options_description visible_options() {
    po::options_description visible(
        "Usage: gpusort-gen [--type T | --format gensort|gensort-text | --lines KIND] (--count N | --size BYTES) [OPTIONS] "
        "OUTPUT\n"
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
        ("lines", po::value<std::string>()->value_name("KIND"),
         "text lines of one KIND, each kind with many lines equal in their first field that differ after it: fixed: "
         "100-byte lines as gensort's text form (a 10-character printable key, a quarter of them from 256 "
         "repeated keys, two blanks, 32 hex digits, two blanks, 53 pattern characters); words: 1 to 6 words of "
         "1-20 letters (lower case, capitalised or upper case) from a vocabulary of 4096 with zipf-like "
         "frequencies; log: "
         "log lines such as '2026-11-28T23:59:59.123456Z INFO  [api] some words id=12345 took=3.25ms' from six "
         "interleaved sources (timestamps out of order, some repeated), levels DEBUG INFO WARN ERROR, numbers of "
         "varying length and sign; csv: id,name,city,amount,score without a header, with negative integers, "
         "decimals such as -12.50 or 1234.005, blanks in the text and empty fields; long: most lines short, some "
         "up to 64 KiB, some up to 1 MiB, a few of 256 KiB to 1 MiB with the same beginning that differ near "
         "their end; mixed: empty lines, leading blanks and tabs, numbers with signs, decimals and leading zeros, "
         "case variants of the same words, tab-separated fields, UTF-8 words and punctuation")
        ("count", po::value<std::string>()->value_name("N"), "number of records or lines (suffixes K, M, G, T: powers of 1024)")
        ("size", po::value<std::string>()->value_name("BYTES"), "bytes of data instead of --count: as many whole records or lines as fit (suffixes as --count)")
        ("dist", po::value<std::string>()->value_name("NAME")->default_value("uniform"), ("key distribution: " + distribution_list()).c_str())
        ("seed", po::value<std::uint64_t>()->value_name("N")->default_value(1), "random seed; the same seed gives the same bytes")
        ("special", "floats: about one key in eight is NaN, -NaN, +-inf, +-0, a denormal or -1")
        ("zero-terminated,z", "--lines: end lines with a NUL byte instead of a newline")
        ("no-final-newline", "--lines: the last line has no terminator");
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
                     "  gpusort-gen --format gensort --count 10M records.dat  10M Sort Benchmark records\n"
                     "  gpusort-gen --lines log --size 10G app.log            10 GiB of log lines\n");
}

// What gpusort-gen is asked to do: the data and OUTPUT, or only the help or the version shown.
struct Command {
    Data data;
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
    if (vm.count("lines")) command.data = data_of(line_spec_of(vm));
    else if (vm.count("zero-terminated") || vm.count("no-final-newline"))
        throw std::invalid_argument(std::string(vm.count("zero-terminated") ? "--zero-terminated" : "--no-final-newline") +
                                    " needs --lines KIND");
    else command.data = data_of(data_spec_of(vm));
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
        write_output(command.data, command.output);
    } catch (const std::exception& e) {
        std::cerr << "gpusort-gen: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
