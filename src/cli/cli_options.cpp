// parse_command_line (Boost.Program_options) and the --stats JSON.
#include "src/cli/cli_options.hpp"

#include "io/stream_writer.hpp"
#include "src/cli/count_option.hpp"
#include "src/cli/key_options.hpp"
#include "src/cli/line_options.hpp"
#include "src/cli/size_parse.hpp"
#include "src/cli/option_values.hpp"
#include "src/plan/plan_report.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace gpusort {

namespace po = boost::program_options;

namespace {

std::uint64_t size_option(const po::variables_map& vm, const char* name) {
    const auto& text = vm[name].as<std::string>();
    auto size = parse_size(text);
    if (!size) throw std::invalid_argument(std::string("--") + name + ": '" + text + "' is not a size (e.g. 512M, 8G)");
    return *size;
}

IoMode io_mode_option(const po::variables_map& vm, const char* name) {
    const auto& text = vm[name].as<std::string>();
    if (text == "auto") return IoMode::automatic;
    if (text == "buffered") return IoMode::buffered;
    if (text == "direct") return IoMode::direct;
    throw std::invalid_argument(std::string("--") + name + ": '" + text + "' is not one of auto, buffered, direct");
}

}  // namespace

std::string phase_seconds_json(const SortReport& report) {
    std::ostringstream out;
    out << "{\"total\": " << report.seconds << ", \"read\": " << report.times.read << ", \"copy_in\": " << report.times.copy_in
        << ", \"sort\": " << report.times.sort << ", \"copy_out\": " << report.times.copy_out
        << ", \"write\": " << report.times.write << ", \"merge\": " << report.times.merge << "}";
    return out.str();
}

std::string merge_phases_json(const MergeTimes& m) {
    const std::pair<const char*, const MergePhase*> phases[] = {
        {"select", &m.select},     {"gather", &m.gather}, {"copy_in", &m.copy_in}, {"sort", &m.sort},
        {"copy_out", &m.copy_out}, {"write", &m.write},   {"fault", &m.fault},     {"host", &m.host}};
    std::ostringstream out;
    out << "{";
    const char* comma = "";
    for (const auto& [name, phase] : phases) {
        out << comma << "\"" << name << "\": {\"seconds\": " << phase->seconds << ", \"bytes\": " << phase->bytes << "}";
        comma = ", ";
    }
    out << "}";
    return out.str();
}

