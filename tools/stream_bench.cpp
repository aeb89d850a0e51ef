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

}  // namespace

int main(int argc, char** argv) {
    std::size_t mib = 1024;
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    unsigned repeat = 3;
    int level = -1;
    std::string data_kind = "keys";
    std::vector<std::string> formats{"none", "gz", "bz2", "xz", "zst"};
    const char* tmp = std::getenv("TMPDIR");
    std::string tmp_dir = tmp && *tmp ? tmp : "/tmp";

    po::options_description options("gpusort-stream-bench [OPTIONS]");
    options.add_options()("help", "this text")
        ("mib", po::value(&mib)->default_value(mib), "MiB of data per run")
        ("threads", po::value(&threads)->default_value(threads), "compressing threads")
        ("repeat", po::value(&repeat)->default_value(repeat), "runs per format (the median is shown)")
        ("level", po::value(&level)->default_value(level), "compression level (-1: each format's default)")
        ("data", po::value(&data_kind)->default_value(data_kind), "keys (random u64) or gensort (100-byte records)")
        ("format", po::value(&formats)->multitoken(), "formats to run (default: none gz bz2 xz zst)")
        ("tmp-dir", po::value(&tmp_dir)->default_value(tmp_dir), "where the temp file goes");
    try {
        po::variables_map vm;
        po::store(po::parse_command_line(argc, argv, options), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << options;
            return 0;
        }
        if (data_kind != "keys" && data_kind != "gensort") throw std::invalid_argument("--data: keys or gensort");
        if (repeat == 0) throw std::invalid_argument("--repeat: at least 1");
    } catch (const std::exception& e) {
        std::cerr << "gpusort-stream-bench: " << e.what() << "\n";
        return 2;
    }

    try {
        const std::vector<std::byte> data = make_data(data_kind, mib << 20);
        std::printf("%zu MiB of %s, %u threads, %u runs each, median; MB/s of uncompressed data\n", mib,
                    data_kind == "keys" ? "random u64 keys" : "gensort records", threads, repeat);
        std::printf("%-5s %6s %14s %16s %8s\n", "fmt", "level", "compress MB/s", "decompress MB/s", "ratio");
        constexpr std::size_t kPiece = std::size_t{1} << 20;
        std::vector<std::byte> back(kPiece);
        for (const std::string& format : formats) {
            Compression compression = parse_compression(format);
            std::vector<double> write_s, read_s;
            double ratio = 0;
            int used_level = 0;
            for (unsigned run = 0; run < repeat; ++run) {
                std::string pattern = tmp_dir + "/gpusort-stream-bench-XXXXXX";
                int fd = ::mkstemp(pattern.data());
                if (fd < 0) throw std::runtime_error("cannot create a temp file in " + tmp_dir);
                ::unlink(pattern.c_str());

                auto start = std::chrono::steady_clock::now();
                io::StreamWriter writer(fd, "temp file", compression, threads, level);
                for (std::size_t done = 0; done < data.size(); done += kPiece) {
                    writer.write(std::span(data).subspan(done, std::min(kPiece, data.size() - done)));
                }
                writer.finish();
                write_s.push_back(seconds_since(start));
                ratio = static_cast<double>(writer.bytes_out()) / static_cast<double>(writer.bytes_in());
                used_level = writer.level();

                ::lseek(fd, 0, SEEK_SET);
                start = std::chrono::steady_clock::now();
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
                read_s.push_back(seconds_since(start));
                ::close(fd);
            }
            double megabytes = static_cast<double>(data.size()) / 1e6;
            std::printf("%-5s %6d %14.1f %16.1f %8.3f\n", compression_name(compression), used_level,
                        megabytes / median(write_s), megabytes / median(read_s), ratio);
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::cerr << "gpusort-stream-bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
