// gpusort-bench-ips4o: the strong CPU peer of the benchmarks (tools/bench/). What a user could
// write in an afternoon instead of adopting gpusort: read the whole file into memory with parallel
// preads, sort it with IPS4o on all cores, write it out with parallel pwrites. Keys are unsigned
// (u32, u64; ascending), or 100-byte gensort records ordered by their 10-byte key (memcmp; equal
// keys in any order). The input must fit in memory; no budget, no spill, no checks beyond I/O.
//   gpusort-bench-ips4o --type u32|u64|gensort [--threads N] INPUT OUTPUT
// Prints the seconds of its phases (read, sort, write) on stderr; exit status 0, 1 on an I/O
// error, 2 on a bad command line.
#include "io/file.hpp"
#include "io/parallel_io.hpp"

#include <ips4o.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Gensort {
    std::array<unsigned char, 100> bytes;
    friend bool operator<(const Gensort& a, const Gensort& b) { return std::memcmp(a.bytes.data(), b.bytes.data(), 10) < 0; }
};
static_assert(sizeof(Gensort) == 100);

template <class T>
void sort_as(std::byte* data, std::size_t bytes, unsigned threads) {
    T* first = reinterpret_cast<T*>(data);
    T* last = first + bytes / sizeof(T);
    if (threads > 1) {
        ips4o::StdThreadPool pool(static_cast<int>(threads));
        ips4o::parallel::sort(first, last, std::less<>(), pool);
    } else {
        ips4o::sort(first, last, std::less<>());
    }
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "gpusort-bench-ips4o: %s\nusage: gpusort-bench-ips4o --type u32|u64|gensort [--threads N] INPUT OUTPUT\n",
                 why.c_str());
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::string type, input, output;
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::string> operands;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--type" || arg == "--threads") && i + 1 < argc) {
            const std::string value = argv[++i];
            if (arg == "--type") {
                type = value;
            } else {
                char* end = nullptr;
                const unsigned long n = std::strtoul(value.c_str(), &end, 10);
                if (value.empty() || *end != '\0' || n == 0 || n > 1024) usage("--threads: 1 to 1024");
                threads = static_cast<unsigned>(n);
            }
        } else if (arg.rfind("--", 0) == 0) {
            usage("unknown option '" + arg + "'");
        } else {
            operands.push_back(arg);
        }
    }
    if (operands.size() != 2) usage("expected INPUT and OUTPUT");
    const std::size_t width = type == "u32" ? 4 : type == "u64" ? 8 : type == "gensort" ? 100 : 0;
    if (width == 0) usage("--type: u32, u64 or gensort");
    input = operands[0];
    output = operands[1];
    try {
        const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
        const gpusort::io::File in = gpusort::io::File::open_read(input);
        const std::uint64_t size = in.size();
        if (size % width != 0) throw std::runtime_error("'" + input + "' is not a whole number of " + type + " records");
        const std::unique_ptr<std::byte[]> data(new std::byte[std::max<std::uint64_t>(size, 1)]);
        const std::span<std::byte> all(data.get(), static_cast<std::size_t>(size));

        auto start = Clock::now();
        gpusort::io::read_parallel(in, 0, all);
        const double read = seconds_since(start);

        start = Clock::now();
        if (width == 4) sort_as<std::uint32_t>(data.get(), all.size(), threads);
        if (width == 8) sort_as<std::uint64_t>(data.get(), all.size(), threads);
        if (width == 100) sort_as<Gensort>(data.get(), all.size(), threads);
        const double sort = seconds_since(start);

        start = Clock::now();
        const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) throw std::runtime_error("cannot create '" + output + "': " + std::strerror(errno));
        gpusort::io::File out(fd, output);
        gpusort::io::write_parallel(out, 0, all);
        out.close();
        const double write = seconds_since(start);
        std::fprintf(stderr, "read %.3f s, sort %.3f s, write %.3f s\n", read, sort, write);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpusort-bench-ips4o: %s\n", e.what());
        return 1;
    }
    return 0;
}
