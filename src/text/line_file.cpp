// gpusort-file --lines: the plan of a sort of lines, and the sort itself between gpusort-file's
// files: a plain INPUT read in parallel (else through a StreamReader), a plain OUTPUT file written
// straight (else through a StreamWriter into stdout, a device or a compressed file), a file put
// in place atomically, checked by --verify against the input's count, bytes and checksum.
#include "src/text/line_file.hpp"

#include "gpusort/errors.hpp"
#include "io/file.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "io/temp_file.hpp"
#include "src/output/sort_output.hpp"
#include "src/plan/plan_sort.hpp"
#include "src/text/line_check.hpp"
#include "src/text/line_merge.hpp"
#include "src/text/line_order.hpp"
#include "src/verify/record_checksum.hpp"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <unistd.h>

namespace gpusort {

namespace {

// Bytes of INPUT's front that the plan reads to tell the mean line.
constexpr std::uint64_t kSampleBytes = std::uint64_t{1} << 20;

Compression input_compression(const SortOptions& options) {
    return options.input_compression.value_or(compression_of(options.input));
}

Compression output_compression(const SortOptions& options) {
    return options.output_compression.value_or(compression_of(options.output));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A plain, regular INPUT: its size, and the mean line of its first MiB. (INPUT is opened either
// way, so that one that cannot be read fails first.)
void look_at_input(const SortOptions& options, char terminator, LinePlan& plan) {
    if (options.input == "-") return;
    const io::File file = io::File::open_read(options.input);
    const io::FileStatus status = file.status();
    if (!status.regular || input_compression(options) != Compression::none) return;
    plan.input_bytes = status.size;
    std::vector<std::byte> sample(static_cast<std::size_t>(std::min(status.size, kSampleBytes)));
    file.read_at(0, sample);
    const auto lines = std::count(sample.begin(), sample.end(), static_cast<std::byte>(terminator));
    if (!sample.empty()) plan.mean_line_bytes = static_cast<double>(sample.size()) / static_cast<double>(std::max<std::ptrdiff_t>(lines, 1));
}

// The chunks, runs, merge passes and disk of an input of known size, at its mean line.
void plan_runs(LinePlan& plan, const SortOptions& options) {
    const std::uint64_t bytes = *plan.input_bytes;
    const double line = std::max(plan.mean_line_bytes, 1.0);
    plan.chunk_lines = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(plan.chunk_bytes) / (line + kLineCost)));
    const double lines = static_cast<double>(bytes) / line;
    if (bytes == 0)
        plan.runs = 0;
    else if (static_cast<double>(bytes) + lines * kLineCost <= static_cast<double>(plan.chunk_bytes))
        plan.runs = 1;
    else
        plan.runs = static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / (static_cast<double>(plan.chunk_lines) * line)));
    plan.merge_passes = plan.runs > 1 ? merge_passes(plan.runs, plan.fan_in) : 0;
    if (plan.runs > 1) plan.disk.push_back({plan.tmp_dir, plan.merge_passes > 1 ? 2 * bytes : bytes, "sorted runs"});
    const OutputShape output = output_shape(options.output, options.output_compression);
    if (!output.folder.empty()) plan.disk.push_back({output.folder, bytes, "the output"});
}

// A source whose bytes are counted (and added to `progress`), with its size where known.
class CountedSource final : public ByteSource {
public:
    CountedSource(std::unique_ptr<ByteSource> source, std::optional<std::uint64_t> size, ProgressCounters* progress)
        : source_(std::move(source)), size_(size), progress_(progress) {}
    std::size_t read(std::span<char> buffer) override {
        const std::size_t n = source_->read(buffer);
        bytes_ += n;
        if (progress_) progress_->add(n);
        return n;
    }
    const std::string& name() const override { return source_->name(); }
    std::optional<std::uint64_t> known_size() const override { return size_; }
    // A map's bytes count as read when it is made.
    std::unique_ptr<MappedInput> map_rest() override {
        std::unique_ptr<MappedInput> mapped = source_->map_rest();
        if (mapped) {
            bytes_ += mapped->size();
            if (progress_) progress_->add(mapped->size());
        }
        return mapped;
    }
    std::uint64_t bytes() const { return bytes_; }

private:
    std::unique_ptr<ByteSource> source_;
    std::optional<std::uint64_t> size_;
    ProgressCounters* progress_;
    std::uint64_t bytes_ = 0;
};

io::StreamReaderQueue reader_queue(const LinePlan& plan) {
    return {static_cast<std::size_t>(plan.reader.block_bytes), plan.reader.queued_blocks};
}

