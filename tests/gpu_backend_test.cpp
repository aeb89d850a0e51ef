// The GPU backend through the library API: byte-identical to the CPU backend and to an
// independent std::sort, for all ten key types, one-chunk sorts and sorts of dozens of chunks
// under a tiny device budget; records with key specs against the stable reference. Skips when no
// GPU can be used (fails instead under GPUSORT_REQUIRE_GPU=1); checks the refusal message then.
#include "generated_keys.hpp"
#include "record_sort_cases.hpp"
#include "reference_order.hpp"
#include "scratch_dir.hpp"
#include "gpu_skip.hpp"
#include "gpusort/sort_file.hpp"
#include "src/sort/sort_part.hpp"

#include <gtest/gtest.h>

#include <fstream>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

template <class T>
void expect_gpu_matches(const std::vector<T>& keys, KeyType type, bool descending,
                        std::optional<std::uint64_t> device_memory, const std::string& what,
                        std::uint64_t min_runs = 0) {
    ScratchDir dir;
    write_keys(dir / "in", keys);
    PartSortOptions options;
    options.input = dir / "in";
    options.output = dir / "gpu";
    options.order = {type, descending};
    options.backend = Backend::gpu;
    options.device_memory_bytes = device_memory;
    SortReport report = sort_part(options);
    EXPECT_NE(report.backend, "cpu");
    const std::uint64_t per_run = std::max<std::uint64_t>(report.plan.run_records, 1);
    EXPECT_EQ(report.runs, (keys.size() + per_run - 1) / per_run) << what;
    EXPECT_GE(report.runs, min_runs) << what;
    if (report.runs > 1) {
        // A GPU sorter of keys merges its runs on the device. The merge's phases in --stats: every
        // key gathered, copied in and out, and written once.
        EXPECT_TRUE(report.plan.merge_on_device) << what;
        for (const MergePhase* phase : {&report.merge.gather, &report.merge.copy_in, &report.merge.copy_out, &report.merge.write})
            EXPECT_EQ(phase->bytes, keys.size() * sizeof(T)) << what;
        EXPECT_EQ(report.merge.host.bytes, 0u) << what;
    }
    options.output = dir / "cpu";
    options.backend = Backend::cpu;
    sort_part(options);
    const std::string gpu = read_text(dir / "gpu"), cpu = read_text(dir / "cpu");
    EXPECT_TRUE(gpu == cpu) << "GPU and CPU outputs differ: " << what;
    const auto expected = reference_sort(keys, descending);
    EXPECT_TRUE(gpu.size() == expected.size() * sizeof(T) &&
                std::memcmp(gpu.data(), expected.data(), gpu.size()) == 0)
        << "GPU output is not the reference order: " << what;
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in", "gpu", "cpu"})) << what;
}

}  // namespace

template <class Traits>
class GpuBackendTest : public ::testing::Test {};
TYPED_TEST_SUITE(GpuBackendTest, AllKeyTypes);

TYPED_TEST(GpuBackendTest, OneChunkEverySizeClassAndDistribution) {
    SKIP_WITHOUT_GPU();
    using T = typename TypeParam::type;
    for (std::size_t n : {0u, 1u, 2u, 3u, 1023u, 1024u, 1025u, 4097u, 65535u, 65536u, 65537u, 1000003u})
        for (const KeyData& data : key_data_for<T>())
            for (bool descending : {false, true})
                expect_gpu_matches(make_keys<T>(n, data, n), TypeParam::key, descending, std::nullopt,
                                   std::to_string(n) + " " + key_data_name(data) + (descending ? " desc" : ""));
}

TYPED_TEST(GpuBackendTest, DozensOfChunksUnderATinyDeviceBudget) {
    SKIP_WITHOUT_GPU();
    using T = typename TypeParam::type;
    const std::size_t n = 2'000'003;
    for (bool descending : {false, true})
        expect_gpu_matches(make_keys<T>(n, mixed_key_data<T>(), 7),
                           TypeParam::key, descending, std::uint64_t{1} << 20, "tiny device budget", 24);
}

