// CUDA errors at any point of a GPU sort, through the test-only CUDA fault injector of
// gpusort-file-faults (gpu/cuda_result.cpp): a clean run counts the checked CUDA results (and logs
// what each one checked), then one run per chosen point fails that result. The sorts: many runs
// (keys, stdin, records), and a file sorted as one chunk, copied by the device from the file's map.
// The sort must end with one "gpusort-file: " line, status 1, no OUTPUT (or the old one unchanged),
// INPUT intact and no temp file; never a hang. With --backend auto a GPU that fails while it is set
// up gives a one-line notice and a correct sort on the CPU. A device budget larger than the device
// shrinks to what the device has. Skips where no GPU can be used.
#include "cli_run.hpp"
#include "cuda_fault_log.hpp"
#include "scratch_dir.hpp"
#include "gpu_skip.hpp"
#include "tools/gen/data_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fcntl.h>
#include <random>
#include <thread>
#include <utility>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

const std::string kProgram = GPUSORT_FILE_FAULTS_BIN;

// Runs the program with the CUDA fault variables set (and stdin from `stdin_path` when given);
// a run that takes longer than `deadline` is killed and reported as a hang.
Result run_with_faults(const std::vector<std::string>& args, const std::string& fault, const std::string& log,
                       const std::string& stdin_path = "", std::chrono::seconds deadline = std::chrono::seconds(300)) {
    ChildProcess child(kProgram, args, [&] {
        if (!fault.empty()) ::setenv("GPUSORT_CUDA_FAULT", fault.c_str(), 1);
        if (!log.empty()) ::setenv("GPUSORT_CUDA_FAULT_LOG", log.c_str(), 1);
        if (!stdin_path.empty()) {
            const int fd = ::open(stdin_path.c_str(), O_RDONLY);
            ::dup2(fd, STDIN_FILENO);
        }
    });
    std::atomic<bool> done{false};
    std::thread watchdog([&] {
        const auto end = std::chrono::steady_clock::now() + deadline;
        while (!done && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!done) ::kill(child.pid(), SIGKILL);
    });
    Result result = child.wait();
    done = true;
    watchdog.join();
    EXPECT_FALSE(result.killed_by(SIGKILL)) << "hung: killed after " << deadline.count() << " s";
    return result;
}

// The points to fail: the first few results (setting the device up), points spread over the whole
// sort, and `also`.
std::vector<std::uint64_t> fault_points(std::uint64_t total, std::vector<std::uint64_t> also) {
    std::vector<std::uint64_t> points = std::move(also);
    points.insert(points.end(), {1, 2, 3, 5, 8, 13});
    for (int k = 1; k < 24; ++k) points.push_back(total * k / 24);
    points.push_back(total);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::erase_if(points, [&](std::uint64_t p) { return p < 1 || p > total; });
    return points;
}

struct Scenario {
    std::string name;
    std::vector<std::string> options;  // besides INPUT and OUTPUT
    bool from_stdin = false;
    bool one_chunk = false;  // the clean run must sort one chunk (else many runs)
    // Operations the clean run must check, each of whose results is failed too.
    std::vector<std::string> must_reach = {};
};

