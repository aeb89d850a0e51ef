// The chunk engine copying a chunk straight from where it lies in host memory
// (ChunkCallbacks::source, gpu/chunk_engine.hpp): pieces on whole pages pinned and copied by the
// device, the ends off a page boundary read through `read`, and memory the driver will not pin read
// through `read` entirely, by this chunk and every later one. Checked against std::sort and
// std::stable_sort of the same input, and by the elements each callback was given.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu/chunk_engine.hpp"
#include "gpu/device.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpusort/key_spec.hpp"
#include "src/keys/record_layout.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/scratch_dir.hpp"

namespace gpusort::gpu {
namespace {

// What the engine was given and what it wrote for one chunk.
struct Sorted {
    std::vector<std::byte> out;
    std::uint64_t read = 0, copied = 0;  // elements through `read`, and copied from the source
};

// Sorts the n elements of `width` bytes at `source` (restored), with `read` taking them from the same memory.
Sorted sort_from(ChunkEngine& engine, const std::byte* source, std::size_t n) {
    const std::size_t in = engine.input_width(), out_width = engine.output_width(true);
    Sorted run;
    run.out.resize(n * out_width);
    std::vector<bool> seen(n, false);
    ChunkCallbacks io;
    io.source = source;
    io.read = [&](std::uint64_t first, void* data, std::size_t count) {
        ASSERT_LE(first + count, n);
        std::memcpy(data, source + first * in, count * in);
        for (std::size_t i = first; i < first + count; ++i) {
            EXPECT_FALSE(seen[i]) << "element " << i << " taken twice";
            seen[i] = true;
        }
        run.read += count;
    };
    io.copied = [&](std::uint64_t first, std::size_t count) {
        ASSERT_LE(first + count, n);
        for (std::size_t i = first; i < first + count; ++i) {
            EXPECT_FALSE(seen[i]) << "element " << i << " taken twice";
            seen[i] = true;
        }
        run.copied += count;
    };
    io.write = [&](std::uint64_t first, const void* data, std::size_t count) {
        std::memcpy(run.out.data() + first * out_width, data, count * out_width);
    };
    engine.sort_chunk(0, n, false, true, io);
    EXPECT_EQ(run.read + run.copied, n);
    return run;
}

std::vector<std::uint64_t> random_keys(std::size_t n, std::uint64_t seed) {
    std::vector<std::uint64_t> keys(n);
    std::mt19937_64 random(seed);
    for (auto& key : keys) key = random();
    return keys;
}

// u64 keys starting 8 bytes past a page: several pieces pinned, a head and a tail read.
TEST(ChunkSource, KeysOffAPageBoundaryGoMostlyStraight) {
    SKIP_WITHOUT_DEVICE();
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t n = 2 * ChunkEnginePolicy::kSourcePieceBytes / 8 + 12345;  // two pieces and a bit
    std::vector<std::uint64_t> memory = random_keys(n + page, 1);
    auto* base = reinterpret_cast<std::byte*>(memory.data());
    const std::byte* source = base + (page - reinterpret_cast<std::uintptr_t>(base) % page) % page + 8;
    std::vector<std::uint64_t> want(n);
    std::memcpy(want.data(), source, n * 8);
    std::sort(want.begin(), want.end());

    ChunkEngine engine(current_device(), KeyOrder{KeyType::u64, false});
    engine.prepare(1, n);
    const Sorted run = sort_from(engine, source, n);
    EXPECT_GT(run.copied, n / 2);
    EXPECT_GT(run.read, 0u);  // the head before the first page boundary at least
    EXPECT_LT(run.read, page);
    EXPECT_EQ(std::memcmp(run.out.data(), want.data(), n * 8), 0);
}

// gensort records (100 bytes: elements meet page boundaries every 1024 records) from a read-only map
// of a file, starting at an odd record, sorted stably.
TEST(ChunkSource, RecordsFromAReadOnlyFileMap) {
    SKIP_WITHOUT_DEVICE();
    const std::size_t size = 100, skip = 7, n = 1500000;
    std::vector<std::byte> records((n + skip) * size);
    std::mt19937_64 random(2);
    for (std::size_t i = 0; i < records.size(); ++i) records[i] = std::byte(i % size < 10 ? random() % 2 : random() % 256);  // many equal keys
    testing::ScratchDir dir;
    const std::string path = dir.path() + "/records";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, records.data(), records.size()), static_cast<ssize_t>(records.size()));
    void* map = ::mmap(nullptr, records.size(), PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    const std::byte* source = static_cast<const std::byte*>(map) + skip * size;

    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::memcmp(records.data() + (skip + a) * size, records.data() + (skip + b) * size, 10) < 0;
    });
    ChunkEngine engine(current_device(), fixed_key_spec(gensort_key()));
    engine.prepare(1, n);
    const Sorted run = sort_from(engine, source, n);
    EXPECT_GT(run.copied, n / 2);
    for (std::size_t i = 0; i < n; ++i)
        if (std::memcmp(run.out.data() + i * size, records.data() + (skip + order[i]) * size, size) != 0) {
            ADD_FAILURE() << "first wrong record at " << i << " of " << n;
            break;
        }
    ::munmap(map, records.size());
    ::close(fd);
}

// Memory the driver will not pin again (pinned already): the chunk is read through `read`, and so
// is a later chunk whose memory could be pinned.
TEST(ChunkSource, MemoryThatCannotBePinnedIsRead) {
    SKIP_WITHOUT_DEVICE();
    const std::size_t n = ChunkEnginePolicy::kSourcePieceBytes / 8 + 999;
    PinnedBuffer<std::uint64_t> pinned(n);
    const std::vector<std::uint64_t> keys = random_keys(n, 3);
    std::copy(keys.begin(), keys.end(), pinned.data());
    std::vector<std::uint64_t> want = keys;
    std::sort(want.begin(), want.end());

    ChunkEngine engine(current_device(), KeyOrder{KeyType::u64, false});
    engine.prepare(1, n);
    const Sorted first = sort_from(engine, reinterpret_cast<const std::byte*>(pinned.data()), n);
    EXPECT_EQ(first.read, n);
    EXPECT_EQ(std::memcmp(first.out.data(), want.data(), n * 8), 0);
    const Sorted later = sort_from(engine, reinterpret_cast<const std::byte*>(keys.data()), n);
    EXPECT_EQ(later.read, n);
    EXPECT_EQ(std::memcmp(later.out.data(), want.data(), n * 8), 0);
}

}  // namespace
}  // namespace gpusort::gpu
