// Direct I/O (O_DIRECT) of io::File, and gpusort-file reading INPUT and writing OUTPUT with it.
// io::File: reads of files of any size at any offsets and lengths, into memory at aligned and
// unaligned addresses (so that both the straight reads and the bounce buffer are used), compared
// with plain reads of the same file; reads past the end; writes at any offsets from aligned and
// unaligned memory, and of adjacent ranges from several threads at once, compared with the bytes
// written; which descriptors can use direct I/O; the bytes of a file in the page cache.
// gpusort-file: sorts with --input-io direct --output-io direct, in one chunk and with runs spilled
// with --spill-io direct, of keys and of records whose boundaries never meet a block's, --unique,
// in place and with --verify, compared with std::stable_sort of the input; where direct I/O cannot
// be used (streams, compressed files, a file system without it) the sort goes through the page
// cache and says so in one notice per file.
#include "cli_run.hpp"
#include "scratch_dir.hpp"
#include "io/file.hpp"
#include "io/file_mapping.hpp"
#include "io/io_error.hpp"
#include "io/stream_writer.hpp"
#include "io/temp_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <latch>
#include <linux/magic.h>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <sys/vfs.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace gpusort;
using namespace gpusort::testing;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBlock = io::kDirectIoAlignment;
constexpr std::size_t kMiB = std::size_t{1} << 20;
// Pieces of one block and of two (smaller than most transfers), and the largest.
constexpr std::size_t kPieces[] = {kBlock, 2 * kBlock, io::kMaxDirectIoPiece};

