// io/ streams: compression names, StreamWriter -> StreamReader round trips, agreement with the
// system tools (gzip, bzip2, xz, zstd; a test skips when its tool is missing), corrupt and
// truncated input, write failures, slow and interrupted pipes, and destruction mid-stream.
#include "gpusort/compression.hpp"
#include "io/io_error.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "scratch_dir.hpp"
#include "wait_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;
using Bytes = std::vector<std::byte>;
using Clock = std::chrono::steady_clock;

namespace {

const Compression kCompressed[] = {Compression::gzip, Compression::bzip2, Compression::xz, Compression::zstd};
const Compression kAll[] = {Compression::none, Compression::gzip, Compression::bzip2, Compression::xz,
                            Compression::zstd};

// Sort-like data: 64-bit keys with 40 random bits, so that every format finds something to do.
Bytes make_data(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    Bytes data(size);
    for (std::size_t i = 0; i < size; i += 8) {
        std::uint64_t key = random() & 0xFF'FFFF'FFFFu;
        std::memcpy(data.data() + i, &key, std::min<std::size_t>(8, size - i));
    }
    return data;
}

Bytes file_bytes(const std::string& path) {
    std::string text = read_text(path);
    Bytes bytes(text.size());
    if (!text.empty()) std::memcpy(bytes.data(), text.data(), text.size());
    return bytes;
}

// CPU time used so far by all threads of this process, ended ones included.
double process_cpu_seconds() {
    timespec time{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time);
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_nsec) * 1e-9;
}

