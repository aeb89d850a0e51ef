// io/: complete positional transfers, nameless temp files, and the atomic output file.
#include "io/atomic_output_file.hpp"
#include "io/file_mapping.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fcntl.h>
#include <numeric>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>

using namespace gpusort;
using namespace gpusort::testing;

TEST(File, ReadPastTheEndIsAnErrorNamingTheFile) {
    ScratchDir dir;
    write_text(dir / "small", "12345");
    io::File file = io::File::open_read(dir / "small");
    EXPECT_EQ(file.size(), 5u);
    std::vector<std::byte> buffer(8);
    try {
        file.read_at(0, buffer);
        FAIL() << "no error";
    } catch (const io::IoError& e) {
        EXPECT_NE(std::string(e.what()).find(dir / "small"), std::string::npos) << e.what();
    }
}

TEST(File, OpenMissingOrDirectoryFails) {
    ScratchDir dir;
    EXPECT_THROW(io::File::open_read(dir / "missing"), io::IoError);
    EXPECT_THROW(io::File::open_read(dir.path()), io::IoError);
}

TEST(ParallelIo, WritesAndReadsBackAcrossManyBlocks) {
    ScratchDir dir;
    io::File file = io::create_temp_file(dir.path());
    std::vector<std::uint64_t> data(3 * io::kParallelIoBlock / 8 + 12345);
    std::iota(data.begin(), data.end(), 42);
    io::write_parallel(file, 4096, std::as_bytes(std::span<const std::uint64_t>(data)));
    std::vector<std::uint64_t> back(data.size());
    io::read_parallel(file, 4096, std::as_writable_bytes(std::span<std::uint64_t>(back)));
    EXPECT_EQ(back, data);
}

// Direct I/O on a spill file: writes of adjacent ranges at any offsets and of any lengths, from
// several threads at once (the partial blocks they share go through the page cache), read back at
// any offsets, equal the bytes written; checked through a second, ordinary descriptor too.
// Pieces of the largest size and of two blocks.
TEST(DirectIo, AdjacentUnalignedWritesFromManyThreadsReadBackExactly) {
    for (const std::size_t piece : {io::kMaxDirectIoPiece, 2 * io::kDirectIoAlignment}) {
        SCOPED_TRACE("pieces of " + std::to_string(piece) + " bytes");
        ScratchDir dir;
        io::File file = io::create_temp_file(dir.path());
        if (!file.use_direct_io(piece)) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
        ASSERT_TRUE(file.direct());
        EXPECT_EQ(file.direct_piece(), piece);
        const std::size_t size = 3 * io::kMaxDirectIoPiece + 12345;
        std::vector<std::byte> data(size);
        std::mt19937_64 rng(7);
        for (auto& b : data) b = static_cast<std::byte>(rng());
        // Cut points at random, unaligned offsets: ranges from a byte to several pieces long.
        std::vector<std::size_t> cuts = {0, size};
        for (int i = 0; i < 40; ++i) cuts.push_back(rng() % size);
        for (std::size_t c : {std::size_t{1}, io::kDirectIoAlignment, io::kDirectIoAlignment + 1, 2 * io::kMaxDirectIoPiece})
            cuts.push_back(c);
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        file.allocate(size);
        std::vector<std::thread> writers;
        for (std::size_t t = 0; t < 4; ++t)
            writers.emplace_back([&, t] {
                for (std::size_t i = t; i + 1 < cuts.size(); i += 4)
                    file.write_at(cuts[i], std::span<const std::byte>(data).subspan(cuts[i], cuts[i + 1] - cuts[i]));
            });
        for (auto& w : writers) w.join();

        for (int i = 0; i < 200; ++i) {
            const std::size_t from = rng() % size;
            const std::size_t length = 1 + rng() % std::min<std::size_t>(size - from, 3 * io::kMaxDirectIoPiece);
            std::vector<std::byte> back(length);
            file.read_at(from, back);
            ASSERT_TRUE(std::equal(back.begin(), back.end(), data.begin() + static_cast<std::ptrdiff_t>(from)))
                << "bytes [" << from << ", " << from + length << ")";
        }
        std::vector<std::byte> whole(size);
        file.read_at(0, whole);
        EXPECT_TRUE(whole == data);
        // The same bytes through the page cache (a descriptor without O_DIRECT).
        io::File plain(::open(("/proc/self/fd/" + std::to_string(file.fd())).c_str(), O_RDONLY | O_CLOEXEC), "plain");
        ASSERT_TRUE(plain.is_open());
        std::vector<std::byte> cached(size);
        plain.read_at(0, cached);
        EXPECT_TRUE(cached == data);
        // Reading past the end is an error that names the file, as without direct I/O.
        std::vector<std::byte> beyond(10);
        EXPECT_THROW(file.read_at(size - 5, beyond), io::IoError);
    }
}

TEST(DirectIo, SpillFileRefusesNothingWhereTheFileSystemHasIt) {
    ScratchDir dir;
    const bool supported = io::direct_io_supported(dir.path());
    EXPECT_EQ(io::create_spill_file(dir.path(), io::kMaxDirectIoPiece).direct(), supported);
    EXPECT_FALSE(io::create_spill_file(dir.path(), 0).direct());
    EXPECT_THROW(io::create_temp_file(dir.path()).use_direct_io(io::kDirectIoAlignment + 1), std::invalid_argument);
    EXPECT_THROW(io::direct_io_supported(dir / "missing"), io::IoError);
    EXPECT_TRUE(dir.entries().empty());
}