std::string random_bytes(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string bytes(size, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    return bytes;
}

std::span<const std::byte> as_span(const std::string& bytes, std::size_t from, std::size_t length) {
    return std::as_bytes(std::span(bytes.data() + from, length));
}

// Memory at a multiple of the block, with room for `size` bytes at any shift below two blocks.
class AlignedBuffer {
public:
    explicit AlignedBuffer(std::size_t size)
        : size_((size + 3 * kBlock) / kBlock * kBlock),
          data_(static_cast<std::byte*>(std::aligned_alloc(kBlock, size_))) {
        if (!data_) throw std::bad_alloc();
    }
    std::byte* at(std::size_t shift) const { return data_.get() + shift; }
    std::size_t size() const { return size_; }

private:
    struct Free {
        void operator()(std::byte* p) const { std::free(p); }
    };
    std::size_t size_;
    std::unique_ptr<std::byte, Free> data_;
};

io::File open_read_write(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    return io::File(fd, path);
}

// The descriptors open now (not the one that listed them).
std::set<int> open_descriptors() {
    std::set<int> fds;
    for (const auto& entry : fs::directory_iterator("/proc/self/fd")) fds.insert(std::stoi(entry.path().filename()));
    std::erase_if(fds, [](int fd) { return ::fcntl(fd, F_GETFD) < 0; });
    return fds;
}

// The flags of an open descriptor, as /proc/self/fdinfo shows them (octal).
int descriptor_flags(int fd) {
    std::istringstream info(read_text("/proc/self/fdinfo/" + std::to_string(fd)));
    std::string field;
    while (info >> field) {
        if (field == "flags:") {
            std::string octal;
            info >> octal;
            return static_cast<int>(std::stoul(octal, nullptr, 8));
        }
    }
    return -1;
}

// Whether /dev/shm is a tmpfs.
bool dev_shm_is_tmpfs() {
    struct statfs st {};
    return ::statfs("/dev/shm", &st) == 0 && st.f_type == TMPFS_MAGIC;
}

// A fresh folder under /dev/shm, removed with everything in it.
class ShmDir {
public:
    ShmDir() {
        char name[] = "/dev/shm/gpusort-test-XXXXXX";
        if (!::mkdtemp(name)) throw std::runtime_error("mkdtemp failed");
        path_ = name;
    }
    ~ShmDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    ShmDir(const ShmDir&) = delete;
    ShmDir& operator=(const ShmDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Whether the kernel opens a file of `folder` with O_DIRECT (asked without io::File).
bool kernel_does_direct_io(const std::string& folder) {
    const std::string path = folder + "/direct-probe";
    write_text(path, "x");
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    fs::remove(path);
    return fd >= 0;
}

// Ranges [offset, offset + length) of a file of `size` bytes: the whole, empty ones, heads, tails,
// ranges starting and ending on either side of block and piece boundaries, and some at random.
std::vector<std::pair<std::size_t, std::size_t>> ranges_of(std::size_t size, std::size_t piece, std::mt19937_64& rng) {
    std::vector<std::pair<std::size_t, std::size_t>> ranges = {{0, size}, {0, 0}, {size, 0}, {size / 2, 0}};
    auto add = [&](std::size_t from, std::size_t length) {
        if (from <= size) ranges.emplace_back(from, std::min(length, size - from));
    };
    for (const std::size_t head : {std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, piece + 1, 2 * piece + 7}) add(0, head);
    for (const std::size_t tail : {std::size_t{1}, std::size_t{123}, kBlock - 1, kBlock, kBlock + 1, piece + 5})
        if (tail <= size) add(size - tail, tail);
    for (const std::size_t from : {std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, piece - 1, piece, piece + 1}) {
        add(from, size);
        add(from, 1);
        add(from, kBlock);
        add(from, piece + kBlock + 1);
    }
    if (size > 2) ranges.emplace_back(1, size - 2);
    for (int i = 0; i < 12 && size > 0; ++i) {
        const std::size_t from = rng() % size;
        add(from, 1 + rng() % (2 * piece + 3 * kBlock));
    }
    return ranges;
}

constexpr std::byte kGuard{0xA5};

// Reads [from, from + length) of `direct` into memory at `shift` bytes past an aligned address and
// expects the bytes that `plain` reads and that `bytes` holds there, and nothing around them touched.
void expect_read(const io::File& direct, const io::File& plain, const std::string& bytes, std::size_t from,
                 std::size_t length, std::size_t shift) {
    SCOPED_TRACE("bytes [" + std::to_string(from) + ", " + std::to_string(from + length) + ") into memory at +" +
                 std::to_string(shift));
    AlignedBuffer buffer(length + kBlock);
    std::fill(buffer.at(0), buffer.at(0) + buffer.size(), kGuard);
    direct.read_at(from, std::span(buffer.at(shift), length));
    std::vector<std::byte> reference(length);
    plain.read_at(from, reference);
    ASSERT_TRUE(std::equal(reference.begin(), reference.end(), buffer.at(shift))) << "not what a plain read gives";
    ASSERT_EQ(std::memcmp(buffer.at(shift), bytes.data() + from, length), 0) << "not the bytes of the file";
    EXPECT_TRUE(std::all_of(buffer.at(0), buffer.at(shift), [](std::byte b) { return b == kGuard; }))
        << "bytes before the range were written";
    EXPECT_TRUE(std::all_of(buffer.at(shift + length), buffer.at(0) + buffer.size(), [](std::byte b) { return b == kGuard; }))
        << "bytes after the range were written";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// io::File

// Files of sizes that are, and are not, multiples of a block, read with direct I/O in pieces of one
// block, two blocks and the largest, at unaligned offsets and lengths, heads and tails, into
// memory at an aligned address (+0: whole pieces are read straight into it), one byte past it and
// a block less one past it (all through the bounce buffer): the bytes of plain reads, nothing
// written around them.
TEST(DirectIoFile, ReadsOfAnyRangeIntoAnyMemoryEqualPlainReads) {
    ScratchDir dir;
    std::mt19937_64 rng(11);
    for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, 3 * kMiB + 123}) {
        const std::string path = dir / ("size-" + std::to_string(size));
        const std::string bytes = random_bytes(size, size + 1);
        write_text(path, bytes);
        for (const std::size_t piece : kPieces) {
            SCOPED_TRACE("a file of " + std::to_string(size) + " bytes, pieces of " + std::to_string(piece));
            io::File direct = io::File::open_read(path);
            if (!direct.use_direct_io(piece)) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
            ASSERT_TRUE(direct.direct());
            ASSERT_EQ(direct.direct_piece(), piece);
            const io::File plain = io::File::open_read(path);
            for (const auto& [from, length] : ranges_of(size, piece, rng))
                for (const std::size_t shift : {std::size_t{0}, std::size_t{1}, kBlock - 1}) {
                    expect_read(direct, plain, bytes, from, length, shift);
                    if (::testing::Test::HasFatalFailure()) return;
                }
        }
    }
}

// Reads that run past the end, or start beyond it, fail with an IoError that names the file, with
// direct I/O as without; the file reads as before afterwards.
TEST(DirectIoFile, ReadsPastTheEndFailNamingTheFile) {
    ScratchDir dir;
    for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, 2 * kBlock + 5}) {
        const std::string path = dir / ("size-" + std::to_string(size));
        const std::string bytes = random_bytes(size, size + 3);
        write_text(path, bytes);
        for (const std::size_t piece : {kBlock, io::kMaxDirectIoPiece}) {
            SCOPED_TRACE("a file of " + std::to_string(size) + " bytes, pieces of " + std::to_string(piece));
            io::File file = io::File::open_read(path);
            if (!file.use_direct_io(piece)) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
            const std::pair<std::size_t, std::size_t> beyond[] = {
                {size - std::min<std::size_t>(size, 3), std::min<std::size_t>(size, 3) + 1},  // the tail and a byte more
                {0, size + 1},
                {0, size + kBlock},
                {size, 1},
                {size + 1, 1},
                {size + kBlock, kBlock},
            };
            for (const auto& [from, length] : beyond) {
                for (const std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
                    AlignedBuffer buffer(length + kBlock);
                    try {
                        file.read_at(from, std::span(buffer.at(shift), length));
                        ADD_FAILURE() << "no error reading [" << from << ", " << from + length << ")";
                    } catch (const io::IoError& e) {
                        EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
                    }
                }
            }
            if (size > 0) {
                std::vector<std::byte> whole(size);
                file.read_at(0, whole);
                EXPECT_EQ(std::memcmp(whole.data(), bytes.data(), size), 0);
            }
        }
    }
}

