// Stream: owns a CUDA stream that does not synchronise with the legacy default stream, move-only.
#pragma once

#include <cuda_runtime_api.h>

namespace gpusort::gpu {

class Stream {
public:
    Stream();  // throws GpuError
    ~Stream();
    Stream(Stream&& other) noexcept;
    Stream& operator=(Stream&& other) noexcept;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    cudaStream_t get() const noexcept { return stream_; }
    // Waits for all work queued on the stream; throws GpuError if any of it failed.
    void synchronize() const;

private:
    cudaStream_t stream_ = nullptr;
};

}  // namespace gpusort::gpu
