// CpuRecordSorter<W>: records in one host buffer per slot, tags of W key words (by the key rules
// of key_rules.hpp, as the GPU computes them) and an index sorted by IPS4o, a gather buffer of
// whole output elements per slot.
#include "src/sorters/cpu_record_sorter.hpp"

#include "io/host_buffer.hpp"
#include "src/keys/key_dispatch.hpp"
#include "src/keys/record_layout.hpp"
#include "src/sorters/sort_thread_pool.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <ips4o.hpp>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace gpusort {

namespace {

// Bytes of output gathered before it is handed to the writer.
constexpr std::size_t kGatherBytes = std::size_t{64} << 20;

template <std::size_t W>
struct Tag {
    RecordKey<W> key;
    std::uint64_t index;
    friend bool operator<(const Tag& a, const Tag& b) {
        if (a.key < b.key) return true;
        if (b.key < a.key) return false;
        return a.index < b.index;
    }
};

template <std::size_t W>
class CpuRecordSorter final : public ChunkSorter {
public:
    CpuRecordSorter(const KeySpec& spec, const FixedKeySpec& fixed, unsigned threads,
                    const std::function<void(const std::string&)>& notice)
        : spec_(fixed), record_(spec.record_size), entry_(entry_bytes(spec)),
          pool_(make_sort_thread_pool(threads, notice)) {}
    std::string name() const override { return "cpu"; }
    std::uint64_t capacity(std::size_t slots, const ChunkMemory& memory) const override {
        const std::uint64_t per_slot = memory.host_bytes / std::max<std::size_t>(slots, 1);
        std::uint64_t lo = 0, hi = per_slot / (record_ + sizeof(Tag<W>)) + 1;  // slot_bytes(hi) > per_slot
        while (lo + 1 < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            (slot_bytes(mid) <= per_slot ? lo : hi) = mid;
        }
        return lo;
    }

    void prepare(std::size_t slots, std::uint64_t chunk_records, const ChunkMemory& memory) override {
        // The plan's memory is what the slots take (its --plan and --stats say so): never more.
        if (slots * slot_bytes(chunk_records) > memory.host_bytes)
            throw std::logic_error("the CPU sorter's slots would take more memory than the plan gives them");
        slots_.clear();
        chunk_records_ = chunk_records;
        for (std::size_t s = 0; s < slots; ++s) {
            Slot slot;
            slot.records = io::HostBuffer(static_cast<std::size_t>(chunk_records * record_));
            slot.tags = io::HostBuffer(static_cast<std::size_t>(chunk_records * sizeof(Tag<W>)));
            slot.gather = io::HostBuffer(static_cast<std::size_t>(gather_records(chunk_records) * entry_));
            slots_.push_back(std::move(slot));
        }
    }

    PhaseTimes sort_chunk(std::size_t slot, std::uint64_t records, const ChunkIo& io) override {
        return sort(slot, records, false, io);
    }
    PhaseTimes sort_run(std::size_t slot, std::uint64_t records, const ChunkIo& io) override {
        return sort(slot, records, true, io);
    }

private:
    // Sorts the records of a slot and writes them, or (entries) run entries of key words and record.
    PhaseTimes sort(std::size_t slot_index, std::uint64_t records, bool entries, const ChunkIo& io) {
        if (slot_index >= slots_.size() || records > chunk_records_)
            throw std::logic_error("chunk larger than the sorter was prepared for");
        PhaseTimes times;
        Slot& slot = slots_[slot_index];
        const std::size_t n = static_cast<std::size_t>(records);
        if (n == 0) return times;
        const std::byte* data = slot.records.data();
        const auto* record_bytes = reinterpret_cast<const unsigned char*>(data);
        {
            ScopedPhase phase(times.read);
            io.read(0, std::span<std::byte>(slot.records.data(), n * record_));
        }
        Tag<W>* tags = reinterpret_cast<Tag<W>*>(slot.tags.data());
        {
            std::lock_guard lock(sort_mutex_);
            ScopedPhase phase(times.sort);
            // Isolated: a thread waiting here must not take up another chunk (and this mutex).
            tbb::this_task_arena::isolate([&] {
                tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const tbb::blocked_range<std::size_t>& r) {
                    for (std::size_t i = r.begin(); i != r.end(); ++i) {
                        tags[i].key = record_key<W>(record_bytes + i * record_, spec_);
                        tags[i].index = i;
                    }
                });
            });
            if (pool_)
                ips4o::parallel::sort(tags, tags + n, std::less<>(), *pool_);
            else
                ips4o::sort(tags, tags + n, std::less<>());
        }
        // Sorted records (or entries: key words first) gathered piece by piece, each piece written.
        const std::size_t out_width = entries ? entry_ : record_;
        const std::size_t key_bytes = entries ? entry_ - record_ : 0;
        const std::size_t piece = gather_records(n);
        for (std::size_t first = 0; first < n; first += piece) {
            const std::size_t count = std::min(piece, n - first);
            {
                ScopedPhase phase(times.sort);
                tbb::this_task_arena::isolate([&] {
                    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t i = r.begin(); i != r.end(); ++i) {
                            std::byte* out = slot.gather.data() + i * out_width;
                            const Tag<W>& tag = tags[first + i];
                            if (entries) std::memcpy(out, tag.key.word, key_bytes);
                            std::memcpy(out + key_bytes, data + tag.index * record_, record_);
                        }
                    });
                });
            }
            ScopedPhase phase(times.write);
            io.write(first, std::span<const std::byte>(slot.gather.data(), count * out_width));
        }
        return times;
    }

    struct Slot {
        io::HostBuffer records;
        io::HostBuffer tags;
        io::HostBuffer gather;
    };
    // Output elements gathered at once for chunks of n records: up to kGatherBytes, and no more
    // than an eighth of the chunk (at least one).
    std::uint64_t gather_records(std::uint64_t n) const {
        return std::max<std::uint64_t>(1, std::min<std::uint64_t>(kGatherBytes / entry_, n / 8 + 1));
    }
    std::uint64_t slot_bytes(std::uint64_t n) const {
        return n * (record_ + sizeof(Tag<W>)) + gather_records(n) * entry_;
    }

    FixedKeySpec spec_;
    std::size_t record_;
    std::size_t entry_;
    std::uint64_t chunk_records_ = 0;
    std::unique_ptr<SortThreadPool> pool_;
    std::mutex sort_mutex_;
    std::vector<Slot> slots_;
};

}  // namespace

std::unique_ptr<ChunkSorter> make_cpu_record_sorter(const KeySpec& spec, unsigned threads,
                                                    const std::function<void(const std::string&)>& notice) {
    const FixedKeySpec fixed = fixed_key_spec(spec);
    return with_key_words(fixed.key_words(), [&](auto words) -> std::unique_ptr<ChunkSorter> {
        return std::make_unique<CpuRecordSorter<decltype(words)::value>>(spec, fixed, threads, notice);
    });
}

}  // namespace gpusort