namespace {

// --gather INDEX: instead of a sort, a saved permutation applied to a column (operands V OUT).
void add_gather_option(po::options_description& visible) {
    visible.add_options()
        ("gather", po::value<std::string>()->value_name("INDEX"),
         "apply the permutation INDEX (as --index-out wrote it) to a column: with operands V OUT, OUT's record i is "
         "V's record INDEX[i], V's records being its size divided by INDEX's entries; INDEX must be a permutation of "
         "V's record numbers. Its entries are u32 unless --index-type says otherwise (an INDEX written with "
         "--index-type u64 for fewer than 2^32 records is read with --index-type u64)");
}

// The options of gpusort-file that --help lists, the key options first.
po::options_description visible_options() {
    po::options_description visible(
        "Usage: gpusort-file [OPTIONS] INPUT OUTPUT\n"
        "  or:  gpusort-file [OPTIONS] KEYS [OUTPUT] --values V:OUT[:WIDTH]... [--index-out INDEX]\n"
        "  or:  gpusort-file [OPTIONS] --gather INDEX [--index-type TYPE] V OUT\n"
        "  or:  gpusort-file --lines [--line-key POS1[,POS2]]... [OPTIONS] INPUT OUTPUT\n"
        "Sorts a binary file of fixed-size records. OUTPUT may be the same path as INPUT. With --values\n"
        "and --index-out, value files are carried along with the keys and the permutation is written;\n"
        "OUTPUT (the sorted keys) may then be left out, and every output appears together or none does.\n"
        "With --lines, sorts text lines as LC_ALL=C sort does (gpusort-sort's engine).\n"
        "\n"
        "INPUT and OUTPUT may be - for standard input and output. A name ending in .gz, .bz2, .xz or .zst\n"
        "is read or written compressed. A file appears at OUTPUT only once it is complete.\n"
        "\nOptions");
    add_key_options(visible);
    visible.add_options()
        ("stable", "records with equal keys keep their input order (every sort of gpusort-file is stable)")
        ("unique", "of each group of records with equal keys keep only the first (in input order)")
        ("values", po::value<std::vector<std::string>>()->value_name("V:OUT[:WIDTH]")->composing(),
         "carry the records of V along with the keys into OUT, repeatable: V holds as many records as INPUT, "
         "of WIDTH bytes (default: its size divided by INPUT's records); OUT may be V")
        ("index-out", po::value<std::string>()->value_name("INDEX"),
         "write the permutation to INDEX: for each output record, the number of its input record (from 0)")
        ("index-type", po::value<std::string>()->value_name("TYPE")->default_value("auto"),
         "u32, u64 or auto (u32 where INPUT has at most 2^32 records) for --index-out")
        ("backend", po::value<std::string>()->value_name("NAME")->default_value("auto"), "auto (the GPU when one is present), gpu or cpu")
        ("device", po::value<int>()->value_name("N")->default_value(0), "which GPU to use")
        ("device-memory", po::value<std::string>()->value_name("SIZE"), "GPU memory budget, e.g. 2G (default: most of the free memory); smaller means more, smaller runs")
        ("memory", po::value<std::string>()->value_name("SIZE"), "host memory budget, e.g. 512M, 8G (default: half of the free memory)")
        ("threads", po::value<std::string>()->value_name("N"), "host threads, 1 to 1024 (default: all CPUs)")
        ("tmp-dir", po::value<std::string>()->value_name("DIR"), "folder for sorted runs when the data exceed --memory (default: OUTPUT's folder)")
        ("spill-io", po::value<std::string>()->value_name("MODE")->default_value("auto"), "how runs spilled to --tmp-dir are written and read: buffered (through the page cache), direct (bypassing it), or auto (direct when the page cache could not hold the runs beside the output)")
        ("input-io", po::value<std::string>()->value_name("MODE")->default_value("auto"), "how INPUT is read: buffered (through the page cache, or its map), direct (bypassing it, in large requests, many in flight), or auto (direct when less than half of INPUT is cached, or it is larger than the memory the cache may take)")
        ("output-io", po::value<std::string>()->value_name("MODE")->default_value("auto"), "how OUTPUT is written: buffered, direct, or auto (direct when OUTPUT is larger than the memory the page cache may take)")
        ("sync", "flush the output to disk before it is renamed into place (always done when OUTPUT is INPUT)")
        ("input-compression", po::value<std::string>()->value_name("FORMAT"), "read INPUT as none, gz, bz2, xz or zst (default: by its name's ending; stdin: none)")
        ("output-compression", po::value<std::string>()->value_name("FORMAT"), "write OUTPUT as none, gz, bz2, xz or zst (default: by its name's ending; stdout: none)")
        ("compression-level", po::value<int>()->value_name("N"), "compression level of OUTPUT (default: the format's own: gz 6, bz2 9, xz 6, zst 3)")
        ("verify", "re-read the output and check its order and that it holds the input's records; on a mismatch it is not kept")
        ("progress", "show a progress line on stderr (default: when stderr is a terminal)")
        ("quiet,q", "print nothing but errors (no progress line)")
        ("stats", po::value<std::string>()->value_name("FILE"), "write a JSON report to FILE ('-' for stderr)")
        ("plan", "print what the sort will take (runs, passes, memory, disk, device) and exit without sorting; with --stats - as JSON");
    add_gather_option(visible);
    add_line_options(visible);
    add_help_and_version(visible);
    return visible;
}

// The --help text: the options, the exit statuses and examples (laid out for help2man, which
// makes the manual page from it: see option_values.hpp).
std::string help_text(const po::options_description& visible) {
    return help_page(visible,
                     "  0  sorted (or --help, --version, --plan shown)\n"
                     "  1  the sort failed (OUTPUT was not created, an existing OUTPUT is unchanged)\n"
                     "  2  a bad command line\n",
                     "  gpusort-file keys.bin sorted.bin                        u64 keys, ascending\n"
                     "  gpusort-file --type f32 --descending in.f32 out.f32     floats, largest first\n"
                     "  gpusort-file --format gensort --memory 8G in out        Sort Benchmark records, 8 GiB of memory\n"
           "  zstd -dc dump.zst | gpusort-file --key 8:u32 --record-size 16 - sorted.zst\n"
           "                                                          16-byte records by the u32 at byte 8,\n"
           "                                                          from a pipe into a compressed file\n"
           "  gpusort-file --lines --field-separator , --line-key 2,2n log.csv.gz sorted.csv.zst\n"
           "                                                          CSV lines by their 2nd field as a number\n");
}

// The words of the command line as parse_words reads them, with Boost's errors turned into
// one-line messages of ours.
po::variables_map read_words(const std::vector<std::string>& args, const po::options_description& visible) {
    try {
        return parse_words(args, visible);
    } catch (const po::error_with_option_name& e) {
        // Boost builds this message by replacing placeholders such as %value% with the words until
        // none is left, which never ends when a word holds a placeholder itself: words with a '%'
        // get a message of ours.
        auto has_percent = [](const std::string& word) { return word.find('%') != std::string::npos; };
        if (std::any_of(args.begin(), args.end(), has_percent))
            throw std::invalid_argument("malformed option '" + e.get_option_name() + "' or its value (see --help)");
        throw std::invalid_argument(std::string(e.what()) + " (see --help)");
    } catch (const po::error& e) {
        throw std::invalid_argument(std::string(e.what()) + " (see --help)");
    }
}

// INPUT and OUTPUT, both required, but for columns (values or an index), where OUTPUT may be left out.
void read_operands(const std::vector<std::string>& words, SortOptions& sort) {
    if (words.empty()) throw std::invalid_argument("expected INPUT and OUTPUT (see --help)");
    const bool columns = !sort.values.empty() || sort.index_output;
    if (words.size() == 1 && !columns)
        throw std::invalid_argument("expected INPUT and OUTPUT, got only '" + words[0] + "' (see --help)");
    sort.input = words[0];
    if (words.size() > 1) sort.output = words[1];
}

// --verify checks the sorted keys, which columns without OUTPUT do not write.
void check_verify_has_output(const SortOptions& sort) {
    if (sort.verify && sort.output.empty() && (!sort.values.empty() || sort.index_output))
        throw std::invalid_argument("--verify checks the sorted keys: give OUTPUT");
}

// One --values V:OUT[:WIDTH].
ValueColumn value_column(const std::string& text) {
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument("--values: '" + text + "' " + why + " (expected V:OUT or V:OUT:WIDTH)");
    };
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const std::size_t colon = text.find(':', start);
        parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    if (parts.size() < 2 || parts.size() > 3) throw bad("is not two or three fields");
    if (parts[0].empty() || parts[1].empty()) throw bad("names no file");
    ValueColumn value{parts[0], parts[1], std::nullopt};
    if (parts.size() == 3) {
        const std::optional<std::uint64_t> width = parse_size(parts[2]);
        if (!width || *width == 0 || *width > kMaxRecordSize) throw bad("has no width from 1 to 1M");
        value.width = static_cast<std::size_t>(*width);
    }
    return value;
}

