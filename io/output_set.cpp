// commit_together: a journal of the set, every file prepared, the files it replaces kept under
// hidden names, the renames in order and undone on a failure. roll_back_ended_sets: the journals
// that killed sets left, undone. check_distinct_outputs: the refusals callers make up front.
//
// A journal is a small file: the line "gpusort output set", a state byte ('-' while the set is
// being placed, '+' once every output is placed), a newline, then for each output five fields,
// each ended by a NUL byte: its path, the hidden name of its new file, the hidden name of its
// backup (all absolute), and the device and inode numbers of its new file (in decimal).
#include "io/output_set.hpp"

#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"
#include "io/syscalls.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <stdexcept>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gpusort::io {

namespace {

// The hidden names of a set: its journal ".gpusort-set-ID" and its files ".gpusort-set-ID.newK"
// and ".gpusort-set-ID.oldK". remove_leftovers() of AtomicOutputFile leaves them to the journal: a
// backup may be the only copy of an old output.
constexpr char kSetPrefix[] = ".gpusort-set-";
constexpr std::string_view kJournalMagic = "gpusort output set\n";
constexpr char kPlacing = '-', kPlaced = '+';

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

// `path`'s folder as an absolute path without links, and its name in it: how a journal names it,
// for a process whose working folder may be another.
std::string absolute(const std::string& path) {
    char resolved[PATH_MAX];
    if (!::realpath(parent_folder(path).c_str(), resolved)) throw_errno("cannot write", path, errno);
    const auto slash = path.find_last_of('/');
    return std::string(resolved) + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
}

// One output of the set on its way to its path.
struct Member {
    AtomicOutputFile* file = nullptr;
    FileId id;             // of the new file
    std::string new_name;  // the hidden name the new file is renamed from
    std::string backup;    // the hidden name of the file it replaces
    bool backed_up = false;
    bool placed = false;
};

bool names(const std::string& path, const FileId& id) {
    FileId there;
    return file_id(path, there) && there == id;
}

// The journal of a set this process places: created, and locked (flock) until it is closed, so
// that a sort that finds it can tell it from the journal of a set whose process has ended.
class Journal {
public:
    // Creates it in the folder of `first` (the first output, which errors name).
    explicit Journal(const std::string& first);
    ~Journal() {
        if (remove_) ::unlink(name_.c_str());
    }
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;

    // ".gpusort-set-ID", absolute: the set's files are named after it.
    const std::string& name() const { return name_; }
    void write(const std::vector<Member>& members, bool sync);
    // From here on a signal leaves the journal for the next sort to roll back with.
    void keep_on_signal() { cleanup_.release(); }
    void mark_placed(bool sync);
    // The journal stays (a set whose undo failed): the next sort in its folder tries again.
    void keep() { remove_ = false; }

private:
    std::string name_;
    File file_;
    UnlinkOnSignal cleanup_;
    bool remove_ = true;
};

Journal::Journal(const std::string& first) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    const std::string folder = parent_folder(absolute(first));
    for (int attempt = 0;; ++attempt) {
        std::string name = folder + "/" + kSetPrefix;
        for (int i = 0; i < 12; ++i) name += digits[rng() % 36];
        int fd = -1, err = 0;
        {
            HoldCleanupSignals hold;
            fd = sys::retry_interrupted(
                [&] { return sys::open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600); });
            err = errno;
            if (fd >= 0) cleanup_ = UnlinkOnSignal(name);
        }
        if (fd < 0 && err == EEXIST && attempt < 100) continue;
        if (fd < 0) throw_errno("cannot write", first, err);
        file_ = File(fd, first);
        // Named before it is locked: another sort may have rolled it back (removed it) in between.
        ::flock(fd, LOCK_EX);
        if (names(name, file_.id())) {
            name_ = std::move(name);
            return;
        }
        cleanup_.release();
    }
}

