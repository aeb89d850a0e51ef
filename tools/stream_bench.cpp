// gpusort-stream-bench: throughput of StreamWriter and StreamReader per compression format, on
// sort data made in memory by the data generator (tools/gen/: random u64 keys, or 100-byte
// gensort records, as gpusort-gen writes them), through a temp file (unlinked at once; it is read
// back from the page cache). Prints per format the median of --repeat runs: compression and
// decompression MB/s (of uncompressed bytes) and the ratio.
#include "gpusort/compression.hpp"
#include "io/io_error.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "tools/gen/data_generator.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

// About `bytes` of data: random u64 keys (keys), or gensort records (gensort), from seed 42.
std::vector<std::byte> make_data(const std::string& kind, std::size_t bytes) {
    gen::DataSpec spec;
    spec.format = kind == "keys" ? gen::RecordFormat::keys : gen::RecordFormat::gensort;
    spec.keys.seed = 42;
    spec.keys.count = bytes / spec.record_size();
    return gen::generate(spec);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// What to run: the command line's options.
struct BenchOptions {
    std::size_t mib = 1024;
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    unsigned repeat = 3;
    int level = -1;
    std::string data_kind = "keys";
    std::vector<std::string> formats{"none", "gz", "bz2", "xz", "zst"};
    std::string tmp_dir;
};

// Reads the command line into `bench`; returns the exit status where the program ends here (--help,
// or a wrong option).
std::optional<int> parse_options(int argc, char** argv, BenchOptions& bench) {
    const char* tmp = std::getenv("TMPDIR");
    bench.tmp_dir = tmp && *tmp ? tmp : "/tmp";
    po::options_description options("gpusort-stream-bench [OPTIONS]");
    options.add_options()("help", "this text")
        ("mib", po::value(&bench.mib)->default_value(bench.mib), "MiB of data per run")
        ("threads", po::value(&bench.threads)->default_value(bench.threads), "compressing threads")
        ("repeat", po::value(&bench.repeat)->default_value(bench.repeat), "runs per format (the median is shown)")
        ("level", po::value(&bench.level)->default_value(bench.level), "compression level (-1: each format's default)")
        ("data", po::value(&bench.data_kind)->default_value(bench.data_kind), "keys (random u64) or gensort (100-byte records)")
        ("format", po::value(&bench.formats)->multitoken(), "formats to run (default: none gz bz2 xz zst)")
        ("tmp-dir", po::value(&bench.tmp_dir)->default_value(bench.tmp_dir), "where the temp file goes");
    try {
        po::variables_map vm;
        po::store(po::parse_command_line(argc, argv, options), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << options;
            return 0;
        }
        if (bench.data_kind != "keys" && bench.data_kind != "gensort") throw std::invalid_argument("--data: keys or gensort");
        if (bench.repeat == 0) throw std::invalid_argument("--repeat: at least 1");
    } catch (const std::exception& e) {
        std::cerr << "gpusort-stream-bench: " << e.what() << "\n";
        return 2;
    }
    return std::nullopt;
}

// A temp file in `folder`, unlinked at once.
int unnamed_temp_file(const std::string& folder) {
    std::string pattern = folder + "/gpusort-stream-bench-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create a temp file in " + folder);
    ::unlink(pattern.c_str());
    return fd;
}

constexpr std::size_t kPiece = std::size_t{1} << 20;

// One run's figures: seconds to write and to read back, the size ratio, the level used.
struct RunFigures {
    double write_seconds = 0, read_seconds = 0;
    double ratio = 0;
    int level = 0;
};

// Writes `data` to fd through a StreamWriter, a piece at a time.
void write_stream(int fd, std::span<const std::byte> data, Compression compression, const BenchOptions& bench,
                  RunFigures& figures) {
    const auto start = std::chrono::steady_clock::now();
    io::StreamWriter writer(fd, "temp file", compression, bench.threads, bench.level);
    for (std::size_t done = 0; done < data.size(); done += kPiece) {
        writer.write(data.subspan(done, std::min(kPiece, data.size() - done)));
    }
    writer.finish();
    figures.write_seconds = seconds_since(start);
    figures.ratio = static_cast<double>(writer.bytes_out()) / static_cast<double>(writer.bytes_in());
    figures.level = writer.level();
}

// Reads fd back from its start through a StreamReader, checking it against `data`.
void read_stream(int fd, std::span<const std::byte> data, Compression compression, const std::string& format,
                 RunFigures& figures) {
    std::vector<std::byte> back(kPiece);
    ::lseek(fd, 0, SEEK_SET);
    const auto start = std::chrono::steady_clock::now();
    {
        io::StreamReader reader(fd, "temp file", compression);
        std::size_t done = 0;
        for (std::size_t got; (got = reader.read(back)) > 0; done += got) {
            if (done + got > data.size() || std::memcmp(back.data(), data.data() + done, got) != 0) {
                throw std::runtime_error(format + ": the data read back differ");
            }
        }
        if (done != data.size()) throw std::runtime_error(format + ": the data read back are short");
    }
    figures.read_seconds = seconds_since(start);
}

// --repeat runs of one format, and its line of medians.
void bench_format(std::span<const std::byte> data, const std::string& format, const BenchOptions& bench) {
    const Compression compression = parse_compression(format);
    std::vector<double> write_s, read_s;
    RunFigures figures;
    for (unsigned run = 0; run < bench.repeat; ++run) {
        const int fd = unnamed_temp_file(bench.tmp_dir);
        write_stream(fd, data, compression, bench, figures);
        read_stream(fd, data, compression, format, figures);
        ::close(fd);
        write_s.push_back(figures.write_seconds);
        read_s.push_back(figures.read_seconds);
    }
    const double megabytes = static_cast<double>(data.size()) / 1e6;
    std::printf("%-5s %6d %14.1f %16.1f %8.3f\n", compression_name(compression), figures.level,
                megabytes / median(write_s), megabytes / median(read_s), figures.ratio);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    BenchOptions bench;
    if (const std::optional<int> status = parse_options(argc, argv, bench)) return *status;
    try {
        const std::vector<std::byte> data = make_data(bench.data_kind, bench.mib << 20);
        std::printf("%zu MiB of %s, %u threads, %u runs each, median; MB/s of uncompressed data\n", bench.mib,
                    bench.data_kind == "keys" ? "random u64 keys" : "gensort records", bench.threads, bench.repeat);
        std::printf("%-5s %6s %14s %16s %8s\n", "fmt", "level", "compress MB/s", "decompress MB/s", "ratio");
        for (const std::string& format : bench.formats) bench_format(data, format, bench);
    } catch (const std::exception& e) {
        std::cerr << "gpusort-stream-bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
