// make_chunk_sorter: backend choice; the GPU part is compiled only when the GPU layer is built.
#include "src/make_chunk_sorter.hpp"

#include "src/cpu_chunk_sorter.hpp"

#ifdef GPUSORT_WITH_GPU
#include "gpu/device.hpp"
#include "src/gpu_chunk_sorter.hpp"
#endif

namespace gpusort {

std::unique_ptr<ChunkSorter> make_chunk_sorter(const SortOptions& options, unsigned threads) {
    if (options.backend == Backend::cpu) return std::make_unique<CpuChunkSorter>(options.order, threads);
#ifdef GPUSORT_WITH_GPU
    const int devices = gpu::device_count();
    if (devices > 0) {
        if (options.device < 0 || options.device >= devices)
            throw SortError("--device " + std::to_string(options.device) + ": there are " + std::to_string(devices) +
                            " GPUs (0 to " + std::to_string(devices - 1) + ")");
        return std::make_unique<GpuChunkSorter>(options.order, options.device, options.device_memory_bytes);
    }
    if (options.backend == Backend::gpu) throw SortError("no usable GPU: " + gpu::device_unavailable_reason());
#else
    if (options.backend == Backend::gpu)
        throw SortError("this gpusort-file was built without CUDA, so it cannot use a GPU; use --backend cpu");
#endif
    return std::make_unique<CpuChunkSorter>(options.order, threads);
}

}  // namespace gpusort
