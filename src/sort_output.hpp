// SortOutput: where a sort puts its result, the output file and, when its space could be
// reserved, its memory map (written by several threads at once, at any offsets).
#pragma once

#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/parallel_io.hpp"
#include "src/host_buffer.hpp"

#include <cstdint>
#include <span>

namespace gpusort {

struct SortOutput {
    const io::File& file;
    const io::FileMapping* mapping = nullptr;

    std::byte* mapped() const { return mapping ? mapping->data() : nullptr; }
    void write(std::uint64_t offset, std::span<const std::byte> bytes) const {
        if (mapping)
            copy_parallel(mapping->data() + offset, bytes);
        else
            io::write_parallel(file, offset, bytes);
    }
};

}  // namespace gpusort
