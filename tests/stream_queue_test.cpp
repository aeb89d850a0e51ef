// The sizes a sort's plan gives the io streams: a StreamReader with small blocks and a short queue,
// a StreamWriter with few blocks in flight, both still carrying every byte; and the figures of the
// writer's encoders that the plan counts.
#include "gpusort/compression.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <limits>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;

TEST(StreamQueue, SmallBlocksAndFewInFlightCarryEveryByte) {
    ScratchDir dir;
    std::mt19937_64 rng(3);
    std::vector<std::byte> data(3'000'001);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(rng() % 7);  // compressible
    for (Compression format : {Compression::none, Compression::zstd, Compression::gzip}) {
        const std::string path = dir / (std::string("data.") + compression_name(format));
        {
            const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            ASSERT_GE(fd, 0);
            io::StreamWriter writer(fd, path, format, 3, -1, 64 << 10, 1);  // 64 KiB blocks, one in flight
            for (std::size_t at = 0; at < data.size(); at += 100'003)
                writer.write(std::span(data).subspan(at, std::min<std::size_t>(100'003, data.size() - at)));
            writer.finish();
            ::close(fd);
        }
        io::StreamReader reader(path, format, io::StreamReaderQueue{4096, 1});  // 4 KiB blocks, one waiting
        std::vector<std::byte> back(data.size() + 1);
        std::size_t got = 0;
        for (std::size_t n; (n = reader.read(std::span(back).subspan(got, std::min<std::size_t>(77'777, back.size() - got)))) > 0;)
            got += n;
        EXPECT_EQ(got, data.size()) << compression_name(format);
        EXPECT_TRUE(std::equal(data.begin(), data.end(), back.begin())) << compression_name(format);
        EXPECT_EQ(reader.read(std::span(back)), 0u);
    }
}

TEST(StreamQueue, EncoderFiguresFollowTheFormatAndLevel) {
    constexpr std::size_t MiB = std::size_t{1} << 20;
    EXPECT_EQ(io::StreamWriter::encoder_bytes(Compression::none, -1), 0u);
    EXPECT_EQ(io::StreamWriter::encoder_bytes(Compression::xz, -1), 94 * MiB + MiB);  // xz(1) at level 6
    EXPECT_EQ(io::StreamWriter::encoder_bytes(Compression::xz, 9), 674 * MiB + MiB);
    EXPECT_EQ(io::StreamWriter::encoder_bytes(Compression::bzip2, 9), 400 * 1024 + 7'200'000 + MiB);
    EXPECT_LT(io::StreamWriter::encoder_bytes(Compression::zstd, 1), io::StreamWriter::encoder_bytes(Compression::zstd, 19));
    EXPECT_EQ(io::StreamWriter::max_compressing_threads(Compression::xz, -1), 10u);  // 1 GiB of 94 MiB encoders
    EXPECT_EQ(io::StreamWriter::max_compressing_threads(Compression::xz, 9), 1u);
    EXPECT_EQ(io::StreamWriter::max_compressing_threads(Compression::zstd, 3), std::numeric_limits<unsigned>::max());
}