void Journal::write(const std::vector<Member>& members, bool sync) {
    std::string text(kJournalMagic);
    text += kPlacing;
    text += '\n';
    for (const Member& m : members)
        for (const std::string& field : {absolute(m.file->path()), m.new_name, m.backup, std::to_string(m.id.device),
                                         std::to_string(m.id.inode)})
            text += field + '\0';
    file_.write_at(0, std::as_bytes(std::span(text.data(), text.size())));
    if (sync) {
        file_.sync_data();
        flush_folder(parent_folder(name_));
    }
}

void Journal::mark_placed(bool sync) {
    const char placed = kPlaced;
    file_.write_at(kJournalMagic.size(), std::as_bytes(std::span(&placed, 1)));
    if (sync) file_.sync_data();
}

// Every file finished and given its hidden name; on a failure, every hidden name removed.
void prepare(std::vector<Member>& members, bool sync) {
    try {
        for (Member& m : members) {
            m.file->commit_finish(sync);
            m.file->commit_hidden_name(m.new_name);
        }
    } catch (...) {
        for (Member& m : members) m.file->discard();
        throw;
    }
}

// A second name for each file that an output replaces, from which it can be restored.
void back_up(std::vector<Member>& members) {
    for (Member& m : members) {
        const std::string& path = m.file->path();
        if (sys::linkat(AT_FDCWD, path.c_str(), AT_FDCWD, m.backup.c_str(), 0) == 0) {
            m.backed_up = true;
        } else if (errno != ENOENT) {  // ENOENT: nothing to replace
            const int err = errno;
            for (Member& other : members) {
                if (other.backed_up) ::unlink(other.backup.c_str());
                other.file->discard();
            }
            throw_errno("cannot keep the old file at", path, err);
        }
    }
}

// Puts back what was at each path before the set was placed: the backups over the outputs placed,
// the new files removed elsewhere. Returns false where a backup could not be moved back: it stays,
// the only copy of its old output, with the journal that names it.
bool undo(std::vector<Member>& members) {
    bool undone = true;
    for (Member& m : members) {
        const std::string& path = m.file->path();
        if (!m.placed) {
            m.file->discard();
            if (m.backed_up) ::unlink(m.backup.c_str());  // the old file is still at the path
        } else if (m.backed_up) {
            undone = sys::rename(m.backup.c_str(), path.c_str()) == 0 && undone;
        } else if (names(path, m.id)) {
            ::unlink(path.c_str());
        }
    }
    return undone;
}

void flush_folders(const std::vector<Member>& members) {
    std::vector<std::string> folders;
    for (const Member& m : members) folders.push_back(parent_folder(m.file->path()));
    std::sort(folders.begin(), folders.end());
    folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
    for (const std::string& folder : folders) flush_folder(folder);
}

// Renames every output into place (see BeforePlacing for `before_placing`), then marks the journal;
// where a step fails, undoes the set and throws.
void place(std::vector<Member>& members, Journal& journal, bool sync, const BeforePlacing& before_placing) {
    std::size_t k = 0;
    try {
        for (; k < members.size(); ++k) {
            if (before_placing) before_placing(k);
            if (const int err = members[k].file->commit_place(); err != 0)
                throw_errno("cannot move the finished output to", members[k].file->path(), err);
            members[k].placed = true;
        }
        if (before_placing) before_placing(k);
        if (sync) flush_folders(members);
        journal.mark_placed(sync);
        if (before_placing) before_placing(k + 1);
    } catch (...) {
        if (!undo(members)) journal.keep();
        if (sync) flush_folders(members);
        throw;
    }
}

// One entry of a journal, as it names its files.
struct Entry {
    std::string path, new_name, backup;
    FileId id;
};

// The entries of a journal's `text`; false where it is not a journal. A journal cut short (its
// process killed as it made or wrote it) has no file of its set named yet: it has no entries.
bool read_entries(const std::string& text, bool& placed, std::vector<Entry>& entries) {
    if (kJournalMagic.substr(0, text.size()) != std::string_view(text).substr(0, kJournalMagic.size())) return false;
    if (text.size() < kJournalMagic.size() + 2) return true;
    placed = text[kJournalMagic.size()] == kPlaced;
    std::vector<std::string> fields;
    for (std::size_t at = kJournalMagic.size() + 2, end; (end = text.find('\0', at)) != std::string::npos; at = end + 1)
        fields.push_back(text.substr(at, end - at));
    for (std::size_t i = 0; i + 5 <= fields.size(); i += 5)
        entries.push_back({fields[i], fields[i + 1], fields[i + 2],
                           FileId{std::strtoull(fields[i + 3].c_str(), nullptr, 10),
                                  std::strtoull(fields[i + 4].c_str(), nullptr, 10)}});
    return true;
}

