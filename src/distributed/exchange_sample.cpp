// The sample sort (--exchange shared or messages, and where neither the GPUs nor sorting first can be
// used): after the splitters, each rank reads its range in blocks, first counting the records for
// each part (keeping each record's part, and the range itself, where its memory budget holds them:
// exchange_memory.hpp), then sending each block's records to the ranks whose parts they fall in, in
// rounds of the exchange (communicator.hpp, Exchange: through shared memory between the ranks of a
// host, else by MPI messages). A part is kept in memory where the budget holds it, else in a temp
// file, each source's records in a region of their own, in input order; then it is sorted into its
// place in OUTPUT (part_sort.hpp). One rank on one INPUT file takes INPUT itself as its part.
#include "io/host_buffer.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"
#include "src/distributed/exchange_memory.hpp"
#include "src/distributed/exchange_way.hpp"
#include "src/distributed/part_sort.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

namespace gpusort::distributed {

namespace {

// Adds the records of each part among `parts` to counts[part], on all threads.
void count_parts(std::span<const PartIndex> parts, std::vector<std::uint64_t>& counts) {
    tbb::enumerable_thread_specific<std::vector<std::uint64_t>> local([&] { return std::vector<std::uint64_t>(counts.size(), 0); });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, parts.size(), 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
        std::vector<std::uint64_t>& mine = local.local();
        for (std::size_t i = r.begin(); i != r.end(); ++i) ++mine[parts[i]];
    });
    for (const auto& mine : local)
        for (std::size_t part = 0; part < counts.size(); ++part) counts[part] += mine[part];
}

// The records of `block` by part, each part's in block order, to where place(part, bytes) says: a
// counting sort on all threads (each slice of the block counts its records per part, then copies
// them to their places).
void scatter(std::span<const std::byte> block, std::span<const PartIndex> parts, std::size_t part_count,
             std::size_t width, const std::function<std::byte*(std::size_t part, std::uint64_t bytes)>& place) {
    constexpr std::size_t kSlice = 1 << 16;  // records
    const std::size_t slices = (parts.size() + kSlice - 1) / kSlice;
    std::vector<std::uint64_t> at(slices * part_count, 0);  // at[slice * part_count + part]: records before
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t slice) {
        for (std::size_t i = slice * kSlice; i < std::min(parts.size(), (slice + 1) * kSlice); ++i)
            ++at[slice * part_count + parts[i]];
    });
    std::vector<std::byte*> into(part_count);
    for (std::size_t part = 0; part < part_count; ++part) {
        std::uint64_t total = 0;
        for (std::size_t slice = 0; slice < slices; ++slice) {
            const std::uint64_t n = at[slice * part_count + part];
            at[slice * part_count + part] = total;
            total += n;
        }
        into[part] = place(part, total * width);
    }
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t slice) {
        for (std::size_t i = slice * kSlice; i < std::min(parts.size(), (slice + 1) * kSlice); ++i) {
            std::uint64_t& next = at[slice * part_count + parts[i]];
            std::memcpy(into[parts[i]] + next * width, block.data() + i * width, width);
            ++next;
        }
    });
}

std::byte* resized(Piece& piece, std::uint64_t bytes) {
    piece.resize(static_cast<std::size_t>(bytes));
    return piece.data();
}

// The counted exchange of one rank's range (step 3 of distributed_sort.hpp), into `part`. The range
// is read through a map of INPUT where it lies in one file: the counting pass and the exchange then
// read the page cache's pages and copy nothing. Else the records are kept from the counting pass
// where the budget holds them. The part of every record is kept from it where the budget holds them
// (exchange_memory.hpp): the exchange then does not classify the records again.
class CountedExchange {
public:
    CountedExchange(Job& job, const std::vector<KeyPoint>& splitters, ReceivedPart& part);
    // The counting pass: every rank's part in the report; returns this rank's part's records.
    std::uint64_t count();
    // Room for this rank's part of `records`, each source's records in a region of their own.
    void make_room(std::uint64_t records);
    // The rounds of the exchange, through shared memory where `shared_memory` allows, else by messages.
    void run_rounds(bool shared_memory);

private:
    void read_block(std::uint64_t round, bool counting);
    std::byte* land_at_cursor(int source, std::uint64_t bytes);
    void lay(std::uint64_t round);
    void move(std::uint64_t round);
    std::uint64_t count_of(int s, int d) const { return matrix_[static_cast<std::size_t>(s) * job_.p + static_cast<std::size_t>(d)]; }

