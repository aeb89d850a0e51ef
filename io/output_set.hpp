// Outputs that come in sets (OUTPUT with its --values and --index-out files): commit_together()
// makes all of them appear, or none. Each is an AtomicOutputFile; what commit() promises for one
// holds for the set: an existing output is unchanged on failure and no hidden file is left.
//
// The commit goes in steps. Prepare: every file gets its permissions, its data flushed when asked,
// its writing descriptor closed and a hidden name in its folder; whatever can fail for an ordinary
// reason (a full disk, an I/O error, permissions) fails here, before any output appears. Back up:
// each file that is at an output's path already gets a second, hidden name, from which it can be
// restored. Place: the hidden names are renamed over their paths in order; where one rename
// fails, the outputs placed before it are undone (the old file moved back, or the new one
// removed) before the error is thrown. Last, the backups are removed.
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

// For tests: called before the rename of the output `index` (from 0), all of the set prepared.
using BeforePlacing = std::function<void(std::size_t index)>;

// Commits the written `files` together (see above); `sync` flushes their data and folders.
// Throws IoError naming the path and the cause; then no output of the set has changed.
void commit_together(std::span<AtomicOutputFile* const> files, bool sync,
                     const BeforePlacing& before_placing = {});

}  // namespace gpusort::io