// --values, --index-out and --index-type: columns carried along, the permutation.
void read_columns(const po::variables_map& vm, SortOptions& sort) {
    if (vm.count("values"))
        for (const std::string& text : vm["values"].as<std::vector<std::string>>()) sort.values.push_back(value_column(text));
    if (vm.count("index-out")) sort.index_output = vm["index-out"].as<std::string>();
    const std::string& type = vm["index-type"].as<std::string>();
    if (type == "auto") sort.index_type = IndexType::automatic;
    else if (type == "u32") sort.index_type = IndexType::u32;
    else if (type == "u64") sort.index_type = IndexType::u64;
    else throw std::invalid_argument("--index-type: '" + type + "' is not one of auto, u32, u64");
    if (!vm["index-type"].defaulted() && !sort.index_output && !vm.count("gather"))
        throw std::invalid_argument("--index-type is for --index-out (or --gather)");
}

// --memory, --threads, --backend, --device and --device-memory.
void read_budgets(const po::variables_map& vm, SortOptions& sort) {
    if (vm.count("memory")) {
        sort.memory_bytes = size_option(vm, "memory");
        if (*sort.memory_bytes < kMinMemoryBudget)
            throw std::invalid_argument("--memory: at least 1M is needed");
    }
    if (vm.count("threads")) {
        sort.threads = count_option<unsigned>(vm, "threads");
        if (*sort.threads == 0) throw std::invalid_argument("--threads: must be at least 1");
        if (*sort.threads > kMaxThreads)
            throw std::invalid_argument("--threads: at most " + std::to_string(kMaxThreads) + " are supported");
    }
    const auto& backend = vm["backend"].as<std::string>();
    if (backend == "auto") sort.backend = Backend::automatic;
    else if (backend == "cpu") sort.backend = Backend::cpu;
    else if (backend == "gpu") sort.backend = Backend::gpu;
    else throw std::invalid_argument("--backend: '" + backend + "' is not one of auto, gpu, cpu");
    sort.device = vm["device"].as<int>();
    if (sort.device < 0) throw std::invalid_argument("--device: must be 0 or more");
    if (vm.count("device-memory")) {
        sort.device_memory_bytes = size_option(vm, "device-memory");
        if (*sort.device_memory_bytes < kMinMemoryBudget)
            throw std::invalid_argument("--device-memory: at least 1M is needed");
    }
}

