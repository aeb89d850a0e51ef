// Outputs that come in sets (OUTPUT with its --values and --index-out files): commit_together()
// makes all of them appear, or none. Each is an AtomicOutputFile; what commit() promises for one
// holds for the set: an existing output is unchanged on failure and no hidden file is left.
//
// The commit goes in steps. Journal: a small hidden file in the folder of the first output,
// ".gpusort-set-ID", lists for each output its path, the hidden name its new file will have and
// the hidden name of a backup of the file it replaces; the committing process holds it locked
// (flock). Prepare: every file gets its permissions, its data flushed when asked, its writing
// descriptor closed and its hidden name; whatever can fail for an ordinary reason (a full disk,
// an I/O error, permissions) fails here, before any output appears. Back up: each file that is at
// an output's path already gets its backup name too (a hard link), from which it can be restored.
// Place: the hidden names are renamed over their paths in order; where one rename fails, the
// outputs placed before it are undone (the old file moved back, or the new one removed) before
// the error is thrown. Last, the journal is marked placed, the backups are removed, then the
// journal. With `sync`, the data, the journal and the folders are flushed on the way.
//
// A process killed (SIGKILL, a crash) between the first rename and the last leaves a set half
// placed, and its journal unlocked. The next AtomicOutputFile made in the journal's folder rolls
// the set back (roll_back_ended_sets) before anything else: each backup moved back over its path,
// each new file that is at its path removed, the hidden names and the journal removed. Until then
// (the one window that remains) the outputs placed before the kill are at their paths, the files
// they replaced under hidden names; an output made meanwhile in another folder of the set (a
// later sort's) is left as it is, its backup removed. A process killed before the first rename
// leaves every output as it was and the same journal to clean up; one killed after the last
// leaves the set placed, and a journal that only has its backups removed.
#pragma once

#include "io/atomic_output_file.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string>

namespace gpusort::io {

// Refuses outputs that cannot be written together, before anything is written: an output that is
// a directory (IoError), two outputs that are the same file once symbolic links are followed
// (std::invalid_argument). One-line messages naming the paths.
void check_distinct_outputs(std::span<const std::string> paths);

// For tests: called before the rename of output `index` (from 0), every output prepared and
// backed up; then with index == the number of outputs N once all are placed, and N + 1 once the
// journal is marked placed (the backups not yet removed). It may end the process there, as a kill
// would.
using BeforePlacing = std::function<void(std::size_t index)>;

// Commits the written `files` together (see above); `sync` flushes their data and folders.
// Throws IoError naming the path and the cause (std::invalid_argument where
// check_distinct_outputs refuses them); then no output of the set has changed.
void commit_together(std::span<AtomicOutputFile* const> files, bool sync,
                     const BeforePlacing& before_placing = {});

// Rolls back the sets whose journals are in `folder` and whose processes have ended (their journal
// can be locked), or finishes removing the backups of those that were placed. Best effort, with
// the plain calls: nothing here fails. AtomicOutputFile runs it in its folder.
void roll_back_ended_sets(const std::string& folder);

}  // namespace gpusort::io
