// StreamWriter: blocks of the stream are compressed by a pool of std::threads, each into a complete
// member/stream/frame (gzip, bzip2 and zstd with the Boost.Iostreams compressors, xz with liblzma's
// own encoder), and an output thread writes them in the order they were written.
#include "io/stream_writer.hpp"

#include "io/io_error.hpp"
#include "io/syscalls.hpp"
#include "io/wait_ready.hpp"

#include <boost/iostreams/categories.hpp>
#include <boost/iostreams/close.hpp>
#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/write.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <ctime>
#include <fcntl.h>
#include <limits>
#include <lzma.h>
#include <memory>
#include <new>
#include <poll.h>
#include <pthread.h>
#include <stdexcept>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace bio = boost::iostreams;

namespace gpusort::io {

namespace {

// Uncompressed bytes given to a compressor at once, so that a stop request is seen between them.
constexpr std::size_t kCompressSlice = std::size_t{256} << 10;
// Buffer of each Boost compressor.
constexpr std::streamsize kCompressorBuffer = std::streamsize{1} << 20;
// How long the output thread waits on a pipe before it looks at the stop flag again.
constexpr int kPollMilliseconds = 100;
// What the xz encoders working at once may need together.
constexpr std::size_t kXzEncoderBudgetMiB = 1024;
// xz(1): encoder memory (MiB) and dictionary (KiB) of the presets 0-9.
constexpr std::size_t kXzEncoderMiB[10] = {3, 9, 17, 32, 48, 94, 94, 186, 370, 674};
constexpr std::size_t kXzDictionaryKiB[10] = {256, 1024, 2048, 4096, 4096, 8192, 8192, 16384, 32768, 65536};

// Thrown inside the threads to unwind them when the writer is stopped.
struct Stopped {};

// Blocks SIGPIPE and SIGXFSZ in the calling thread for its lifetime, so that write(2) fails with
// EPIPE or EFBIG instead; a signal that became pending meanwhile (raised by our write) is taken
// off again before the old mask comes back.
class WriteSignalsBlocked {
public:
    WriteSignalsBlocked() {
        sigemptyset(&signals_);
        sigaddset(&signals_, SIGPIPE);
        sigaddset(&signals_, SIGXFSZ);
        pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
        sigpending(&pending_before_);
    }
    ~WriteSignalsBlocked() {
        sigset_t pending;
        sigpending(&pending);
        for (int signal : {SIGPIPE, SIGXFSZ}) {
            if (sigismember(&pending, signal) && !sigismember(&pending_before_, signal) &&
                !sigismember(&old_mask_, signal)) {
                sigset_t one;
                sigemptyset(&one);
                sigaddset(&one, signal);
                timespec no_wait{0, 0};
                while (sigtimedwait(&one, nullptr, &no_wait) < 0 && errno == EINTR) {
                }
            }
        }
        pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    }
    WriteSignalsBlocked(const WriteSignalsBlocked&) = delete;
    WriteSignalsBlocked& operator=(const WriteSignalsBlocked&) = delete;

private:
    sigset_t signals_;
    sigset_t old_mask_;
    sigset_t pending_before_;
};

// Bytes a pipe takes now without waiting (at least 1 once poll() said it takes data); the whole
// request when the descriptor is no pipe.
std::size_t room_in_pipe(int fd, std::size_t wanted) {
    int capacity = ::fcntl(fd, F_GETPIPE_SZ);
    int queued = 0;
    if (capacity <= 0 || ::ioctl(fd, FIONREAD, &queued) != 0) return std::min<std::size_t>(wanted, PIPE_BUF);
    std::size_t room = capacity > queued ? static_cast<std::size_t>(capacity - queued) : 1;
    return std::min(wanted, room);
}

// Writes all of data to fd, retrying on EINTR and short writes. With stop: before each write
// to a descriptor that may block (may_block) waits with poll() in steps, throwing Stopped once
// stop is set, and writes to a pipe no more than it has room for.
void write_all(int fd, std::span<const std::byte> data, const std::string& name, bool may_block,
               const std::atomic<bool>* stop) {
    bool is_pipe = false;
    if (may_block && stop) {
        struct stat st {};
        is_pipe = ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
    }
    while (!data.empty()) {
        std::size_t chunk = data.size();
        if (may_block && stop) {
            if (stop->load(std::memory_order_relaxed)) throw Stopped{};
            if (!wait_ready(fd, POLLOUT, kPollMilliseconds, name)) continue;
            if (is_pipe) chunk = room_in_pipe(fd, chunk);
        }
        ssize_t written = sys::write(fd, data.data(), chunk);
        if (written < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {  // a non-blocking descriptor
                wait_ready(fd, POLLOUT, kPollMilliseconds, name);
                continue;
            }
            throw_errno("cannot write", name, errno);
        }
        if (written == 0) throw_errno("cannot write", name, EIO);
        data = data.subspan(static_cast<std::size_t>(written));
    }
}

// Where a compressor's output goes: appended to a vector. Once the writer is stopped it throws
// Stopped instead.
class StoppableSink {
public:
    using char_type = char;
    using category = bio::sink_tag;

