// AtomicOutputFile: the output is written to a nameless file in OUTPUT's folder and appears at
// OUTPUT only in commit(), after every byte was written: linked there when nothing is at OUTPUT, else
// given a hidden name and renamed over it. Until then an existing OUTPUT is untouched; without
// commit() (an error, an exception, a kill) nothing is left, but for a hidden name that a SIGKILL
// at the wrong moment leaves: the next AtomicOutputFile in that folder removes it.
#pragma once

#include "io/file.hpp"
#include "io/signal_cleanup.hpp"

#include <string>

namespace gpusort::io {

// Where `path` leads once the symbolic links at its end are followed (to a file that need not
// exist yet): an OUTPUT that is a link has the file it points to replaced, the link stays.
std::string follow_links(const std::string& path);

// Makes the renames in `folder` durable by flushing the folder. Best effort: it runs after renames
// that a failure here cannot undo.
void flush_folder(const std::string& folder);

class AtomicOutputFile {
public:
    // Removes the hidden files that ended sorts left in the folder of `path` (those that no running
    // sort holds locked), then creates the hidden file next to `path`, or next to the file it leads
    // to when it is a symbolic link (followed to the end, to a file that need not exist yet: that
    // file is replaced or created, the link stays); fails at once when the folder is not writable.
    explicit AtomicOutputFile(const std::string& path);
    // The same, the file made at `hidden` (from hidden_name_for(path)), a name other processes knew
    // before it existed: they can open it there and write their parts of it, and remove it on a
    // signal whenever the process that makes it dies (gpusort-mpi). Throws IoError where something
    // is at that name already.
    AtomicOutputFile(const std::string& path, const std::string& hidden);
    // A fresh hidden name next to the file `path` leads to (nothing there when it was chosen).
    static std::string hidden_name_for(const std::string& path);
    AtomicOutputFile(const AtomicOutputFile&) = delete;
    AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
    ~AtomicOutputFile();

    const File& file() const { return file_; }
    File& file() { return file_; }  // to write it with direct I/O
    const std::string& path() const { return path_; }  // where the file goes: symbolic links followed
    const std::string& temp_path() const { return temp_name_; }  // its hidden name; empty while it has none

    // Gives the file its final permissions (those of the file it replaces, else 0666 less
    // the umask), flushes it to disk when `sync` is set, closes it and renames it to the path.
    void commit(bool sync);

    // The steps of commit(), which commit_together() (output_set.hpp) also takes, in this order
    // (named commit_*: the fault-injection log names a call site by its function, and tests look for
    // the commit's calls by that name).
    // commit_finish(): the final permissions, the data flushed when `sync`, the writing descriptor
    // closed (a second one keeps the file open, and locked, until it is placed). Throws IoError.
    void commit_finish(bool sync);
    // commit_hidden_name(): a finished file without a name is linked at a fresh hidden name in its
    // folder; one that has a name keeps it. With `wanted` (a name nothing is at, in the file's
    // folder), the file gets that name either way. Throws IoError.
    void commit_hidden_name(const std::string& wanted = {});
    // commit_place(): renames the hidden name over the path. Returns 0, or the errno of a rename that
    // failed (the hidden name then stays, for discard()).
    int commit_place();
    // discard(): unlinks the hidden name, if any: nothing of this file is left.
    void discard();

private:
    // Links the finished nameless file at the path, where nothing is there yet: true when done.
    bool link_at_path();

    std::string path_;
    std::string temp_name_;  // set when the file system has no O_TMPFILE and a name was needed
    UnlinkOnSignal temp_name_cleanup_;  // temp_name_, while it exists, for a signal that ends the program
    File file_;
    File held_;  // from commit_finish() until the file is placed: keeps it open and locked
    bool committed_ = false;
};

}  // namespace gpusort::io
