// Linked into every program and test of a ThreadSanitizer build (GPUSORT_SANITIZE=thread): keeps
// TBB to one thread. Debian's libtbb is not built with ThreadSanitizer, so the order it puts
// between spawning a task and running it on a worker thread is invisible, and every byte such a
// task touches would be reported as a race (and so many reports take hours). With one thread,
// TBB's tasks run on the thread that waits for them, and ThreadSanitizer checks everything else:
// our own threads (stream reader and writer, run formation, progress line, IPS4o's thread pool,
// signal handling) against each other and against the code that TBB runs.
#include <tbb/global_control.h>

namespace {

// Of several limits of this kind the smallest applies, so the programs' own (--threads) cannot
// lift this one.
const tbb::global_control one_tbb_thread(tbb::global_control::max_allowed_parallelism, 1);

}  // namespace
