// StreamWriter: appends a stream to a descriptor (file, pipe, stdout), compressing it with gzip,
// bzip2, xz or zstd when asked. Compressed data are cut into large blocks, each compressed on its
// own into a complete member (gzip), stream (bzip2, xz) or frame (zstd) by a pool of threads,
// and written in order by another thread; the concatenation is what `gzip -dc`, `bzip2 -dc`,
// `xz -dc`, `zstd -dc` and StreamReader decode. gzip members and xz streams (CRC64) carry
// checksums, bzip2 its block CRCs; zstd frames carry none (Boost 1.74's encoder cannot ask for
// one), so corruption of our zstd output is found only where it breaks the structure. write()
// and finish() are for one thread at a time; bytes_in() and bytes_out() may be asked from any
// thread.
#pragma once

#include "gpusort/compression.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace gpusort::io {

class StreamWriter {
public:
    // Writes to fd, which stays the caller's (it is not closed), at its current offset with
    // write(2); name is the file's name for messages. threads: compressing threads (0 counts as
    // 1; at most max_compressing_threads()); unused without compression. level: -1 for the
    // format's default (gzip 6, bzip2 9, xz 6, zstd 3), else gzip 0-9, bzip2 1-9, xz 0-9, zstd 1-19
    // (others throw std::invalid_argument). block_size: uncompressed bytes per independently compressed block,
    // 0 for the format's default (default_block_size()). blocks_in_flight: blocks compressed or
    // written at once (each with its compressed output; one more is filled), 0 for two per
    // compressing thread.
    // SIGPIPE and SIGXFSZ are blocked while this writer writes, so that a closed pipe and the file
    // size limit come out as IoErrors (EPIPE, EFBIG) rather than ending the process.
    StreamWriter(int fd, std::string name, Compression compression, unsigned threads, int level = -1,
                 std::size_t block_size = 0, std::size_t blocks_in_flight = 0);
    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;
    // Without finish(): stops the threads (the rest of the data is dropped) and waits for them;
    // never throws. Waiting on a pipe that nobody reads ends within about 0.1 s.
    ~StreamWriter();

    // Appends data. Uncompressed, it is written at once. Compressed, it waits while
    // blocks_in_flight blocks are. Throws IoError naming the file for a failure
    // of an earlier block's compression or writing.
    void write(std::span<const std::byte> data);
    // Compresses and writes the rest (an empty stream still gets one empty member or frame) and
    // waits for all of it; throws IoError naming the file on any failure. Later calls do nothing
    // (or throw the same error again); write() after finish() throws std::logic_error.
    void finish();

    std::uint64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
    std::uint64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }

    const std::string& name() const { return name_; }
    Compression compression() const { return compression_; }
    int level() const { return level_; }
    std::size_t block_size() const { return block_size_; }
    unsigned compressing_threads() const { return static_cast<unsigned>(workers_.size()); }

    // The level -1 stands for: gzip 6, bzip2 9, xz 6, zstd 3 (none: 0).
    static int default_level(Compression compression);
    // Throws std::invalid_argument unless `level` is one of the format's (gzip 0-9, bzip2 1-9,
    // xz 0-9, zstd 1-19; any for none).
    static void check_level(Compression compression, int level);
    // gzip and bzip2 4 MiB, zstd 8 MiB, xz twice its dictionary at that level and at least 8 MiB
    // (16 MiB at level 6); none: 0 (nothing is cut).
    static std::size_t default_block_size(Compression compression, int level);
    // The most compressing threads worth starting: xz's encoders (up to 674 MiB each) together
    // within 1 GiB; unbounded for the other formats.
    static unsigned max_compressing_threads(Compression compression, int level);
    // Memory one compressing thread's encoder takes besides the blocks, with Boost's buffer: xz(1)'s
    // figure for the level, bzip2's 400 KiB + 8 times its block, zlib's 256 KiB, about three
    // windows of zstd's for the level (an estimate); 0 without compression.
    static std::size_t encoder_bytes(Compression compression, int level);

private:
    struct Job {
        std::vector<std::byte> input;
        std::vector<char> output;
        bool compressed = false;
    };

    void submit_pending();
    void compress_loop();
    void output_loop();
    void compress(const std::vector<std::byte>& input, std::vector<char>& output);
    void fail(std::exception_ptr error);
    void rethrow_error();
    void stop_threads();

    int fd_;
    std::string name_;
    Compression compression_;
    int level_;
    std::size_t block_size_;
    std::size_t max_in_flight_ = 0;
    bool may_block_ = false;  // a pipe, socket or terminal: writes may wait for a reader

    std::mutex mutex_;
    std::condition_variable work_ready_;  // for the compressing threads
    std::condition_variable job_done_;    // for the output thread
    std::condition_variable space_free_;  // for write() and finish()
    std::deque<std::unique_ptr<Job>> in_order_;  // jobs not yet written, in output order
    std::deque<Job*> to_compress_;
    std::vector<std::vector<std::byte>> spare_inputs_;
    bool writing_ = false;    // the output thread holds a job it took from in_order_
    bool finishing_ = false;  // no more jobs come
    std::atomic<bool> stop_{false};
    std::exception_ptr error_;

    std::vector<std::byte> pending_;  // the block write() is filling
    std::uint64_t blocks_submitted_ = 0;
    bool finished_ = false;
    std::atomic<std::uint64_t> bytes_in_{0};
    std::atomic<std::uint64_t> bytes_out_{0};

    std::vector<std::thread> workers_;
    std::thread output_thread_;
};

}  // namespace gpusort::io