// Writes with direct I/O, in pieces of one block, two and the largest, at offsets and of lengths
// on either side of block and piece boundaries and at random, from memory at an aligned address
// and at unaligned ones, beyond the end too (a hole between): the file then holds the bytes
// written, read plainly and with direct I/O.
TEST(DirectIoFile, WritesAtUnalignedOffsetsFromAnyMemoryLeaveTheBytesWritten) {
    ScratchDir dir;
    std::mt19937_64 rng(23);
    for (const std::size_t piece : kPieces) {
        SCOPED_TRACE("pieces of " + std::to_string(piece));
        const std::string path = dir / ("written-" + std::to_string(piece));
        io::File file = open_read_write(path);
        if (!file.use_direct_io(piece)) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
        const std::size_t size = 3 * kMiB + 123;
        std::vector<std::pair<std::size_t, std::size_t>> writes = {
            {0, 1}, {1, kBlock - 2}, {kBlock - 1, 2}, {kBlock + 1, 2 * kBlock - 1}, {3 * kBlock, piece},
            {3 * kBlock + piece, piece + kBlock + 1}, {size - kBlock - 1, kBlock + 1}, {5, size - 10},
            {size + 2 * kBlock + 3, 3 * kBlock + 1},  // beyond the end: a hole before it
        };
        for (int i = 0; i < 24; ++i) {
            const std::size_t from = rng() % size;
            writes.emplace_back(from, 1 + rng() % (2 * piece + 3 * kBlock));
        }
        std::string expected;
        int round = 0;
        for (const auto& [from, length] : writes) {
            const std::size_t shift = std::array<std::size_t, 4>{0, 1, 7, kBlock - 1}[round % 4];
            SCOPED_TRACE("bytes [" + std::to_string(from) + ", " + std::to_string(from + length) + ") from memory at +" +
                         std::to_string(shift));
            const std::string bytes = random_bytes(length, 1000 + round++);
            AlignedBuffer source(length + kBlock);
            std::memcpy(source.at(shift), bytes.data(), length);
            file.write_at(from, std::span<const std::byte>(source.at(shift), length));
            if (expected.size() < from + length) expected.resize(from + length, '\0');
            expected.replace(from, length, bytes);
            EXPECT_EQ(std::memcmp(source.at(shift), bytes.data(), length), 0) << "the source changed";
        }
        EXPECT_EQ(file.size(), expected.size());
        EXPECT_TRUE(read_text(path) == expected) << "the file read plainly is not the bytes written";
        AlignedBuffer whole(expected.size());
        file.read_at(0, std::span(whole.at(0), expected.size()));
        EXPECT_EQ(std::memcmp(whole.at(0), expected.data(), expected.size()), 0) << "read with direct I/O";
    }
}

