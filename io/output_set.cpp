// commit_together: every file prepared, the files it replaces kept under hidden names, the renames
// in order and undone on a failure. check_distinct_outputs: the refusals callers make up front.
#include "io/output_set.hpp"

#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"
#include "io/syscalls.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpusort::io {

namespace {

// The hidden names of a set's backups. remove_leftovers() of AtomicOutputFile leaves them alone:
// a backup may be the only copy of an old output.
constexpr char kSetPrefix[] = ".gpusort-set-";

std::string random_set_name(const std::string& folder) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string name = folder + "/" + kSetPrefix;
    for (int i = 0; i < 12; ++i) name += digits[rng() % 36];
    return name;
}

// What an output names: the file itself where one exists, else its folder and the name in it.
struct OutputIdentity {
    FileId file;
    std::string name;  // empty where the file exists
    bool operator==(const OutputIdentity&) const = default;
};

OutputIdentity identify(const std::string& followed) {
    struct stat st {};
    if (::stat(followed.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) throw IoError("cannot write '" + followed + "': it is a directory");
        return {FileId{st.st_dev, st.st_ino}, {}};
    }
    const auto slash = followed.find_last_of('/');
    const std::string name = slash == std::string::npos ? followed : followed.substr(slash + 1);
    if (::stat(parent_folder(followed).c_str(), &st) != 0) return {FileId{}, followed};  // fails later
    return {FileId{st.st_dev, st.st_ino}, name};
}

// One output of the set on its way to its path.
struct Member {
    AtomicOutputFile* file = nullptr;
    FileId id;           // of the new file, once it has its hidden name
    std::string backup;  // the hidden name of the file it replaces; empty where there is none
    bool placed = false;
};

// Every file finished and given its hidden name; on a failure, every hidden name removed.
void prepare(std::vector<Member>& members, bool sync) {
    try {
        for (Member& m : members) {
            m.file->commit_finish(sync);
            m.file->commit_hidden_name();
            if (!file_id(m.file->temp_path(), m.id)) throw_errno("cannot write", m.file->path(), errno);
        }
    } catch (...) {
        for (Member& m : members) m.file->discard();
        throw;
    }
}

// Removes the backups that are still there (their old files are at their paths).
void remove_backups(std::vector<Member>& members) {
    for (Member& m : members)
        if (!m.backup.empty()) ::unlink(m.backup.c_str());
}

// A second name for each file that an output replaces, from which it can be restored.
void back_up(std::vector<Member>& members) {
    for (Member& m : members) {
        const std::string& path = m.file->path();
        for (int attempt = 0;; ++attempt) {
            std::string name = random_set_name(parent_folder(path));
            if (sys::linkat(AT_FDCWD, path.c_str(), AT_FDCWD, name.c_str(), 0) == 0) {
                m.backup = std::move(name);
                break;
            }
            const int err = errno;
            if (err == ENOENT) break;  // nothing to replace
            if (err == EEXIST && attempt < 100) continue;
            remove_backups(members);
            for (Member& other : members) other.file->discard();
            throw_errno("cannot keep the old file at", path, err);
        }
    }
}

// Puts back what was at each path before the set was placed: the backups over the outputs placed,
// the new files removed elsewhere. Best effort: a backup that cannot be moved back stays, the only
// copy of its old output.
void undo(std::vector<Member>& members) {
    for (Member& m : members) {
        const std::string& path = m.file->path();
        if (!m.placed) {
            m.file->discard();
            if (!m.backup.empty()) ::unlink(m.backup.c_str());  // the old file is still at the path
        } else if (!m.backup.empty()) {
            sys::rename(m.backup.c_str(), path.c_str());
        } else {
            FileId there;
            if (file_id(path, there) && there == m.id) ::unlink(path.c_str());
        }
        m.placed = false;
        m.backup.clear();
    }
}

void flush_folders(const std::vector<Member>& members) {
    std::vector<std::string> folders;
    for (const Member& m : members) folders.push_back(parent_folder(m.file->path()));
    std::sort(folders.begin(), folders.end());
    folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
    for (const std::string& folder : folders) flush_folder(folder);
}

}  // namespace

void check_distinct_outputs(std::span<const std::string> paths) {
    std::vector<OutputIdentity> seen;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        seen.push_back(identify(follow_links(paths[i])));
        for (std::size_t j = 0; j < i; ++j)
            if (seen[j] == seen[i])
                throw std::invalid_argument("outputs '" + paths[j] + "' and '" + paths[i] + "' are the same file");
    }
}

void commit_together(std::span<AtomicOutputFile* const> files, bool sync, const BeforePlacing& before_placing) {
    std::vector<std::string> paths;
    std::vector<Member> members;
    for (AtomicOutputFile* file : files) {
        paths.push_back(file->path());
        members.emplace_back().file = file;
    }
    check_distinct_outputs(paths);
    prepare(members, sync);
    // A cleanup signal waits until the set is placed or undone: a backup may be the only copy of
    // an old output, and is not one of the names a signal removes.
    HoldCleanupSignals hold;
    back_up(members);
    for (std::size_t k = 0; k < members.size(); ++k) {
        if (before_placing) before_placing(k);
        const int err = members[k].file->commit_place();
        if (err == 0) {
            members[k].placed = true;
            continue;
        }
        undo(members);
        if (sync) flush_folders(members);
        throw_errno("cannot move the finished output to", paths[k], err);
    }
    if (sync) flush_folders(members);
    remove_backups(members);
}

}  // namespace gpusort::io
