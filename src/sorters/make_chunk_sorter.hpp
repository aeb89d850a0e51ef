// Chooses the chunk sorter for --backend: the GPU engine when asked for or, with "auto", when
// this build has CUDA and a device is present and can be set up; the CPU sorter otherwise. With
// "auto", a device that is present but fails to set up is reported through choice.notice.
#pragma once

#include "src/sorters/chunk_sorter.hpp"
#include "gpusort/sort_file.hpp"

#include <functional>
#include <memory>
#include <string>
#include <variant>

namespace gpusort {

// Which sorter, and what it may use.
struct SorterChoice {
    Backend backend = Backend::automatic;
    int device = 0;        // the GPU (--device)
    unsigned threads = 1;  // the host threads of a CPU sorter
    // Hears, with "auto", that a GPU is present but cannot be used, so the CPU sorts (optional).
    std::function<void(const std::string&)> notice;
};

// What a chunk holds: whole-record keys of one type and order, or records with a key spec.
using ChunkKey = std::variant<KeyOrder, KeySpec>;

// Throws SortError when the GPU is asked for and cannot be used (saying why). `why`, when given, is
// set to the reason for the choice, as the summary of a sort shows it: "--backend cpu", "a GPU was
// found", "no usable GPU: ...", "the GPU cannot be used: ...", "built without CUDA".
std::unique_ptr<ChunkSorter> make_chunk_sorter(const SorterChoice& choice, const ChunkKey& key, std::string* why = nullptr);

}  // namespace gpusort