// Adjacent ranges cut at random and at block boundaries (so that neighbours share blocks), written
// by six threads at once, each from memory at its own shift, in three rounds of new bytes over the
// same file: after each round the file holds that round's bytes.
TEST(DirectIoFile, AdjacentRangesWrittenBySeveralThreadsAtOnce) {
    ScratchDir dir;
    std::mt19937_64 rng(31);
    for (const std::size_t piece : {2 * kBlock, io::kMaxDirectIoPiece}) {
        SCOPED_TRACE("pieces of " + std::to_string(piece));
        const std::string path = dir / ("threads-" + std::to_string(piece));
        io::File file = open_read_write(path);
        if (!file.use_direct_io(piece)) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
        const std::size_t size = 3 * kMiB + 123;
        constexpr std::size_t kThreads = 6;
        for (int round = 0; round < 3; ++round) {
            SCOPED_TRACE("round " + std::to_string(round));
            const std::string bytes = random_bytes(size, 77 + round);
            std::vector<std::size_t> cuts = {0, size, kBlock - 1, kBlock, kBlock + 1, 2 * kBlock + 1, piece + 3};
            for (int i = 0; i < 60; ++i) cuts.push_back(rng() % size);
            std::sort(cuts.begin(), cuts.end());
            cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
            // Each range copied to memory at its thread's shift beforehand, so that the writes overlap in time.
            std::vector<std::unique_ptr<AlignedBuffer>> sources;
            for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
                const std::size_t length = cuts[i + 1] - cuts[i];
                sources.push_back(std::make_unique<AlignedBuffer>(length + kBlock));
                std::memcpy(sources.back()->at(i % kThreads), bytes.data() + cuts[i], length);
            }
            std::latch start(kThreads);
            std::vector<std::thread> writers;
            std::vector<std::string> errors(kThreads);
            for (std::size_t t = 0; t < kThreads; ++t)
                writers.emplace_back([&, t] {
                    start.arrive_and_wait();
                    try {
                        for (std::size_t i = t; i + 1 < cuts.size(); i += kThreads)
                            file.write_at(cuts[i], std::span<const std::byte>(sources[i]->at(t), cuts[i + 1] - cuts[i]));
                    } catch (const std::exception& e) {
                        errors[t] = e.what();
                    }
                });
            for (auto& w : writers) w.join();
            for (const std::string& error : errors) EXPECT_EQ(error, "");
            EXPECT_EQ(file.size(), size);
            EXPECT_TRUE(read_text(path) == bytes) << "the file is not the bytes the threads wrote";
        }
    }
}

// direct_io_possible() says what use_direct_io() then does, opens nothing that stays open, and is
// false for a file that is not open.
TEST(DirectIoFile, PossibleWhereUseDirectIoWorks) {
    ScratchDir dir;
    write_text(dir / "file", random_bytes(3 * kBlock + 5, 5));
    io::File file = open_read_write(dir / "file");
    const std::set<int> before = open_descriptors();
    const bool possible = file.direct_io_possible();
    EXPECT_EQ(open_descriptors(), before) << "the probe left a descriptor open";
    EXPECT_FALSE(file.direct());
    EXPECT_EQ(possible, kernel_does_direct_io(dir.path()));
    EXPECT_EQ(file.use_direct_io(kBlock), possible);
    EXPECT_EQ(file.direct(), possible);
    EXPECT_EQ(io::File().direct_io_possible(), false);
    EXPECT_EQ(io::direct_io_supported(dir.path()), possible);
    if (!possible) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
}

// A file opened read only (File::open_read, as INPUT is, here even one without write permission)
// can be read with direct I/O: its second descriptor is read only too.
TEST(DirectIoFile, ReadOnlyDescriptorReadsWithDirectIo) {
    ScratchDir dir;
    const std::string path = dir / "read-only";
    const std::string bytes = random_bytes(5 * kBlock + 17, 9);
    write_text(path, bytes);
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    io::File file = io::File::open_read(path);
    const bool possible = file.direct_io_possible();
    EXPECT_EQ(possible, kernel_does_direct_io(dir.path()));
    if (!possible) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
    const std::set<int> before = open_descriptors();
    ASSERT_TRUE(file.use_direct_io(2 * kBlock));
    ASSERT_TRUE(file.direct());
    std::vector<int> added;
    for (const int fd : open_descriptors())
        if (!before.count(fd)) added.push_back(fd);
    ASSERT_EQ(added.size(), 1u) << "not one descriptor for direct I/O";
    const int flags = descriptor_flags(added.front());
    EXPECT_EQ(flags & O_ACCMODE, O_RDONLY) << "flags " << std::oct << flags;
    EXPECT_NE(flags & O_DIRECT, 0) << "flags " << std::oct << flags;
    const io::File plain = io::File::open_read(path);
    for (const auto& [from, length] :
         std::vector<std::pair<std::size_t, std::size_t>>{{0, bytes.size()}, {1, bytes.size() - 1}, {kBlock, 2 * kBlock}, {3, 5}})
        for (const std::size_t shift : {std::size_t{0}, std::size_t{1}}) expect_read(file, plain, bytes, from, length, shift);
}

