// Replays every saved input of the fuzz targets (corpus/TARGET/ and regressions/TARGET/ beside
// this file) through the targets' bodies, so that the normal test suite checks them, inputs that
// once found a bug included.
#include "fuzz_targets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace gpusort::fuzz;

struct Target {
    const char* name;  // also the folder of its inputs
    void (*run)(Input);
};

const Target kTargets[] = {
    {"key_spec", key_spec_target},           {"size", size_target}, {"cli", cli_target},
    {"stream_reader", stream_reader_target}, {"sort", sort_target}, {"text", text_target},
};

// Test names and messages show the target's name.
void PrintTo(const Target& target, std::ostream* out) { *out << target.name; }

std::vector<std::uint8_t> read_input(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

class FuzzReplay : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzReplay, EverySavedInput) {
    const Target& target = GetParam();
    std::size_t corpus_files = 0;
    for (const char* folder : {"corpus", "regressions"}) {
        const fs::path dir = fs::path(GPUSORT_FUZZ_DIR) / folder / target.name;
        if (!fs::exists(dir)) continue;
        std::vector<fs::path> files(fs::directory_iterator(dir), {});
        std::sort(files.begin(), files.end());
        for (const auto& file : files) {
            const auto bytes = read_input(file);
            try {
                target.run(bytes);
            } catch (const std::exception& e) {
                ADD_FAILURE() << file << ": " << e.what();
            }
            if (std::string(folder) == "corpus") ++corpus_files;
        }
    }
    EXPECT_GT(corpus_files, 0u) << "no seed inputs for " << target.name;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

}  // namespace
