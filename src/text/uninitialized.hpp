// A vector whose new elements are left as they are (resize() writes nothing), its large blocks
// mapped with huge pages asked for (io::map_memory): the line ends of a chunk and its entries are
// written in parallel just after they are made, and a serial fill of zeros first, or a fault per
// 4 KiB page, would take as long as the work itself.
#pragma once

#include "io/host_buffer.hpp"

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace gpusort {

template <class T>
struct UninitializedAllocator {
    using value_type = T;
    // Blocks of this many bytes or more are mapped.
    static constexpr std::size_t kMappedBytes = std::size_t{1} << 20;

    UninitializedAllocator() = default;
    template <class U>
    UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n * sizeof(T) >= kMappedBytes) return reinterpret_cast<T*>(io::map_memory(n * sizeof(T)));
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) >= kMappedBytes) return io::unmap_memory(reinterpret_cast<std::byte*>(p), n * sizeof(T));
        std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialised: nothing written for numbers
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    template <class U>
    bool operator==(const UninitializedAllocator<U>&) const noexcept {
        return true;
    }
};

template <class T>
using UninitializedVector = std::vector<T, UninitializedAllocator<T>>;

}  // namespace gpusort