// On a file system without direct I/O (tmpfs before Linux 6.6), direct_io_possible() is false and
// use_direct_io() returns false, and the file reads through the page cache. Where tmpfs does direct
// I/O (Linux 6.6 and later) both say so, and the case has no file system to run on.
TEST(DirectIoFile, NotPossibleOnAFileSystemWithoutDirectIo) {
    if (!dev_shm_is_tmpfs()) GTEST_SKIP() << "/dev/shm is not a tmpfs here, or there is none";
    ShmDir dir;
    const std::string path = dir / "file";
    const std::string bytes = random_bytes(2 * kBlock + 3, 13);
    write_text(path, bytes);
    const bool kernel_does = kernel_does_direct_io(dir.path());
    io::File file = io::File::open_read(path);
    EXPECT_EQ(file.direct_io_possible(), kernel_does);
    EXPECT_EQ(open_read_write(path).use_direct_io(), kernel_does);
    EXPECT_EQ(io::direct_io_supported(dir.path()), kernel_does);
    if (kernel_does) GTEST_SKIP() << "tmpfs does direct I/O on this kernel: no file system without it to test";
    EXPECT_FALSE(file.use_direct_io(kBlock));
    EXPECT_FALSE(file.direct());
    std::vector<std::byte> whole(bytes.size());
    file.read_at(0, whole);
    EXPECT_EQ(std::memcmp(whole.data(), bytes.data(), bytes.size()), 0);
}

// io::resident_bytes: a file just written and read lies in the page cache (some bytes, at most its
// size); once flushed and dropped from the cache (POSIX_FADV_DONTNEED) fewer do; reading it with
// direct I/O brings it back only a little at most.
TEST(DirectIoFile, ResidentBytesFallWhenTheCacheIsDropped) {
    ScratchDir dir;
    const std::string path = dir / "cached";
    const std::size_t size = 8 * kMiB + 123;
    const std::string bytes = random_bytes(size, 17);
    io::File file = open_read_write(path);
    EXPECT_EQ(io::resident_bytes(file, 0), std::optional<std::uint64_t>(0));
    file.write_at(0, as_span(bytes, 0, size));
    std::vector<std::byte> back(size);
    file.read_at(0, back);
    ASSERT_EQ(std::memcmp(back.data(), bytes.data(), size), 0);
    const std::optional<std::uint64_t> cached = io::resident_bytes(file, size);
    ASSERT_TRUE(cached.has_value());
    EXPECT_GT(*cached, 0u);
    EXPECT_LE(*cached, size);
    file.sync_data();
    ASSERT_EQ(::posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED), 0);
    const std::optional<std::uint64_t> dropped = io::resident_bytes(file, size);
    ASSERT_TRUE(dropped.has_value());
    EXPECT_LT(*dropped, *cached);
    if (!file.use_direct_io()) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
    AlignedBuffer whole(size);
    file.read_at(0, std::span(whole.at(0), size));
    EXPECT_EQ(std::memcmp(whole.at(0), bytes.data(), size), 0);
    const std::optional<std::uint64_t> after_direct = io::resident_bytes(file, size);
    ASSERT_TRUE(after_direct.has_value());
    EXPECT_LT(*after_direct, size / 2) << "reading with direct I/O filled the page cache";
}

// ---------------------------------------------------------------------------------------------
// gpusort-file

namespace {

template <class T>
std::vector<T> random_keys(std::size_t count, std::uint64_t seed, std::uint64_t distinct = 0) {
    std::mt19937_64 rng(seed);
    std::vector<T> keys(count);
    for (auto& key : keys) key = static_cast<T>(distinct ? rng() % distinct : rng());
    return keys;
}

template <class T>
std::string bytes_of(const std::vector<T>& keys) {
    return std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(T));
}

// The keys by std::stable_sort; with `unique`, the first of each run of equal keys.
template <class T>
std::string stable_sorted(std::vector<T> keys, bool unique) {
    std::stable_sort(keys.begin(), keys.end());
    if (unique) keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return bytes_of(keys);
}

constexpr std::size_t kRecord = 100;  // gensort: 100-byte records
constexpr std::size_t kKey = 10;      // sorted by their first 10 bytes, as unsigned bytes

// Records whose keys take `distinct` values (so that many are equal) and whose other bytes differ.
std::string gensort_records(std::size_t count, std::uint64_t seed, std::uint64_t distinct) {
    std::mt19937_64 rng(seed);
    std::string records = random_bytes(count * kRecord, seed + 1);
    std::vector<std::string> keys;
    for (std::uint64_t k = 0; k < distinct; ++k) keys.push_back(random_bytes(kKey, seed + 100 + k));
    for (std::size_t i = 0; i < count; ++i) records.replace(i * kRecord, kKey, keys[rng() % distinct]);
    return records;
}

