// gpusort-bench-stxxl: the external-memory peer of the benchmarks (tools/bench/): STXXL's sorter,
// the library's sort for data larger than memory, as a user of Debian's libstxxl-dev would drive
// it. The input is read in large blocks and pushed record by record; STXXL forms sorted runs within
// --memory (in parallel, in its OpenMP parallel mode), spills them to a temp file in the output's
// folder (unlinked on open, so nothing is left), merges them, and the records are written out in
// large blocks. Same keys and records as gpusort-bench-ips4o (peer_common.hpp).
//   gpusort-bench-stxxl --type u32|u64|gensort [--threads N] [--memory MiB] INPUT OUTPUT
// --memory: STXXL's budget, for run formation and for the merge each (default: a quarter of the
// machine's memory, so that both together take at most half). Prints the seconds of its phases
// (read and form runs, merge and write) on stderr; exit status 0, 1 on an error (no OUTPUT is
// left), 2 on a bad command line.
//
// STXXL's merge takes the largest key as its sentinel: a u32 or u64 key of all ones, or a gensort
// key of ten 0xff bytes, is where this peer could go wrong; the benchmark checks every output.
#include "io/file.hpp"
#include "io/parallel_io.hpp"
#include "tools/bench/peer_common.hpp"

#include <omp.h>
#include <stxxl/sorter>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;
using gpusort::bench::Gensort;
using gpusort::bench::seconds_since;

// STXXL's order: less-than, with the least and the largest value as the merge's sentinels.
template <class T>
struct Ascending {
    bool operator()(const T& a, const T& b) const { return a < b; }
    T min_value() const { return bound(0x00); }
    T max_value() const { return bound(0xff); }
    // The value whose bytes are all `byte`: the least or the largest unsigned key or gensort key.
    static T bound(unsigned char byte) {
        T value;
        std::memset(&value, byte, sizeof value);
        return value;
    }
};

constexpr std::size_t kBlockBytes = std::size_t{64} << 20;

template <class T>
void sort_as(const gpusort::io::File& in, std::uint64_t size, gpusort::io::File& out, std::uint64_t memory) {
    stxxl::sorter<T, Ascending<T>> sorter(Ascending<T>(), memory);
    const std::size_t block_records = kBlockBytes / sizeof(T);
    const std::unique_ptr<T[]> block(new T[block_records]);
    auto bytes_of = [&](std::size_t records) {
        return std::span<std::byte>(reinterpret_cast<std::byte*>(block.get()), records * sizeof(T));
    };

    auto start = Clock::now();
    for (std::uint64_t at = 0; at < size;) {
        const std::size_t records = static_cast<std::size_t>(std::min<std::uint64_t>(block_records, (size - at) / sizeof(T)));
        gpusort::io::read_parallel(in, at, bytes_of(records));
        for (std::size_t i = 0; i < records; ++i) sorter.push(block[i]);
        at += records * sizeof(T);
    }
    sorter.sort();
    const double form = seconds_since(start);

    start = Clock::now();
    std::uint64_t at = 0;
    while (!sorter.empty()) {
        std::size_t records = 0;
        for (; records < block_records && !sorter.empty(); ++records, ++sorter) block[records] = *sorter;
        gpusort::io::write_parallel(out, at, bytes_of(records));
        at += records * sizeof(T);
    }
    out.close();
    std::fprintf(stderr, "read and form runs %.3f s, merge and write %.3f s\n", form, seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
    const gpusort::bench::PeerArgs args = gpusort::bench::parse_peer_args(argc, argv, "gpusort-bench-stxxl", true);
    bool created = false;
    try {
        const gpusort::io::File in = gpusort::io::File::open_read(args.input);
        const std::uint64_t size = in.size();
        gpusort::bench::check_whole_records(size, args);
        std::uint64_t memory = args.memory_mib << 20;
        if (memory == 0) memory = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) / 4;

        const int fd = ::open(args.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) throw std::runtime_error("cannot create '" + args.output + "': " + std::strerror(errno));
        created = true;
        gpusort::io::File out(fd, args.output);

        // STXXL's log files (stxxl.log, stxxl.errlog) would be left in the working folder.
        ::setenv("STXXLLOGFILE", "/dev/null", 0);
        ::setenv("STXXLERRLOGFILE", "/dev/null", 0);
        // STXXL's disk: one file beside the output that grows as needed and is unlinked at once.
        std::filesystem::path folder = std::filesystem::path(args.output).parent_path();
        if (folder.empty()) folder = ".";
        stxxl::disk_config disk((folder / ("gpusort-bench-stxxl." + std::to_string(::getpid()))).string(), 0,
                                "syscall unlink");
        disk.autogrow = true;
        stxxl::config::get_instance()->add_disk(disk);
        omp_set_num_threads(static_cast<int>(args.threads));

        if (args.width == 4) sort_as<std::uint32_t>(in, size, out, memory);
        if (args.width == 8) sort_as<std::uint64_t>(in, size, out, memory);
        if (args.width == 100) sort_as<Gensort>(in, size, out, memory);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpusort-bench-stxxl: %s\n", e.what());
        if (created) ::unlink(args.output.c_str());
        return 1;
    }
    return 0;
}
