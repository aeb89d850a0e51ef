// What the benchmarks' peers (gpusort-bench-ips4o, gpusort-bench-stxxl) share: their command line
//   PROGRAM --type u32|u64|gensort [--threads N] [--memory MiB] INPUT OUTPUT
// (a bad one ends the program with status 2), the gensort record they sort: 100 bytes ordered by
// the first 10 (memcmp; equal keys in any order), the check that INPUT holds whole records, and
// the timing of their phases. Keys are unsigned and ascending.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpusort::bench {

struct Gensort {
    std::array<unsigned char, 100> bytes;
    friend bool operator<(const Gensort& a, const Gensort& b) { return std::memcmp(a.bytes.data(), b.bytes.data(), 10) < 0; }
};
static_assert(sizeof(Gensort) == 100);

struct PeerArgs {
    std::string type;
    std::size_t width = 0;  // bytes of one record: 4, 8 or 100
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::uint64_t memory_mib = 0;  // 0: not given (only a peer with a budget accepts it)
    std::string input, output;
};

[[noreturn]] inline void peer_usage(const char* program, const std::string& why, bool takes_memory) {
    std::fprintf(stderr, "%s: %s\nusage: %s --type u32|u64|gensort [--threads N]%s INPUT OUTPUT\n", program, why.c_str(),
                 program, takes_memory ? " [--memory MiB]" : "");
    std::exit(2);
}

inline PeerArgs parse_peer_args(int argc, char** argv, const char* program, bool takes_memory) {
    PeerArgs args;
    std::vector<std::string> operands;
    auto number = [&](const std::string& option, const std::string& value, unsigned long long max) {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
        if (value.empty() || value[0] == '-' || *end != '\0' || n == 0 || n > max)
            peer_usage(program, option + ": 1 to " + std::to_string(max), takes_memory);
        return n;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool valued = arg == "--type" || arg == "--threads" || (takes_memory && arg == "--memory");
        if (valued && i + 1 < argc) {
            const std::string value = argv[++i];
            if (arg == "--type") args.type = value;
            if (arg == "--threads") args.threads = static_cast<unsigned>(number(arg, value, 1024));
            if (arg == "--memory") args.memory_mib = number(arg, value, std::uint64_t{1} << 30);
        } else if (arg.rfind("--", 0) == 0) {
            peer_usage(program, "unknown option '" + arg + "'", takes_memory);
        } else {
            operands.push_back(arg);
        }
    }
    if (operands.size() != 2) peer_usage(program, "expected INPUT and OUTPUT", takes_memory);
    args.width = args.type == "u32" ? 4 : args.type == "u64" ? 8 : args.type == "gensort" ? 100 : 0;
    if (args.width == 0) peer_usage(program, "--type: u32, u64 or gensort", takes_memory);
    args.input = operands[0];
    args.output = operands[1];
    return args;
}

// Bytes of INPUT, `size`, as whole records of args.type; throws when it is not.
inline void check_whole_records(std::uint64_t size, const PeerArgs& args) {
    if (size % args.width != 0)
        throw std::runtime_error("'" + args.input + "' is not a whole number of " + args.type + " records");
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace gpusort::bench