// The records by std::stable_sort of their keys; with `unique`, the first of each run of equal keys.
std::string stable_sorted_records(const std::string& records, bool unique) {
    std::vector<std::size_t> order(records.size() / kRecord);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto key_less = [&](std::size_t a, std::size_t b) {
        return std::memcmp(records.data() + a * kRecord, records.data() + b * kRecord, kKey) < 0;
    };
    std::stable_sort(order.begin(), order.end(), key_less);
    std::string sorted;
    for (std::size_t k = 0; k < order.size(); ++k) {
        if (unique && k > 0 && !key_less(order[k - 1], order[k])) continue;
        sorted.append(records, order[k] * kRecord, kRecord);
    }
    return sorted;
}

// The value of a field of the --stats JSON as it is written ("\"direct\"", "3"); empty when absent.
std::string stat_field(const std::string& stats, const std::string& name) {
    const std::string field = "\"" + name + "\": ";
    const auto at = stats.find(field);
    if (at == std::string::npos) return "";
    const auto from = at + field.size();
    return stats.substr(from, stats.find_first_of(",\n}", from) - from);
}

std::size_t lines_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// One chunk under a budget that holds the whole input, or runs spilled with direct I/O under the
// smallest budget.
enum class Chunks { one, spilled };

struct SortCase {
    std::string name;
    std::vector<std::string> options;  // the key options, --unique, --verify
    std::string input;
    std::string expected;
    bool in_place = false;
};

// Sorts the case with --input-io direct --output-io direct and expects the reference's bytes, no
// word on stderr, the stats saying both files went with direct I/O (and the runs, where spilled),
// and no file left besides INPUT, OUTPUT and the stats.
void sort_directly(const SortCase& c, Chunks chunks) {
    SCOPED_TRACE(c.name + (chunks == Chunks::one ? ", one chunk" : ", runs spilled"));
    ScratchDir dir;
    if (!io::direct_io_supported(dir.path())) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
    const std::string input = dir / "in";
    const std::string output = c.in_place ? input : dir / "out";
    const std::string stats = dir / "stats.json";
    write_text(input, c.input);
    std::vector<std::string> args = {"--backend", "cpu", "--threads", "2", "--input-io", "direct", "--output-io", "direct",
                                     "--stats", stats};
    if (chunks == Chunks::one)
        args.insert(args.end(), {"--memory", "64M"});
    else
        args.insert(args.end(), {"--memory", "1M", "--spill-io", "direct"});
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.insert(args.end(), {input, output});
    const Result r = run(GPUSORT_FILE_BIN, args);
    ASSERT_EQ(r.status(), 0) << r.how_it_ended() << "; stderr: " << r.err;
    EXPECT_EQ(r.err, "");
    const std::string sorted = read_text(output);
    EXPECT_EQ(sorted.size(), c.expected.size());
    EXPECT_TRUE(sorted == c.expected) << "OUTPUT is not std::stable_sort of INPUT";
    const std::string report = read_text(stats);
    EXPECT_EQ(stat_field(report, "input_io"), "\"direct\"") << report;
    EXPECT_EQ(stat_field(report, "output_io"), "\"direct\"") << report;
    EXPECT_EQ(stat_field(report, "input_direct"), "true") << report;
    EXPECT_EQ(stat_field(report, "output_direct"), "true") << report;
    if (chunks == Chunks::one) {
        EXPECT_EQ(stat_field(report, "spill_io"), "\"none\"") << report;
    } else {
        EXPECT_EQ(stat_field(report, "spill_io"), "\"direct\"") << report;
        EXPECT_GE(std::stoull("0" + stat_field(report, "runs")), 2u) << report;
    }
    std::set<std::string> expected_entries = {"in", "stats.json"};
    if (!c.in_place) expected_entries.insert("out");
    EXPECT_EQ(dir.entries(), expected_entries);
}

void sort_directly(const SortCase& c) {
    sort_directly(c, Chunks::one);
    sort_directly(c, Chunks::spilled);
}

}  // namespace

// u64 keys, 3 MiB: a multiple of the block.
TEST(DirectIoSort, U64KeysOfWholeBlocks) {
    const auto keys = random_keys<std::uint64_t>(3 * kMiB / 8, 41);
    sort_directly({"u64 keys", {"--type", "u64"}, bytes_of(keys), stable_sorted(keys, false)});
}

