// distributed_sort: on one host, the sort of each range into runs that the ranks share, each rank
// merging its part of them into its place in OUTPUT (or, with --exchange gpu, runs of each rank's
// part formed of pieces copied between the GPUs, merged into place); else samples and splitters, the counted
// exchange into memory or a temp file, and the sort of each part with sort_file straight into its
// place in OUTPUT (with --unique, into a temp file, whose kept records are then copied there).
#include "src/distributed/distributed_sort.hpp"

#include "gpusort/compression.hpp"
#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/host_buffer.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/signal_cleanup.hpp"
#include "io/temp_file.hpp"
#include "src/distributed/exchange_memory.hpp"
#include "src/distributed/gpu_runs.hpp"
#include "src/distributed/host_share.hpp"
#include "src/distributed/input_files.hpp"
#include "src/distributed/key_points.hpp"
#include "src/distributed/shared_runs.hpp"
#include "src/distributed/step.hpp"
#include "src/output/sort_output.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#ifdef GPUSORT_WITH_GPU
#include "gpu/device.hpp"
#endif

namespace gpusort::distributed {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Samples per rank: enough that the parts stay within a few percent of each other.
std::size_t samples_per_rank(int ranks) { return std::max<std::size_t>(16384, 32 * static_cast<std::size_t>(ranks)); }

// The first record of rank `rank`'s range of `all` records over `p` ranks (and of its part, where
// the runs are shared): the ranges differ by one record at most.
std::uint64_t range_first(std::uint64_t all, int rank, int p) {
    return all * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(p);
}

// The largest part over the mean, less 1.
double imbalance_of(const std::vector<std::uint64_t>& parts) {
    std::uint64_t largest = 0, all = 0;
    for (const std::uint64_t n : parts) {
        largest = std::max(largest, n);
        all += n;
    }
    return all > 0 ? static_cast<double>(largest) * static_cast<double>(parts.size()) / static_cast<double>(all) - 1 : 0;
}

std::string temp_folder(const SortOptions& sort) {
    if (sort.tmp_dir) return *sort.tmp_dir;
    const std::string folder = io::parent_folder(io::follow_links(sort.output));
    return folder.empty() ? "." : folder;
}

// Whether the file system of OUTPUT's folder reserves space (fallocate), as sorting first needs: the
// ranks write their runs through maps of OUTPUT, which must not meet a full disk. A nameless file
// there tells, with a page reserved. A folder that takes no file says no here: making OUTPUT then
// says what is wrong, in the words gpusort-file uses.
bool output_folder_reserves(const std::string& output) {
    try {
        const std::string folder = io::parent_folder(io::follow_links(output));
        return io::create_temp_file(folder.empty() ? "." : folder).allocate(0, 4096);
    } catch (const io::IoError&) {
        return false;
    }
}

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

// The runs of `records` records each, one after the other in `memory` (keys of `width` bytes).
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

// The records before `rank`'s part and in all parts, from the records of each part.
std::pair<std::uint64_t, std::uint64_t> part_offset_total(const std::vector<std::uint64_t>& parts, int rank) {
    std::uint64_t before = 0, total = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
        if (r < static_cast<std::size_t>(rank)) before += parts[r];
        total += parts[r];
    }
    return {before, total};
}

}  // namespace

int device_of_local_rank(int local_rank) {
#ifdef GPUSORT_WITH_GPU
    return device_of(local_rank, gpu::device_count());
#else
    return device_of(local_rank, 0);  // no GPU: the CPU backend takes no device
#endif
}

std::optional<std::uint64_t> prepare_device(const SortOptions& sort, int local_rank, int local_ranks) {
#ifdef GPUSORT_WITH_GPU
    if (sort.backend == Backend::cpu) return std::nullopt;
    const int devices = gpu::device_count();
    if (devices == 0) return std::nullopt;
    const int sharing = ranks_sharing_device(local_rank, local_ranks, devices);
    try {
        const std::uint64_t free_bytes = gpu::device_info(sort.device).free_bytes;  // makes the context
        if (sort.device_memory_bytes || sharing == 1) return std::nullopt;
        return device_memory_available(free_bytes) / static_cast<std::uint64_t>(sharing);
    } catch (const std::exception&) {
        return std::nullopt;  // the sort itself says what is wrong with the GPU
    }
#else
    static_cast<void>(sort), static_cast<void>(local_rank), static_cast<void>(local_ranks);  // no GPU: nothing to share
    return std::nullopt;
#endif
}

std::string partition_name(const std::string& output, int rank) {
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, ".%05d", rank);
    return output + suffix;
}

