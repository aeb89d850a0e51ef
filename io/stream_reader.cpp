// StreamReader: a reading thread pulls bytes from the descriptor (through a Boost.Iostreams
// decompressor when the stream is compressed) into large blocks; read() hands them out in order.
#include "io/stream_reader.hpp"

#include "io/io_error.hpp"
#include "io/syscalls.hpp"
#include "io/wait_ready.hpp"

#include <boost/iostreams/categories.hpp>
#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/read.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ios>
#include <new>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace bio = boost::iostreams;

namespace gpusort::io {

namespace {

// Compressed bytes a decompressor asks the descriptor for at once.
constexpr std::streamsize kCompressedBuffer = std::streamsize{1} << 20;
// Decompressed bytes produced per call, so that a stop request is seen between calls.
constexpr std::size_t kDecodeSlice = std::size_t{1} << 20;
// How long the reading thread waits on a pipe before it looks at the stop flag again.
constexpr int kPollMilliseconds = 100;

// Thrown inside the reading thread to unwind it when the reader is destroyed.
struct Stopped {};

// The text of a Boost.Iostreams failure without the ": iostream error" that std::ios_base::failure
// appends.
std::string failure_text(const std::exception& error) {
    std::string text = error.what();
    auto colon = text.find(": iostream error");
    if (colon != std::string::npos) text.erase(colon);
    return text;
}

// liblzma's LZMA_FORMAT_ERROR and LZMA_MEMLIMIT_ERROR, which Boost does not name.
constexpr int kLzmaFormatError = 7;
constexpr int kLzmaMemlimitError = 6;

// Follows the frame structure of zstd data (RFC 8878) as the bytes pass, without decoding them,
// to tell at the end whether the data stopped between frames. Boost's zstd decompressor reports
// the end of its input as a clean end even within a frame, so a truncated file needs this check.
class ZstdFrameCheck {
public:
    void consume(const unsigned char* bytes, std::size_t count) {
        while (count > 0 && expect_ != Expect::unknown) {
            if (skip_ > 0) {
                auto step = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, count));
                skip_ -= step;
                bytes += step;
                count -= step;
                continue;
            }
            field_[have_++] = *bytes++;
            --count;
            if (have_ == field_size()) {
                have_ = 0;
                take_field();
            }
        }
    }

    // True when the bytes so far end exactly after a complete frame (or when the data are not
    // zstd frames at all: the decompressor reports that itself).
    bool complete() const {
        if (expect_ == Expect::unknown) return true;
        return frames_ > 0 && expect_ == Expect::magic && have_ == 0 && skip_ == 0;
    }

private:
    enum class Expect { magic, frame_header, skippable_size, block_header, unknown };

    std::size_t field_size() const {
        switch (expect_) {
        case Expect::frame_header: return 1;
        case Expect::block_header: return 3;
        default: return 4;
        }
    }

    std::uint32_t field_value() const {
        std::uint32_t value = 0;
        for (std::size_t i = field_size(); i-- > 0;) value = value << 8 | field_[i];
        return value;
    }

    void take_field() {
        std::uint32_t value = field_value();
        switch (expect_) {
        case Expect::magic:
            if (value == 0xFD2FB528u) {
                expect_ = Expect::frame_header;
            } else if ((value & 0xFFFFFFF0u) == 0x184D2A50u) {
                expect_ = Expect::skippable_size;
            } else {
                expect_ = Expect::unknown;
            }
            break;
        case Expect::skippable_size:
            ++frames_;
            skip_ = value;
            expect_ = Expect::magic;
            break;
        case Expect::frame_header: {
            // Frame_Header_Descriptor: content-size flag, single segment, checksum, dictionary id.
            unsigned content_size_flag = value >> 6;
            bool single_segment = (value >> 5) & 1;
            checksum_ = (value >> 2) & 1;
            static constexpr unsigned kDictionaryIdBytes[] = {0, 1, 2, 4};
            static constexpr unsigned kContentSizeBytes[] = {0, 2, 4, 8};
            unsigned content_size_bytes = content_size_flag == 0 ? (single_segment ? 1 : 0)
                                                                  : kContentSizeBytes[content_size_flag];
            skip_ = (single_segment ? 0 : 1) + kDictionaryIdBytes[value & 3] + content_size_bytes;
            expect_ = Expect::block_header;
            break;
        }
        case Expect::block_header: {
            bool last = value & 1;
            unsigned type = (value >> 1) & 3;
            std::uint32_t size = value >> 3;
            if (type == 3) {  // reserved: the decompressor reports the corruption
                expect_ = Expect::unknown;
                break;
            }
            skip_ = type == 1 ? 1 : size;  // an RLE block stores one byte
            if (last) {
                skip_ += checksum_ ? 4 : 0;
                ++frames_;
                expect_ = Expect::magic;
            }
            break;
        }
        case Expect::unknown: break;
        }
    }

