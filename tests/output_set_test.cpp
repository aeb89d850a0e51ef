// io/output_set: outputs committed together (all appear, or none does), and the refusals of
// outputs that cannot be written together.
#include "io/atomic_output_file.hpp"
#include "io/io_error.hpp"
#include "io/output_set.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// Outputs made and written, to be committed together.
class Outputs {
public:
    void add(const std::string& path, const std::string& text) {
        files_.push_back(std::make_unique<io::AtomicOutputFile>(path));
        files_.back()->file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
    }
    void commit(bool sync, const io::BeforePlacing& before_placing = {}) {
        std::vector<io::AtomicOutputFile*> files;
        for (auto& file : files_) files.push_back(file.get());
        io::commit_together(files, sync, before_placing);
    }

private:
    std::vector<std::unique_ptr<io::AtomicOutputFile>> files_;
};

mode_t mode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

mode_t new_file_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST(OutputSet, TwoFilesInTwoFoldersAppearTogether) {
    ScratchDir a, b;
    write_text(b / "values", "old values");
    ::chmod((b / "values").c_str(), 0640);
    {
        Outputs outputs;
        outputs.add(a / "keys", "sorted keys");
        outputs.add(b / "values", "sorted values");
        outputs.commit(false);
    }
    EXPECT_EQ(read_text(a / "keys"), "sorted keys");
    EXPECT_EQ(read_text(b / "values"), "sorted values");
    EXPECT_EQ(mode_of(a / "keys"), new_file_mode());
    EXPECT_EQ(mode_of(b / "values"), 0640u);
    EXPECT_EQ(a.entries(), (std::set<std::string>{"keys"}));
    EXPECT_EQ(b.entries(), (std::set<std::string>{"values"}));
}

TEST(OutputSet, FourFilesNewAndExistingAppearTogether) {
    ScratchDir a, b;
    write_text(a / "out", "old out");
    write_text(b / "v2", "old v2");
    ::chmod((a / "out").c_str(), 0600);
    ::chmod((b / "v2").c_str(), 0604);
    {
        Outputs outputs;
        outputs.add(a / "out", "new out");
        outputs.add(a / "v1", "new v1");
        outputs.add(b / "v2", "new v2");
        outputs.add(b / "index", "new index");
        outputs.commit(true);
    }
    EXPECT_EQ(read_text(a / "out"), "new out");
    EXPECT_EQ(read_text(a / "v1"), "new v1");
    EXPECT_EQ(read_text(b / "v2"), "new v2");
    EXPECT_EQ(read_text(b / "index"), "new index");
    EXPECT_EQ(mode_of(a / "out"), 0600u);
    EXPECT_EQ(mode_of(a / "v1"), new_file_mode());
    EXPECT_EQ(mode_of(b / "v2"), 0604u);
    EXPECT_EQ(mode_of(b / "index"), new_file_mode());
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out", "v1"}));
    EXPECT_EQ(b.entries(), (std::set<std::string>{"v2", "index"}));
}

TEST(OutputSet, NothingAppearsWithoutCommit) {
    ScratchDir a, b;
    write_text(a / "out", "old out");
    {
        Outputs outputs;
        outputs.add(a / "out", "new out");
        outputs.add(a / "v1", "new v1");
        outputs.add(b / "index", "new index");
    }
    EXPECT_EQ(read_text(a / "out"), "old out");
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out"}));
    EXPECT_TRUE(b.entries().empty());
}

