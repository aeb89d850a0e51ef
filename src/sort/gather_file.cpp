// gather_file(): applies a saved permutation (an index that a sort's index_output wrote) to a column
// of values: OUTPUT's record i is INPUT's record index[i]. The index is checked to be a permutation
// of INPUT's record numbers first, so that nothing is written for one that is not. Where INPUT fits
// in the memory budget, INPUT and the index are mapped and the records gathered in parallel into
// OUTPUT, a file that appears only once complete. Else two sorts with columns (sort_part) do it out
// of core: the index sorted with its own positions as the index output (its inverse: inv[j] is the
// position i where index[i] = j), then that inverse sorted with INPUT as its column, which puts
// record j at position inv[j], so that OUTPUT[i] = INPUT[index[i]].
#include "gpusort/sort_file.hpp"
#include "src/sort/gather_file.hpp"
#include "src/sort/sort_part.hpp"

#include "io/atomic_output_file.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"

#include <chrono>
#include <random>
#include <unistd.h>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

namespace gpusort {

namespace {

// The index, INPUT and OUTPUT must be regular, uncompressed files: a gather reads its inputs at
// any offsets and writes OUTPUT so.
void refuse_streams(const std::string& index, const SortOptions& options) {
    auto refuse = [](const std::string& path, bool forced_compression) {
        if (path == "-" || path.empty())
            throw SortError("a gather reads and writes regular files: standard input and output cannot be used");
        if (forced_compression || compression_of(path) != Compression::none)
            throw SortError("'" + path + "': a gather reads and writes uncompressed files only");
    };
    auto forced = [](const std::optional<Compression>& c) { return c.value_or(Compression::none) != Compression::none; };
    refuse(index, false);
    refuse(options.input, forced(options.input_compression));
    refuse(options.output, forced(options.output_compression));
    if (io::is_device(options.output)) throw SortError("'" + options.output + "' is not a regular file: a gather writes one");
}

// An input of the gather, open, with its size and time as they were then.
struct GatherInput {
    io::File file;
    io::FileStatus status;