void write_bytes(const std::string& path, const Bytes& bytes) {
    write_text(path, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Bytes concat(const Bytes& a, const Bytes& b) {
    Bytes out = a;
    out.insert(out.end(), b.begin(), b.end());
    return out;
}

// The system tool of a format, as `TOOL -dc` / `TOOL -c` understand it.
std::string tool_of(Compression compression) {
    switch (compression) {
    case Compression::gzip: return "gzip";
    case Compression::bzip2: return "bzip2";
    case Compression::xz: return "xz";
    case Compression::zstd: return "zstd";
    case Compression::none: break;
    }
    return "";
}

bool have_tool(const std::string& tool) {
    return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs a shell command; its exit status (-1 when it did not exit).
int shell(const std::string& command) {
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Writes data through a StreamWriter into a new file, handing it over in pieces of odd sizes.
void write_stream(const std::string& path, const Bytes& data, Compression compression, unsigned threads,
                  std::size_t block_size = 0, int level = -1) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    {
        io::StreamWriter writer(fd, path, compression, threads, level, block_size);
        static const std::size_t kPieces[] = {1, 7, 4093, 65537, 3, 1000003, 12345};
        std::size_t done = 0;
        for (std::size_t i = 0; done < data.size(); ++i) {
            std::size_t piece = std::min(kPieces[i % std::size(kPieces)], data.size() - done);
            writer.write(std::span(data).subspan(done, piece));
            done += piece;
        }
        writer.finish();
        EXPECT_EQ(writer.bytes_in(), data.size());
        EXPECT_EQ(writer.bytes_out(), std::filesystem::file_size(path));
    }
    ::close(fd);
}

// Reads a whole stream in pieces of `piece` bytes.
Bytes read_all(io::StreamReader& reader, std::size_t piece = 100'003) {
    Bytes out;
    Bytes buffer(piece);
    for (;;) {
        std::size_t got = reader.read(buffer);
        out.insert(out.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(got));
        if (got < buffer.size()) break;
    }
    EXPECT_EQ(reader.read(buffer), 0u) << "a read after the end must give 0";
    return out;
}

Bytes read_file(const std::string& path, Compression compression) {
    io::StreamReader reader(path, compression);
    return read_all(reader);
}

// The message of the IoError that reading the whole of path throws ("" when none is thrown).
std::string read_error(const std::string& path, Compression compression) {
    try {
        read_file(path, compression);
    } catch (const io::IoError& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// write(2) of all bytes, retrying on EINTR (for the feeding threads of the pipe tests).
bool write_fully(int fd, const std::byte* data, std::size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

std::string name_of(Compression compression) { return compression_name(compression); }

}  // namespace

TEST(Compression, ByFileEnding) {
    EXPECT_EQ(compression_of("keys.bin.gz"), Compression::gzip);
    EXPECT_EQ(compression_of("/a/b/keys.bz2"), Compression::bzip2);
    EXPECT_EQ(compression_of("keys.xz"), Compression::xz);
    EXPECT_EQ(compression_of("keys.zst"), Compression::zstd);
    EXPECT_EQ(compression_of("keys.bin"), Compression::none);
    EXPECT_EQ(compression_of("keys.gz.bin"), Compression::none);
    EXPECT_EQ(compression_of("keys.zstd"), Compression::none);
    EXPECT_EQ(compression_of("keys.GZ"), Compression::none);
    EXPECT_EQ(compression_of("-"), Compression::none);
    EXPECT_EQ(compression_of(""), Compression::none);
}

TEST(Compression, ByNameAndBack) {
    EXPECT_EQ(parse_compression("none"), Compression::none);
    EXPECT_EQ(parse_compression("gz"), Compression::gzip);
    EXPECT_EQ(parse_compression("gzip"), Compression::gzip);
    EXPECT_EQ(parse_compression("bz2"), Compression::bzip2);
    EXPECT_EQ(parse_compression("bzip2"), Compression::bzip2);
    EXPECT_EQ(parse_compression("xz"), Compression::xz);
    EXPECT_EQ(parse_compression("zst"), Compression::zstd);
    EXPECT_EQ(parse_compression("zstd"), Compression::zstd);
    EXPECT_STREQ(compression_name(Compression::none), "none");
    EXPECT_STREQ(compression_name(Compression::gzip), "gz");
    EXPECT_STREQ(compression_name(Compression::bzip2), "bz2");
    EXPECT_STREQ(compression_name(Compression::xz), "xz");
    EXPECT_STREQ(compression_name(Compression::zstd), "zst");
    for (Compression c : kAll) EXPECT_EQ(parse_compression(compression_name(c)), c);
    for (Compression c : kCompressed) {
        EXPECT_EQ(compression_of(std::string("x.") + compression_name(c)), c);
    }
    try {
        parse_compression("lz4");
        FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown compression 'lz4' (none, gz, bz2, xz, zst)");
    }
    EXPECT_THROW(parse_compression(""), std::invalid_argument);
    EXPECT_THROW(parse_compression("GZ"), std::invalid_argument);
}

TEST(StreamWriter, LevelsBlocksAndThreads) {
    ScratchDir dir;
    int fd = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::gzip, 2).level(), 6);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::bzip2, 2).level(), 9);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::xz, 2).level(), 6);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::zstd, 2).level(), 3);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::zstd, 2, 7).level(), 7);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::zstd, 2, -1, 1000).block_size(), 1000u);
    // xz blocks hold at least twice the dictionary: 8 MiB at level 6, 64 MiB at 9.
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::xz, 1).block_size(), std::size_t{16} << 20);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::xz, 1, 9).block_size(), std::size_t{128} << 20);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::gzip, 0).compressing_threads(), 1u);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::gzip, 5).compressing_threads(), 5u);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::none, 5).compressing_threads(), 0u);
    // xz encoders share 1 GiB: 94 MiB each at level 6 (10 of them), 674 MiB at level 9 (1).
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::xz, 64).compressing_threads(), 10u);
    EXPECT_EQ(io::StreamWriter(fd, "out", Compression::xz, 64, 9).compressing_threads(), 1u);
    EXPECT_THROW(io::StreamWriter(fd, "out", Compression::gzip, 1, 10), std::invalid_argument);
    EXPECT_THROW(io::StreamWriter(fd, "out", Compression::bzip2, 1, 0), std::invalid_argument);
    EXPECT_THROW(io::StreamWriter(fd, "out", Compression::xz, 1, 10), std::invalid_argument);
    EXPECT_THROW(io::StreamWriter(fd, "out", Compression::zstd, 1, 20), std::invalid_argument);
    ::close(fd);
    EXPECT_EQ(std::filesystem::file_size(dir / "out"), 0u) << "unfinished writers write nothing";
}

// Round trips through small blocks (so that every size lands on and around block edges), in odd
// pieces, with 1 and 3 compressing threads, for every format.
class StreamRoundTrip : public ::testing::TestWithParam<std::tuple<Compression, unsigned>> {};

