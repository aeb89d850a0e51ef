// The CPU chunk sorter of records (--record-size, --key, --format gensort, --unique): each chunk
// is read into host memory once; (key words, index) tags are built and sorted with IPS4o, which
// orders equal keys by index, so the sort is stable; the records are then gathered in sorted
// order, piece by piece, straight into the buffer handed to the writer. A record is copied
// once on its way from the read buffer to the output.
#pragma once

#include "src/sorters/chunk_sorter.hpp"
#include "gpusort/key_spec.hpp"

#include <functional>
#include <memory>
#include <string>

namespace gpusort {

// sort_chunk gives the sorted records; sort_run gives run entries (key words, then the record:
// record_layout.hpp). Throws std::invalid_argument for an invalid spec.
std::unique_ptr<ChunkSorter> make_cpu_record_sorter(const KeySpec& spec, unsigned threads,
                                                    const std::function<void(const std::string&)>& notice = {});

}  // namespace gpusort
