// INPUT of gpusort-mpi (src/distributed/input_files.hpp): an --input-list file's paths, and reads at
// any offset of the listed files' concatenation, checked against the concatenation itself; files
// that cannot be INPUT are refused, each by name.
#include "src/distributed/input_files.hpp"

#include "gpusort/sort_file.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::distributed;
using namespace gpusort::testing;

namespace {

// The message of the SortError that `work` throws ("" when it throws none).
template <class F>
std::string refusal(F work) {
    try {
        work();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(InputFiles, ListHoldsOnePathPerLineInOrder) {
    ScratchDir dir;
    write_text(dir / "list", "b.bin\n\n/abs/a.bin\r\nwith space.bin\nlast");
    EXPECT_EQ(read_input_list(dir / "list"), (std::vector<std::string>{"b.bin", "/abs/a.bin", "with space.bin", "last"}));
    write_text(dir / "empty", "\n\r\n\n");
    EXPECT_NE(refusal([&] { read_input_list(dir / "empty"); }).find("names no file"), std::string::npos);
    EXPECT_NE(refusal([&] { read_input_list(dir / "missing"); }).find("missing"), std::string::npos);
}

TEST(InputFiles, ReadsAnyRangeOfTheConcatenation) {
    ScratchDir dir;
    std::mt19937_64 rng(7);
    // Files of 0 to 5000 records of 4 bytes, two of them empty, one of them first.
    const std::vector<std::size_t> records = {0, 1, 4999, 0, 37, 5000, 2};
    std::string all;
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < records.size(); ++i) {
        std::string bytes(records[i] * 4, '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        paths.push_back(dir / ("part" + std::to_string(i)));
        write_text(paths.back(), bytes);
        all += bytes;
    }
    const InputFiles input(paths, 4);
    ASSERT_EQ(input.size(), all.size());
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t offset = rng() % (all.size() + 1);
        const std::size_t length = rng() % (all.size() - offset + 1);
        std::vector<std::byte> got(length);
        input.read(offset, got);
        ASSERT_EQ(std::string(reinterpret_cast<const char*>(got.data()), length), all.substr(offset, length))
            << "offset " << offset << ", length " << length;
    }
    std::vector<std::byte> whole(all.size());
    input.read(0, whole);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(whole.data()), whole.size()), all);
}

TEST(InputFiles, RefusesFilesThatCannotBeInputByName) {
    ScratchDir dir;
    write_text(dir / "good", std::string(16, 'x'));
    write_text(dir / "odd", std::string(13, 'x'));
    write_text(dir / "keys.gz", std::string(16, 'x'));
    const std::string odd = refusal([&] { InputFiles({dir / "good", dir / "odd"}, 8); });
    EXPECT_NE(odd.find("odd' is 13 bytes long"), std::string::npos) << odd;
    EXPECT_NE(refusal([&] { InputFiles({dir / "keys.gz"}, 8); }).find("uncompressed"), std::string::npos);
    EXPECT_EQ(refusal([&] { InputFiles({dir / "keys.gz"}, 8, Compression::none); }), "");  // forced plain
    EXPECT_NE(refusal([&] { InputFiles({dir / "good"}, 8, Compression::zstd); }).find("uncompressed"), std::string::npos);
    const std::string folder = refusal([&] { InputFiles({dir.path()}, 8); });
    EXPECT_NE(folder.find(dir.path()), std::string::npos) << folder;
    EXPECT_NE(refusal([&] { InputFiles({dir / "good", dir / "gone"}, 8); }).find("gone"), std::string::npos);
    EXPECT_NE(refusal([&] { InputFiles({"-"}, 8); }).find("uncompressed"), std::string::npos);
}