// INPUT: a plain regular file read by positional reads in parallel (InputFile), anything else
// through a StreamReader.
std::unique_ptr<ByteSource> open_input(const SortOptions& options, const LinePlan& plan) {
    if (options.input == "-")
        return std::make_unique<StreamSource>(
            std::make_unique<io::StreamReader>(STDIN_FILENO, "standard input", input_compression(options), reader_queue(plan)));
    if (plan.input_bytes) return std::make_unique<InputFile>(options.input, "cannot read");
    return std::make_unique<StreamSource>(std::make_unique<io::StreamReader>(options.input, input_compression(options), reader_queue(plan)));
}

// The order-independent checksum of a chunk's lines (without their terminators).
MultisetChecksum chunk_checksum(const LineChunk& chunk) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, chunk.lines(), 1 << 14), MultisetChecksum{},
        [&](const tbb::blocked_range<std::size_t>& range, MultisetChecksum sum) {
            for (std::size_t i = range.begin(); i != range.end(); ++i) {
                const std::string_view line = chunk.line(i);
                sum.add(std::as_bytes(std::span<const char>(line.data(), line.size())));
            }
            return sum;
        },
        [](MultisetChecksum a, const MultisetChecksum& b) { return a += b; });
}

// Reads a file OUTPUT back from its start (decompressed) into `check`.
void read_back(const TextOutput& target, const SortOptions& options, const LinePlan& plan, const TextKeys& keys,
               LineCheck& check) {
    const io::File file = io::File::duplicate(target.fd(), options.output);  // shares the offset: rewound
    if (::lseek(file.fd(), 0, SEEK_SET) < 0) throw IoError("--verify: cannot read '" + options.output + "' back: " + std::strerror(errno));
    CountedSource source(std::make_unique<StreamSource>(
                             std::make_unique<io::StreamReader>(file.fd(), options.output, output_compression(options), reader_queue(plan))),
                         std::nullopt, options.progress);
    const TextBudget budget(plan.sort_bytes);
    if (!check_lines(source, budget.read_buffer(1), budget.line_limit(), check, keys.line_end()))
        throw SortError("--verify: '" + options.output + "' does not end with a line's terminator; the output was not kept");
}

// What --verify expects of the output: the input's lines, bytes and checksum (with --unique, the
// lines and bytes written, and no checksum).
struct LineExpectation {
    std::uint64_t lines = 0;
    std::uint64_t bytes = 0;
    std::optional<MultisetChecksum> checksum;
};

void check_output(const LineCheck& found, const LineExpectation& expected, const std::string& name) {
    auto fail = [&](const std::string& what) {
        throw SortError("--verify: '" + name + "' " + what + "; the output was not kept");
    };
    if (found.out_of_order()) fail("is out of order at line " + std::to_string(*found.out_of_order()));
    if (found.lines() != expected.lines)
        fail("holds " + std::to_string(found.lines()) + " lines, not " + std::to_string(expected.lines));
    if (found.bytes() != expected.bytes)
        fail("holds " + std::to_string(found.bytes()) + " bytes of lines, not " + std::to_string(expected.bytes));
    if (expected.checksum && !(found.checksum() == *expected.checksum))
        fail("does not hold the same lines as the input (checksums differ)");
}

// --verify: OUTPUT read back (a file) or as it was written (`written`, a stream) holds what is
// expected of it, in order.
void verify_output(const TextOutput& target, const SortOptions& options, const LinePlan& plan, const TextKeys& keys,
                   const LineCheck& written, const LineExpectation& expected) {
    LineCheck read(keys);
    if (target.is_file()) read_back(target, options, plan, keys, read);
    check_output(target.is_file() ? read : written, expected, options.output == "-" ? "standard output" : options.output);
}

// Whether OUTPUT is INPUT (through any path): the output is then flushed to disk before it replaces it.
bool replaces_input(const SortOptions& options) {
    io::FileId input, output;
    return options.input != "-" && options.output != "-" && io::file_id(options.input, input) &&
           io::file_id(options.output, output) && input == output;
}

// OUTPUT's writer: a plain file written straight (large pieces through a map of it); stdout, a
// device or pipe and a compressed file through `stream`, made here.
LineWriter output_writer(const TextOutput& target, const SortOptions& options, const LinePlan& plan, const TextBudget& budget,
                         char terminator, std::optional<io::StreamWriter>& stream) {
    if (target.is_file() && output_compression(options) == Compression::none)
        return LineWriter(target.fd(), options.output, budget.write_buffer(), terminator);
    stream.emplace(target.fd(), options.output == "-" ? "standard output" : options.output, output_compression(options),
                   std::max(1u, plan.writer.compressing_threads), options.compression_level,
                   static_cast<std::size_t>(plan.writer.block_bytes), plan.writer.blocks_in_flight);
    return LineWriter([&stream](std::span<const char> bytes) { stream->write(std::as_bytes(bytes)); }, budget.write_buffer(), terminator);
}

}  // namespace