// Maps of neighbouring ranges at offsets inside pages, written from threads at once: the file holds
// every byte, and nothing outside the ranges changed.
TEST(FileMapping, RegionsAtAnyOffsetWriteTheirBytesOfTheFile) {
    ScratchDir dir;
    io::File file = io::create_temp_file(dir.path());
    const std::size_t size = 5 * 4096 + 777;
    std::vector<std::byte> data(size, std::byte{0x5a});
    ASSERT_TRUE(file.allocate(size));
    file.write_at(0, data);
    const std::size_t cuts[] = {100, 4096 + 3, 3 * 4096 + 1000, size - 10};
    std::mt19937_64 rng(4);
    for (std::size_t i = cuts[0]; i < cuts[3]; ++i) data[i] = static_cast<std::byte>(rng());
    {
        std::vector<std::thread> writers;
        for (std::size_t r = 0; r < 3; ++r)
            writers.emplace_back([&, r] {
                const io::FileMapping map(file, cuts[r], cuts[r + 1] - cuts[r]);
                EXPECT_EQ(map.size(), cuts[r + 1] - cuts[r]);
                std::memcpy(map.data(), data.data() + cuts[r], map.size());
            });
        for (auto& w : writers) w.join();
    }
    std::vector<std::byte> back(size);
    file.read_at(0, back);
    EXPECT_TRUE(back == data);
}

TEST(TempFile, LeavesNothingInItsFolder) {
    ScratchDir dir;
    {
        io::File file = io::create_temp_file(dir.path());
        const char text[] = "spilled";
        file.write_at(0, std::as_bytes(std::span(text)));
        EXPECT_TRUE(dir.entries().empty());
    }
    EXPECT_TRUE(dir.entries().empty());
    EXPECT_THROW(io::create_temp_file(dir / "missing"), io::IoError);
    write_text(dir / "plain", "x");
    EXPECT_THROW(io::create_temp_file(dir / "plain"), io::IoError);
}

TEST(AtomicOutputFile, NothingAppearsWithoutCommit) {
    ScratchDir dir;
    write_text(dir / "existing", "old contents");
    {
        io::AtomicOutputFile out(dir / "existing");
        const char text[] = "new";
        out.file().write_at(0, std::as_bytes(std::span(text)));
        io::AtomicOutputFile fresh(dir / "fresh");
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"existing"}));
    EXPECT_EQ(read_text(dir / "existing"), "old contents");
}

TEST(AtomicOutputFile, CommitReplacesAndKeepsTheOldPermissions) {
    ScratchDir dir;
    write_text(dir / "existing", "old contents");
    ::chmod((dir / "existing").c_str(), 0640);
    {
        io::AtomicOutputFile out(dir / "existing");
        const std::string text = "new";
        out.file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
        out.commit(true);
    }
    EXPECT_EQ(read_text(dir / "existing"), "new");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"existing"}));
    struct stat st {};
    ASSERT_EQ(::stat((dir / "existing").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// A SIGKILL between the hidden name and the rename leaves a hidden file that nobody holds; a sort
// that is still running holds its own locked (flock). The next output in the folder removes the
// first kind only.
TEST(AtomicOutputFile, RemovesTheHiddenLeftoversOfEndedSortsOnly) {
    ScratchDir dir;
    write_text(dir / ".gpusort-out-k1l2e3d4s5o6", "left by a killed sort");
    write_text(dir / ".gpusort-out-a1B2c3", "left by a killed sort, on a file system without O_TMPFILE");
    write_text(dir / ".gpusort-out-running", "a sort still running holds it");
    const int held = ::open((dir / ".gpusort-out-running").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0);
    ASSERT_EQ(::mkdir((dir / ".gpusort-out-folder").c_str(), 0755), 0);
    ASSERT_EQ(::symlink("out", (dir / ".gpusort-out-link").c_str()), 0);
    write_text(dir / ".gpusort-outside", "not ours");
    write_text(dir / "out", "old output");
    {
        io::AtomicOutputFile out(dir / "out");
        EXPECT_EQ(dir.entries(), (std::set<std::string>{".gpusort-out-running", ".gpusort-out-folder",
                                                        ".gpusort-out-link", ".gpusort-outside", "out"}));
        const std::string text = "new output";
        out.file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
        out.commit(false);
    }
    EXPECT_EQ(read_text(dir / "out"), "new output");
    EXPECT_EQ(read_text(dir / ".gpusort-out-running"), "a sort still running holds it");
    ::close(held);
    // Once its sort has ended, the next one removes it.
    io::AtomicOutputFile next(dir / "out");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{".gpusort-out-folder", ".gpusort-out-link", ".gpusort-outside", "out"}));
}

TEST(AtomicOutputFile, RefusesDirectoriesAndMissingFolders) {
    ScratchDir dir;
    EXPECT_THROW(io::AtomicOutputFile(dir.path()), io::IoError);
    EXPECT_THROW(io::AtomicOutputFile(dir / "no/such/out"), io::IoError);
}