    Job& job_;
    ReceivedPart& received_;
    PartFinder finder_;
    ExchangeMemory memory_;
    std::uint64_t block_records_ = 0, my_rounds_ = 0;
    io::HostBuffer range_parts_;                // each record's part, when kept
    io::HostBuffer range_bytes_;                // the range's records, when kept
    Piece block_bytes_read_;                    // the block's records, when the range is neither mapped nor kept
    std::span<const std::byte> block_;          // the records of the block
    std::unique_ptr<PartIndex[]> block_parts_;  // when the range's are not kept
    std::span<const PartIndex> parts_;          // of the records of the block
    std::vector<std::uint64_t> matrix_;         // matrix_[s * p + d]: records from s to d
    std::vector<std::uint64_t> cursor_;         // bytes received, per source
    std::optional<Exchange> exchange_;
    std::vector<Piece> from_;                   // what the other sources sent, for a part in a temp file
    Piece own_[2];                              // this rank's own records, every other round
    Step moving_;                               // the failures of the thread that moves the rounds
};

CountedExchange::CountedExchange(Job& job, const std::vector<KeyPoint>& splitters, ReceivedPart& part)
    : job_(job), received_(part), finder_(job.spec, splitters) {
    job.step([&] {
        if (job.records > 0 && !job.range_map) job.range_map = job.input.map(job.first * job.width, job.records * job.width);
    });
    memory_ = plan_exchange_memory(job.budget, job.records, job.width, job.p, job.range_map != nullptr);
    job.report.range_read = job.range_map ? "map" : memory_.keep_range ? "kept" : "twice";
    block_records_ = memory_.block / job.width;
    my_rounds_ = (job.records + block_records_ - 1) / block_records_;
}

// Reads block `round` of this rank's range (or takes it from the map, or from the range kept in the
// counting pass) and finds the part of each of its records (or takes the parts kept then).
void CountedExchange::read_block(std::uint64_t round, bool counting) {
    const std::size_t width = job_.width;
    const std::uint64_t at = round * block_records_;
    const std::size_t n = static_cast<std::size_t>(std::min(block_records_, job_.records - at));
    if (job_.range_map) {
        block_ = std::span<const std::byte>(job_.range_map->data() + at * width, n * width);
    } else if (memory_.keep_range) {
        const std::span<std::byte> bytes(range_bytes_.data() + at * width, n * width);
        if (counting) job_.input.read((job_.first + at) * width, bytes);
        block_ = bytes;
    } else {
        block_bytes_read_.resize(n * width);
        job_.input.read((job_.first + at) * width, block_bytes_read_);
        block_ = block_bytes_read_;
    }
    PartIndex* const kept = reinterpret_cast<PartIndex*>(range_parts_.data());
    const std::span<PartIndex> place(memory_.keep_parts ? kept + at : block_parts_.get(), n);
    if (counting || !memory_.keep_parts) finder_.find(block_, job_.first + at, place);
    parts_ = place;
}

std::uint64_t CountedExchange::count() {
    const std::uint64_t records = job_.records;
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(job_.p), 0);
    if (job_.progress) job_.progress->start_phase(ProgressPhase::reading, records * job_.width);
    job_.step([&] {
        if (memory_.keep_range) range_bytes_ = io::HostBuffer(static_cast<std::size_t>(records * job_.width));
        if (memory_.keep_parts)
            range_parts_ = io::HostBuffer(static_cast<std::size_t>(records * sizeof(PartIndex)));
        else
            block_parts_ = std::make_unique_for_overwrite<PartIndex[]>(static_cast<std::size_t>(std::min(block_records_, records)));
        for (std::uint64_t round = 0; round < my_rounds_; ++round) {
            read_block(round, true);
            count_parts(parts_, counts);
            if (job_.progress) job_.progress->add(block_.size());
        }
    });
    job_.agree();
    job_.end_step(job_.report.step_seconds.counting);
    matrix_ = job_.ranks.all_gather(counts);
    std::vector<std::uint64_t>& parts = job_.report.part_records;
    parts.assign(static_cast<std::size_t>(job_.p), 0);
    for (int s = 0; s < job_.p; ++s)
        for (int d = 0; d < job_.p; ++d) parts[static_cast<std::size_t>(d)] += count_of(s, d);
    job_.report.imbalance = imbalance_of(parts);
    return parts[static_cast<std::size_t>(job_.rank)];
}

// In memory where the budget holds the part (ExchangeMemory::part_in_memory), else in a temp file.
void CountedExchange::make_room(std::uint64_t records) {
    const std::uint64_t bytes = records * job_.width;
    const bool part_in_memory = memory_.part_in_memory(bytes);
    cursor_.assign(static_cast<std::size_t>(job_.p), 0);
    job_.step([&] {
        if (part_in_memory) {
            received_.memory.emplace(static_cast<std::size_t>(bytes));
        } else {
            received_.file.emplace(io::create_temp_file(job_.tmp));
            received_.file->allocate(bytes);
        }
        std::uint64_t at = 0;
        for (int s = 0; s < job_.p; ++s) {
            cursor_[static_cast<std::size_t>(s)] = at;
            at += count_of(s, job_.rank) * job_.width;
        }
    });
    job_.agree();
}