TEST(GpuBackend, ManyChunksWithSmallPiecesAndSkewedRuns) {
    SKIP_WITHOUT_GPU();
    // Reversed input: every run lies wholly below the one before it.
    expect_gpu_matches(make_keys<std::uint64_t>(3'000'001, {gen::Distribution::reversed}, 3), KeyType::u64, false,
                       std::uint64_t{2} << 20, "reversed, many runs", 24);
}

// The canary of the GPU suites: where GPUSORT_REQUIRE_GPU=1, a build without CUDA or a machine
// without a device fails here.
TEST(GpuBackend, RefusedClearlyWhenNoGpuCanBeUsed) {
    const GpuGate gate = device_gate();
    if (gate.verdict == GpuGate::run) GTEST_SKIP() << "a GPU is present";
    if (gate.verdict == GpuGate::fail) FAIL() << gate.why;
    const std::string why = gpu_sorter_error();
#ifdef GPUSORT_WITH_GPU
    EXPECT_EQ(why.rfind("no usable GPU: ", 0), 0u) << why;
#else
    EXPECT_NE(why.find("built without CUDA"), std::string::npos) << why;
#endif
    // auto falls back to the CPU.
    ScratchDir dir;
    write_keys(dir / "in", make_keys<std::uint32_t>(1000, {}, 1));
    PartSortOptions options;
    options.input = dir / "in";
    options.output = dir / "out";
    options.order = {KeyType::u32, false};
    EXPECT_EQ(sort_part(options).backend, "cpu");
}

TEST(GpuBackend, DeviceOutOfMemoryIsAOneLineError) {
    SKIP_WITHOUT_GPU();
    auto sorter = make_chunk_sorter({Backend::gpu, 0, 1, {}}, KeyOrder{KeyType::u64, false});
    try {
        sorter->prepare(1, std::uint64_t{1} << 40, {});  // 8 TiB of keys: more than any device has
        FAIL() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
}

// Records with key specs on the GPU: every case of record_sort_cases.hpp against the stable
// reference, sorted as one chunk and as many chunks under a tiny device budget (runs merged on
// the host, in several passes for the --unique cases), stable and with --unique.
TEST(GpuBackend, RecordsInOneChunkAndManyAgainstTheStableReference) {
    SKIP_WITHOUT_GPU();
    std::uint64_t seed = 300;
    for (const auto& c : record_cases()) {
        const auto data = make_records(c.records, c.spec, seed++);
        for (bool unique : {false, true})
            for (bool tiny : {false, true}) {
                const std::string what = c.name + (unique ? ", unique" : "") + (tiny ? ", tiny device budget" : "");
                PartSortOptions options;
                options.backend = Backend::gpu;
                if (tiny) options.device_memory_bytes = std::uint64_t{1} << 20;
                if (tiny && unique) options.max_fan_in = 2;  // several host merge passes
                const SortReport report = sort_records_and_compare(data, c.spec, unique, options, what);
                EXPECT_NE(report.backend, "cpu");
                if (tiny) {
                    EXPECT_GE(report.runs, 4u) << what;
                    EXPECT_GE(report.merge_passes, unique ? 2u : 1u) << what;
                } else {
                    EXPECT_EQ(report.runs, 1u) << what;
                }
            }
    }
}

TEST(GpuBackend, RecordsSpanningManyStagingPieces) {
    SKIP_WITHOUT_GPU();
    // 200 MB of 100-byte records: several 64 MiB staging pieces each way, in one chunk and in
    // chunks of about 60 MB; and with --unique on a 2-byte key (few groups, all spanning pieces).
    const KeySpec gensort = gensort_key();
    const auto data = make_records(2'000'000, gensort, 17, 256);
    for (std::optional<std::uint64_t> budget : {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{std::uint64_t{400} << 20}}) {
        PartSortOptions options;
        options.backend = Backend::gpu;
        options.device_memory_bytes = budget;
        sort_records_and_compare(data, gensort, false, options, budget ? "gensort, 400 MB budget" : "gensort, one chunk");
        sort_records_and_compare(data, spec_of(100, {"0:u16:be"}), true, options, "unique u16 key");
    }
}