// The rename of output k fails (a directory appeared at its path after the set was prepared): the
// outputs placed before it are undone, the old files back at their paths (the same files, the same
// bytes), the new ones gone, and no hidden name is left in either folder.
TEST(OutputSet, AFailedRenameUndoesTheOutputsPlacedBeforeIt) {
    constexpr std::size_t n = 4;
    for (std::size_t k = 0; k < n; ++k) {
        SCOPED_TRACE("rename " + std::to_string(k) + " fails");
        ScratchDir a, b;
        std::vector<std::string> paths;
        std::vector<ino_t> old_inodes;
        for (std::size_t i = 0; i < n; ++i) {
            paths.push_back((i % 2 ? b : a) / ("out" + std::to_string(i)));
            // Even outputs replace a file, odd ones are new; the failing one is new.
            if (i % 2 == 0 && i != k) {
                write_text(paths[i], "old " + std::to_string(i));
                ::chmod(paths[i].c_str(), 0640);
            }
            old_inodes.push_back(inode_of(paths[i]));
        }
        const std::set<std::string> a_before = a.entries(), b_before = b.entries();
        Outputs outputs;
        for (std::size_t i = 0; i < n; ++i) outputs.add(paths[i], "new " + std::to_string(i));
        try {
            outputs.commit(false, [&](std::size_t index) {
                if (index != k) return;
                ASSERT_EQ(::mkdir(paths[k].c_str(), 0755), 0);
                write_text(paths[k] + "/blocker", "x");
            });
            FAIL() << "no error";
        } catch (const io::IoError& e) {
            EXPECT_NE(std::string(e.what()).find(paths[k]), std::string::npos) << e.what();
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (i == k) continue;
            if (old_inodes[i] == 0) {
                EXPECT_FALSE(exists(paths[i])) << paths[i];
                continue;
            }
            EXPECT_EQ(read_text(paths[i]), "old " + std::to_string(i));
            EXPECT_EQ(inode_of(paths[i]), old_inodes[i]);
            EXPECT_EQ(mode_of(paths[i]), 0640u);
        }
        std::set<std::string> a_after = a_before, b_after = b_before;
        (k % 2 ? b_after : a_after).insert("out" + std::to_string(k));  // the directory
        EXPECT_EQ(a.entries(), a_after);
        EXPECT_EQ(b.entries(), b_after);
    }
}

// A folder of the set removed before the commit: its file cannot be named there, which fails in the
// preparation, before any output appears.
TEST(OutputSet, AFailedPreparationLeavesEveryOutputAsItWas) {
    ScratchDir a, b;
    write_text(a / "out", "old out");
    ASSERT_EQ(::mkdir((b / "gone").c_str(), 0755), 0);
    Outputs outputs;
    outputs.add(a / "out", "new out");
    outputs.add(b / "v1", "new v1");
    outputs.add(b / "gone/index", "new index");
    std::filesystem::remove_all(b / "gone");
    try {
        outputs.commit(true);
        FAIL() << "no error";
    } catch (const io::IoError& e) {
        EXPECT_NE(std::string(e.what()).find(b / "gone/index"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_text(a / "out"), "old out");
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out"}));
    EXPECT_TRUE(b.entries().empty());
}

TEST(OutputSet, RefusesTheSameFileTwiceAndDirectories) {
    ScratchDir dir;
    const std::vector<std::string> twice{dir / "out", dir / "out"};
    EXPECT_THROW(io::check_distinct_outputs(twice), std::invalid_argument);
    const std::vector<std::string> dotted{dir / "out", dir / "./out"};
    EXPECT_THROW(io::check_distinct_outputs(dotted), std::invalid_argument);
    ASSERT_EQ(::symlink("out", (dir / "link").c_str()), 0);
    const std::vector<std::string> linked{dir / "link", dir / "out"};
    EXPECT_THROW(io::check_distinct_outputs(linked), std::invalid_argument);  // out not there yet
    write_text(dir / "out", "old");
    EXPECT_THROW(io::check_distinct_outputs(linked), std::invalid_argument);
    try {
        io::check_distinct_outputs(linked);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(dir / "link"), std::string::npos) << e.what();
    }
    const std::vector<std::string> folder{dir / "out", dir.path()};
    EXPECT_THROW(io::check_distinct_outputs(folder), io::IoError);
    const std::vector<std::string> distinct{dir / "out", dir / "other", dir / "third"};
    EXPECT_NO_THROW(io::check_distinct_outputs(distinct));

    // The same refusal at the commit: nothing appears.
    {
        Outputs outputs;
        outputs.add(dir / "new", "one");
        outputs.add(dir / "link", "two");
        outputs.add(dir / "./new", "three");
        EXPECT_THROW(outputs.commit(false), std::invalid_argument);
    }
    EXPECT_EQ(read_text(dir / "out"), "old");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"out", "link"}));
}