// Round r + 1 is laid out (read, classified and scattered) on this thread while round r moves on
// another (Exchange): the rounds alternate between two halves of the send areas, and this rank's own
// records between two pieces. A part in memory takes every source's records straight into place,
// each source's after the last it sent; a part in a temp file takes them into buffers, written to
// the file once their round has moved (the other sources' reused every round, this rank's own every
// other). A rank that failed goes on taking part in every round, sending nothing, until the exchange
// ends.
void CountedExchange::run_rounds(bool shared_memory) {
    DistributedReport& report = job_.report;
    std::uint64_t rounds = 0;
    for (const std::uint64_t n : job_.ranks.all_gather(std::span<const std::uint64_t>(&my_rounds_, 1))) rounds = std::max(rounds, n);
    report.exchange_rounds = rounds;
    // A round sends at most a block of this rank's range.
    exchange_.emplace(job_.ranks, std::min(block_records_, job_.records) * job_.width, shared_memory);
    report.exchange = exchange_->shared_memory() ? "shared" : "messages";
    if (job_.rank == 0 && !exchange_->shared_memory_refused().empty() && job_.sort.notice)
        job_.sort.notice("the ranks could not share memory (" + exchange_->shared_memory_refused() + "); the exchange goes by MPI messages");
    if (job_.progress) job_.progress->start_phase(ProgressPhase::exchanging, job_.records * job_.width);
    from_.resize(static_cast<std::size_t>(job_.p));
    // Where MPI may not be called from another thread, each round moves (deferred) after the next is laid out.
    const std::launch moving_thread = job_.ranks.any_thread() ? std::launch::async : std::launch::deferred;
    lay(0);
    for (std::uint64_t round = 0; round < rounds; ++round) {
        std::future<void> moved = std::async(moving_thread, [this, round] { move(round); });
        lay(round + 1);
        moved.get();
    }
    exchange_.reset();
    job_.ranks.agree(job_.step.failure().empty() ? moving_.failure() : job_.step.failure());
}

std::byte* CountedExchange::land_at_cursor(int source, std::uint64_t bytes) {
    std::uint64_t& at = cursor_[static_cast<std::size_t>(source)];
    if (at + bytes > received_.memory->size()) throw std::logic_error("rank " + std::to_string(source) + " sent more than it counted");
    std::byte* place = received_.memory->data() + at;
    at += bytes;
    return place;
}

void CountedExchange::lay(std::uint64_t round) {
    Piece& mine = own_[round % 2];
    mine.clear();
    job_.step([&] {
        if (round >= my_rounds_) return;
        read_block(round, false);
        scatter(block_, parts_, static_cast<std::size_t>(job_.p), job_.width, [&](std::size_t part_of, std::uint64_t bytes) {
            if (part_of == static_cast<std::size_t>(job_.rank)) return received_.memory ? land_at_cursor(job_.rank, bytes) : resized(mine, bytes);
            job_.report.exchange_bytes_sent += bytes;
            return exchange_->piece(round, static_cast<int>(part_of), bytes);
        });
        if (job_.progress) job_.progress->add(block_.size());
    });
}

void CountedExchange::move(std::uint64_t round) {
    const auto transfer_start = Clock::now();
    // Every other source's piece lands (its size every round, 0 included).
    job_.report.shared_bytes_sent += exchange_->round(round, [&](int source, std::uint64_t bytes) -> std::byte* {
        return received_.memory ? land_at_cursor(source, bytes) : resized(from_[static_cast<std::size_t>(source)], bytes);
    });
    job_.report.step_seconds.transfer += seconds_since(transfer_start);
    if (received_.memory) return;
    moving_([&] {
        for (int s = 0; s < job_.p; ++s) {
            const auto source = static_cast<std::size_t>(s);
            const Piece& piece = s == job_.rank ? own_[round % 2] : from_[source];
            io::write_parallel(*received_.file, cursor_[source], piece);
            cursor_[source] += piece.size();
        }
    });
}

class SampleSort final : public ExchangeWay {
public:
    // `counted`: whether the records go through the counted exchange (else one rank's part is INPUT).
    SampleSort(bool counted, bool shared_memory) : counted_(counted), shared_memory_(shared_memory) {}

    void exchange(Job& job) override {
        if (!counted_) return;
        {
            CountedExchange counted(job, job.take_splitters(), received_);
            part_ = counted.count();
            counted.make_room(part_);
            counted.run_rounds(shared_memory_);
            job.range_map.reset();
            job.input = InputFiles();
        }  // the blocks, the kept range and parts, and the pieces go with it
        job.end_step(job.report.step_seconds.exchange);
    }

    void sort_part(Job& job, const JobOutput& output) override {
        if (!counted_) part_ = job.records;
        sort_received_part(job, output, received_, part_);
    }

private:
    const bool counted_, shared_memory_;
    ReceivedPart received_;
    std::uint64_t part_ = 0;  // records of this rank's part
};

}  // namespace

std::unique_ptr<ExchangeWay> sample_sort(bool shared_memory) { return std::make_unique<SampleSort>(true, shared_memory); }

std::unique_ptr<ExchangeWay> sort_whole_input() { return std::make_unique<SampleSort>(false, false); }

}  // namespace gpusort::distributed
