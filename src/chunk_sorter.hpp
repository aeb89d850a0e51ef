// ChunkSorter: the one interface through which the core sorts a chunk of normalised keys in
// memory. Implementations: the CPU sorter (parallel in-memory sort) and, where CUDA is built
// and a device is present, the GPU engine. Both must give identical results.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpusort {

class ChunkSorter {
public:
    virtual ~ChunkSorter() = default;
    // "cpu", or the GPU's name.
    virtual std::string name() const = 0;
    // Sorts ascending by unsigned value, in place.
    virtual void sort(std::span<std::uint8_t> keys) = 0;
    virtual void sort(std::span<std::uint16_t> keys) = 0;
    virtual void sort(std::span<std::uint32_t> keys) = 0;
    virtual void sort(std::span<std::uint64_t> keys) = 0;
};

}  // namespace gpusort
