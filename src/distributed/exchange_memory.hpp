// How a rank spends its memory budget in the exchange: the block it sends per round, what it keeps
// from the counting pass, and whether the part it receives is kept in memory. The exchange holds at
// most the budget at once: the send areas of two rounds (one moving while the next is laid out),
// the block read from INPUT (unless the range is mapped or kept), each record's part and the
// range's records when kept, and the part received in memory. A range mapped from INPUT's file
// takes none of the budget: its pages are the page cache's. Needs no MPI (tested in
// tests/distributed_step_test.cpp).
#pragma once

#include "src/distributed/key_points.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gpusort::distributed {

struct ExchangeMemory {
    std::uint64_t budget = 0;        // bytes
    std::uint64_t range_bytes = 0;   // of this rank's range of INPUT
    std::uint64_t block = 0;         // bytes of INPUT a rank reads and sends per round (whole records)
    std::uint64_t parts_bytes = 0;   // each record's part (PartIndex: 2 bytes per record)
    bool keep_parts = false;         // the parts are kept from the counting pass (not found again)
    bool range_mapped = false;       // the range is read through a map of INPUT (neither read into a block nor kept)
    bool keep_range = false;         // the range's records are kept from the counting pass (INPUT read once)

    // The bytes the exchange holds besides the part received: two rounds' send areas, and the block
    // read, the parts and the range as kept.
    std::uint64_t held() const {
        return (keep_range || range_mapped ? 2 : 3) * block + (keep_parts ? parts_bytes : 0) + (keep_range ? range_bytes : 0);
    }

    // Whether a part of `part_bytes` is received in memory (else into a temp file): within half the
    // budget (the part's sort has the other half) and beside what the exchange holds.
    bool part_in_memory(std::uint64_t part_bytes) const { return part_bytes <= budget / 2 && held() + part_bytes <= budget; }
};

// For a range of `records` records of `width` bytes on one of `ranks` ranks, mapped from INPUT or
// not. The block: a share of the budget that holds what the exchange holds and, for a part received
// in a temp file, what all ranks may send it in one round (besides its own pieces of two rounds),
// from 1 to 256 MiB. The parts are kept when they take at most a quarter of the budget; a range not
// mapped when it fits beside them, the send areas and the part this rank expects (its range, and a
// tenth for imbalance, up to half the budget), so that the part still goes to memory.
inline ExchangeMemory plan_exchange_memory(std::uint64_t budget, std::uint64_t records, std::size_t width, int ranks,
                                           bool range_mapped) {
    ExchangeMemory plan;
    plan.budget = budget;
    plan.range_mapped = range_mapped;
    plan.range_bytes = records * width;
    const std::uint64_t block = std::clamp<std::uint64_t>(budget / (2 * (static_cast<std::uint64_t>(ranks) + 3)),
                                                          std::uint64_t{1} << 20, std::uint64_t{256} << 20);
    plan.block = std::max<std::uint64_t>(1, block / width) * width;
    plan.parts_bytes = records * sizeof(PartIndex);
    plan.keep_parts = plan.parts_bytes <= budget / 4;
    if (range_mapped) return plan;
    const std::uint64_t expected_part = std::min(plan.range_bytes + plan.range_bytes / 10, budget / 2);
    plan.keep_range = true;  // where what the exchange then holds leaves room for the part expected
    plan.keep_range = plan.held() + expected_part <= budget;
    return plan;
}

}  // namespace gpusort::distributed