LinePlan plan_line_file(const SortOptions& options, const TextKeys& keys) {
    LinePlan plan;
    plan.memory_bytes = options.memory_bytes.value_or(default_memory_budget());
    plan.threads = line_sort_threads(options.threads);
    look_at_input(options, keys.line_end(), plan);
    const std::uint64_t usable = usable_memory(plan.memory_bytes);
    plan.reader = plan_reader(usable);
    PlanInput output;
    output.output_compression = output_compression(options);
    output.compression_level = options.compression_level;
    plan.writer = plan_writer(output, plan.threads, usable);
    const std::uint64_t queues = plan.reader.memory() + plan.writer.memory();
    plan.sort_bytes = std::max(kMinTextBudget, plan.memory_bytes > queues ? plan.memory_bytes - queues : 0);
    const TextBudget budget(plan.sort_bytes);
    plan.chunk_bytes = budget.chunk_bytes();
    plan.write_buffer_bytes = budget.write_buffer();
    plan.read_bytes = budget.read_bytes();
    plan.line_limit = budget.line_limit();
    plan.fan_in = merge_fan_in(budget, 0);
    plan.tmp_dir = runs_folder(options.tmp_dir, output_shape(options.output, options.output_compression));
    if (plan.input_bytes) plan_runs(plan, options);
    return plan;
}

LineFileReport sort_line_file(const SortOptions& options, const TextKeys& keys) {
    const auto start = std::chrono::steady_clock::now();
    ProgressCounters* progress = options.progress;
    if (progress) progress->start_phase(ProgressPhase::starting, 0);
    LineFileReport report;
    report.plan = plan_line_file(options, keys);  // INPUT is opened first: one that cannot be read fails before OUTPUT is made
    const LinePlan& plan = report.plan;
    const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, plan.threads);
    // A --tmp-dir that cannot be used is an error even when this input would not need it.
    if (options.tmp_dir) io::create_temp_file(plan.tmp_dir);
    const bool replaces = replaces_input(options);  // looked at before OUTPUT is touched
    CountedSource input(open_input(options, plan), plan.input_bytes, progress);
    TextOutput target(options.output == "-" ? std::nullopt : std::optional<std::string>(options.output));
    const TextBudget budget(plan.sort_bytes);
    std::optional<io::StreamWriter> stream;
    LineWriter writer = output_writer(target, options, plan, budget, keys.line_end(), stream);
    if (progress) writer.on_written([progress](std::uint64_t bytes) { progress->add(bytes); });
    UniqueLines out(writer, keys);
    LineCheck written(keys);  // a stream OUTPUT is checked as it is written
    if (options.verify && !target.is_file()) out.watch([&](std::string_view line) { written.add(line); });
    MultisetChecksum input_checksum;
    LineSortHooks hooks;
    hooks.progress = progress;
    if (options.verify && !keys.unique) hooks.chunk_read = [&](const LineChunk& chunk) { input_checksum += chunk_checksum(chunk); };
    if (progress) progress->start_phase(ProgressPhase::reading, plan.input_bytes.value_or(0));
    report.sort = sort_lines({&input}, keys, budget, plan.threads, {plan.tmp_dir}, out, hooks);
    writer.flush();
    report.input_bytes = input.bytes();
    report.output_lines = out.lines();
    report.output_bytes = writer.bytes();

    const auto flush_start = std::chrono::steady_clock::now();
    if (progress) progress->start_phase(ProgressPhase::flushing, report.output_bytes, ProgressCounters::Counting::time_only);
    if (stream) stream->finish();
    report.flush_seconds = seconds_since(flush_start);
    if (options.verify) {
        const auto verify_start = std::chrono::steady_clock::now();
        LineExpectation expected{report.sort.lines, report.sort.line_bytes, input_checksum};
        if (keys.unique) expected = {report.output_lines, report.output_bytes, std::nullopt};
        if (progress && target.is_file()) progress->start_phase(ProgressPhase::verifying, report.output_bytes);
        verify_output(target, options, plan, keys, written, expected);
        report.verified = true;
        report.verify_seconds = seconds_since(verify_start);
    }
    const auto commit_start = std::chrono::steady_clock::now();
    if (progress) progress->stop_if_cancelled();  // the last moment it can stop
    target.commit(options.sync || replaces);
    report.flush_seconds += seconds_since(commit_start);
    report.output_stored_bytes = stream ? stream->bytes_out() : writer.bytes();
    if (progress) progress->start_phase(ProgressPhase::done, 0);
    report.seconds = seconds_since(start);
    return report;
}

}  // namespace gpusort