    StoppableSink(std::vector<char>& output, const std::atomic<bool>& stop) : output_(&output), stop_(&stop) {}
    std::streamsize write(const char* data, std::streamsize size) {
        if (stop_->load(std::memory_order_relaxed)) throw Stopped{};
        output_->insert(output_->end(), data, data + size);
        return size;
    }

private:
    std::vector<char>* output_;
    const std::atomic<bool>* stop_;
};

// Feeds input to a Boost compressor in slices and closes it, which completes the member or frame.
template <typename Compressor>
void run_compressor(Compressor& compressor, std::span<const std::byte> input, std::vector<char>& output,
                    const std::atomic<bool>& stop) {
    StoppableSink sink(output, stop);
    while (!input.empty()) {
        if (stop.load(std::memory_order_relaxed)) throw Stopped{};
        std::size_t slice = std::min(kCompressSlice, input.size());
        std::streamsize taken = bio::write(compressor, sink, reinterpret_cast<const char*>(input.data()),
                                           static_cast<std::streamsize>(slice));
        if (taken <= 0) throw std::runtime_error("the compressor took no data");
        input = input.subspan(static_cast<std::size_t>(taken));
    }
    bio::close(compressor, sink, BOOST_IOS::out);
}

// One .xz stream with liblzma's single-threaded encoder, fed in slices with a look at the stop
// between them. Boost's lzma_compressor cannot serve here: it uses liblzma's threaded encoder,
// which holds the whole block and compresses it while it is closed, where no stop reaches it.
void compress_xz(std::span<const std::byte> input, std::vector<char>& output, int level,
                 const std::atomic<bool>& stop) {
    lzma_stream stream = LZMA_STREAM_INIT;
    const lzma_ret started = lzma_easy_encoder(&stream, static_cast<std::uint32_t>(level), LZMA_CHECK_CRC64);
    if (started == LZMA_MEM_ERROR) throw std::bad_alloc();
    if (started != LZMA_OK) {
        throw std::runtime_error("the xz encoder cannot start (liblzma code " + std::to_string(started) + ")");
    }
    const std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> end(&stream, lzma_end);
    std::size_t fed = 0;
    std::size_t used = output.size();
    lzma_action action = LZMA_RUN;
    for (;;) {
        if (stream.avail_in == 0 && action == LZMA_RUN) {
            if (stop.load(std::memory_order_relaxed)) throw Stopped{};
            if (fed == input.size()) {
                action = LZMA_FINISH;
            } else {
                const std::size_t slice = std::min(kCompressSlice, input.size() - fed);
                stream.next_in = reinterpret_cast<const std::uint8_t*>(input.data() + fed);
                stream.avail_in = slice;
                fed += slice;
            }
        }
        if (used == output.size()) {
            output.resize(std::max({2 * output.size(), output.capacity(), static_cast<std::size_t>(kCompressorBuffer)}));
        }
        stream.next_out = reinterpret_cast<std::uint8_t*>(output.data() + used);
        stream.avail_out = output.size() - used;
        const lzma_ret result = lzma_code(&stream, action);
        used = output.size() - stream.avail_out;
        if (result == LZMA_STREAM_END) break;
        if (result == LZMA_MEM_ERROR) throw std::bad_alloc();
        if (result != LZMA_OK) {
            throw std::runtime_error("the xz encoder failed (liblzma code " + std::to_string(result) + ")");
        }
    }
    output.resize(used);
}

// The text of a Boost.Iostreams failure without the ": iostream error" std::ios_base::failure adds.
std::string failure_text(const std::exception& error) {
    std::string text = error.what();
    auto colon = text.find(": iostream error");
    if (colon != std::string::npos) text.erase(colon);
    return text;
}

}  // namespace

void StreamWriter::check_level(Compression compression, int level) {
    int lowest = 0;
    int highest = 0;
    switch (compression) {
    case Compression::none: return;
    case Compression::gzip: lowest = 0, highest = 9; break;
    case Compression::bzip2: lowest = 1, highest = 9; break;
    case Compression::xz: lowest = 0, highest = 9; break;
    case Compression::zstd: lowest = 1, highest = 19; break;
    }
    if (level < lowest || level > highest) {
        throw std::invalid_argument("compression level " + std::to_string(level) + " is out of range for " +
                                    compression_name(compression) + " (" + std::to_string(lowest) + "-" +
                                    std::to_string(highest) + ")");
    }
}

int StreamWriter::default_level(Compression compression) {
    switch (compression) {
    case Compression::none: return 0;
    case Compression::gzip: return 6;
    case Compression::bzip2: return 9;
    case Compression::xz: return 6;
    case Compression::zstd: return 3;
    }
    return 0;
}

std::size_t StreamWriter::default_block_size(Compression compression, int level) {
    constexpr std::size_t MiB = std::size_t{1} << 20;
    switch (compression) {
    case Compression::none: return 0;
    case Compression::gzip:
    case Compression::bzip2: return 4 * MiB;
    case Compression::zstd: return 8 * MiB;
    case Compression::xz: {
        int preset = std::clamp(level < 0 ? default_level(compression) : level, 0, 9);
        return std::max(8 * MiB, 2 * kXzDictionaryKiB[preset] * 1024);
    }
    }
    return 0;
}

std::size_t StreamWriter::encoder_bytes(Compression compression, int level) {
    constexpr std::size_t KiB = std::size_t{1} << 10, MiB = std::size_t{1} << 20;
    const int resolved = level < 0 ? default_level(compression) : level;
    std::size_t encoder = 0;
    switch (compression) {
    case Compression::none: return 0;
    case Compression::gzip: encoder = 256 * KiB; break;
    case Compression::bzip2: encoder = 400 * KiB + 8 * static_cast<std::size_t>(std::clamp(resolved, 1, 9)) * 100 * 1000; break;
    case Compression::xz: encoder = kXzEncoderMiB[std::clamp(resolved, 0, 9)] * MiB; break;
    case Compression::zstd: {
        // zstd's window for large inputs: 2^19 at level 1, 2^21 from level 3, 2^22 from 7, 2^23 from 17.
        const int window_log = resolved <= 1 ? 19 : resolved == 2 ? 20 : resolved < 7 ? 21 : resolved < 17 ? 22 : 23;
        encoder = 3 * (std::size_t{1} << window_log);
        break;
    }
    }
    return encoder + static_cast<std::size_t>(kCompressorBuffer);
}

unsigned StreamWriter::max_compressing_threads(Compression compression, int level) {
    if (compression != Compression::xz) return std::numeric_limits<unsigned>::max();
    const int preset = std::clamp(level < 0 ? default_level(compression) : level, 0, 9);
    return static_cast<unsigned>(std::max<std::size_t>(1, kXzEncoderBudgetMiB / kXzEncoderMiB[preset]));
}

StreamWriter::StreamWriter(int fd, std::string name, Compression compression, unsigned threads, int level,
                           std::size_t block_size, std::size_t blocks_in_flight)
    : fd_(fd), name_(std::move(name)), compression_(compression),
      level_(level < 0 ? default_level(compression) : level),
      block_size_(compression == Compression::none ? 0
                  : block_size > 0                 ? block_size
                                                   : default_block_size(compression, level_)) {
    check_level(compression_, level_);
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw_errno("cannot stat", name_, errno);
    may_block_ = !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
    // A larger pipe buffer (where the system allows) means fewer, larger transfers.
    if (S_ISFIFO(st.st_mode)) ::fcntl(fd_, F_SETPIPE_SZ, kPipeBuffer);
    if (compression_ == Compression::none) return;

    const std::size_t workers = std::min(std::max(1u, threads), max_compressing_threads(compression_, level_));
    max_in_flight_ = blocks_in_flight > 0 ? blocks_in_flight : 2 * workers;
    pending_.reserve(block_size_);
    try {
        output_thread_ = std::thread([this] { output_loop(); });
        for (std::size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { compress_loop(); });
    } catch (...) {
        stop_threads();
        throw;
    }
}

StreamWriter::~StreamWriter() { stop_threads(); }

void StreamWriter::stop_threads() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    work_ready_.notify_all();
    job_done_.notify_all();
    space_free_.notify_all();
    for (auto& worker : workers_) {
        if (worker.joinable()) worker.join();
    }
    if (output_thread_.joinable()) output_thread_.join();
}

