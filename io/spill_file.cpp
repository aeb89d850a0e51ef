// SpillFile: spilled runs striped over several temp files.
#include "io/spill_file.hpp"

#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"

#include <algorithm>
#include <stdexcept>

#include <tbb/parallel_for.h>

namespace gpusort::io {

static_assert(kSpillStripe % kParallelIoBlock == 0, "a block of a parallel transfer lies in one turn of a stripe");

SpillFile::SpillFile(const std::string& folder, std::size_t stripes, std::size_t direct_piece) {
    if (stripes == 0) throw std::invalid_argument("a spill file of no stripes");
    for (std::size_t s = 0; s < stripes; ++s) {
        stripes_.push_back(create_temp_file(folder));
        if (direct_piece > 0 && !stripes_.back().use_direct_io(direct_piece))
            throw IoError("cannot spill runs with direct I/O to '" + folder + "': its file system does not do direct I/O");
    }
}

// Closing a large temp file frees its pages and its blocks, which takes seconds: on the GPU machine
// 16 stripes of 1 GiB took 8.2-8.6 s closed one by one and 5-6 s side by side (one file of 16 GiB
// took 4.5-4.8 s), so they are closed side by side.
SpillFile::~SpillFile() {
    if (stripes_.size() < 2) return;
    tbb::parallel_for(std::size_t{0}, stripes_.size(), [this](std::size_t s) { File closed = std::move(stripes_[s]); });
}

template <class F>
void SpillFile::for_each_turn(std::uint64_t offset, std::size_t size, F&& f) const {
    const std::uint64_t n = stripes_.size();
    std::size_t done = 0;
    while (done < size) {
        const std::uint64_t at = offset + done;
        const std::uint64_t turn = at / kSpillStripe;
        const std::uint64_t within = at % kSpillStripe;
        const std::size_t length = static_cast<std::size_t>(std::min<std::uint64_t>(kSpillStripe - within, size - done));
        f(stripes_[turn % n], turn / n * kSpillStripe + within, done, length);
        done += length;
    }
}

void SpillFile::read_at(std::uint64_t offset, std::span<std::byte> data) const {
    for_each_turn(offset, data.size(), [&](const File& stripe, std::uint64_t at, std::size_t begin, std::size_t length) {
        stripe.read_at(at, data.subspan(begin, length));
    });
}

void SpillFile::write_at(std::uint64_t offset, std::span<const std::byte> data) const {
    for_each_turn(offset, data.size(), [&](const File& stripe, std::uint64_t at, std::size_t begin, std::size_t length) {
        stripe.write_at(at, data.subspan(begin, length));
    });
}

// The turns of [offset, offset + length) that lie in one stripe are consecutive in it: each
// stripe reserves the span from its first such byte to its last.
bool SpillFile::allocate(std::uint64_t offset, std::uint64_t length) const {
    if (length == 0) return true;
    const std::uint64_t n = stripes_.size();
    const std::uint64_t end = offset + length;
    const std::uint64_t first_turn = offset / kSpillStripe;
    const std::uint64_t last_turn = (end - 1) / kSpillStripe;
    for (std::uint64_t s = 0; s < n; ++s) {
        // The first and last turns of the range in stripe s.
        const std::uint64_t first = first_turn + (s + n - first_turn % n) % n;
        if (first > last_turn) continue;
        const std::uint64_t last = last_turn - (last_turn % n + n - s) % n;
        const std::uint64_t from = first / n * kSpillStripe + (first == first_turn ? offset % kSpillStripe : 0);
        const std::uint64_t to = last / n * kSpillStripe + (last == last_turn ? (end - 1) % kSpillStripe + 1 : kSpillStripe);
        if (!stripes_[s].allocate(from, to - from)) return false;
    }
    return true;
}

}  // namespace gpusort::io
