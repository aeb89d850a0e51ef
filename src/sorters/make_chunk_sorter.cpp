// make_chunk_sorter: backend choice; the GPU part is compiled only when the GPU layer is built.
#include "src/sorters/make_chunk_sorter.hpp"

#include "src/sorters/cpu_chunk_sorter.hpp"
#include "src/sorters/cpu_record_sorter.hpp"

#ifdef GPUSORT_WITH_GPU
#include "gpu/device.hpp"
#include "gpu/gpu_error.hpp"
#include "src/sorters/gpu_chunk_sorter.hpp"
#endif

namespace gpusort {

std::unique_ptr<ChunkSorter> make_chunk_sorter(const SorterChoice& choice, const ChunkKey& key, std::string* why) {
    auto because = [why](std::string reason) {
        if (why) *why = std::move(reason);
    };
    const KeySpec* records = std::get_if<KeySpec>(&key);
    auto cpu_sorter = [&]() -> std::unique_ptr<ChunkSorter> {
        if (records) return make_cpu_record_sorter(*records, choice.threads, choice.notice);
        return std::make_unique<CpuChunkSorter>(std::get<KeyOrder>(key), choice.threads, choice.notice);
    };
    if (choice.backend == Backend::cpu) {
        because("--backend cpu");
        return cpu_sorter();
    }
#ifdef GPUSORT_WITH_GPU
    const int devices = gpu::device_count();
    if (devices > 0) {
        if (choice.device < 0 || choice.device >= devices)
            throw SortError("--device " + std::to_string(choice.device) + ": there are " + std::to_string(devices) +
                            " GPUs (0 to " + std::to_string(devices - 1) + ")");
        because(choice.backend == Backend::gpu ? "--backend gpu" : "a GPU was found");
        try {
            if (records) return std::make_unique<GpuChunkSorter>(*records, choice.device);
            return std::make_unique<GpuChunkSorter>(std::get<KeyOrder>(key), choice.device);
        } catch (const gpu::GpuError& e) {
            // A device is there but cannot be used (busy, failing, out of memory): "auto" sorts
            // on the CPU and says so; "gpu" fails.
            if (choice.backend == Backend::gpu) throw;
            if (choice.notice) choice.notice(std::string("the GPU cannot be used (") + e.what() + "); sorting on the CPU");
            because(std::string("the GPU cannot be used: ") + e.what());
            return cpu_sorter();
        }
    }
    if (choice.backend == Backend::gpu) throw SortError("no usable GPU: " + gpu::device_unavailable_reason());
    because("no usable GPU: " + gpu::device_unavailable_reason());
#else
    if (choice.backend == Backend::gpu)
        throw SortError("this gpusort-file was built without CUDA, so it cannot use a GPU; use --backend cpu");
    because("built without CUDA");
#endif
    return cpu_sorter();
}

}  // namespace gpusort
