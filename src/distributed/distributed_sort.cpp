// distributed_sort: samples and splitters, the counted exchange into a temp file, the sort of each
// part with sort_file, and the parts copied into OUTPUT.
#include "src/distributed/distributed_sort.hpp"

#include "gpusort/compression.hpp"
#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/signal_cleanup.hpp"
#include "io/temp_file.hpp"
#include "src/distributed/input_files.hpp"
#include "src/distributed/key_points.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <unistd.h>

#include <tbb/blocked_range.h>
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

// Bytes of INPUT a rank reads and sends per round: within its memory budget, which holds the block
// and what all ranks may send it in one round.
std::uint64_t block_bytes(const SortOptions& sort, int ranks, std::size_t width) {
    const std::uint64_t budget = sort.memory_bytes.value_or(default_memory_budget());
    std::uint64_t block = std::clamp<std::uint64_t>(budget / (2 * (static_cast<std::uint64_t>(ranks) + 1)),
                                                    std::uint64_t{1} << 20, std::uint64_t{256} << 20);
    return std::max<std::uint64_t>(1, block / width) * width;
}

std::string temp_folder(const SortOptions& sort) {
    if (sort.tmp_dir) return *sort.tmp_dir;
    const std::string folder = io::parent_folder(io::follow_links(sort.output));
    return folder.empty() ? "." : folder;
}

// Runs the work of one step unless an earlier one failed; keeps the failure for agree().
class Step {
public:
    void operator()(const std::function<void()>& work) {
        if (!failure_.empty()) return;
        try {
            work();
        } catch (const std::exception& e) {
            failure_ = e.what();
            if (failure_.empty()) failure_ = "unknown error";
        }
    }
    const std::string& failure() const { return failure_; }

private:
    std::string failure_;
};

// A named file in the temp folder for the sorted part (sort_file writes to a name), removed when
// done with and on a signal.
class PartFile {
public:
    explicit PartFile(const std::string& folder) {
        std::string pattern = folder + "/.gpusort-mpi-part-XXXXXX";
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        io::HoldCleanupSignals hold;
        const int fd = ::mkostemp(name.data(), O_CLOEXEC);
        if (fd < 0) io::throw_errno("cannot create a temp file in", folder, errno);
        ::close(fd);
        name_ = name.data();
        cleanup_ = io::UnlinkOnSignal(name_);
    }
    ~PartFile() { remove(); }
    PartFile(const PartFile&) = delete;
    PartFile& operator=(const PartFile&) = delete;
    const std::string& name() const { return name_; }
    // Opens the sorted part for reading and removes its name (it stays readable until closed).
    io::File open_and_remove() {
        io::File file = io::File::open_read(name_);
        remove();
        return file;
    }

private:
    void remove() {
        if (name_.empty()) return;
        ::unlink(name_.c_str());
        cleanup_.release();
        name_.clear();
    }
    std::string name_;
    io::UnlinkOnSignal cleanup_;
};

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

// The records of `block` by part into to[part], each part's in block order: a counting sort, on all
// threads (each slice of the block counts its records per part, then copies them to their places).
// The buffers of `to` are resized in place, so that a round reuses the memory of the one before.
void scatter(std::span<const std::byte> block, const std::vector<std::uint32_t>& parts, std::size_t part_count,
             std::size_t width, std::vector<std::vector<std::byte>>& to) {
    constexpr std::size_t kSlice = 1 << 16;  // records
    const std::size_t slices = (parts.size() + kSlice - 1) / kSlice;
    std::vector<std::uint64_t> at(slices * part_count, 0);  // at[slice * part_count + part]: records before
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t slice) {
        for (std::size_t i = slice * kSlice; i < std::min(parts.size(), (slice + 1) * kSlice); ++i)
            ++at[slice * part_count + parts[i]];
    });
    to.resize(part_count);
    for (std::size_t part = 0; part < part_count; ++part) {
        std::uint64_t total = 0;
        for (std::size_t slice = 0; slice < slices; ++slice) {
            const std::uint64_t n = at[slice * part_count + part];
            at[slice * part_count + part] = total;
            total += n;
        }
        to[part].resize(static_cast<std::size_t>(total * width));
    }
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t slice) {
        for (std::size_t i = slice * kSlice; i < std::min(parts.size(), (slice + 1) * kSlice); ++i) {
            std::uint64_t& next = at[slice * part_count + parts[i]];
            std::memcpy(to[parts[i]].data() + next * width, block.data() + i * width, width);
            ++next;
        }
    });
}

}  // namespace