    Expect expect_ = Expect::magic;
    unsigned char field_[4] = {};
    std::size_t have_ = 0;
    std::uint64_t skip_ = 0;
    bool checksum_ = false;
    std::uint64_t frames_ = 0;
};

}  // namespace

// The descriptor as a Boost.Iostreams source: read(2) with EINTR retried, and for pipes and the
// like a poll() with a timeout first, so that a stop request ends a wait on a silent pipe.
class StreamReader::Source {
public:
    using char_type = char;
    using category = bio::source_tag;

    explicit Source(StreamReader& reader) : reader_(reader) {
        struct stat st {};
        if (::fstat(reader.fd_, &st) != 0) throw_errno("cannot stat", reader.name_, errno);
        if (S_ISDIR(st.st_mode)) throw IoError("cannot read '" + reader.name_ + "': it is a directory");
        may_block_ = !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
        // A larger pipe buffer (where the system allows) means fewer, larger transfers.
        if (S_ISFIFO(st.st_mode)) ::fcntl(reader.fd_, F_SETPIPE_SZ, kPipeBuffer);
    }

    std::streamsize read(char* data, std::streamsize size) {
        if (at_end_) return -1;
        for (;;) {
            if (reader_.stop_.load(std::memory_order_relaxed)) throw Stopped{};
            if (may_block_ && !wait_readable(kPollMilliseconds)) continue;
            ssize_t got = sys::read(reader_.fd_, data, static_cast<std::size_t>(size));
            if (got < 0) {
                if (errno == EINTR) continue;
                // A descriptor set to non-blocking by someone else: poll() waits for it.
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    may_block_ = true;
                    continue;
                }
                throw_errno("cannot read", reader_.name_, errno);
            }
            if (got == 0) {
                at_end_ = true;
                return -1;
            }
            reader_.raw_bytes_read_.fetch_add(static_cast<std::uint64_t>(got), std::memory_order_relaxed);
            if (zstd_check_) zstd_check_->consume(reinterpret_cast<const unsigned char*>(data), static_cast<std::size_t>(got));
            return got;
        }
    }

    // False when a read would have to wait for more data (a pipe that is empty now).
    bool ready_now() { return !may_block_ || wait_readable(0); }

    bool at_end() const { return at_end_; }
    void check_zstd_frames(ZstdFrameCheck* check) { zstd_check_ = check; }

private:
    bool wait_readable(int milliseconds) { return wait_ready(reader_.fd_, POLLIN, milliseconds, reader_.name_); }

    StreamReader& reader_;
    bool may_block_ = false;
    bool at_end_ = false;
    ZstdFrameCheck* zstd_check_ = nullptr;
};

