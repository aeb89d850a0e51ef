// io/file.hpp's questions about files and descriptors, which the sort asks through io/ rather than
// by system calls of its own: a file's status, whether a path is a device, whether a descriptor is
// a terminal, a descriptor of one's own of a file, and a file opened for writing in place. Each is
// checked against what the system calls themselves answer.
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <span>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// A pipe's two ends, closed at the end of the test.
struct Pipe {
    Pipe() {
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    }
    ~Pipe() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    int fds[2] = {-1, -1};
};

}  // namespace

TEST(FileStatus, GivesTheSizeAndModificationTimeOfARegularFile) {
    ScratchDir dir;
    write_text(dir / "f", "12345");
    const io::File file = io::File::open_read(dir / "f");
    const io::FileStatus status = file.status();
    struct stat st {};
    ASSERT_EQ(::stat((dir / "f").c_str(), &st), 0);
    EXPECT_TRUE(status.regular);
    EXPECT_TRUE(file.is_regular());
    EXPECT_EQ(status.size, 5u);
    EXPECT_EQ(status.modified.tv_sec, st.st_mtim.tv_sec);
    EXPECT_EQ(status.modified.tv_nsec, st.st_mtim.tv_nsec);
}

TEST(FileStatus, APipeIsNotARegularFile) {
    const Pipe pipe;
    const io::File end = io::File::duplicate(pipe.fds[0], "pipe");
    EXPECT_FALSE(end.is_regular());
}

TEST(FileStatus, DevicesArePipesDevicesAndSocketsButNotFilesOrFolders) {
    ScratchDir dir;
    write_text(dir / "file", "x");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    EXPECT_TRUE(io::is_device("/dev/null"));
    EXPECT_TRUE(io::is_device(dir / "fifo"));
    EXPECT_FALSE(io::is_device(dir / "file"));
    EXPECT_FALSE(io::is_device(dir.path()));
    EXPECT_FALSE(io::is_device(dir / "missing"));
}

TEST(FileStatus, OnlyATerminalIsATerminal) {
    const Pipe pipe;
    EXPECT_FALSE(io::is_terminal(pipe.fds[0]));
    EXPECT_FALSE(io::is_terminal(-1));
    // A pseudo-terminal's own side is a terminal.
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) GTEST_SKIP() << "no pseudo-terminals here";
    ASSERT_EQ(::grantpt(master), 0);
    ASSERT_EQ(::unlockpt(master), 0);
    const int terminal = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
    ASSERT_GE(terminal, 0);
    EXPECT_TRUE(io::is_terminal(terminal));
    ::close(terminal);
    ::close(master);
}

TEST(FileStatus, ADuplicateIsADescriptorOfItsOwnOfTheSameFile) {
    ScratchDir dir;
    write_text(dir / "f", "abc");
    io::FileId id;
    ASSERT_TRUE(io::file_id(dir / "f", id));
    io::File original = io::File::open_read(dir / "f");
    const io::File copy = original.duplicate();
    EXPECT_NE(copy.fd(), original.fd());
    EXPECT_EQ(copy.path(), dir / "f");
    EXPECT_EQ(copy.id(), id);
    EXPECT_EQ(::fcntl(copy.fd(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);  // not left to programs it starts
    original.close();
    std::byte byte{};
    copy.read_at(2, std::span(&byte, 1));  // still open after the original is closed
    EXPECT_EQ(static_cast<char>(byte), 'c');
    EXPECT_THROW(io::File::duplicate(-1, "nothing"), io::IoError);
}

TEST(FileStatus, OpenWriteWritesAnExistingFileInPlace) {
    ScratchDir dir;
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    // A reader of the FIFO first, so that opening it for writing does not wait.
    const int reader = ::open((dir / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    {
        const io::File fifo = io::File::open_write(dir / "fifo");
        EXPECT_EQ(::write(fifo.fd(), "hi", 2), 2);
    }
    char got[3] = {};
    EXPECT_EQ(::read(reader, got, 2), 2);
    EXPECT_STREQ(got, "hi");
    ::close(reader);
    try {
        io::File::open_write(dir / "missing");
        FAIL() << "opened a file that is not there";
    } catch (const io::IoError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot write '" + (dir / "missing") + "'"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "missing"));  // not created
}
