// StreamReader: reads a file, a pipe or stdin from start to end, decompressing gzip, bzip2, xz or
// zstd on the way. A thread of its own reads and decompresses ahead into a few large blocks, so
// that the decompression runs beside the consumer; its errors come out of read(). Concatenated
// members, streams and frames (`cat a.gz b.gz`, StreamWriter's blocks) are read through.
// read() is for one thread at a time; raw_bytes_read() may be asked from any thread.
#pragma once

#include "gpusort/compression.hpp"
#include "io/file.hpp"

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

// The reading thread's queue: blocks of decompressed data handed to read(). It holds the filled
// blocks waiting, one being filled and the one read() takes bytes from; all are freed once the
// stream has ended. The defaults are what a sort plans with when its budget allows.
struct StreamReaderQueue {
    std::size_t block_bytes = std::size_t{8} << 20;  // bytes per block
    std::size_t queued_blocks = 4;                   // filled blocks that may wait for read(), at most
};

class StreamReader {
public:
    // Opens path (O_RDONLY | O_CLOEXEC); "-" reads stdin (descriptor 0, left open).
    StreamReader(const std::string& path, Compression compression, StreamReaderQueue queue = {});
    // Reads the open descriptor fd, which stays the caller's (it is not closed), with read(2)
    // from its current offset on: a caller re-reading a file it wrote seeks it to 0 first. The
    // reading thread reads ahead, so the descriptor's offset may end up anywhere up to the end of
    // the file, whatever read() has delivered; the caller must not use the descriptor (or another
    // sharing its offset) while the StreamReader exists. name is the file's name for messages.
    StreamReader(int fd, std::string name, Compression compression, StreamReaderQueue queue = {});
    StreamReader(const StreamReader&) = delete;
    StreamReader& operator=(const StreamReader&) = delete;
    // Stops the reading thread (within about 0.1 s, even when it waits on a pipe that never ends
    // or on a full queue) and waits for it; never throws.
    ~StreamReader();

    // Fills data from the stream and returns the bytes placed: data.size(), or fewer only when the
    // stream ended (0 once it has ended). Throws IoError naming the file when reading fails, when
    // compressed data are corrupt ("cannot decompress 'x': ...") or end within a member or frame;
    // the data before the fault come in the calls they fill completely; the call that meets the
    // fault, and every later one, throws the same error.
    std::size_t read(std::span<std::byte> data);

    // Bytes taken from the descriptor so far (compressed bytes when compressed), for progress.
    std::uint64_t raw_bytes_read() const { return raw_bytes_read_.load(std::memory_order_relaxed); }

    const std::string& name() const { return name_; }

private:
    struct Block {
        std::unique_ptr<std::byte[]> data;
        std::size_t size = 0;
    };
    class Source;

    void start();
    void produce();
    void decode_plain(Source& source);
    template <typename Decompressor>
    void decode(Source& source, Decompressor& decompressor);
    // Fills blocks through fill(data, size) (bytes placed, negative at the end) and hands them to
    // read(); early(block_size) says when a partly filled block should go out at once.
    template <typename Fill, typename Early>
    void fill_blocks(Fill fill, Early early);
    Block take_empty_block();
    bool push_block(Block block);
    bool next_block();

    File owned_;  // open when this reader opened the file itself
    int fd_ = -1;
    std::string name_;
    Compression compression_;
    StreamReaderQueue queue_;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Block> filled_;
    std::vector<Block> spare_;
    bool producer_done_ = false;
    std::exception_ptr error_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> raw_bytes_read_{0};

    Block current_;  // the block read() takes bytes from
    std::size_t current_pos_ = 0;
    bool ended_ = false;

    std::thread thread_;
};

}  // namespace gpusort::io