namespace {

// The cause of a decompressor's failure, in words; at_end: the input had ended when it failed.
std::string decode_failure(Compression compression, const std::exception& error, bool at_end) {
    const std::string format = compression_name(compression);
    const std::string truncated = "the " + format + " data end too early (truncated file?)";
    const std::string corrupt = "corrupt " + format + " data";
    if (const auto* gzip = dynamic_cast<const bio::gzip_error*>(&error)) {
        int code = gzip->error();
        if (code == bio::gzip::zlib_error) {
            int zlib = gzip->zlib_error_code();
            if (zlib == bio::zlib::buf_error || at_end) return truncated;
            if (zlib == bio::zlib::data_error) return corrupt + " (invalid deflate data)";
            if (zlib == bio::zlib::mem_error) return "out of memory";
            return corrupt + " (zlib error " + std::to_string(zlib) + ")";
        }
        if ((code == bio::gzip::bad_header || code == bio::gzip::bad_footer) && at_end) return truncated;
        if (code == bio::gzip::bad_crc) return corrupt + " (CRC mismatch)";
        if (code == bio::gzip::bad_length) return corrupt + " (length mismatch)";
        if (code == bio::gzip::bad_header) return "not gzip data (invalid header)";
        if (code == bio::gzip::bad_footer) return corrupt + " (invalid member trailer)";
        if (code == bio::gzip::bad_method) return "unsupported gzip compression method";
        return corrupt + " (gzip error " + std::to_string(code) + ")";
    }
    if (const auto* bzip2 = dynamic_cast<const bio::bzip2_error*>(&error)) {
        int code = bzip2->error();
        if (code == bio::bzip2::unexpected_eof || at_end) return truncated;
        if (code == bio::bzip2::data_error_magic) return "not bzip2 data (invalid header)";
        if (code == bio::bzip2::data_error) return corrupt;
        if (code == bio::bzip2::mem_error) return "out of memory";
        return corrupt + " (bzip2 error " + std::to_string(code) + ")";
    }
    if (const auto* lzma = dynamic_cast<const bio::lzma_error*>(&error)) {
        int code = lzma->error();
        if (code == bio::lzma::buf_error || (at_end && code != kLzmaFormatError)) return truncated;
        if (code == kLzmaFormatError) return "not xz data (invalid header)";
        if (code == bio::lzma::data_error) return corrupt;
        if (code == kLzmaMemlimitError) return "the xz data need more than the decoder's memory limit (100 MiB)";
        if (code == bio::lzma::options_error) return "unsupported xz options";
        if (code == bio::lzma::unsupported_check) return "unsupported xz integrity check";
        return corrupt + " (lzma error " + std::to_string(code) + ")";
    }
    if (dynamic_cast<const bio::zstd_error*>(&error)) return corrupt + " (" + failure_text(error) + ")";
    return failure_text(error);
}

}  // namespace

StreamReader::StreamReader(const std::string& path, Compression compression, StreamReaderQueue queue)
    : name_(path), compression_(compression), queue_(queue) {
    if (path == "-") {
        fd_ = STDIN_FILENO;
    } else {
        owned_ = File::open_read(path);
        fd_ = owned_.fd();
    }
    start();
}

StreamReader::StreamReader(int fd, std::string name, Compression compression, StreamReaderQueue queue)
    : fd_(fd), name_(std::move(name)), compression_(compression), queue_(queue) {
    start();
}

StreamReader::~StreamReader() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void StreamReader::start() {
    thread_ = std::thread([this] { produce(); });
}

void StreamReader::produce() {
    std::exception_ptr error;
    std::unique_ptr<Source> source;
    try {
        source = std::make_unique<Source>(*this);
        switch (compression_) {
        case Compression::none: decode_plain(*source); break;
        case Compression::gzip: {
            bio::gzip_decompressor decompressor(bio::gzip::default_window_bits, kCompressedBuffer);
            decode(*source, decompressor);
            break;
        }
        case Compression::bzip2: {
            bio::bzip2_decompressor decompressor(false, kCompressedBuffer);
            decode(*source, decompressor);
            break;
        }
        case Compression::xz: {
            bio::lzma_decompressor decompressor(kCompressedBuffer);
            decode(*source, decompressor);
            break;
        }
        case Compression::zstd: {
            ZstdFrameCheck frames;
            source->check_zstd_frames(&frames);
            bio::zstd_decompressor decompressor(kCompressedBuffer);
            decode(*source, decompressor);
            if (!frames.complete()) {
                throw IoError("cannot decompress '" + name_ + "': the zst data end too early (truncated file?)");
            }
            break;
        }
        }
    } catch (const Stopped&) {
    } catch (const IoError&) {
        error = std::current_exception();
    } catch (const std::bad_alloc&) {
        error = std::make_exception_ptr(IoError("cannot decompress '" + name_ + "': out of memory"));
    } catch (const std::exception& failure) {
        bool at_end = source && source->at_end();
        error = std::make_exception_ptr(
            IoError("cannot decompress '" + name_ + "': " + decode_failure(compression_, failure, at_end)));
    } catch (...) {
        error = std::make_exception_ptr(IoError("cannot read '" + name_ + "': unknown failure"));
    }
    {
        std::lock_guard lock(mutex_);
        producer_done_ = true;
        error_ = error;
    }
    changed_.notify_all();
}