// Sorts with every fault point of `scenario` and checks the guarantees after each.
void sweep(const Scenario& scenario, const std::string& input_bytes, const std::string& expected) {
    ScratchDir dir;
    const std::string input = dir / "in.bin", output = dir / "out.bin", log = dir / "cuda.count";
    const std::string stats = dir / "stats.json";
    write_text(input, input_bytes);
    auto args_for = [&](const std::string& backend) {
        std::vector<std::string> args = scenario.options;
        args.insert(args.end(), {"--backend", backend, "--stats", stats, scenario.from_stdin ? "-" : input, output});
        return args;
    };
    const std::string stdin_path = scenario.from_stdin ? input : "";

    // The clean run: correct, one chunk or many runs, and the checked CUDA results.
    Result clean = run_with_faults(args_for("gpu"), "", log, stdin_path);
    ASSERT_EQ(clean.exit_code(), 0) << scenario.name << ": " << clean.err;
    ASSERT_TRUE(read_text(output) == expected) << scenario.name << ": the clean run's output differs";
    const std::string report = read_text(stats);
    ASSERT_EQ(report.find("\"runs\": 1,") != std::string::npos, scenario.one_chunk) << scenario.name << ": " << report;
    const CudaFaultLog clean_log = read_cuda_fault_log(log);
    const std::uint64_t total = clean_log.total;
    ASSERT_GT(total, 50u) << scenario.name;
    std::vector<std::uint64_t> reached;  // the results of the operations the sort must check
    for (const std::string& operation : scenario.must_reach) {
        const auto found = clean_log.points.find(operation);
        ASSERT_NE(found, clean_log.points.end()) << scenario.name << ": never checked " << operation;
        reached.insert(reached.end(), found->second.begin(), found->second.end());
    }
    const std::vector<std::uint64_t> points = fault_points(total, std::move(reached));
    std::filesystem::remove(output);
    std::filesystem::remove(stats);
    const std::set<std::string> before = dir.entries();

    const std::string old_output = "an existing output that must survive";
    for (std::uint64_t point : points) {
        for (bool existing : {false, true}) {
            const std::string what = scenario.name + ", CUDA result " + std::to_string(point) + " of " +
                                     std::to_string(total) + (existing ? ", OUTPUT existed" : "");
            SCOPED_TRACE(what);
            if (existing) write_text(output, old_output);
            const std::string kind = point % 3 == 0 ? ":memory" : "";
            Result r = run_with_faults(args_for("gpu"), std::to_string(point) + kind, "", stdin_path);
            expect_one_error_line(r, "GPU");
            EXPECT_EQ(r.exit_code(), 1);
            EXPECT_EQ(read_text(input), input_bytes) << "INPUT changed";
            if (existing) {
                EXPECT_EQ(read_text(output), old_output) << "OUTPUT changed";
                std::filesystem::remove(output);
            }
            std::filesystem::remove(stats);
            EXPECT_EQ(dir.entries(), before) << "files left behind";
        }
    }
}

std::string random_u64_bytes(std::size_t count, std::uint64_t seed, std::string& sorted) {
    std::vector<std::uint64_t> keys = gen::generate_keys<std::uint64_t>(KeyType::u64, gen::Distribution::uniform, count, seed);
    std::string bytes(reinterpret_cast<const char*>(keys.data()), count * 8);
    std::sort(keys.begin(), keys.end());
    sorted.assign(reinterpret_cast<const char*>(keys.data()), count * 8);
    return bytes;
}

}  // namespace

TEST(GpuFaults, CudaErrorAnywhereInAManyRunSortOfKeysEndsCleanly) {
    SKIP_WITHOUT_GPU();
    std::string sorted;
    const std::string input = random_u64_bytes(std::size_t{6} << 20, 11, sorted);  // 48 MiB
    // Runs spilled to the temp folder (host budget below the input) and merged on the GPU.
    sweep({"u64 file to file", {"--device-memory", "8M", "--memory", "32M"}}, input, sorted);
}

TEST(GpuFaults, CudaErrorAnywhereInAManyRunSortFromStdinEndsCleanly) {
    SKIP_WITHOUT_GPU();
    std::string sorted;
    const std::string input = random_u64_bytes(std::size_t{4} << 20, 12, sorted);  // 32 MiB
    sweep({"u64 from stdin", {"--device-memory", "8M", "--memory", "32M"}, true}, input, sorted);
}

