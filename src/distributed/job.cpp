#include "src/distributed/job.hpp"
#include "src/sort/sort_part.hpp"

#include "gpusort/compression.hpp"
#include "gpusort/sort_plan.hpp"
#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "io/temp_file.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpusort::distributed {

namespace {

// Samples per rank: enough that the parts stay within a few percent of each other.
std::size_t samples_per_rank(int ranks) { return std::max<std::size_t>(16384, 32 * static_cast<std::size_t>(ranks)); }

std::string temp_folder(const SortOptions& sort) {
    if (sort.tmp_dir) return *sort.tmp_dir;
    const std::string folder = io::parent_folder(io::follow_links(sort.output));
    return folder.empty() ? "." : folder;
}

}  // namespace

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::uint64_t range_first(std::uint64_t all, int rank, int p) {
    return all * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(p);
}

double imbalance_of(const std::vector<std::uint64_t>& parts) {
    std::uint64_t largest = 0, all = 0;
    for (const std::uint64_t n : parts) {
        largest = std::max(largest, n);
        all += n;
    }
    return all > 0 ? static_cast<double>(largest) * static_cast<double>(parts.size()) / static_cast<double>(all) - 1 : 0;
}

std::pair<std::uint64_t, std::uint64_t> part_offset_total(const std::vector<std::uint64_t>& parts, int rank) {
    std::uint64_t before = 0, total = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
        if (r < static_cast<std::size_t>(rank)) before += parts[r];
        total += parts[r];
    }
    return {before, total};
}

std::vector<std::span<const std::byte>> runs_in(std::span<const std::byte> memory, std::span<const std::uint64_t> records,
                                                std::size_t width) {
    std::vector<std::span<const std::byte>> runs;
    std::uint64_t offset = 0;
    for (const std::uint64_t n : records) {
        if ((offset + n) * width > memory.size()) throw std::logic_error("a rank's runs are larger than their memory");
        runs.push_back(memory.subspan(static_cast<std::size_t>(offset * width), static_cast<std::size_t>(n * width)));
        offset += n;
    }
    return runs;
}

// A nameless file in OUTPUT's folder tells, with a page reserved. A folder that takes no file says
// no here: making OUTPUT then says what is wrong, in the words gpusort-file uses.
bool output_folder_reserves(const std::string& output) {
    try {
        const std::string folder = io::parent_folder(io::follow_links(output));
        return io::create_temp_file(folder.empty() ? "." : folder).allocate(0, 4096);
    } catch (const io::IoError&) {
        return false;
    }
}

Job::Job(const DistributedOptions& options, const Communicator& ranks)
    : options(options),
      sort(options.sort),
      ranks(ranks),
      rank(ranks.rank()),
      p(ranks.size()),
      threads(std::max(1u, sort.threads.value_or(default_threads()))),
      spec(sort.records.value_or(whole_record_key(sort.order.type, sort.order.descending))),
      progress(sort.progress),
      device_budget(sort.device_memory_bytes) {
    report.threads = threads;
}

void Job::take_range() {
    step([&] {
        if (sort.output == "-" || sort.output_compression.value_or(compression_of(sort.output)) != Compression::none)
            throw SortError("gpusort-mpi writes OUTPUT at offsets on every rank: it must be an uncompressed file, not '" +
                            sort.output + "'");
        if (static_cast<std::size_t>(p) > kMaxParts)
            throw SortError("gpusort-mpi runs on at most " + std::to_string(kMaxParts) + " ranks; " + std::to_string(p) +
                            " were started");
        spec.validate();
        reader.emplace(spec);
        width = spec.record_size;
        input = InputFiles(options.input_list ? read_input_list(sort.input) : std::vector<std::string>{sort.input}, width,
                           sort.input_compression);
        all_records = input.size() / width;
        first = range_first(all_records, rank, p);
        records = range_first(all_records, rank + 1, p) - first;
    });
    agree();
    report.record_size = width;
    report.range_records = records;
    // Without --memory, the ranks of a host, which run at once, share its default budget equally.
    budget = sort.memory_bytes.value_or(
        std::max(kMinMemoryBudget, default_memory_budget() / static_cast<std::uint64_t>(ranks.host_size())));
    report.memory_budget = budget;
    tmp = temp_folder(sort);
}

std::vector<KeyPoint> Job::take_splitters() {
    std::vector<std::byte> packed;
    step([&] {
        std::vector<std::byte> record(width);
        for (const std::uint64_t index : regular_sample_indexes(records, samples_per_rank(p))) {
            input.read((first + index) * width, record);
            packed.resize(packed.size() + reader->packed_bytes());
            reader->pack(reader->point(record.data(), first + index), packed.data() + packed.size() - reader->packed_bytes());
        }
    });
    agree();
    const std::vector<std::byte> all = ranks.all_gather(packed);
    std::vector<KeyPoint> samples;
    for (std::size_t at = 0; at + reader->packed_bytes() <= all.size(); at += reader->packed_bytes())
        samples.push_back(reader->unpack(all.data() + at));
    std::vector<KeyPoint> splitters = choose_splitters(std::move(samples), static_cast<std::size_t>(p), *reader);
    report.splitters = splitters.size();
    end_step(report.step_seconds.samples);
    return splitters;
}

std::vector<std::uint64_t> Job::range_records_of_every_rank() const {
    std::vector<std::uint64_t> ranges;
    for (int s = 0; s < p; ++s) ranges.push_back(range_first(all_records, s + 1, p) - range_first(all_records, s, p));
    return ranges;
}

std::span<const std::byte> Job::mapped_range() const {
    return range_map ? std::span<const std::byte>(range_map->data(), range_map->size()) : std::span<const std::byte>();
}

PartSortOptions Job::part_sort_options() const {
    PartSortOptions local = part_options_of(sort);
    local.device_memory_bytes = device_budget;
    local.input_compression = local.output_compression = Compression::none;
    local.tmp_dir = tmp;
    local.progress = progress;  // the phases of this rank's own sort
    return local;
}

void Job::end_step(double& seconds) {
    seconds = seconds_since(step_start_);
    step_start_ = Clock::now();
}

}  // namespace gpusort::distributed
