#include "src/distributed/part_sort.hpp"
#include "src/sort/sort_part.hpp"

#include "gpusort/sort_plan.hpp"
#include "io/parallel_io.hpp"
#include "io/temp_file.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

namespace gpusort::distributed {

namespace {

// Copies `bytes` bytes of `from` at `from_offset` to `to` at `to_offset`, in large pieces, each read
// and written on all threads, and counted in `progress` (when set).
void copy_bytes(const io::File& from, std::uint64_t from_offset, const io::File& to, std::uint64_t to_offset,
                std::uint64_t bytes, ProgressCounters* progress) {
    std::vector<std::byte> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(bytes, std::uint64_t{256} << 20)));
    for (std::uint64_t done = 0; done < bytes;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), bytes - done));
        const std::span<std::byte> piece(buffer.data(), n);
        io::read_parallel(from, from_offset + done, piece);
        io::write_parallel(to, to_offset + done, piece);
        done += n;
        if (progress) progress->add(n);
    }
}

// The options of the part's sort: its input where the exchange left it (else INPUT itself).
PartSortOptions options_of_part(const Job& job, const ReceivedPart& received, std::uint64_t records) {
    PartSortOptions local = job.part_sort_options();
    if (received.memory) {
        local.input_memory = std::span<const std::byte>(received.memory->data(), received.memory->size());
        local.memory_bytes = std::max(kMinMemoryBudget, job.budget - records * job.width);
    } else {
        if (received.file) local.input = "/proc/self/fd/" + std::to_string(received.file->fd());  // else INPUT itself
        local.memory_bytes = job.budget;
    }
    return local;
}

// Whether this rank's sorted part (of `sorted_records` records in `sorted`) drops its first record:
// where its key ended the part before (the last part with records), which kept the first of the key
// in input order (collective).
bool drops_first_record(Job& job, const io::File* sorted, std::uint64_t sorted_records) {
    const KeyReader& reader = *job.reader;
    std::vector<std::byte> ends(2 * reader.key_bytes() + 1, std::byte{0});  // a flag, the first key, the last key
    job.step([&] {
        if (sorted_records == 0) return;
        std::vector<std::byte> record(job.width);
        sorted->read_at(0, record);
        std::memcpy(ends.data() + 1, reader.point(record.data(), 0).key.data(), reader.key_bytes());
        sorted->read_at((sorted_records - 1) * job.width, record);
        std::memcpy(ends.data() + 1 + reader.key_bytes(), reader.point(record.data(), 0).key.data(), reader.key_bytes());
        ends[0] = std::byte{1};
    });
    job.agree();
    const std::vector<std::byte> all = job.ranks.all_gather(ends);
    const std::size_t each = ends.size();
    for (int r = job.rank - 1; r >= 0 && sorted_records > 0; --r) {
        const std::byte* theirs = all.data() + static_cast<std::size_t>(r) * each;
        if (theirs[0] == std::byte{0}) continue;
        return std::memcmp(theirs + 1 + reader.key_bytes(), ends.data() + 1, reader.key_bytes()) == 0;
    }
    return false;
}

void sort_into_place(Job& job, const JobOutput& output, ReceivedPart& received, std::uint64_t records) {
    PartSortOptions local = options_of_part(job, received, records);
    const auto [offset, total] = part_offset_total(job.report.part_records, job.rank);
    job.step([&] {
        if (records == 0) return;
        local.output_region = OutputRegion{output.target().fd(), job.options.partitioned ? 0 : offset * job.width};
        job.report.part = sort_part(local);
        if (job.sort.sync) output.target().sync_data();
    });
    received = ReceivedPart();
    job.agree();
    job.report.output_records = total;
    job.end_step(job.report.step_seconds.sort);
}

void sort_unique(Job& job, const JobOutput& output, ReceivedPart& received, std::uint64_t records) {
    PartSortOptions local = options_of_part(job, received, records);
    std::optional<io::File> sorted;  // a nameless temp file: nothing is left behind, even after SIGKILL
    job.step([&] {
        if (records == 0) return;
        sorted.emplace(io::create_temp_file(job.tmp));
        local.output_region = OutputRegion{sorted->fd(), 0};
        job.report.part = sort_part(local);
    });
    received = ReceivedPart();
    job.agree();
    job.end_step(job.report.step_seconds.sort);

    const std::uint64_t sorted_records = sorted ? job.report.part.output_records : 0;
    const std::uint64_t skip = drops_first_record(job, sorted ? &*sorted : nullptr, sorted_records) ? 1 : 0;
    const std::uint64_t kept = sorted_records - skip;
    const std::vector<std::uint64_t> kept_of = job.ranks.all_gather(std::span<const std::uint64_t>(&kept, 1));
    const auto [offset, total] = part_offset_total(kept_of, job.rank);
    job.report.output_records = total;
    if (job.progress) job.progress->start_phase(ProgressPhase::writing, kept * job.width);
    job.step([&] { output.resize(job, total * job.width); });
    job.agree();
    job.step([&] {
        if (kept == 0) return;
        copy_bytes(*sorted, skip * job.width, output.target(), job.options.partitioned ? 0 : offset * job.width, kept * job.width,
                   job.progress);
        if (job.sort.sync) output.target().sync_data();
    });
    job.agree();
}

}  // namespace

void sort_received_part(Job& job, const JobOutput& output, ReceivedPart& received, std::uint64_t records) {
    if (job.sort.unique)
        sort_unique(job, output, received, records);
    else
        sort_into_place(job, output, received, records);
}

}  // namespace gpusort::distributed
