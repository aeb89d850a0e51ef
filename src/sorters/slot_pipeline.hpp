// run_in_slots: feeds items 0..count-1 to body(item, slot) with at most `slots` items in flight,
// each in a slot no other item in flight uses. Items start in order but may finish out of order.
// The chunk sorter's slots are used this way, so that one chunk is read while another is sorted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <tbb/parallel_pipeline.h>

namespace gpusort {

template <class Body>
void run_in_slots(std::uint64_t count, std::size_t slots, Body body) {
    std::mutex mutex;
    std::vector<std::size_t> free_slots;
    for (std::size_t s = 0; s < slots; ++s) free_slots.push_back(s);
    std::uint64_t next = 0;
    tbb::parallel_pipeline(
        slots,
        tbb::make_filter<void, std::uint64_t>(tbb::filter_mode::serial_in_order,
                                              [&](tbb::flow_control& fc) -> std::uint64_t {
                                                  if (next == count) fc.stop();
                                                  return next++;
                                              }) &
            tbb::make_filter<std::uint64_t, void>(tbb::filter_mode::parallel, [&](std::uint64_t item) {
                std::size_t slot;
                {
                    std::lock_guard lock(mutex);
                    slot = free_slots.back();  // one is free: no more items in flight than slots
                    free_slots.pop_back();
                }
                body(item, slot);
                std::lock_guard lock(mutex);
                free_slots.push_back(slot);
            }));
}

}  // namespace gpusort
