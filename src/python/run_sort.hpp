// How every sort is run from Python: on a worker thread with the GIL released, so that other
// Python threads go on, while the calling thread waits, holding the GIL only for moments to look
// for Ctrl-C and to call the progress callback. Ctrl-C (or an exception raised by a callback)
// cancels the sort (ProgressCounters::cancel()), which then ends as a failed sort ends: no
// output, existing outputs unchanged, no temp files; the exception is raised once it has.
#pragma once

#include "gpusort/progress.hpp"
#include "gpusort/sort_file.hpp"

#include <pybind11/pybind11.h>

#include <functional>
#include <string>

namespace gpusort::python {

// What run_sort gives the sort to put in its options: the counters it must update (they carry
// the cancel), and where its notices go (they reach Python from the waiting thread).
struct SortHooks {
    ProgressCounters* progress = nullptr;
    std::function<void(const std::string&)> notice;
};

// Runs `sort` on a worker thread and returns its report, or raises what it threw (translated by
// bind_errors). `progress` (None, or callable(phase: str, done: int, total: int), total 0 where
// unknown) is called about 5 times a second while the sort runs and once at its end, as
// ("done", input bytes, input bytes); `notice` (None, or callable(str)) gets each notice. Both
// are called from the calling thread, with the GIL.
SortReport run_sort(const std::function<SortReport(const SortHooks&)>& sort, const pybind11::object& progress,
                    const pybind11::object& notice);

}  // namespace gpusort::python