// --input-compression, --output-compression and --compression-level, whose range is that of the
// format in use.
void read_compression(const po::variables_map& vm, SortOptions& sort) {
    auto compression = [&](const char* name) -> std::optional<Compression> {
        if (!vm.count(name)) return std::nullopt;
        try {
            return parse_compression(vm[name].as<std::string>());
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--") + name + ": " + e.what());
        }
    };
    sort.input_compression = compression("input-compression");
    sort.output_compression = compression("output-compression");
    if (!vm.count("compression-level")) return;
    sort.compression_level = vm["compression-level"].as<int>();
    // An uncompressed OUTPUT takes any level a format has.
    const Compression format = sort.output_compression.value_or(compression_of(sort.output));
    if (format == Compression::none && (sort.compression_level < 0 || sort.compression_level > 19))
        throw std::invalid_argument("--compression-level: must be between 0 and 19 (OUTPUT is not compressed, "
                                    "so the level has no effect)");
    try {
        io::StreamWriter::check_level(format, sort.compression_level);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--compression-level: ") + e.what());
    }
}

// What the sort does with its files: --tmp-dir, the I/O modes, --sync, compression, --verify.
void read_file_options(const po::variables_map& vm, SortOptions& sort) {
    if (vm.count("tmp-dir")) sort.tmp_dir = vm["tmp-dir"].as<std::string>();
    sort.spill_io = io_mode_option(vm, "spill-io");
    sort.input_io = io_mode_option(vm, "input-io");
    sort.output_io = io_mode_option(vm, "output-io");
    sort.sync = vm.count("sync") > 0;
    read_compression(vm, sort);
    sort.verify = vm.count("verify") > 0;
}

// --quiet, --progress, --stats and --plan: what the program shows, beside the sort.
void read_reporting(const po::variables_map& vm, CliCommand& command) {
    command.quiet = vm.count("quiet") > 0;
    if (vm.count("progress")) {
        if (command.quiet) throw std::invalid_argument("--progress and --quiet exclude each other");
        command.progress = true;
    }
    if (vm.count("stats")) command.stats_path = vm["stats"].as<std::string>();
    if (vm.count("plan")) command.action = CliCommand::Action::plan;
}

// --gather INDEX with its operands V OUT, regular uncompressed files; the options of a sort's key,
// columns and output are refused beside it (what --gather does not use is not silently dropped).
void read_gather(const po::variables_map& vm, const std::vector<std::string>& words, CliCommand& command) {
    if (!vm.count("gather")) return;
    if (!vm["type"].defaulted()) throw std::invalid_argument("--gather excludes --type (a gather has no key)");
    for (const char* name : {"key", "record-size", "format", "descending", "unique", "values", "index-out", "plan",
                             "verify", "input-compression", "output-compression", "compression-level"})
        if (vm.count(name) && !vm[name].defaulted())
            throw std::invalid_argument(std::string("--gather excludes --") + name + " (see --help)");
    if (words.size() != 2) throw std::invalid_argument("--gather INDEX: expected the operands V and OUT (see --help)");
    command.gather_index = vm["gather"].as<std::string>();
    for (const std::string& path : {*command.gather_index, words[0], words[1]})
        if (path == "-" || compression_of(path) != Compression::none)
            throw std::invalid_argument("--gather: '" + path + "': INDEX, V and OUT must be regular, uncompressed files "
                                        "(not standard input or output, nor a compressed file's name)");
}

}  // namespace

CliCommand parse_command_line(const std::vector<std::string>& args) {
    const po::options_description visible = visible_options();
    const po::variables_map vm = read_words(args, visible);
    const std::vector<std::string> words =
        operands(vm, 2, "too many operands: expected INPUT and OUTPUT (see --help)");
    CliCommand command;
    if (vm.count("help")) {
        command.action = CliCommand::Action::help;
        command.help_text = help_text(visible);
        return command;
    }
    if (vm.count("version")) {
        command.action = CliCommand::Action::version;
        return command;
    }
    SortOptions& sort = command.sort;
    command.lines = parse_line_options(vm);
    if (command.lines) {
        read_operands(words, sort);
    } else {
        read_gather(vm, words, command);
        // The key options first: "--key in out" took "in" for the key, which says more than a missing OUTPUT.
        const KeyOptions key = parse_key_options(vm);
        read_columns(vm, sort);
        read_operands(words, sort);
        sort.order = key.order;
        sort.records = key.records;
    }
    sort.unique = vm.count("unique") > 0;
    read_budgets(vm, sort);
    read_file_options(vm, sort);
    check_verify_has_output(sort);
    read_reporting(vm, command);
    return command;
}