template <typename Fill, typename Early>
void StreamReader::fill_blocks(Fill fill, Early early) {
    for (;;) {
        Block block = take_empty_block();
        if (!block.data) return;
        bool end = false;
        try {
            while (block.size < queue_.block_bytes) {
                if (early(block.size)) break;
                const std::streamsize got =
                    fill(reinterpret_cast<char*>(block.data.get() + block.size), queue_.block_bytes - block.size);
                if (got < 0) {
                    end = true;
                    break;
                }
                block.size += static_cast<std::size_t>(got);
            }
        } catch (...) {
            if (block.size > 0) push_block(std::move(block));
            throw;
        }
        if (block.size > 0 && !push_block(std::move(block))) return;
        if (end) return;
    }
}

void StreamReader::decode_plain(Source& source) {
    fill_blocks([&](char* data, std::size_t size) { return source.read(data, static_cast<std::streamsize>(size)); },
                // From a pipe, hand over what has come before waiting for more.
                [&](std::size_t filled) { return filled > 0 && !source.ready_now(); });
}

template <typename Decompressor>
void StreamReader::decode(Source& source, Decompressor& decompressor) {
    fill_blocks(
        [&](char* data, std::size_t size) {
            if (stop_.load(std::memory_order_relaxed)) throw Stopped{};
            return bio::read(decompressor, source, data, static_cast<std::streamsize>(std::min(kDecodeSlice, size)));
        },
        [](std::size_t) { return false; });
}

StreamReader::Block StreamReader::take_empty_block() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return stop_ || filled_.size() < queue_.queued_blocks; });
    if (stop_) return {};
    Block block;
    if (!spare_.empty()) {
        block = std::move(spare_.back());
        spare_.pop_back();
    }
    lock.unlock();
    if (!block.data) block.data = std::make_unique_for_overwrite<std::byte[]>(queue_.block_bytes);
    block.size = 0;
    return block;
}

bool StreamReader::push_block(Block block) {
    {
        std::lock_guard lock(mutex_);
        if (stop_) return false;
        filled_.push_back(std::move(block));
    }
    changed_.notify_all();
    return true;
}

bool StreamReader::next_block() {
    std::unique_lock lock(mutex_);
    if (current_.data) {
        current_.size = 0;
        spare_.push_back(std::move(current_));
        current_ = {};
    }
    current_pos_ = 0;
    changed_.wait(lock, [this] { return !filled_.empty() || producer_done_; });
    if (!filled_.empty()) {
        current_ = std::move(filled_.front());
        filled_.pop_front();
        lock.unlock();
        changed_.notify_all();
        return true;
    }
    std::vector<Block>().swap(spare_);  // the stream has ended (or failed): its blocks go back
    if (error_) std::rethrow_exception(error_);
    return false;
}

std::size_t StreamReader::read(std::span<std::byte> data) {
    if (ended_) return 0;
    std::size_t done = 0;
    while (done < data.size()) {
        if (current_pos_ == current_.size) {
            // An error is thrown at once, even after some bytes of this call: a short count would
            // say that the stream ended.
            if (!next_block()) {
                ended_ = true;
                break;
            }
            continue;
        }
        std::size_t step = std::min(data.size() - done, current_.size - current_pos_);
        std::memcpy(data.data() + done, current_.data.get() + current_pos_, step);
        current_pos_ += step;
        done += step;
    }
    return done;
}

}  // namespace gpusort::io
