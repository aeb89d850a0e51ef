// Chooses the chunk sorter for --backend: the GPU engine when asked for or, with "auto", when
// this build has CUDA and a device is present and can be set up; the CPU sorter otherwise. With
// "auto", a device that is present but fails to set up is reported through options.notice.
#pragma once

#include "src/sorters/chunk_sorter.hpp"
#include "gpusort/sort_file.hpp"

#include <memory>

namespace gpusort {

// A sorter of whole-record keys of options.order, or of records with `record_spec` when that is
// given. Throws SortError when the GPU is asked for and cannot be used (saying why).
std::unique_ptr<ChunkSorter> make_chunk_sorter(const SortOptions& options, const KeySpec* record_spec,
                                               unsigned threads);

}  // namespace gpusort
