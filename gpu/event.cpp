// Event: creation, recording, waiting and timing of a CUDA event.
#include "gpu/event.hpp"

#include <utility>

#include "gpu/gpu_error.hpp"

namespace gpusort::gpu {

Event::Event(bool timing) {
    check_cuda(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
               "cudaEventCreate");
}

Event::~Event() {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
    if (this != &other) {
        if (event_ != nullptr) (void)cudaEventDestroy(event_);
        event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
}

void Event::record(cudaStream_t stream) { check_cuda(cudaEventRecord(event_, stream), "cudaEventRecord"); }

void Event::synchronize() const { check_cuda(cudaEventSynchronize(event_), "cudaEventSynchronize"); }

void Event::make_wait(cudaStream_t stream) const {
    check_cuda(cudaStreamWaitEvent(stream, event_, 0), "cudaStreamWaitEvent");
}

float Event::elapsed_ms(const Event& start, const Event& stop) {
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, start.event_, stop.event_), "cudaEventElapsedTime");
    return ms;
}

}  // namespace gpusort::gpu