namespace {

// --values as JSON: [{"input": ..., "output": ...}, ...].
std::string values_json(const std::vector<ValueColumn>& values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        out += std::string(i > 0 ? ", " : "") + "{\"input\": " + json_string(values[i].input) +
               ", \"output\": " + json_string(values[i].output) + "}";
    return out + "]";
}

}  // namespace

std::string stats_json(const SortOptions& options, const SortReport& report) {
    const auto& p = report.plan;
    const double seconds = report.seconds > 0 ? report.seconds : 1e-9;
    const bool gpu = report.backend != "cpu";
    std::ostringstream out;
    out << "{\n"
        << "  \"input\": " << json_string(options.input) << ",\n"
        << "  \"output\": " << json_string(options.output) << ",\n"
        << "  \"input_compression\": " << json_compression(options.input_compression, options.input) << ",\n"
        << "  \"output_compression\": " << json_compression(options.output_compression, options.output) << ",\n"
        << "  \"values\": " << values_json(options.values) << ",\n"
        << "  \"index_output\": " << (options.index_output ? json_string(*options.index_output) : "null")
        << ", \"index_width\": " << report.index_width << ",\n"
        << "  \"input_streamed\": " << json_flag(report.input_streamed) << ",\n"
        << "  \"output_streamed\": " << json_flag(report.output_streamed) << ",\n"
        << "  \"type\": " << json_string(options.records ? "records" : std::string(key_type_name(options.order.type))) << ",\n"
        << "  \"record_size\": " << report.record_size << ",\n"
        << "  \"descending\": " << json_flag(options.order.descending) << ",\n"
        << "  \"unique\": " << json_flag(options.unique) << ",\n"
        << "  \"verified\": " << json_flag(report.verified) << ",\n"
        << "  \"backend\": " << json_string(gpu ? "gpu" : "cpu") << ",\n"
        << "  \"device\": " << (gpu ? json_string(report.backend) : "null") << ",\n"
        << "  \"backend_reason\": " << json_string(report.backend_reason) << ",\n"
        << "  \"input_bytes\": " << report.bytes << ",\n"
        << "  \"input_records\": " << report.records << ",\n"
        << "  \"output_bytes\": " << report.output_bytes << ",\n"
        << "  \"output_records\": " << report.output_records << ",\n"
        << "  \"output_stored_bytes\": " << report.output_stored_bytes << ",\n"
        << "  \"runs\": " << report.runs << ",\n"
        << "  \"merge_passes\": " << report.merge_passes << ",\n"
        << "  \"bytes_spilled\": " << report.bytes_spilled << ",\n"
        << "  \"spill_io\": " << json_string(report.bytes_spilled == 0 ? "none" : p.spill_direct ? "direct" : "buffered") << ",\n"
        << "  \"input_io\": " << json_string(report.input_streamed ? "stream" : p.input_direct ? "direct" : "buffered") << ",\n"
        << "  \"output_io\": " << json_string(report.output_streamed ? "stream" : p.output_direct ? "direct" : "buffered") << ",\n"
        << "  \"budgets\": {\"memory\": " << p.memory_bytes
        << ", \"device_memory\": " << (p.device ? p.device->budget_bytes : 0) << ", \"threads\": " << p.threads << "},\n"
        << "  \"plan\": " << plan_json(p, 2) << ",\n"
        << "  \"seconds\": " << phase_seconds_json(report) << ",\n"
        << "  \"merge_phases\": " << merge_phases_json(report.merge) << ",\n"
        << "  \"throughput_mb_per_s\": " << static_cast<double>(report.bytes) / 1e6 / seconds << "\n"
        << "}\n";
    return out.str();
}

std::string plan_report_json(const SortOptions& options, const SortPlan& plan) {
    return "{\n  \"input\": " + json_string(options.input) + ",\n  \"output\": " + json_string(options.output) +
           ",\n  \"plan\": " + plan_json(plan, 2) + "\n}\n";
}

}  // namespace gpusort