int device_of_local_rank(int local_rank) {
#ifdef GPUSORT_WITH_GPU
    if (const int devices = gpu::device_count(); devices > 0) return local_rank % devices;
#else
    static_cast<void>(local_rank);  // no GPU: the CPU backend takes no device
#endif
    return 0;
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
    const tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                                      std::max(1u, sort.threads.value_or(default_threads())));

    // 1. The key, INPUT and this rank's range of it.
    const KeySpec spec = sort.records.value_or(whole_record_key(sort.order.type, sort.order.descending));
    std::optional<KeyReader> reader;
    InputFiles input;
    std::uint64_t first = 0, records = 0, width = 0;
    step([&] {
        if (sort.output == "-" || sort.output_compression.value_or(compression_of(sort.output)) != Compression::none)
            throw SortError("gpusort-mpi writes OUTPUT at offsets on every rank: it must be an uncompressed file, not '" +
                            sort.output + "'");
        spec.validate();
        reader.emplace(spec);
        width = spec.record_size;
        input = InputFiles(options.input_list ? read_input_list(sort.input) : std::vector<std::string>{sort.input}, width,
                           sort.input_compression);
        const std::uint64_t size = input.size();
        const std::uint64_t all = size / width;
        first = all * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(p);
        records = all * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(p) - first;
    });
    ranks.agree(step.failure());
    report.record_size = width;
    report.range_records = records;

    // 2. Samples and splitters.
    auto step_start = Clock::now();
    auto end_step = [&](double& seconds) {
        seconds = seconds_since(step_start);
        step_start = Clock::now();
    };
    std::vector<KeyPoint> splitters;
    std::optional<PartFinder> finder;
    {
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
        splitters = choose_splitters(std::move(samples), static_cast<std::size_t>(p), *reader);
        report.splitters = splitters.size();
        finder.emplace(spec, splitters);
    }
    end_step(report.step_seconds.samples);

    // 3. The counted exchange: every record of the range goes to the rank of its part.
    const std::uint64_t block_records = block_bytes(sort, p, width) / width;
    const std::uint64_t my_rounds = (records + block_records - 1) / block_records;
    std::vector<std::byte> block;
    std::vector<std::uint32_t> parts;  // of the records of the block
    // Reads block `round` of this rank's range and finds the part of each of its records.
    auto read_block = [&](std::uint64_t round) {
        const std::uint64_t at = round * block_records;
        block.resize(static_cast<std::size_t>(std::min(block_records, records - at) * width));
        input.read((first + at) * width, block);
        finder->find(block, first + at, parts);
    };
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
    ProgressCounters* const progress = sort.progress;  // rank 0's, when it draws the progress line
    if (progress) progress->start_phase(ProgressPhase::reading, records * width);
    step([&] {
        for (std::uint64_t round = 0; round < my_rounds; ++round) {
            read_block(round);
            for (const std::uint32_t part : parts) ++counts[part];
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
    const std::uint64_t part = report.part_records[static_cast<std::size_t>(rank)];
    {
        std::uint64_t largest = 0, all = 0;
        for (const std::uint64_t n : report.part_records) {
            largest = std::max(largest, n);
            all += n;
        }
        report.imbalance = all > 0 ? static_cast<double>(largest) * p / static_cast<double>(all) - 1 : 0;
    }

    // Each source's records land in a region of their own, in the order they were sent.
    const std::string tmp = temp_folder(sort);
    std::optional<io::File> received;
    std::vector<std::uint64_t> cursor(static_cast<std::size_t>(p), 0);  // bytes, per source
    step([&] {
        received.emplace(io::create_temp_file(tmp));
        received->allocate(part * width);
        std::uint64_t at = 0;
        for (int s = 0; s < p; ++s) {
            cursor[static_cast<std::size_t>(s)] = at;
            at += count_of(s, rank) * width;
        }
    });
    ranks.agree(step.failure());
    std::uint64_t rounds = 0;
    for (const std::uint64_t n : ranks.all_gather(std::span<const std::uint64_t>(&my_rounds, 1))) rounds = std::max(rounds, n);
    if (progress) progress->start_phase(ProgressPhase::exchanging, records * width);
    // The buffers of what is sent and received, reused from round to round.
    std::vector<std::vector<std::byte>> to(static_cast<std::size_t>(p)), from(static_cast<std::size_t>(p));
    for (std::uint64_t round = 0; round < rounds; ++round) {
        for (auto& piece : to) piece.clear();
        // A rank that failed goes on taking part, sending nothing, until the exchange ends.
        step([&] {
            if (round >= my_rounds) return;
            read_block(round);
            scatter(block, parts, static_cast<std::size_t>(p), width, to);
            if (progress) progress->add(block.size());
        });
        for (int d = 0; d < p; ++d)
            if (d != rank) report.exchange_bytes_sent += to[static_cast<std::size_t>(d)].size();
        ranks.exchange(to, from);
        step([&] {
            for (int s = 0; s < p; ++s) {
                const auto& piece = from[static_cast<std::size_t>(s)];
                io::write_parallel(*received, cursor[static_cast<std::size_t>(s)], piece);
                cursor[static_cast<std::size_t>(s)] += piece.size();
            }
        });
    }
    ranks.agree(step.failure());
    input = InputFiles();
    end_step(report.step_seconds.exchange);

    // 4. This rank's part, sorted by the single-process engine into a file of its own.
    std::optional<io::File> sorted;
    step([&] {
        if (part == 0) return;
        PartFile part_file(tmp);
        SortOptions local = sort;
        local.input = "/proc/self/fd/" + std::to_string(received->fd());
        local.output = part_file.name();
        local.input_compression = local.output_compression = Compression::none;
        local.tmp_dir = tmp;
        local.progress = progress;  // the phases of this rank's own sort
        report.part = sort_file(local);
        sorted.emplace(part_file.open_and_remove());
    });
    received.reset();
    ranks.agree(step.failure());
    end_step(report.step_seconds.sort);

    // --unique: a part's first record goes when its key ended the part before (the last part with
    // records), since that part kept the first of the key in input order.
    const std::uint64_t sorted_records = sorted ? report.part.output_records : 0;
    std::uint64_t skip = 0;
    if (sort.unique) {
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
    }
    const std::uint64_t kept = sorted_records - skip;
    const std::vector<std::uint64_t> kept_of = ranks.all_gather(std::span<const std::uint64_t>(&kept, 1));
    std::uint64_t offset = 0, total = 0;
    for (int r = 0; r < p; ++r) {
        if (r < rank) offset += kept_of[static_cast<std::size_t>(r)];
        total += kept_of[static_cast<std::size_t>(r)];
    }
    report.output_records = total;

    // 5. The parts into OUTPUT: it appears only once every rank has written its part.
    if (progress) progress->start_phase(ProgressPhase::writing, kept * width);
    if (options.partitioned) {
        const std::string name = partition_name(sort.output, rank);
        std::optional<io::AtomicOutputFile> out;
        step([&] {
            out.emplace(name);
            if (kept > 0) copy_bytes(*sorted, skip * width, out->file(), 0, kept * width, progress);
        });
        ranks.agree(step.failure());
        bool committed = false;
        step([&] {
            out->commit(sort.sync);
            committed = true;
        });
        try {
            ranks.agree(step.failure());
        } catch (const RankError&) {
            if (committed) ::unlink(name.c_str());  // another rank's file did not appear: none does
            throw;
        }
    } else {
        std::optional<io::AtomicOutputFile> out;  // on rank 0: held until moved to OUTPUT
        std::string hidden;
        step([&] {
            if (rank != 0) return;
            out.emplace(sort.output, io::AtomicOutputFile::Naming::named);
            out->file().truncate(total * width);
            hidden = out->temp_path();
        });
        ranks.agree(step.failure());
        hidden = ranks.broadcast(hidden, 0);
        step([&] {
            if (kept == 0) return;
            const io::File shared(::open(hidden.c_str(), O_WRONLY | O_CLOEXEC), sort.output);
            if (!shared.is_open()) io::throw_errno("cannot write", sort.output, errno);
            copy_bytes(*sorted, skip * width, shared, offset * width, kept * width, progress);
            if (sort.sync) shared.sync_data();
        });
        ranks.agree(step.failure());
        step([&] {
            if (rank == 0) out->commit(sort.sync);
        });
        ranks.agree(step.failure());
    }
    end_step(report.step_seconds.output);
    if (progress) progress->start_phase(ProgressPhase::done, 0);
    report.seconds = seconds_since(start);
    return report;
}

}  // namespace gpusort::distributed
