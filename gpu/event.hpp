// Event: owns a CUDA event (for ordering streams and timing), move-only.
#pragma once

#include <cuda_runtime_api.h>

namespace gpusort::gpu {

class Event {
public:
    // With timing off, the event is cheaper and serves only for ordering.
    explicit Event(bool timing = true);  // throws GpuError
    ~Event();
    Event(Event&& other) noexcept;
    Event& operator=(Event&& other) noexcept;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    cudaEvent_t get() const noexcept { return event_; }
    void record(cudaStream_t stream);
    void synchronize() const;
    // Makes `stream` wait for the work recorded before this event.
    void make_wait(cudaStream_t stream) const;

    // Milliseconds between two recorded, completed timing events.
    static float elapsed_ms(const Event& start, const Event& stop);

private:
    cudaEvent_t event_ = nullptr;
};

}  // namespace gpusort::gpu