// Undoes one output of a set whose process ended before the set was placed. An output that holds
// something else than the set's new file (the old file, or a later sort's) is left as it is.
bool roll_back(const Entry& e) {
    struct stat st {};
    const bool placed = names(e.path, e.id);
    bool done = true;
    if (::lstat(e.backup.c_str(), &st) == 0) {
        done = placed ? ::rename(e.backup.c_str(), e.path.c_str()) == 0 : ::unlink(e.backup.c_str()) == 0;
    } else if (placed) {
        done = ::unlink(e.path.c_str()) == 0;
    }
    ::unlink(e.new_name.c_str());
    return done;
}

// Processes the journal `name` open as `fd` (locked): a set that was placed loses its backups,
// one that was not is rolled back. The journal goes once its set is done with.
void process_journal(const std::string& name, int fd) {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    bool placed = false, done = true;
    std::vector<Entry> entries;
    if (!read_entries(text, placed, entries)) return;  // not a journal: left alone
    for (const Entry& e : entries) {
        if (placed) {
            ::unlink(e.backup.c_str());
            ::unlink(e.new_name.c_str());
        } else {
            done = roll_back(e) && done;
        }
    }
    if (done) ::unlink(name.c_str());
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

namespace {

// The set's outputs, their files named after the journal's ID in their own folders.
std::vector<Member> members_of(std::span<AtomicOutputFile* const> files, const Journal& journal) {
    const std::string id = journal.name().substr(journal.name().find_last_of('/') + 1);
    std::vector<Member> members(files.size());
    for (std::size_t k = 0; k < files.size(); ++k) {
        Member& m = members[k];
        m.file = files[k];
        m.id = m.file->file().id();
        const std::string folder = parent_folder(absolute(m.file->path()));
        m.new_name = folder + "/" + id + ".new" + std::to_string(k);
        m.backup = folder + "/" + id + ".old" + std::to_string(k);
    }
    return members;
}

}  // namespace

void commit_together(std::span<AtomicOutputFile* const> files, bool sync, const BeforePlacing& before_placing) {
    std::vector<std::string> paths;
    for (AtomicOutputFile* file : files) paths.push_back(file->path());
    check_distinct_outputs(paths);
    if (files.empty()) return;
    try {
        Journal journal(paths.front());
        std::vector<Member> members = members_of(files, journal);
        journal.write(members, sync);
        prepare(members, sync);
        // A cleanup signal waits until the set is placed or undone; one that comes anyway (after its
        // wait) leaves the journal for the next sort, as a SIGKILL would.
        HoldCleanupSignals hold;
        journal.keep_on_signal();
        back_up(members);
        place(members, journal, sync, before_placing);
        for (const Member& m : members)
            if (m.backed_up) ::unlink(m.backup.c_str());
    } catch (...) {
        for (AtomicOutputFile* file : files) file->discard();
        throw;
    }
}

void roll_back_ended_sets(const std::string& folder) {
    DIR* dir = ::opendir(folder.c_str());
    if (!dir) return;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view base(entry->d_name);
        // A journal: the prefix and an ID, no ".newK" or ".oldK" after it.
        if (base.rfind(kSetPrefix, 0) != 0 || base.find('.', std::string_view(kSetPrefix).size()) != base.npos)
            continue;
        const std::string name = folder + "/" + entry->d_name;
        const int fd = ::open(name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            names(name, FileId{st.st_dev, st.st_ino}))
            process_journal(name, fd);
        ::close(fd);
    }
    ::closedir(dir);
}

}  // namespace gpusort::io