DistributedReport distributed_sort(const DistributedOptions& options, const Communicator& ranks) {
    const auto start = Clock::now();
    const SortOptions& sort = options.sort;
    const int rank = ranks.rank();
    const int p = ranks.size();
    DistributedReport report;
    Step step;
    // The classification of records runs on --threads threads, as the sort does.
    const unsigned threads = std::max(1u, sort.threads.value_or(default_threads()));
    const tbb::global_control thread_limit(tbb::global_control::max_allowed_parallelism, threads);
    report.threads = threads;

    // The GPU's context, and the rank's share of its memory where ranks share it, on a thread of
    // their own while the ranks sample, count and exchange: the part's sort then finds it made.
    std::future<std::optional<std::uint64_t>> device_share =
        std::async(std::launch::async, [&] { return prepare_device(sort, options.local_rank, options.local_ranks); });
    std::optional<std::uint64_t> device_budget = sort.device_memory_bytes;

    // 1. The key, INPUT and this rank's range of it.
    const KeySpec spec = sort.records.value_or(whole_record_key(sort.order.type, sort.order.descending));
    std::optional<KeyReader> reader;
    InputFiles input;
    std::uint64_t first = 0, records = 0, width = 0, all_records = 0;
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
        const std::uint64_t size = input.size();
        all_records = size / width;
        first = range_first(all_records, rank, p);
        records = range_first(all_records, rank + 1, p) - first;
    });
    ranks.agree(step.failure());
    report.record_size = width;
    report.range_records = records;

    // The memory budget of this rank, read once: the blocks, the kept range and parts, the received
    // part and the part's sort are all sized from it. Without --memory, the ranks of a host, which
    // run at once, share its default budget equally.
    const std::uint64_t budget = sort.memory_bytes.value_or(
        std::max(kMinMemoryBudget, default_memory_budget() / static_cast<std::uint64_t>(ranks.host_size())));
    report.memory_budget = budget;
    ProgressCounters* const progress = sort.progress;  // rank 0's, when it draws the progress line
    const std::string tmp = temp_folder(sort);
    // The part of this rank, where the exchange leaves it: in memory or in a temp file. With one
    // rank and one INPUT file the part is that file, sorted straight from it as gpusort-file does:
    // no samples, no counting pass, no exchange.
    std::uint64_t part = records;
    std::optional<io::HostBuffer> received_memory;
    std::optional<io::File> received;
    const bool whole_input = p == 1 && !options.input_list;
    report.part_records.assign(1, records);
    report.exchange = whole_input ? "none" : options.exchange;
    // The ways --exchange lets the ranks try, in this order (auto: all three; shared and messages:
    // the sample sort alone).
    const bool may_exchange_through_gpus = options.exchange == "auto" || options.exchange == "gpu";
    const bool may_sort_first = may_exchange_through_gpus || options.exchange == "runs";

    // Sorting first (--exchange runs, or auto or gpu where the GPUs cannot be used: steps 2, 3 and 5
    // give way to the branch "if (runs)" of step 5), where every rank is on this host, the keys are
    // whole records, every rank's range lies in one file and its part of the merge (as large as its
    // range) in half its budget, and OUTPUT's file system reserves space.
    // This rank's range, through a map of INPUT where it lies in one file (made once, for either way).
    std::unique_ptr<io::FileMapping> range_map;
    // The exchange through the GPUs (--exchange gpu or auto: the splitters of step 2, then the branch
    // "if (gpu_runs)" of step 5), where every rank is on this host with a GPU of its own or a share,
    // the keys are whole records, INPUT holds some, every rank's range lies in one file and its part
    // (about as large) in half its budget, and OUTPUT's file system reserves space; else the ranks
    // sort first as below (with --exchange gpu, rank 0 says why).
    bool gpu_runs = false;
    if (!whole_input && may_exchange_through_gpus) {
        std::string refused;
        step([&] {
            if (ranks.host_size() != p) refused = "the ranks are not all on one host";
            else if (sort.records || sort.unique || sort.verify) refused = "it takes whole-record keys, without --unique or --verify";
            else if (all_records == 0) refused = "INPUT holds no record";
            else if (refused = gpu_exchange_refused(sort); !refused.empty()) return;
            else if (records * width > budget / 2) refused = "a range is larger than half the rank's memory budget";
            else if (rank == 0 && !output_folder_reserves(sort.output)) refused = "OUTPUT's file system does not reserve space";
            else if (records > 0 && !(range_map = input.map(first * width, records * width))) refused = "a range lies across files";
        });
        ranks.agree(step.failure());
        const std::vector<std::string> every = ranks.all_gather(refused);
        gpu_runs = std::all_of(every.begin(), every.end(), [](const std::string& why) { return why.empty(); });
        if (!gpu_runs && options.exchange == "gpu" && rank == 0 && sort.notice)
            for (int s = 0; s < p; ++s)
                if (!every[static_cast<std::size_t>(s)].empty()) {
                    sort.notice("the exchange through the GPUs cannot be used (rank " + std::to_string(s) + ": " +
                                every[static_cast<std::size_t>(s)] + "): the ranks sort first as with --exchange runs");
                    break;
                }
        report.exchange = gpu_runs ? "gpu" : "runs";
        if (gpu_runs) report.range_read = "map";
    }
    bool runs = false;
    if (!whole_input && !gpu_runs && may_sort_first) {
        bool fits = false;
        step([&] {
            if (ranks.host_size() != p || sort.records || sort.unique || sort.verify) return;
            if (records > 0) range_map = input.map(first * width, records * width);
            fits = (records == 0 || range_map) && records * width <= budget / 2 &&
                   (rank != 0 || output_folder_reserves(sort.output));  // the ranks share a folder: one asks
        });
        ranks.agree(step.failure());
        const std::uint64_t mine = fits ? 1 : 0;
        const std::vector<std::uint64_t> every = ranks.all_gather(std::span<const std::uint64_t>(&mine, 1));
        runs = std::find(every.begin(), every.end(), 0) == every.end();
        if (runs) {
            // The parts are the ranges' sizes: the merge is cut at the same records.
            report.part_records.clear();
            for (int s = 0; s < p; ++s)
                report.part_records.push_back(range_first(all_records, s + 1, p) - range_first(all_records, s, p));
            report.imbalance = imbalance_of(report.part_records);
            report.range_read = "map";
        } else {
            report.exchange = "shared";
        }
    }
    auto step_start = Clock::now();
    auto end_step = [&](double& seconds) {
        seconds = seconds_since(step_start);
        step_start = Clock::now();
    };
    // 2. Samples and splitters (the same on every rank).
    auto take_splitters = [&] {
        std::vector<std::byte> packed;
        step([&] {
            std::vector<std::byte> record(width);
            for (const std::uint64_t index : regular_sample_indexes(records, samples_per_rank(p))) {
                input.read((first + index) * width, record);
                packed.resize(packed.size() + reader->packed_bytes());
                reader->pack(reader->point(record.data(), first + index), packed.data() + packed.size() - reader->packed_bytes());
            }
        });
        ranks.agree(step.failure());
        const std::vector<std::byte> all = ranks.all_gather(packed);
        std::vector<KeyPoint> samples;
        for (std::size_t at = 0; at + reader->packed_bytes() <= all.size(); at += reader->packed_bytes())
            samples.push_back(reader->unpack(all.data() + at));
        std::vector<KeyPoint> splitters = choose_splitters(std::move(samples), static_cast<std::size_t>(p), *reader);
        report.splitters = splitters.size();
        end_step(report.step_seconds.samples);
        return splitters;
    };
    // The exchange through the GPUs: the splitters' raw keys (read where they lie in INPUT), and room
    // for the runs of the largest part this rank could receive (only what it receives is touched).
    // The runs are formed in step 5, once OUTPUT is made; until then the parts are the ranges.
    std::vector<std::byte> splitter_keys;
    std::vector<std::uint64_t> splitter_positions;
    io::HostBuffer gpu_runs_memory;
    if (gpu_runs) {
        const std::vector<KeyPoint> splitters = take_splitters();
        step([&] {
            splitter_keys.resize(splitters.size() * width);
            for (std::size_t j = 0; j < splitters.size(); ++j) {
                input.read(splitters[j].position * width, std::span<std::byte>(splitter_keys.data() + j * width, width));
                splitter_positions.push_back(splitters[j].position);
            }
            gpu_runs_memory = io::HostBuffer(static_cast<std::size_t>(all_records * width));
        });
        ranks.agree(step.failure());
        report.part_records.clear();
        for (int s = 0; s < p; ++s)
            report.part_records.push_back(range_first(all_records, s + 1, p) - range_first(all_records, s, p));
    }
    if (!whole_input && !runs && !gpu_runs) {
        const std::vector<KeyPoint> splitters = take_splitters();
        std::optional<PartFinder> finder;
        finder.emplace(spec, splitters);

        // 3. The counted exchange: every record of the range goes to the rank of its part.
        // The range is read through a map of INPUT where it lies in one file: the counting pass and
        // the exchange then read the page cache's pages and copy nothing. Else the records are kept
        // from the counting pass where the budget holds them. The part of every record is kept from
        // it where the budget holds them (exchange_memory.hpp): the exchange then does not classify
        // the records again.
        step([&] {
            if (records > 0 && !range_map) range_map = input.map(first * width, records * width);
        });
        const ExchangeMemory memory = plan_exchange_memory(budget, records, width, p, range_map != nullptr);
        report.range_read = range_map ? "map" : memory.keep_range ? "kept" : "twice";
        const std::uint64_t block_records = memory.block / width;
        const std::uint64_t my_rounds = (records + block_records - 1) / block_records;
        const bool keep_parts = memory.keep_parts;
        const bool keep_range = memory.keep_range;
        io::HostBuffer range_parts;                    // each record's part, when kept
        io::HostBuffer range_bytes;                    // the range's records, when kept
        Piece block_bytes_read;                        // the block's records, when the range is neither mapped nor kept
        std::span<const std::byte> block;              // the records of the block
        std::unique_ptr<PartIndex[]> block_parts;      // when the range's are not kept
        std::span<const PartIndex> parts;              // of the records of the block
        // Reads block `round` of this rank's range (or takes it from the map, or from the range kept
        // in the counting pass) and finds the part of each of its records (or takes the parts kept then).
        auto read_block = [&](std::uint64_t round, bool counting) {
            const std::uint64_t at = round * block_records;
            const std::size_t n = static_cast<std::size_t>(std::min(block_records, records - at));
            if (range_map) {
                block = std::span<const std::byte>(range_map->data() + at * width, n * width);
            } else if (keep_range) {
                const std::span<std::byte> bytes(range_bytes.data() + at * width, n * width);
                if (counting) input.read((first + at) * width, bytes);
                block = bytes;
            } else {
                block_bytes_read.resize(n * width);
                input.read((first + at) * width, block_bytes_read);
                block = block_bytes_read;
            }
            PartIndex* const kept = reinterpret_cast<PartIndex*>(range_parts.data());
            const std::span<PartIndex> place(keep_parts ? kept + at : block_parts.get(), n);
            if (counting || !keep_parts) finder->find(block, first + at, place);
            parts = place;
        };
        std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
        if (progress) progress->start_phase(ProgressPhase::reading, records * width);
        step([&] {
            if (keep_range) range_bytes = io::HostBuffer(static_cast<std::size_t>(records * width));
            if (keep_parts)
                range_parts = io::HostBuffer(static_cast<std::size_t>(records * sizeof(PartIndex)));
            else
                block_parts = std::make_unique_for_overwrite<PartIndex[]>(static_cast<std::size_t>(std::min(block_records, records)));
            for (std::uint64_t round = 0; round < my_rounds; ++round) {
                read_block(round, true);
                count_parts(parts, counts);
                if (progress) progress->add(block.size());
            }
        });
        ranks.agree(step.failure());
        end_step(report.step_seconds.counting);
        const std::vector<std::uint64_t> matrix = ranks.all_gather(counts);  // matrix[s * p + d]: from s to d
        auto count_of = [&](int s, int d) { return matrix[static_cast<std::size_t>(s) * p + static_cast<std::size_t>(d)]; };
        report.part_records.assign(static_cast<std::size_t>(p), 0);
        for (int s = 0; s < p; ++s)
            for (int d = 0; d < p; ++d) report.part_records[static_cast<std::size_t>(d)] += count_of(s, d);
        part = report.part_records[static_cast<std::size_t>(rank)];
        report.imbalance = imbalance_of(report.part_records);

        // Each source's records land in a region of their own, in the order they were sent: in memory
        // where the budget holds the part (ExchangeMemory::part_in_memory), else in a temp file.
        const bool part_in_memory = memory.part_in_memory(part * width);
        std::vector<std::uint64_t> cursor(static_cast<std::size_t>(p), 0);  // bytes, per source
        step([&] {
            if (part_in_memory) {
                received_memory.emplace(static_cast<std::size_t>(part * width));
            } else {
                received.emplace(io::create_temp_file(tmp));
                received->allocate(part * width);
            }
            std::uint64_t at = 0;
            for (int s = 0; s < p; ++s) {
                cursor[static_cast<std::size_t>(s)] = at;
                at += count_of(s, rank) * width;
            }
        });
        ranks.agree(step.failure());
        std::uint64_t rounds = 0;
        for (const std::uint64_t n : ranks.all_gather(std::span<const std::uint64_t>(&my_rounds, 1))) rounds = std::max(rounds, n);
        report.exchange_rounds = rounds;
        // A round sends at most a block of this rank's range.
        std::optional<Exchange> exchange;
        exchange.emplace(ranks, std::min(block_records, records) * width, report.exchange != "messages");
        report.exchange = exchange->shared_memory() ? "shared" : "messages";
        if (rank == 0 && !exchange->shared_memory_refused().empty() && sort.notice)
            sort.notice("the ranks could not share memory (" + exchange->shared_memory_refused() + "); the exchange goes by MPI messages");
        if (progress) progress->start_phase(ProgressPhase::exchanging, records * width);
        // Round r + 1 is laid out (read, classified and scattered) on this thread while round r moves
        // on another (Exchange): the rounds alternate between two halves of the send areas, and this
        // rank's own records between two pieces. A part in memory takes every source's records straight
        // into place, each source's after the last it sent; a part in a temp file takes them into
        // buffers, written to the file once their round has moved (the other sources' reused every
        // round, this rank's own every other).
        std::vector<Piece> from(static_cast<std::size_t>(p));
        Piece own[2];
        auto resized = [](Piece& piece, std::uint64_t bytes) {
            piece.resize(static_cast<std::size_t>(bytes));
            return piece.data();
        };
        auto land_at_cursor = [&](int source, std::uint64_t bytes) -> std::byte* {
            std::uint64_t& at = cursor[static_cast<std::size_t>(source)];
            if (at + bytes > received_memory->size())
                throw std::logic_error("rank " + std::to_string(source) + " sent more than it counted");
            std::byte* place = received_memory->data() + at;
            at += bytes;
            return place;
        };
        auto lay = [&](std::uint64_t round) {
            Piece& mine = own[round % 2];
            mine.clear();
            step([&] {
                if (round >= my_rounds) return;
                read_block(round, false);
                scatter(block, parts, static_cast<std::size_t>(p), width, [&](std::size_t part_of, std::uint64_t bytes) {
                    if (part_of == static_cast<std::size_t>(rank))
                        return received_memory ? land_at_cursor(rank, bytes) : resized(mine, bytes);
                    report.exchange_bytes_sent += bytes;
                    return exchange->piece(round, static_cast<int>(part_of), bytes);
                });
                if (progress) progress->add(block.size());
            });
        };
        Step moving;  // the failures of the thread that moves the rounds (writing what they brought)
        auto move = [&](std::uint64_t round) {
            const auto transfer_start = Clock::now();
            // Every other source's piece lands (its size every round, 0 included).
            report.shared_bytes_sent += exchange->round(round, [&](int source, std::uint64_t bytes) -> std::byte* {
                return received_memory ? land_at_cursor(source, bytes) : resized(from[static_cast<std::size_t>(source)], bytes);
            });
            report.step_seconds.transfer += seconds_since(transfer_start);
            if (received_memory) return;
            moving([&] {
                for (int s = 0; s < p; ++s) {
                    const auto source = static_cast<std::size_t>(s);
                    const Piece& piece = s == rank ? own[round % 2] : from[source];
                    io::write_parallel(*received, cursor[source], piece);
                    cursor[source] += piece.size();
                }
            });
        };
        // A rank that failed goes on taking part in every round, sending nothing, until the exchange ends.
        // Where MPI may not be called from another thread, each round moves (deferred) after the next is laid out.
        const std::launch moving_thread = ranks.any_thread() ? std::launch::async : std::launch::deferred;
        lay(0);
        for (std::uint64_t round = 0; round < rounds; ++round) {
            std::future<void> moved = std::async(moving_thread, move, round);
            lay(round + 1);
            moved.get();
        }
        exchange.reset();
        ranks.agree(step.failure().empty() ? moving.failure() : step.failure());
        range_map.reset();
        input = InputFiles();
        range_bytes = io::HostBuffer();
        block_bytes_read = Piece();
        range_parts = io::HostBuffer();
        block_parts.reset();
        from.clear();
        own[0] = own[1] = Piece();
        end_step(report.step_seconds.exchange);
    }

    // Every rank has read its share of the GPU before the ranks agree that OUTPUT is made (below),
    // so before any of them sorts.
    step([&] {
        if (const auto share = device_share.get()) device_budget = share;
    });

    // 4. OUTPUT, made before the sort: with --partitioned a file of each rank's own, else one file
    // that rank 0 creates under a hidden name and every rank opens to write its part of. Either
    // appears only once every rank has written its part.
    std::optional<io::AtomicOutputFile> out;  // this rank's partition file, or rank 0's OUTPUT
    std::optional<io::File> shared;           // OUTPUT as every rank writes it (not partitioned)
    // A rank that dies (SIGKILL, its node lost) cannot remove what it named; the launcher then ends
    // the others by SIGTERM, and they remove it: OUTPUT's hidden name (chosen by rank 0 and
    // registered by every other rank before rank 0 makes the file, so that no moment of it is
    // unknown to them) and, with --partitioned, the ranks' files in place (step 6), until every
    // rank's is.
    io::UnlinkOnSignal peer_cleanup;
    std::string hidden;
    step([&] {
        if (!options.partitioned && rank == 0) hidden = io::AtomicOutputFile::hidden_name_for(sort.output);
    });
    ranks.agree(step.failure());
    if (!options.partitioned) {
        hidden = ranks.broadcast(hidden, 0);
        if (rank != 0) peer_cleanup = io::UnlinkOnSignal(hidden);  // rank 0's file registers it itself
    }
    step([&] {
        if (options.partitioned) {
            out.emplace(partition_name(sort.output, rank));
        } else if (rank == 0) {
            out.emplace(sort.output, hidden);
            if (!sort.unique) out->file().truncate(part_offset_total(report.part_records, rank).second * width);
        }
    });
    ranks.agree(step.failure());
    if (!options.partitioned) {
        step([&] {
            shared.emplace(::open(hidden.c_str(), O_RDWR | O_CLOEXEC), sort.output);
            if (!shared->is_open()) io::throw_errno("cannot write", sort.output, errno);
        });
        ranks.agree(step.failure());
    }
    const io::File& target = options.partitioned ? out->file() : *shared;

    // 5. This rank's part, sorted by the single-process engine: straight into its place in OUTPUT;
    // with --unique (how many records each part keeps is known only once all are sorted) into a temp
    // file, whose kept records are then copied there.
    SortOptions local = sort;
    local.device_memory_bytes = device_budget;
    local.input_compression = local.output_compression = Compression::none;
    local.tmp_dir = tmp;
    local.progress = progress;  // the phases of this rank's own sort
    if (received_memory) {
        local.input_memory = std::span<const std::byte>(received_memory->data(), received_memory->size());
        local.memory_bytes = std::max(kMinMemoryBudget, budget - part * width);
    } else {
        if (received) local.input = "/proc/self/fd/" + std::to_string(received->fd());  // else INPUT itself
        local.memory_bytes = budget;
    }
    if (runs) {
        // This rank's range, sorted into runs in its region of OUTPUT (which other ranks read), its
        // part of every rank's runs merged into memory, and once every rank has merged, copied into
        // that region (its part starts where its range does).
        std::optional<OwnRuns> own;
        std::vector<PeerRuns> peers(static_cast<std::size_t>(p));  // every other rank's runs
        auto region_of = [&](int s) { return options.partitioned ? 0 : range_first(all_records, s, p) * width; };
        step([&] {
            own.emplace(target, region_of(rank), records * width, std::max(1u, threads / 2));
        });
        ranks.agree(step.failure());
        const std::vector<std::string> addresses = ranks.all_gather(own ? own->address() : std::string());
        step([&] {
            for (int s = 0; s < p; ++s)
                if (s != rank)
                    peers[static_cast<std::size_t>(s)] =
                        PeerRuns(addresses[static_cast<std::size_t>(s)], region_of(s),
                                 (range_first(all_records, s + 1, p) - range_first(all_records, s, p)) * width);
        });
        ranks.agree(step.failure());
        io::HostBuffer merged;  // this rank's part
        local.input_memory = range_map ? std::span<const std::byte>(range_map->data(), range_map->size())
                                        : std::span<const std::byte>();
        local.memory_bytes = std::max(kMinMemoryBudget, budget - records * width);
        // The kernel unmaps a map of 16 GiB in about half a second, on one thread: each map other than
        // the region's goes on a thread of its own once nothing reads it, while the job goes on
        // (INPUT's once the runs are formed, the other ranks' once this rank's merge is done).
        std::future<void> input_released, peers_released;
        std::vector<std::uint64_t> counts;  // every rank's runs
        SharedRuns shared;
        shared.first = first;
        shared.gather = [&](std::span<const std::uint64_t> sizes) {
            input_released = std::async(std::launch::async, [&range_map] { range_map.reset(); });
            // Every rank has formed its runs (a rank that failed says so here, and every rank ends).
            ranks.agree(std::string());
            const std::uint64_t count = sizes.size();
            counts = ranks.all_gather(std::span<const std::uint64_t>(&count, 1));
            const std::vector<std::byte> all = ranks.all_gather(std::as_bytes(sizes));
            std::vector<std::uint64_t> records(all.size() / sizeof(std::uint64_t));
            if (!records.empty()) std::memcpy(records.data(), all.data(), records.size() * sizeof(std::uint64_t));  // none: no records at all
            std::vector<std::span<const std::byte>> every;
            std::size_t at = 0;  // runs of the ranks before
            for (int s = 0; s < p; ++s) {
                const std::span<const std::byte> memory =
                    s == rank ? std::span<const std::byte>(own->bytes()) : peers[static_cast<std::size_t>(s)].bytes();
                const std::size_t count = static_cast<std::size_t>(counts[static_cast<std::size_t>(s)]);
                for (const std::span<const std::byte> run : runs_in(memory, std::span<const std::uint64_t>(records).subspan(at, count), width))
                    every.push_back(run);
                at += count;
            }
            return every;
        };
        // A rank that failed before its runs were formed ends the others in their gather (above), as
        // RankError, which goes on to end the job; any other failure ends every rank after the merge.
        std::optional<RankError> failed_elsewhere;
        step([&] {
            try {
                merged = io::HostBuffer(static_cast<std::size_t>(records * width));
                shared.runs = own->bytes();
                shared.part = std::span<std::byte>(merged.data(), merged.size());
                local.shared_runs = shared;
                report.part = sort_file(local);
                peers_released = std::async(std::launch::async, [&peers] { peers.clear(); });
            } catch (const RankError& e) {
                failed_elsewhere = e;
            }
        });
        if (failed_elsewhere) throw *failed_elsewhere;
        ranks.agree(step.failure());  // every rank's merge has read what it needed of the others' runs
        // What crossed to this rank: its merge's records from the other ranks' runs.
        std::size_t run = 0;
        for (int s = 0; s < p; ++s)
            for (std::uint64_t r = 0; r < counts[static_cast<std::size_t>(s)]; ++r, ++run)
                if (s != rank) report.peer_bytes_read += report.part.shared_run_records.at(run) * width;
        end_step(report.step_seconds.sort);  // the copy belongs to the output step
        step([&] {
            if (progress) progress->start_phase(ProgressPhase::writing, merged.size());
            // Dropping the region's pages from its map once it is all written took twice as long as
            // the copy, on one thread (0.8 s for 16 GiB on the H200 machine): the pages of each piece
            // copied are released on a thread of their own while the next piece is copied.
            constexpr std::size_t kReleasePieceBytes = std::size_t{1} << 30;
            {
                std::optional<io::ReleaseBehind> released;
                if (own->mapping()) released.emplace(*own->mapping(), kReleasePieceBytes);
                const SortOutput region(MappedFile{own->bytes().data(), own->bytes().size()}, progress,
                                        released ? release_behind(*released) : SortOutput::Written());
                io::for_each_piece(std::span<const std::byte>(merged.data(), merged.size()), width,
                                   std::min(kReleasePieceBytes, io::progress_piece_bytes(progress != nullptr, threads, merged.size())),
                                   [&](std::size_t offset, std::span<const std::byte> piece) { region.write(offset, piece); });
            }
            for (std::future<void>* unmapped : {&peers_released, &input_released})
                if (unmapped->valid()) unmapped->get();
            own.reset();
            merged = io::HostBuffer();
            if (sort.sync) target.sync_data();
        });
        ranks.agree(step.failure());
        range_map.reset();
        report.output_records = all_records;
    } else if (gpu_runs) {
        // This rank's runs formed with the exchange through the GPUs, while the pages of its share of
        // OUTPUT are faulted in: its range's region and a sixty-fourth of it on either side, where its
        // part will lie within the splitters' imbalance. Then its runs (its part) merged straight into
        // their place in OUTPUT, the written pages released behind the merge.
        const std::uint64_t slack = options.partitioned ? 0 : records * width / 64;
        const std::uint64_t range_at = options.partitioned ? 0 : first * width;
        const std::uint64_t region_at = range_at > slack ? range_at - slack : 0;
        const std::uint64_t region_end = options.partitioned ? 0 : std::min(all_records * width, range_at + records * width + slack);
        std::optional<OwnRuns> region;
        step([&] { region.emplace(target, region_at, region_end - region_at, std::max(1u, threads / 2)); });
        ranks.agree(step.failure());
        if (progress) progress->start_phase(ProgressPhase::exchanging, records * width);
        GpuRuns exchanged;
        step([&] {
            exchanged = form_runs_through_gpus(
                sort, device_budget, ranks,
                range_map ? std::span<const std::byte>(range_map->data(), range_map->size()) : std::span<const std::byte>(), first,
                splitter_keys, splitter_positions, std::span<std::byte>(gpu_runs_memory.data(), gpu_runs_memory.size()));
            if (progress) progress->add(records * width);
        });
        ranks.agree(step.failure());
        range_map.reset();
        std::uint64_t received = 0;
        for (const std::uint64_t n : exchanged.run_records) received += n;
        report.part_records = ranks.all_gather(std::span<const std::uint64_t>(&received, 1));
        part = received;
        report.imbalance = imbalance_of(report.part_records);
        report.peer_bytes_read = exchanged.peer_bytes;
        report.exchange_bytes_sent = exchanged.sent_bytes;
        report.exchange_rounds = exchanged.rounds;
        report.step_seconds.transfer = exchanged.pull_seconds;
        end_step(report.step_seconds.exchange);

        const auto [offset, total] = part_offset_total(report.part_records, rank);
        const std::uint64_t part_at = options.partitioned ? 0 : offset * width, part_bytes = part * width;
        // A part beyond the region faulted in (an imbalance larger than its margin) is mapped on its own.
        const bool outside = part_at < region_at || part_at + part_bytes > region_end;
        const std::uint64_t map_at = outside ? part_at : region_at;
        step([&] {
            if (outside) region.emplace(target, part_at, part_bytes, 0);
            if (part == 0) return;
            const std::span<std::byte> runs_bytes(gpu_runs_memory.data(), static_cast<std::size_t>(part_bytes));
            constexpr std::size_t kReleasePieceBytes = std::size_t{1} << 30;
            std::optional<io::ReleaseBehind> released;
            released.emplace(*region->mapping(), kReleasePieceBytes);
            released->written(0, part_at - map_at);  // the bytes before the part are not this rank's to write
            SharedRuns given;
            given.runs = runs_bytes;
            given.part = region->bytes().subspan(static_cast<std::size_t>(part_at - map_at), static_cast<std::size_t>(part_bytes));
            given.formed = exchanged.run_records;
            given.gather = [&](std::span<const std::uint64_t> sizes) { return runs_in(runs_bytes, sizes, width); };
            given.written = release_behind(*released, part_at - map_at);
            local.input_memory = runs_bytes;
            local.memory_bytes = std::max(kMinMemoryBudget, budget - part_bytes);
            local.shared_runs = given;
            report.part = sort_file(local);
            released.reset();
            gpu_runs_memory = io::HostBuffer();
            region.reset();
            if (sort.sync) target.sync_data();
        });
        ranks.agree(step.failure());
        report.output_records = total;
        end_step(report.step_seconds.sort);
    } else if (!sort.unique) {
        const auto [offset, total] = part_offset_total(report.part_records, rank);
        step([&] {
            if (part == 0) return;
            local.output_region = OutputRegion{target.fd(), options.partitioned ? 0 : offset * width};
            report.part = sort_file(local);
            if (sort.sync) target.sync_data();
        });
        received.reset();
        received_memory.reset();
        ranks.agree(step.failure());
        report.output_records = total;
        end_step(report.step_seconds.sort);
    } else {
        std::optional<io::File> sorted;  // a nameless temp file: nothing is left behind, even after SIGKILL
        step([&] {
            if (part == 0) return;
            sorted.emplace(io::create_temp_file(tmp));
            local.output_region = OutputRegion{sorted->fd(), 0};
            report.part = sort_file(local);
        });
        received.reset();
        received_memory.reset();
        ranks.agree(step.failure());
        end_step(report.step_seconds.sort);

        // A part's first record goes when its key ended the part before (the last part with
        // records), since that part kept the first of the key in input order.
        const std::uint64_t sorted_records = sorted ? report.part.output_records : 0;
        std::uint64_t skip = 0;
        std::vector<std::byte> ends(2 * reader->key_bytes() + 1, std::byte{0});
        step([&] {
            if (sorted_records == 0) return;
            std::vector<std::byte> record(width);
            sorted->read_at(0, record);
            std::memcpy(ends.data() + 1, reader->point(record.data(), 0).key.data(), reader->key_bytes());
            sorted->read_at((sorted_records - 1) * width, record);
            std::memcpy(ends.data() + 1 + reader->key_bytes(), reader->point(record.data(), 0).key.data(), reader->key_bytes());
            ends[0] = std::byte{1};
        });
        ranks.agree(step.failure());
        const std::vector<std::byte> all = ranks.all_gather(ends);
        const std::size_t each = ends.size();
        for (int r = rank - 1; r >= 0 && sorted_records > 0; --r) {
            const std::byte* theirs = all.data() + static_cast<std::size_t>(r) * each;
            if (theirs[0] == std::byte{0}) continue;
            if (std::memcmp(theirs + 1 + reader->key_bytes(), ends.data() + 1, reader->key_bytes()) == 0) skip = 1;
            break;
        }
        const std::uint64_t kept = sorted_records - skip;
        const std::vector<std::uint64_t> kept_of = ranks.all_gather(std::span<const std::uint64_t>(&kept, 1));
        const auto [offset, total] = part_offset_total(kept_of, rank);
        report.output_records = total;
        if (progress) progress->start_phase(ProgressPhase::writing, kept * width);
        step([&] {
            if (!options.partitioned && rank == 0) out->file().truncate(total * width);
        });
        ranks.agree(step.failure());
        step([&] {
            if (kept == 0) return;
            copy_bytes(*sorted, skip * width, target, options.partitioned ? 0 : offset * width, kept * width, progress);
            if (sort.sync) target.sync_data();
        });
        ranks.agree(step.failure());
    }

    // 6. OUTPUT into place, once every rank has written its part.
    if (options.partitioned) {
        // Every rank's file by device and inode, so that each rank removes any rank's of its host
        // (whose file system it sees as that rank does) that is in place when the job fails, its
        // own or a dead rank's (on the launcher's signal), and leaves an older file of that name that
        // was not replaced. A name that is a symbolic link is the link's target, where the file goes.
        io::FileId mine;
        std::vector<std::string> placed_at(static_cast<std::size_t>(p));
        step([&] {
            mine = out->file().id();
            for (int s = 0; s < p; ++s)
                if (ranks.on_this_host(s)) placed_at[static_cast<std::size_t>(s)] = io::follow_links(partition_name(sort.output, s));
        });
        ranks.agree(step.failure());
        const std::vector<std::uint64_t> ids =
            ranks.all_gather(std::span<const std::uint64_t>(std::array{mine.device, mine.inode}));
        auto id_of = [&](int s) {
            return io::FileId{ids[static_cast<std::size_t>(2 * s)], ids[static_cast<std::size_t>(2 * s + 1)]};
        };
        // On a signal: its own and the next ranks' of its host, a quarter of the table of paths to
        // remove on a signal at most.
        std::vector<io::UnlinkOnSignal> placed;
        for (int k = 0; k < p && placed.size() < io::kSignalCleanupCapacity / 4; ++k) {
            const int s = (rank + k) % p;
            if (ranks.on_this_host(s)) placed.emplace_back(placed_at[static_cast<std::size_t>(s)], id_of(s));
        }
        step([&] { out->commit(sort.sync); });
        try {
            ranks.agree(step.failure());
        } catch (const RankError&) {
            for (int s = 0; s < p; ++s)  // another rank's file did not appear: none does
                if (ranks.on_this_host(s)) io::unlink_if_names(placed_at[static_cast<std::size_t>(s)].c_str(), id_of(s));
            throw;
        }
    } else {
        shared.reset();
        step([&] {
            if (rank == 0) out->commit(sort.sync);
        });
        ranks.agree(step.failure());
    }
    peer_cleanup.release();  // every rank's part is in place
    end_step(report.step_seconds.output);
    if (progress) progress->start_phase(ProgressPhase::done, 0);
    report.seconds = seconds_since(start);
    return report;
}

}  // namespace gpusort::distributed