TEST_P(StreamRoundTrip, SizesAroundTheBlockSize) {
    auto [compression, threads] = GetParam();
    constexpr std::size_t kBlock = 100'000;
    ScratchDir dir;
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, 5 * kBlock + 12'345}) {
        SCOPED_TRACE("size " + std::to_string(size));
        Bytes data = make_data(size, size + threads);
        std::string path = dir / ("data." + name_of(compression));
        write_stream(path, data, compression, threads, kBlock, compression == Compression::xz ? 1 : -1);
        io::StreamReader reader(path, compression);
        EXPECT_EQ(read_all(reader, 65'537), data);
        EXPECT_EQ(reader.raw_bytes_read(), std::filesystem::file_size(path));
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, StreamRoundTrip,
                         ::testing::Combine(::testing::ValuesIn(kAll), ::testing::Values(1u, 3u)),
                         [](const auto& info) {
                             return name_of(std::get<0>(info.param)) + "_threads" +
                                    std::to_string(std::get<1>(info.param));
                         });

// The same with each format's own block size and level, one byte more than a block.
class StreamFormat : public ::testing::TestWithParam<Compression> {};

TEST_P(StreamFormat, DefaultBlocksRoundTripAndDecodeWithTheSystemTool) {
    Compression compression = GetParam();
    ScratchDir dir;
    std::string path = dir / ("data." + name_of(compression));
    std::size_t block = io::StreamWriter::default_block_size(compression, -1);
    Bytes data = make_data(block + 1, 7);
    write_stream(path, data, compression, 2);
    EXPECT_EQ(read_file(path, compression), data);
    std::string tool = tool_of(compression);
    if (!have_tool(tool)) GTEST_SKIP() << tool << " is not installed";
    ASSERT_EQ(shell(tool + " -dc < '" + path + "' > '" + dir / "decoded" + "'"), 0);
    EXPECT_EQ(file_bytes(dir / "decoded"), data);
}

TEST_P(StreamFormat, SystemToolDecodesOurBlocks) {
    Compression compression = GetParam();
    std::string tool = tool_of(compression);
    if (!have_tool(tool)) GTEST_SKIP() << tool << " is not installed";
    ScratchDir dir;
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{777'777}}) {
        SCOPED_TRACE("size " + std::to_string(size));
        Bytes data = make_data(size, 11);
        std::string path = dir / ("data." + name_of(compression));
        write_stream(path, data, compression, 3, 65'536, compression == Compression::xz ? 1 : -1);
        ASSERT_EQ(shell(tool + " -dc < '" + path + "' > '" + dir / "decoded" + "'"), 0);
        EXPECT_EQ(file_bytes(dir / "decoded"), data);
    }
}

TEST_P(StreamFormat, ReadsFilesOfTheSystemToolAndTheirConcatenation) {
    Compression compression = GetParam();
    std::string tool = tool_of(compression);
    if (!have_tool(tool)) GTEST_SKIP() << tool << " is not installed";
    ScratchDir dir;
    Bytes a = make_data(1'234'567, 1);
    Bytes b = make_data(345'678, 2);
    write_bytes(dir / "a", a);
    write_bytes(dir / "b", b);
    std::string ending = "." + name_of(compression);
    ASSERT_EQ(shell(tool + " -c < '" + dir / "a" + "' > '" + dir / "a" + ending + "'"), 0);
    ASSERT_EQ(shell(tool + " -1 -c < '" + dir / "b" + "' > '" + dir / "b" + ending + "'"), 0);
    ASSERT_EQ(shell("cat '" + dir / "a" + ending + "' '" + dir / "b" + ending + "' '" + dir / "a" + ending +
                    "' > '" + dir / "c" + ending + "'"),
              0);
    EXPECT_EQ(read_file(dir / "a" + ending, compression), a);
    EXPECT_EQ(read_file(dir / "c" + ending, compression), concat(concat(a, b), a));
    io::StreamReader reader(dir / "c" + ending, compression);
    read_all(reader);
    EXPECT_EQ(reader.raw_bytes_read(), std::filesystem::file_size(dir / "c" + ending));
}

TEST_P(StreamFormat, TruncatedDataFailNamingTheFile) {
    Compression compression = GetParam();
    ScratchDir dir;
    // Two members written apart, so that the boundary between them is known.
    std::string first = dir / "first";
    std::string second = dir / "second";
    write_stream(first, make_data(300'000, 3), compression, 1, 0, compression == Compression::xz ? 1 : -1);
    write_stream(second, make_data(200'000, 4), compression, 1, 0, compression == Compression::xz ? 1 : -1);
    Bytes whole = concat(file_bytes(first), file_bytes(second));
    std::size_t boundary = file_bytes(first).size();
    std::string path = dir / ("cut." + name_of(compression));
    write_bytes(path, whole);
    EXPECT_EQ(read_error(path, compression), "");
    for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{5}, boundary / 2, boundary - 1,
                            boundary + 1, boundary + 10, (boundary + whole.size()) / 2, whole.size() - 4,
                            whole.size() - 1}) {
        SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(whole.size()));
        write_bytes(path, Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut)));
        std::string message = read_error(path, compression);
        EXPECT_TRUE(contains(message, "cannot decompress '" + path + "'")) << message;
        EXPECT_TRUE(contains(message, "truncated")) << message;
    }
    // Cut exactly between the members: a complete stream, the first member's data.
    write_bytes(path, Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(boundary)));
    EXPECT_EQ(read_file(path, compression), make_data(300'000, 3));
}

TEST_P(StreamFormat, CorruptDataFailNamingTheFile) {
    Compression compression = GetParam();
    ScratchDir dir;
    std::string path = dir / ("bad." + name_of(compression));
    Bytes data = make_data(2'000'000, 5);
    std::vector<Bytes> originals;
    // Our own output (zstd frames of Boost carry no checksum, so only the tool's are used for zstd).
    if (compression != Compression::zstd) {
        write_stream(path, data, compression, 2, 500'000, compression == Compression::xz ? 1 : -1);
        originals.push_back(file_bytes(path));
    }
    std::string tool = tool_of(compression);
    if (have_tool(tool)) {
        write_bytes(dir / "plain", data);
        ASSERT_EQ(shell(tool + " -c < '" + dir / "plain" + "' > '" + path + "'"), 0);
        originals.push_back(file_bytes(path));
    }
    if (originals.empty()) GTEST_SKIP() << tool << " is not installed";
    for (const Bytes& original : originals) {
        for (double where : {0.3, 0.5, 0.8}) {
            Bytes bad = original;
            std::size_t at = static_cast<std::size_t>(static_cast<double>(bad.size()) * where);
            for (std::size_t i = at; i < at + 16 && i < bad.size(); ++i) bad[i] ^= std::byte{0x5A};
            write_bytes(path, bad);
            std::string message = read_error(path, compression);
            EXPECT_TRUE(contains(message, "cannot decompress '" + path + "'")) << message;
        }
    }
    // Not compressed at all.
    write_bytes(path, data);
    std::string message = read_error(path, compression);
    EXPECT_TRUE(contains(message, "cannot decompress '" + path + "'")) << message;
}

TEST_P(StreamFormat, WriterToDevFullFailsNamingIt) {
    Compression compression = GetParam();
    int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) GTEST_SKIP() << "no /dev/full";
    std::string message;
    try {
        io::StreamWriter writer(fd, "/dev/full", compression, 2, compression == Compression::xz ? 1 : -1, 100'000);
        Bytes data = make_data(1'000'000, 6);
        for (int i = 0; i < 4; ++i) writer.write(data);
        writer.finish();
    } catch (const io::IoError& e) {
        message = e.what();
    }
    ::close(fd);
    EXPECT_TRUE(contains(message, "cannot write '/dev/full'")) << message;
    EXPECT_TRUE(contains(message, "No space left on device")) << message;
}

INSTANTIATE_TEST_SUITE_P(Formats, StreamFormat, ::testing::ValuesIn(kCompressed),
                         [](const auto& info) { return name_of(info.param); });

TEST(StreamWriter, UncompressedToDevFullFailsAtOnce) {
    int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) GTEST_SKIP() << "no /dev/full";
    io::StreamWriter writer(fd, "/dev/full", Compression::none, 1);
    Bytes data(1000, std::byte{1});
    try {
        writer.write(data);
        FAIL() << "no error";
    } catch (const io::IoError& e) {
        EXPECT_TRUE(contains(e.what(), "cannot write '/dev/full': No space left on device")) << e.what();
    }
    ::close(fd);
}

TEST(StreamWriter, ClosedPipeIsAnErrorNotADeath) {
    for (Compression compression : {Compression::none, Compression::gzip}) {
        SCOPED_TRACE(name_of(compression));
        int ends[2];
        ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
        ::close(ends[0]);
        std::string message;
        try {
            io::StreamWriter writer(ends[1], "pipe", compression, 2);
            writer.write(make_data(100'000, 8));
            writer.finish();
        } catch (const io::IoError& e) {
            message = e.what();
        }
        ::close(ends[1]);
        EXPECT_EQ(message, "cannot write 'pipe': Broken pipe");
        sigset_t pending;
        sigpending(&pending);
        EXPECT_FALSE(sigismember(&pending, SIGPIPE)) << "a SIGPIPE was left pending";
        sigset_t mask;
        pthread_sigmask(SIG_SETMASK, nullptr, &mask);
        EXPECT_FALSE(sigismember(&mask, SIGPIPE)) << "SIGPIPE was left blocked";
    }
}

TEST(StreamWriter, FileSizeLimitIsAnErrorNotADeath) {
    ScratchDir dir;
    rlimit old_limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    rlimit small = old_limit;
    small.rlim_cur = 100'000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string message;
    for (Compression compression : {Compression::none, Compression::gzip}) {
        std::string path = dir / ("big." + name_of(compression));
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        try {
            io::StreamWriter writer(fd, path, compression, 1, 1, 50'000);
            Bytes data(1'000'000);  // hardly compressible
            std::mt19937_64 random(9);
            for (auto& byte : data) byte = std::byte(random() & 0xFF);
            writer.write(data);
            writer.finish();
            message = "no error";
        } catch (const io::IoError& e) {
            message = e.what();
        }
        ::close(fd);
        EXPECT_TRUE(contains(message, "cannot write '" + path + "': File too large")) << message;
    }
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
}

TEST(StreamWriter, DestroyedWithoutFinishStopsPromptly) {
    ScratchDir dir;
    // Into a file: four 8 MB blocks for xz at level 6 (about 1 MB/s per thread), two being
    // compressed and two waiting when the writer is destroyed. Both threads first get 1.5 s of CPU
    // time into their blocks (CPU time, unlike wall-clock time, hardly grows when the machine is
    // busy). Stopping then takes one 256 KiB slice each, far less than that head start; compressing
    // the two blocks to their end would take many times it (13 s at 1 MB/s). The bound is not
    // scaled by kSlowdown: liblzma is not instrumented, so a sanitizer leaves both costs about as
    // they are, and a scaled bound (30 s under TSan) would lie above the regression's cost
    // (regression: Boost's xz encoder, liblzma's threaded one, compressed a whole block inside its
    // close, where the stop reached it only in the first second; a busy machine made the test fail).
    {
        Bytes data = make_data(32'000'000, 10);
        std::string path = dir / "unfinished.xz";
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        auto writer = std::make_unique<io::StreamWriter>(fd, path, Compression::xz, 2, 6, 8'000'000);
        const double cpu_at_write = process_cpu_seconds();
        writer->write(data);
        const double head_start = 1.5;
        ASSERT_TRUE(wait_for([&] { return process_cpu_seconds() - cpu_at_write >= head_start; }))
            << "the compressing threads never used " << head_start << " s of CPU time";
        const double cpu_before = process_cpu_seconds();
        const auto start = Clock::now();
        writer.reset();
        EXPECT_LT(process_cpu_seconds() - cpu_before, head_start) << "the blocks under way were compressed to their end";
        EXPECT_LT(Clock::now() - start, kHangBound);
        ::close(fd);
    }
    // Into a pipe nobody reads: the output thread waits for room there when it is destroyed, and
    // would wait for ever if it did not look at the stop.
    {
        int ends[2];
        ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
        Bytes noise(3'000'000);
        std::mt19937_64 random(1);
        for (auto& byte : noise) byte = std::byte(random() & 0xFF);
        auto writer = std::make_unique<io::StreamWriter>(ends[1], "pipe", Compression::gzip, 2, 1, 1'000'000);
        writer->write(noise);
        const int capacity = ::fcntl(ends[0], F_GETPIPE_SZ);
        int queued = 0;
        EXPECT_TRUE(wait_for([&] { return ::ioctl(ends[0], FIONREAD, &queued) == 0 && queued >= capacity; }))
            << "the output thread did not fill the pipe: " << queued << " of " << capacity << " bytes";
        const auto start = Clock::now();
        writer.reset();
        EXPECT_LT(Clock::now() - start, kHangBound);
        ::close(ends[0]);
        ::close(ends[1]);
    }
}

TEST(StreamReader, MissingFileOrDirectoryFailsNamingIt) {
    ScratchDir dir;
    std::string missing = dir / "missing.gz";
    try {
        io::StreamReader reader(missing, Compression::gzip);
        FAIL() << "no error";
    } catch (const io::IoError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot open '" + missing + "': No such file or directory");
    }
    EXPECT_THROW(io::StreamReader(dir.path(), Compression::none), io::IoError);
}

TEST(StreamReader, ReadsAnOpenDescriptorWithoutClosingIt) {
    ScratchDir dir;
    std::string path = dir / "data.zst";
    Bytes data = make_data(3'000'000, 12);
    write_stream(path, data, Compression::zstd, 2, 1'000'000);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
        io::StreamReader reader(fd, "again", Compression::zstd);
        EXPECT_EQ(read_all(reader), data);
    }
    EXPECT_NE(::fcntl(fd, F_GETFD), -1) << "the descriptor was closed";
    ::close(fd);
}

TEST(StreamReader, DashReadsStdin) {
    ScratchDir dir;
    Bytes data = make_data(500'000, 13);
    write_stream(dir / "in.gz", data, Compression::gzip, 1);
    int saved = ::dup(STDIN_FILENO);
    int fd = ::open((dir / "in.gz").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::dup2(fd, STDIN_FILENO), STDIN_FILENO);
    ::close(fd);
    {
        io::StreamReader reader("-", Compression::gzip);
        EXPECT_EQ(read_all(reader), data);
        EXPECT_EQ(reader.name(), "-");
    }
    EXPECT_NE(::fcntl(STDIN_FILENO, F_GETFD), -1) << "stdin was closed";
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
}

TEST(StreamReader, ZstdSkippableFramesAreSkipped) {
    ScratchDir dir;
    Bytes data = make_data(300'000, 17);
    std::string ours = dir / "ours.zst";
    write_stream(ours, data, Compression::zstd, 1, 100'000);
    // Skippable frame (RFC 8878): magic 0x184D2A5?, 4-byte little-endian size, that many bytes.
    Bytes skippable = {std::byte{0x53}, std::byte{0x2A}, std::byte{0x4D}, std::byte{0x18},
                       std::byte{5},    std::byte{0},    std::byte{0},    std::byte{0}};
    for (int i = 0; i < 5; ++i) skippable.push_back(std::byte{0xEE});
    std::string path = dir / "skip.zst";
    Bytes whole = concat(concat(skippable, file_bytes(ours)), skippable);
    write_bytes(path, whole);
    EXPECT_EQ(read_file(path, Compression::zstd), data);
    if (have_tool("zstd")) {
        ASSERT_EQ(shell("zstd -dc < '" + path + "' > '" + dir / "decoded" + "'"), 0);
        EXPECT_EQ(file_bytes(dir / "decoded"), data);
    }
    write_bytes(path, Bytes(whole.begin(), whole.end() - 2));
    EXPECT_TRUE(contains(read_error(path, Compression::zstd), "truncated"));
}

TEST(StreamReader, ErrorsComeAfterTheGoodDataAndStay) {
    ScratchDir dir;
    std::string path = dir / "cut.gz";
    Bytes data = make_data(30'000'000, 14);
    write_stream(path, data, Compression::gzip, 2);
    Bytes whole = file_bytes(path);
    write_bytes(path, Bytes(whole.begin(), whole.end() - 100));
    io::StreamReader reader(path, Compression::gzip);
    Bytes buffer(1 << 20);
    std::size_t good = 0;
    bool failed = false;
    try {
        for (;;) {
            std::size_t got = reader.read(buffer);
            ASSERT_TRUE(std::equal(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(got),
                                   data.begin() + static_cast<std::ptrdiff_t>(good)));
            good += got;
            if (got == 0) break;
        }
    } catch (const io::IoError&) {
        failed = true;
    }
    EXPECT_TRUE(failed);
    EXPECT_GT(good, std::size_t{24'000'000}) << "the complete members came first";
    EXPECT_THROW(reader.read(buffer), io::IoError);
}

// A call that meets an error throws even when it has placed some bytes already: a short count
// would say that the stream ended, and the caller would take what it got for all of the data.
TEST(StreamReader, AnErrorIsNeverAShortCount) {
    ScratchDir dir;
    std::string path = dir / "cut.gz";
    Bytes data = make_data(2'000'000, 15);
    write_stream(path, data, Compression::gzip, 1, 1 << 20);  // two members, the second one cut
    Bytes whole = file_bytes(path);
    write_bytes(path, Bytes(whole.begin(), whole.end() - 100));
    io::StreamReader reader(path, Compression::gzip);
    Bytes buffer(data.size());
    EXPECT_THROW(reader.read(buffer), io::IoError);
}

// A pipe fed in small pieces with pauses by another thread.
class SlowPipe {
public:
    SlowPipe(Bytes data, int pause_microseconds) : data_(std::move(data)) {
        if (::pipe2(ends_, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        feeder_ = std::thread([this, pause_microseconds] {
            // When the reading side gives up, the pipe is closed under us: EPIPE, not SIGPIPE.
            sigset_t pipe_signal;
            sigemptyset(&pipe_signal);
            sigaddset(&pipe_signal, SIGPIPE);
            pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
            std::mt19937 random(3);
            std::size_t done = 0;
            while (done < data_.size()) {
                std::size_t piece = std::min<std::size_t>(1 + random() % 20'000, data_.size() - done);
                if (!write_fully(ends_[1], data_.data() + done, piece)) break;
                done += piece;
                std::this_thread::sleep_for(std::chrono::microseconds(pause_microseconds));
            }
            ::close(ends_[1]);
        });
    }
    ~SlowPipe() {
        ::close(ends_[0]);  // ends the feeder if the test stopped reading early
        feeder_.join();
    }
    int read_end() const { return ends_[0]; }

private:
    Bytes data_;
    int ends_[2] = {-1, -1};
    std::thread feeder_;
};

TEST(StreamReader, SlowPipeGivesAllBytes) {
    ScratchDir dir;
    Bytes data = make_data(2'000'000, 15);
    {
        SlowPipe pipe(data, 200);
        io::StreamReader reader(pipe.read_end(), "pipe", Compression::none);
        EXPECT_EQ(read_all(reader, 333), data);
        EXPECT_EQ(reader.raw_bytes_read(), data.size());
    }
    write_stream(dir / "data.gz", data, Compression::gzip, 2, 300'000);
    {
        SlowPipe pipe(file_bytes(dir / "data.gz"), 200);
        io::StreamReader reader(pipe.read_end(), "pipe", Compression::gzip);
        EXPECT_EQ(read_all(reader, 4096), data);
    }
}

namespace {
std::atomic<int> signals_caught{0};
extern "C" void count_signal(int) { signals_caught.fetch_add(1, std::memory_order_relaxed); }

// Sends SIGUSR1 to every thread of this process but the caller.
void signal_all_threads() {
    pid_t self = static_cast<pid_t>(::syscall(SYS_gettid));
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
        pid_t tid = std::stoi(entry.path().filename());
        if (tid != self) ::syscall(SYS_tgkill, ::getpid(), tid, SIGUSR1);
    }
}

// True while SIGUSR1 is pending for the process, or for one of its threads that will take it (one
// that blocks it, such as a sanitizer's own thread, never does), from /proc/self/task/*/status.
bool usr1_pending() {
    const std::uint64_t bit = std::uint64_t{1} << (SIGUSR1 - 1);
    auto has_bit = [&](const std::string& status, const char* field) {
        auto at = status.find(field);
        return at != std::string::npos && (std::stoull(status.substr(at + std::strlen(field)), nullptr, 16) & bit);
    };
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
        std::string status = read_text(entry.path().string() + "/status");
        if (has_bit(status, "ShdPnd:") || (has_bit(status, "SigPnd:") && !has_bit(status, "SigBlk:"))) return true;
    }
    return false;
}

// Installs a SIGUSR1 handler without SA_RESTART (blocked system calls fail with EINTR) and sends
// SIGUSR1 to every other thread of the process every 0.3 ms, until destroyed.
class SignalStorm {
public:
    SignalStorm() {
        struct sigaction action {};
        action.sa_handler = count_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = 0;
        if (::sigaction(SIGUSR1, &action, &old_action_) != 0) throw std::runtime_error("sigaction failed");
        signals_caught = 0;
        sender_ = std::thread([this] {
            while (!done_) {
                signal_all_threads();
                std::this_thread::sleep_for(std::chrono::microseconds(300));
            }
        });
    }
    ~SignalStorm() {
        done_ = true;
        sender_.join();
        // A thread that has not run since may still have one pending: with the old (default)
        // action it would end the process. Wait until every thread has taken its signals.
        if (!wait_for([] { return !usr1_pending(); })) ADD_FAILURE() << "a thread never took its SIGUSR1";
        ::sigaction(SIGUSR1, &old_action_, nullptr);
    }

private:
    struct sigaction old_action_ {};
    std::atomic<bool> done_{false};
    std::thread sender_;
};

// The bytes a reader of the pipe gets; an IoError becomes a test failure.
Bytes read_pipe(const Bytes& fed, Compression compression) {
    SlowPipe pipe(fed, 300);
    try {
        io::StreamReader reader(pipe.read_end(), "pipe", compression);
        return read_all(reader, 10'000);
    } catch (const io::IoError& e) {
        ADD_FAILURE() << e.what();
        return {};
    }
}

}  // namespace

TEST(StreamReader, SignalsWithoutRestartLoseNoBytes) {
    Bytes data = make_data(3'000'000, 16);
    Bytes compressed;
    {
        ScratchDir dir;
        write_stream(dir / "data.xz", data, Compression::xz, 1, 1'000'000, 0);
        compressed = file_bytes(dir / "data.xz");
    }
    SignalStorm storm;
    EXPECT_EQ(read_pipe(data, Compression::none), data);
    EXPECT_EQ(read_pipe(compressed, Compression::xz), data);
    // And a writer into a pipe drained slowly.
    int ends[2];
    ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    Bytes received;
    std::thread drain([&] {
        Bytes buffer(7'000);
        for (;;) {
            ssize_t n = ::read(ends[0], buffer.data(), buffer.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            received.insert(received.end(), buffer.begin(), buffer.begin() + n);
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    });
    try {
        io::StreamWriter writer(ends[1], "pipe", Compression::none, 1);
        writer.write(data);
        writer.finish();
    } catch (const io::IoError& e) {
        ADD_FAILURE() << e.what();
    }
    ::close(ends[1]);
    drain.join();
    ::close(ends[0]);
    EXPECT_EQ(received, data);
    EXPECT_GT(signals_caught.load(), 100) << "the signals did not arrive; the test tested nothing";
}

TEST(StreamReader, DestroyedEarlyStopsPromptly) {
    ScratchDir dir;
    // Without the stop, the reading thread would wait for ever in both cases below.
    // A file that decompresses to far more than the queue holds: the reading thread waits on the
    // full queue when the reader is destroyed.
    {
        std::string path = dir / "zeros.zst";
        write_stream(path, Bytes(100'000'000), Compression::zstd, 2);
        auto reader = std::make_unique<io::StreamReader>(path, Compression::zstd);
        Bytes buffer(1 << 20);
        EXPECT_EQ(reader->read(buffer), buffer.size());
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // time to fill the queue (not needed to pass)
        auto start = Clock::now();
        reader.reset();
        EXPECT_LT(Clock::now() - start, kHangBound);
    }
    // A pipe that stays open and silent: the reading thread waits on it.
    {
        int ends[2];
        ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
        ASSERT_EQ(::write(ends[1], "abc", 3), 3);
        auto reader = std::make_unique<io::StreamReader>(ends[0], "silent pipe", Compression::none);
        Bytes buffer(3);
        EXPECT_EQ(reader->read(buffer), 3u);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // time to wait on the pipe (not needed to pass)
        auto start = Clock::now();
        reader.reset();
        EXPECT_LT(Clock::now() - start, kHangBound);
        ::close(ends[0]);
        ::close(ends[1]);
    }
}
