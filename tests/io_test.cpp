// io/: complete positional transfers, nameless temp files, and the atomic output file.
#include "io/atomic_output_file.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <sys/stat.h>

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

TEST(AtomicOutputFile, RefusesDirectoriesAndMissingFolders) {
    ScratchDir dir;
    EXPECT_THROW(io::AtomicOutputFile(dir.path()), io::IoError);
    EXPECT_THROW(io::AtomicOutputFile(dir / "no/such/out"), io::IoError);
}