// u32 keys of an odd count: INPUT and OUTPUT end inside a block.
TEST(DirectIoSort, U32KeysOfAnOddCount) {
    const auto keys = random_keys<std::uint32_t>(300'007, 43);
    ASSERT_NE(keys.size() * 4 % kBlock, 0u);
    sort_directly({"u32 keys", {"--type", "u32"}, bytes_of(keys), stable_sorted(keys, false)});
}

// 100-byte records sorted by a 10-byte key (no record but the first starts on a block boundary
// within 25 blocks), many keys equal: the order of equal keys is the input's.
TEST(DirectIoSort, GensortRecordsStable) {
    const std::string records = gensort_records(30'011, 47, 5000);
    sort_directly({"gensort records", {"--format", "gensort"}, records, stable_sorted_records(records, false)});
}

// --unique keeps the first of each group of equal keys (in input order); OUTPUT is shorter than
// reserved, its end cut off after direct writes.
TEST(DirectIoSort, Unique) {
    const std::string records = gensort_records(30'011, 53, 700);
    sort_directly({"gensort records, --unique", {"--format", "gensort", "--unique"}, records,
                   stable_sorted_records(records, true)});
    const auto keys = random_keys<std::uint32_t>(300'007, 59, 1000);
    sort_directly({"u32 keys, --unique", {"--type", "u32", "--unique"}, bytes_of(keys), stable_sorted(keys, true)});
}

// OUTPUT is INPUT.
TEST(DirectIoSort, InPlace) {
    const auto keys = random_keys<std::uint64_t>(300'001, 61);
    sort_directly({"u64 keys in place", {"--type", "u64"}, bytes_of(keys), stable_sorted(keys, false), true});
    const std::string records = gensort_records(20'003, 67, 3000);
    sort_directly({"gensort records in place", {"--format", "gensort"}, records, stable_sorted_records(records, false), true});
}

// --verify re-reads the OUTPUT written with direct I/O and finds it right.
TEST(DirectIoSort, Verify) {
    const auto keys = random_keys<std::uint32_t>(300'007, 71);
    sort_directly({"u32 keys, --verify", {"--type", "u32", "--verify"}, bytes_of(keys), stable_sorted(keys, false)});
    const std::string records = gensort_records(30'011, 73, 5000);
    sort_directly({"gensort records, --unique --verify", {"--format", "gensort", "--unique", "--verify"}, records,
                   stable_sorted_records(records, true)});
}

// --plan says how INPUT is read and OUTPUT written, and --input-io/--output-io buffered are kept to
// (the stats say "buffered"), so that "direct" above is not what the stats always say.
TEST(DirectIoSort, PlanAndStatsSayHowTheFilesGo) {
    ScratchDir dir;
    if (!io::direct_io_supported(dir.path())) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
    const auto keys = random_keys<std::uint64_t>(100'000, 79);
    write_keys(dir / "in", keys);
    const Result plan = run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "64M", "--input-io", "direct", "--output-io",
                                               "direct", "--plan", dir / "in", dir / "out"});
    ASSERT_EQ(plan.status(), 0) << plan.err;
    EXPECT_NE(plan.out.find("files:        INPUT with direct I/O in pieces of "), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find(", OUTPUT with direct I/O in pieces of "), std::string::npos) << plan.out;
    EXPECT_FALSE(fs::exists(dir / "out"));
    const Result buffered = run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "64M", "--input-io", "buffered",
                                                   "--output-io", "buffered", "--plan", dir / "in", dir / "out"});
    ASSERT_EQ(buffered.status(), 0) << buffered.err;
    EXPECT_NE(buffered.out.find("files:        INPUT through the page cache, OUTPUT through the page cache"), std::string::npos)
        << buffered.out;
    const Result r = run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "64M", "--input-io", "buffered", "--output-io",
                                            "buffered", "--stats", dir / "stats.json", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == stable_sorted(keys, false));
    const std::string report = read_text(dir / "stats.json");
    EXPECT_EQ(stat_field(report, "input_io"), "\"buffered\"") << report;
    EXPECT_EQ(stat_field(report, "output_io"), "\"buffered\"") << report;
}

// Direct I/O asked for where it cannot be used is no error: streams (stdin, stdout) go through the
// page cache, with one notice for each, and the sort is right.
TEST(DirectIoSort, StreamsFallBackWithANotice) {
    ScratchDir dir;
    const auto keys = random_keys<std::uint64_t>(200'003, 83);
    write_keys(dir / "in", keys);
    const std::string input = dir / "in";
    const Result r = run(GPUSORT_FILE_BIN,
                         {"--backend", "cpu", "--memory", "1M", "--tmp-dir", dir.path(), "--input-io", "direct",
                          "--output-io", "direct", "--stats", dir / "stats.json", "-", "-"},
                         [&input] { ::dup2(::open(input.c_str(), O_RDONLY), STDIN_FILENO); });
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(r.out == stable_sorted(keys, false)) << "stdout is not the sorted input (" << r.out.size() << " bytes)";
    EXPECT_EQ(lines_of(r.err), 2u) << r.err;
    EXPECT_NE(r.err.find("gpusort-file: note: --input-io direct: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gpusort-file: note: --output-io direct: "), std::string::npos) << r.err;
    const std::string report = read_text(dir / "stats.json");
    EXPECT_EQ(stat_field(report, "input_io"), "\"stream\"") << report;
    EXPECT_EQ(stat_field(report, "output_io"), "\"stream\"") << report;
}

// A compressed INPUT (read as a stream, with a notice) sorted to a regular OUTPUT on a file system
// with direct I/O: OUTPUT is written with direct I/O, or a second notice says it is not.
TEST(DirectIoSort, CompressedInputToAFileWritesItDirectOrSaysSo) {
    ScratchDir dir;
    if (!io::direct_io_supported(dir.path())) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
    const auto keys = random_keys<std::uint64_t>(200'003, 83);
    const std::string packed = dir / "in.zst";
    {
        io::File file(::open(packed.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), packed);
        io::StreamWriter writer(file.fd(), packed, Compression::zstd, 1);
        writer.write(std::as_bytes(std::span(keys)));
        writer.finish();
    }
    const Result r = run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--memory", "1M", "--input-io", "direct", "--output-io",
                                            "direct", "--stats", dir / "stats.json", packed, dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == stable_sorted(keys, false)) << "OUTPUT is not the sorted input";
    EXPECT_EQ(r.err.rfind("gpusort-file: note: --input-io direct: ", 0), 0u) << r.err;
    const std::string report = read_text(dir / "stats.json");
    EXPECT_EQ(stat_field(report, "input_io"), "\"stream\"") << report;
    if (stat_field(report, "output_io") == "\"direct\"") {
        EXPECT_EQ(lines_of(r.err), 1u) << r.err;
    } else {
        EXPECT_EQ(stat_field(report, "output_io"), "\"buffered\"") << report;
        EXPECT_EQ(lines_of(r.err), 2u) << "--output-io direct was not followed, and no notice said so: " << r.err;
        EXPECT_NE(r.err.find("gpusort-file: note: --output-io direct: "), std::string::npos) << r.err;
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"in.zst", "out", "stats.json"}));
}

// Files on a tmpfs: where it has no direct I/O (before Linux 6.6), --input-io direct --output-io
// direct sort right through the page cache, with a notice for each file and the stats saying
// "buffered"; where it has (6.6 and later), as on any file system with direct I/O.
TEST(DirectIoSort, OnTmpfs) {
    if (!dev_shm_is_tmpfs()) GTEST_SKIP() << "/dev/shm is not a tmpfs here, or there is none";
    ShmDir dir;
    const bool kernel_does = kernel_does_direct_io(dir.path());
    const auto keys = random_keys<std::uint32_t>(300'007, 89);
    write_keys(dir / "in", keys);
    const Result r = run(GPUSORT_FILE_BIN, {"--backend", "cpu", "--type", "u32", "--memory", "64M", "--input-io", "direct",
                                            "--output-io", "direct", "--stats", dir / "stats.json", dir / "in", dir / "out"});
    ASSERT_EQ(r.status(), 0) << r.err;
    EXPECT_TRUE(read_text(dir / "out") == stable_sorted(keys, false)) << "OUTPUT is not the sorted input";
    const std::string report = read_text(dir / "stats.json");
    const std::string way = kernel_does ? "\"direct\"" : "\"buffered\"";
    EXPECT_EQ(stat_field(report, "input_io"), way) << report;
    EXPECT_EQ(stat_field(report, "output_io"), way) << report;
    if (kernel_does) {
        EXPECT_EQ(r.err, "");
    } else {
        EXPECT_EQ(lines_of(r.err), 2u) << r.err;
        EXPECT_NE(r.err.find("gpusort-file: note: --input-io direct: "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("gpusort-file: note: --output-io direct: "), std::string::npos) << r.err;
    }
}
