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
#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

// Outputs made and written, to be committed together.
class Outputs {
public:
    // `hidden`: the file made at a hidden name chosen beforehand (it has a name from the start,
    // as where the file system has no O_TMPFILE).
    void add(const std::string& path, const std::string& text, bool hidden = false) {
        if (hidden)
            files_.push_back(std::make_unique<io::AtomicOutputFile>(path, io::AtomicOutputFile::hidden_name_for(path)));
        else
            files_.push_back(std::make_unique<io::AtomicOutputFile>(path));
        files_.back()->file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
    }
    const io::AtomicOutputFile& operator[](std::size_t i) const { return *files_[i]; }
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
        outputs.add(b / "values", "sorted values", true);
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

// A file that already has its hidden name loses it before the commit (another process removed it):
// the set fails as it is prepared, the outputs named before it lose their hidden names, and nothing
// appears.
TEST(OutputSet, AFileLostBeforeTheCommitFailsThePreparation) {
    ScratchDir a, b;
    write_text(a / "out", "old out");
    Outputs outputs;
    outputs.add(a / "out", "new out");
    outputs.add(a / "v1", "new v1", true);
    outputs.add(b / "index", "new index", true);
    ASSERT_EQ(::unlink(outputs[2].temp_path().c_str()), 0);
    try {
        outputs.commit(false);
        FAIL() << "no error";
    } catch (const io::IoError& e) {
        EXPECT_NE(std::string(e.what()).find(b / "index"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_text(a / "out"), "old out");
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out"}));
    EXPECT_TRUE(b.entries().empty());
}

namespace {

// The set of `paths` ("new I" into each) committed by a child process that is killed (SIGKILL)
// just before rename `k` (see io::BeforePlacing for k >= paths.size()); true when it died so.
bool killed_while_placing(const std::vector<std::string>& paths, std::size_t k) {
    const pid_t child = ::fork();
    if (child == 0) {
        try {
            Outputs outputs;
            for (std::size_t i = 0; i < paths.size(); ++i) outputs.add(paths[i], "new " + std::to_string(i), i == 2);
            outputs.commit(true, [&](std::size_t index) {
                if (index == k) ::raise(SIGKILL);
            });
        } catch (...) {
        }
        ::_exit(1);
    }
    int status = 0;
    return ::waitpid(child, &status, 0) == child && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

// The hidden journal a set leaves in `dir`, where there is one.
bool has_journal(const ScratchDir& dir) {
    for (const std::string& name : dir.entries())
        if (name.rfind(".gpusort-set-", 0) == 0 && name.find('.', 1) == std::string::npos) return true;
    return false;
}

}  // namespace

// A set whose process is killed between its renames (or before the first, or after the last) is
// left half placed, with its journal in the folder of its first output; the next output made in
// that folder rolls it back: the old outputs as they were (the same files), the new ones gone, no
// hidden file left in either folder.
TEST(OutputSet, AKilledSetIsRolledBackByTheNextOutputInTheJournalsFolder) {
    constexpr std::size_t n = 4;
    for (std::size_t k = 0; k <= n; ++k) {
        SCOPED_TRACE("killed before rename " + std::to_string(k));
        ScratchDir a, b;
        std::vector<std::string> paths;
        std::vector<ino_t> old_inodes;
        for (std::size_t i = 0; i < n; ++i) {
            paths.push_back((i % 2 ? b : a) / ("out" + std::to_string(i)));
            if (i == 0 || i == 3) write_text(paths[i], "old " + std::to_string(i));
            old_inodes.push_back(inode_of(paths[i]));
        }
        const std::set<std::string> a_before = a.entries(), b_before = b.entries();
        ASSERT_TRUE(killed_while_placing(paths, k));
        EXPECT_TRUE(has_journal(a));
        for (std::size_t i = 0; i < k; ++i) EXPECT_EQ(read_text(paths[i]), "new " + std::to_string(i));  // placed

        { io::AtomicOutputFile next(a / "next"); }
        for (std::size_t i = 0; i < n; ++i) {
            if (old_inodes[i] == 0) {
                EXPECT_FALSE(exists(paths[i])) << paths[i];
                continue;
            }
            EXPECT_EQ(read_text(paths[i]), "old " + std::to_string(i));
            EXPECT_EQ(inode_of(paths[i]), old_inodes[i]);
        }
        EXPECT_EQ(a.entries(), a_before);
        EXPECT_EQ(b.entries(), b_before);
    }
}

// A set whose process is killed once the set is placed and its journal marked so, before its
// backups are removed: the next output in the journal's folder removes the backups and the
// journal, and the set stays placed.
TEST(OutputSet, AKilledSetThatWasPlacedStaysPlaced) {
    ScratchDir a, b;
    const std::vector<std::string> paths{a / "out0", b / "out1", a / "out2", b / "out3"};
    write_text(paths[0], "old 0");
    write_text(paths[3], "old 3");
    ASSERT_TRUE(killed_while_placing(paths, paths.size() + 1));
    EXPECT_TRUE(has_journal(a));
    EXPECT_GT(b.entries().size(), 2u);  // the backup of out3
    { io::AtomicOutputFile next(a / "next"); }
    for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(read_text(paths[i]), "new " + std::to_string(i));
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out0", "out2"}));
    EXPECT_EQ(b.entries(), (std::set<std::string>{"out1", "out3"}));
}

// Until the roll back, a later sort may replace an output of the killed set in another folder
// (where no journal is): the roll back leaves that output as the later sort made it.
TEST(OutputSet, TheRollBackLeavesAnOutputThatALaterSortReplaced) {
    ScratchDir a, b;
    const std::vector<std::string> paths{a / "out0", b / "out1", a / "out2", b / "out3"};
    write_text(paths[0], "old 0");
    write_text(paths[3], "old 3");
    ASSERT_TRUE(killed_while_placing(paths, paths.size()));
    {
        io::AtomicOutputFile later(paths[3]);
        const std::string text = "later";
        later.file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
        later.commit(false);
    }
    EXPECT_TRUE(has_journal(a));  // a folder without the journal rolls nothing back
    { io::AtomicOutputFile next(a / "next"); }
    EXPECT_EQ(read_text(paths[0]), "old 0");
    EXPECT_FALSE(exists(paths[1]));
    EXPECT_FALSE(exists(paths[2]));
    EXPECT_EQ(read_text(paths[3]), "later");
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out0"}));
    EXPECT_EQ(b.entries(), (std::set<std::string>{"out3"}));
}

// An output made in the journal's folder while the set is being placed (here between its renames,
// in the same process) leaves the set alone: its journal is locked.
TEST(OutputSet, ASetBeingPlacedIsNotRolledBack) {
    ScratchDir a, b;
    write_text(a / "out0", "old 0");
    {
        Outputs outputs;
        outputs.add(a / "out0", "new 0");
        outputs.add(b / "out1", "new 1");
        outputs.add(a / "out2", "new 2");
        outputs.commit(false, [&](std::size_t index) {
            if (index == 1) io::AtomicOutputFile meanwhile(a / "meanwhile");
        });
    }
    EXPECT_EQ(read_text(a / "out0"), "new 0");
    EXPECT_EQ(read_text(b / "out1"), "new 1");
    EXPECT_EQ(read_text(a / "out2"), "new 2");
    EXPECT_EQ(a.entries(), (std::set<std::string>{"out0", "out2"}));
    EXPECT_EQ(b.entries(), (std::set<std::string>{"out1"}));
}

// A journal that a set's process was killed making (empty, or cut short) goes with the next output
// in its folder; a file that only looks like one by its name stays.
TEST(OutputSet, AJournalCutShortIsRemovedAndAFileThatIsNoneStays) {
    ScratchDir dir;
    write_text(dir / ".gpusort-set-a1b2c3d4e5f6", "");
    write_text(dir / ".gpusort-set-f6e5d4c3b2a1", "gpusort out");
    write_text(dir / ".gpusort-set-notajournal", "not ours");
    { io::AtomicOutputFile next(dir / "next"); }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{".gpusort-set-notajournal"}));
    EXPECT_EQ(read_text(dir / ".gpusort-set-notajournal"), "not ours");
}