void StreamWriter::fail(std::exception_ptr error) {
    {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::move(error);
        stop_ = true;
    }
    work_ready_.notify_all();
    job_done_.notify_all();
    space_free_.notify_all();
}

void StreamWriter::rethrow_error() {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
}

void StreamWriter::write(std::span<const std::byte> data) {
    if (finished_) throw std::logic_error("StreamWriter::write after finish() for '" + name_ + "'");
    if (compression_ == Compression::none) {
        WriteSignalsBlocked blocked;
        write_all(fd_, data, name_, may_block_, nullptr);
        bytes_in_.fetch_add(data.size(), std::memory_order_relaxed);
        bytes_out_.fetch_add(data.size(), std::memory_order_relaxed);
        return;
    }
    rethrow_error();
    bytes_in_.fetch_add(data.size(), std::memory_order_relaxed);
    while (!data.empty()) {
        std::size_t take = std::min(block_size_ - pending_.size(), data.size());
        pending_.insert(pending_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
        data = data.subspan(take);
        if (pending_.size() == block_size_) submit_pending();
    }
}

void StreamWriter::submit_pending() {
    std::unique_lock lock(mutex_);
    space_free_.wait(lock, [this] {
        return error_ || stop_ || in_order_.size() + (writing_ ? 1 : 0) < max_in_flight_;
    });
    if (error_) std::rethrow_exception(error_);
    if (stop_) throw std::logic_error("StreamWriter for '" + name_ + "' was stopped");
    auto job = std::make_unique<Job>();
    job->input = std::move(pending_);
    to_compress_.push_back(job.get());
    in_order_.push_back(std::move(job));
    ++blocks_submitted_;
    pending_ = {};
    if (!spare_inputs_.empty()) {
        pending_ = std::move(spare_inputs_.back());
        spare_inputs_.pop_back();
    }
    lock.unlock();
    work_ready_.notify_one();
    pending_.clear();
    pending_.reserve(block_size_);
}

void StreamWriter::finish() {
    if (finished_) {
        rethrow_error();
        return;
    }
    finished_ = true;
    if (compression_ == Compression::none) return;
    try {
        rethrow_error();
        // An empty stream still becomes one (empty) member or frame: the tools reject empty input.
        if (!pending_.empty() || blocks_submitted_ == 0) submit_pending();
    } catch (...) {
        stop_threads();
        throw;
    }
    {
        std::lock_guard lock(mutex_);
        finishing_ = true;
    }
    job_done_.notify_all();
    if (output_thread_.joinable()) output_thread_.join();  // it ends once everything is written
    stop_threads();
    // The blocks go back once all is written.
    std::vector<std::vector<std::byte>>().swap(spare_inputs_);
    std::vector<std::byte>().swap(pending_);
    rethrow_error();
}

void StreamWriter::compress_loop() {
    for (;;) {
        Job* job = nullptr;
        {
            std::unique_lock lock(mutex_);
            work_ready_.wait(lock, [this] { return stop_ || !to_compress_.empty(); });
            if (stop_) return;
            job = to_compress_.front();
            to_compress_.pop_front();
        }
        try {
            compress(job->input, job->output);
        } catch (const Stopped&) {
            return;
        } catch (const std::bad_alloc&) {
            fail(std::make_exception_ptr(IoError("cannot compress '" + name_ + "': out of memory")));
            return;
        } catch (const std::exception& error) {
            fail(std::make_exception_ptr(IoError("cannot compress '" + name_ + "': " + failure_text(error))));
            return;
        }
        {
            std::lock_guard lock(mutex_);
            job->compressed = true;
        }
        job_done_.notify_all();
    }
}

void StreamWriter::compress(const std::vector<std::byte>& input, std::vector<char>& output) {
    output.clear();
    output.reserve(input.size() + input.size() / 64 + (64 << 10));
    switch (compression_) {
    case Compression::none: break;
    case Compression::gzip: {
        bio::gzip_compressor compressor(bio::gzip_params(level_), kCompressorBuffer);
        run_compressor(compressor, input, output, stop_);
        break;
    }
    case Compression::bzip2: {
        bio::bzip2_compressor compressor(bio::bzip2_params(level_), kCompressorBuffer);
        run_compressor(compressor, input, output, stop_);
        break;
    }
    case Compression::xz: compress_xz(input, output, level_, stop_); break;
    case Compression::zstd: {
        bio::zstd_compressor compressor(bio::zstd_params(static_cast<std::uint32_t>(level_)), kCompressorBuffer);
        run_compressor(compressor, input, output, stop_);
        break;
    }
    }
}

void StreamWriter::output_loop() {
    // This thread's own mask: a pending SIGPIPE or SIGXFSZ dies with the thread.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGPIPE);
    sigaddset(&signals, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    for (;;) {
        std::unique_ptr<Job> job;
        {
            std::unique_lock lock(mutex_);
            job_done_.wait(lock, [this] {
                return stop_ || (!in_order_.empty() && in_order_.front()->compressed) ||
                       (finishing_ && in_order_.empty());
            });
            if (stop_ || in_order_.empty()) return;
            job = std::move(in_order_.front());
            in_order_.pop_front();
            writing_ = true;
        }
        try {
            write_all(fd_, std::as_bytes(std::span(job->output)), name_, may_block_, &stop_);
        } catch (const Stopped&) {
            return;
        } catch (...) {
            fail(std::current_exception());
            return;
        }
        bytes_out_.fetch_add(job->output.size(), std::memory_order_relaxed);
        {
            std::lock_guard lock(mutex_);
            writing_ = false;
            job->input.clear();
            spare_inputs_.push_back(std::move(job->input));
        }
        space_free_.notify_all();
    }
}

}  // namespace gpusort::io
