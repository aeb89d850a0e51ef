// gpusort-bench-ips4o: the strong CPU peer of the benchmarks (tools/bench/). What a user could
// write in an afternoon instead of adopting gpusort: read the whole file into memory with parallel
// preads, sort it with IPS4o on all cores, write it out with parallel pwrites. Keys are unsigned
// (u32, u64; ascending), or 100-byte gensort records ordered by their 10-byte key (memcmp; equal
// keys in any order). The input must fit in memory; no budget, no spill, no checks beyond I/O.
//   gpusort-bench-ips4o --type u32|u64|gensort [--threads N] INPUT OUTPUT
// Prints the seconds of its phases (read, sort, write) on stderr; exit status 0, 1 on an I/O
// error, 2 on a bad command line (peer_common.hpp).
#include "io/file.hpp"
#include "io/parallel_io.hpp"
#include "tools/bench/peer_common.hpp"

#include <ips4o.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <memory>
#include <span>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;
using gpusort::bench::Gensort;
using gpusort::bench::seconds_since;

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

}  // namespace

int main(int argc, char** argv) {
    const gpusort::bench::PeerArgs args = gpusort::bench::parse_peer_args(argc, argv, "gpusort-bench-ips4o", false);
    const std::string& input = args.input;
    const std::string& output = args.output;
    const std::size_t width = args.width;
    const unsigned threads = args.threads;
    try {
        const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
        const gpusort::io::File in = gpusort::io::File::open_read(input);
        const std::uint64_t size = in.size();
        gpusort::bench::check_whole_records(size, args);
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