TEST(GpuFaults, CudaErrorAnywhereInAManyRunSortOfRecordsEndsCleanly) {
    SKIP_WITHOUT_GPU();
    // 24-byte records keyed by a big-endian u32 at offset 4 then 8 bytes at offset 12; stable.
    const std::size_t count = 1'000'000, size = 24;
    std::string input(count * size, '\0');
    std::mt19937_64 random(13);
    for (std::size_t i = 0; i < input.size(); ++i) {
        const std::size_t at = i % size;  // key bytes 4 to 19 of 0 or 1: many equal keys, so stability matters
        input[i] = static_cast<char>(at >= 4 && at < 20 ? random() & 1 : random() & 0xFF);
    }
    std::vector<std::size_t> order(count);
    for (std::size_t i = 0; i < count; ++i) order[i] = i;
    auto key = [&](std::size_t i) { return input.substr(i * size + 4, 16); };  // be u32 + bytes: memcmp order
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    std::string sorted;
    sorted.reserve(input.size());
    for (std::size_t i : order) sorted += input.substr(i * size, size);
    sweep({"records file to file",
           {"--record-size", "24", "--key", "4:u32:be", "--key", "8:bytes:12", "--device-memory", "8M", "--memory",
            "16M"}},
          input, sorted);
}

TEST(GpuFaults, CudaErrorAnywhereInAOneChunkSortCopiedFromTheFileEndsCleanly) {
    SKIP_WITHOUT_GPU();
    std::string sorted;
    // 160 MiB: three pieces copied by the device from the file's map, each pinned and unpinned.
    const std::string input = random_u64_bytes(std::size_t{20} << 20, 16, sorted);
    sweep({"u64 file as one chunk",
           {"--memory", "1G"},
           false,
           true,
           {"cudaMemcpyAsync (chunk to the device, from its source)", "cudaHostUnregister (a chunk's source)"}},
          input, sorted);
}

TEST(GpuFaults, AutoFallsBackToTheCpuWithANoticeWhenTheGpuFailsToSetUp) {
    SKIP_WITHOUT_GPU();
    ScratchDir dir;
    std::string sorted;
    write_text(dir / "in.bin", random_u64_bytes(100'000, 14, sorted));
    for (const char* kind : {"1:unavailable", "2", "3:memory"}) {
        SCOPED_TRACE(kind);
        Result r = run_with_faults({"--backend", "auto", "--stats", dir / "stats.json", dir / "in.bin", dir / "out.bin"},
                                   kind, "");
        EXPECT_EQ(r.exit_code(), 0) << r.err;
        EXPECT_EQ(r.err.rfind("gpusort-file: note: the GPU cannot be used (", 0), 0u) << r.err;
        EXPECT_NE(r.err.find("); sorting on the CPU\n"), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(read_text(dir / "out.bin") == sorted);
        EXPECT_NE(read_text(dir / "stats.json").find("\"backend\": \"cpu\""), std::string::npos);
        // --quiet: nothing on stderr, the same result.
        std::filesystem::remove(dir / "out.bin");
        Result quiet = run_with_faults({"--backend", "auto", "--quiet", dir / "in.bin", dir / "out.bin"}, kind, "");
        EXPECT_EQ(quiet.exit_code(), 0) << quiet.err;
        EXPECT_EQ(quiet.err, "");
        EXPECT_TRUE(read_text(dir / "out.bin") == sorted);
        std::filesystem::remove(dir / "out.bin");
        // --backend gpu: the same failure is an error.
        Result gpu = run_with_faults({"--backend", "gpu", dir / "in.bin", dir / "out.bin"}, kind, "");
        expect_one_error_line(gpu, "GPU");
        EXPECT_FALSE(std::filesystem::exists(dir / "out.bin"));
    }
}

TEST(GpuFaults, ADeviceBudgetLargerThanTheDeviceShrinksToIt) {
    SKIP_WITHOUT_GPU();
    ScratchDir dir;
    std::string sorted;
    write_text(dir / "in.bin", random_u64_bytes(1'000'000, 15, sorted));
    Result r = run_with_faults(
        {"--backend", "gpu", "--device-memory", "64T", "--stats", dir / "stats.json", dir / "in.bin", dir / "out.bin"},
        "", "");
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out.bin") == sorted);
    const std::string stats = read_text(dir / "stats.json");
    const auto at = stats.find("\"device_memory\": ");
    ASSERT_NE(at, std::string::npos) << stats;
    const std::uint64_t budget = std::strtoull(stats.c_str() + at + 17, nullptr, 10);
    EXPECT_GT(budget, 0u);
    EXPECT_LT(budget, std::uint64_t{64} << 40) << "the budget was not shrunk to the device";
}