    explicit GatherInput(const std::string& path) : file(io::File::open_read(path)), status(file.status()) {
        if (!status.regular) throw SortError("'" + path + "' is not a regular file: a gather reads regular files");
    }
    // Throws SortError where the file was written to since it was opened.
    void check_unchanged() const {
        const io::FileStatus now = file.status();
        if (now.size != status.size || now.modified.tv_sec != status.modified.tv_sec ||
            now.modified.tv_nsec != status.modified.tv_nsec)
            throw SortError("'" + file.path() + "' changed while it was being gathered (it was written to meanwhile)");
    }
};

// The index's entries (4 or 8 bytes: u32 unless automatic would make more than 2^32 of them), how
// many there are, and INPUT's record width; refused where the sizes do not divide.
struct GatherShape {
    std::size_t entry_width = 4;
    std::uint64_t entries = 0;
    std::size_t width = 0;
};

GatherShape shape_of(const GatherInput& index, const GatherInput& values, IndexType type) {
    GatherShape shape;
    const std::uint64_t size = index.status.size;
    if (type == IndexType::u64 || (type == IndexType::automatic && size / 4 > (std::uint64_t{1} << 32))) shape.entry_width = 8;
    if (size % shape.entry_width != 0)
        throw SortError("'" + index.file.path() + "' is " + std::to_string(size) + " bytes long, not a whole number of " +
                        std::to_string(shape.entry_width) + "-byte entries (" + (shape.entry_width == 4 ? "u32" : "u64") + ")");
    shape.entries = size / shape.entry_width;
    const std::uint64_t bytes = values.status.size;
    if (shape.entries == 0 ? bytes != 0 : bytes % shape.entries != 0)
        throw SortError("'" + values.file.path() + "' is " + std::to_string(bytes) + " bytes long, which is not a multiple of the " +
                        std::to_string(shape.entries) + " entries of '" + index.file.path() + "'");
    shape.width = shape.entries == 0 ? 0 : static_cast<std::size_t>(bytes / shape.entries);
    return shape;
}

// What the steps of one gather share.
struct GatherJob {
    const SortOptions& options;
    const GatherInput& index;
    const GatherInput& values;
    GatherShape shape;
    std::uint64_t memory_bytes = 0;  // the budget
    void phase(ProgressPhase p, std::uint64_t total) const {
        if (options.progress) options.progress->start_phase(p, total);
    }
    void count(std::uint64_t bytes) const {
        if (options.progress) options.progress->add(bytes);
    }
};

// The check that the index is a permutation: its bitmap takes the whole budget at most (nothing
// else is held meanwhile), so an index of more than 8 entries per byte of the budget is read once
// per range of that many values.
void check_index(const GatherJob& job) {
    const std::uint64_t n = job.shape.entries;
    if (n == 0) return;
    job.phase(ProgressPhase::reading, job.index.status.size);
    const io::FileMapping map(job.index.file, 0, job.index.status.size, io::FileMapping::Access::read);
    const std::span<const std::byte> entries(map.data(), map.size());
    gather::with_entry_type(job.shape.entry_width, [&]<class E>() {
        gather::check_permutation<E>(entries, n, job.memory_bytes * 8, job.index.file.path(), job.values.file.path());
    });
    job.count(job.index.status.size);
}

// OUTPUT is one of the inputs itself (the same file, by any name): the gather replaces it.
bool replaces_an_input(const GatherJob& job) {
    io::FileId output;
    return io::file_id(job.options.output, output) && (output == job.index.file.id() || output == job.values.file.id());
}

// Gathers the records in blocks, in parallel, into OUTPUT's reserved space through a map, or where
// space cannot be reserved, each block into a buffer of its own written with pwrite.
void gather_into(const GatherJob& job, const io::File& out) {
    const std::uint64_t n = job.shape.entries;
    const std::size_t width = job.shape.width;
    const std::uint64_t bytes = job.values.status.size;
    const io::FileMapping values(job.values.file, 0, bytes, io::FileMapping::Access::read);
    const io::FileMapping index(job.index.file, 0, job.index.status.size, io::FileMapping::Access::read);
    std::optional<io::FileMapping> mapped;
    if (out.allocate(bytes)) mapped.emplace(out, 0, bytes);
    // Blocks of 4 MiB of records at most (the buffer of one, where OUTPUT is not mapped).
    const std::uint64_t block = std::max<std::uint64_t>(1, std::min(gather::kBlockEntries, (std::uint64_t{4} << 20) / width));
    gather::with_entry_type(job.shape.entry_width, [&]<class E>() {
        tbb::parallel_for(std::uint64_t{0}, (n + block - 1) / block, [&](std::uint64_t b) {
            const std::uint64_t first = b * block, count = std::min(block, n - first);
            if (mapped) {
                gather::gather_block<E>(values.data(), width, index.data(), first, count, mapped->data() + first * width);
            } else {
                std::vector<std::byte> buffer(count * width);
                gather::gather_block<E>(values.data(), width, index.data(), first, count, buffer.data());
                out.write_at(first * width, buffer);
            }
            job.count(count * width);
        });
    });
}

// INPUT in the budget: gathered into OUTPUT, committed once complete and the inputs checked
// unchanged (flushed first where asked or where OUTPUT replaces an input).
void gather_in_memory(const GatherJob& job, SortReport& report) {
    const bool replaces = replaces_an_input(job);  // looked at before OUTPUT is touched
    io::AtomicOutputFile out(job.options.output);
    if (job.shape.entries > 0) {
        ScopedPhase write(report.times.write);
        job.phase(ProgressPhase::writing, job.values.status.size);
        gather_into(job, out.file());
    }
    job.index.check_unchanged();
    job.values.check_unchanged();
    if (job.options.progress) job.options.progress->start_phase(ProgressPhase::flushing, 0, ProgressCounters::Counting::time_only);
    out.commit(job.options.sync || replaces);
    report.backend = "cpu";
    report.backend_reason = "a gather in memory runs on the CPU";
    report.runs = job.shape.entries > 0 ? 1 : 0;
}

// A name for the inverse permutation, hidden in `folder`, that nothing is at: removed with this
// object, and by a signal that ends the program. (The sort's API takes only named outputs. A
// SIGKILL while it exists leaves it, since no later sort removes ".gpusort-gather-" files: they
// are not locked as the hidden outputs of AtomicOutputFile are.)
class InverseFile {
public:
    explicit InverseFile(const std::string& folder) {
        std::mt19937_64 random{std::random_device{}()};
        io::FileId none;
        do {
            path_ = folder + "/.gpusort-gather-" + std::to_string(::getpid()) + "-" + std::to_string(random() % 1000000000);
        } while (io::file_id(path_, none));
        cleanup_ = io::UnlinkOnSignal(path_);
    }
    ~InverseFile() { ::unlink(path_.c_str()); }
    InverseFile(const InverseFile&) = delete;
    InverseFile& operator=(const InverseFile&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
    io::UnlinkOnSignal cleanup_;
};

// A sort of `keys`, entries of `entry_width` bytes, with the gather's budgets and no key output.
PartSortOptions sort_of(const std::string& keys, std::size_t entry_width, const SortOptions& options, const std::string& tmp_dir) {
    PartSortOptions sort;
    sort.input = keys;
    sort.order = {entry_width == 4 ? KeyType::u32 : KeyType::u64, false};
    sort.memory_bytes = options.memory_bytes;
    sort.threads = options.threads;
    sort.tmp_dir = tmp_dir;
    sort.spill_io = options.spill_io;
    sort.backend = options.backend;
    sort.device = options.device;
    sort.device_memory_bytes = options.device_memory_bytes;
    sort.progress = options.progress;
    sort.notice = options.notice;
    return sort;
}

// INPUT beyond the budget: the two sorts, the inverse permutation in a hidden file in tmp_dir.
void gather_out_of_core(const GatherJob& job, SortReport& report) {
    const SortOptions& options = job.options;
    const std::string tmp_dir = options.tmp_dir.value_or(io::parent_folder(io::follow_links(options.output)));
    const InverseFile inverse(tmp_dir);
    PartSortOptions argsort = sort_of(job.index.file.path(), job.shape.entry_width, options, tmp_dir);
    argsort.index_output = inverse.path();
    const PartSortReport first = sort_part(argsort);
    PartSortOptions apply = sort_of(inverse.path(), first.index_width, options, tmp_dir);
    apply.values = {{options.input, options.output, job.shape.width}};
    apply.sync = options.sync;  // OUT's sort only: the inverse is scratch, never worth a flush
    const PartSortReport second = sort_part(apply);
    report.plan = second.plan;
    report.backend = second.backend;
    report.backend_reason = second.backend_reason;
    report.runs = first.runs + second.runs;
    report.merge_passes = first.merge_passes + second.merge_passes;
    report.bytes_spilled = first.bytes_spilled + second.bytes_spilled + job.shape.entries * first.index_width;
    report.times += first.times;
    report.times += second.times;
    report.merge = second.merge;
}

}  // namespace

SortReport gather_file(const std::string& index, const SortOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    refuse_streams(index, options);
    const std::uint64_t memory = options.memory_bytes.value_or(default_memory_budget());
    if (memory < kMinMemoryBudget) throw std::invalid_argument("the memory budget must be at least 1M");
    const unsigned threads = std::max(1u, options.threads.value_or(default_threads()));
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
    if (options.progress) options.progress->start_phase(ProgressPhase::starting, 0);
    const GatherInput index_input(index), values(options.input);
    const GatherJob job{options, index_input, values, shape_of(index_input, values, options.index_type), memory};
    SortReport report;
    report.records = report.output_records = job.shape.entries;
    report.bytes = report.output_bytes = report.output_stored_bytes = values.status.size;
    report.record_size = job.shape.width;
    report.index_width = job.shape.entry_width;
    report.plan.memory_bytes = memory;
    report.plan.threads = threads;
    {
        ScopedPhase read(report.times.read);
        check_index(job);
    }
    if (values.status.size <= memory)
        gather_in_memory(job, report);
    else
        gather_out_of_core(job, report);
    if (options.progress) options.progress->start_phase(ProgressPhase::done, 0);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace gpusort
