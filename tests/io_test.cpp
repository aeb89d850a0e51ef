// io/: complete positional transfers, nameless temp files, and the atomic output file.
#include "io/atomic_output_file.hpp"
#include "io/file_mapping.hpp"
#include "io/host_buffer.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"
#include "io/read_ahead.hpp"
#include "io/spill_file.hpp"
#include "io/temp_file.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <tbb/parallel_for.h>

using namespace gpusort;
using namespace gpusort::testing;

TEST(File, ReadPastTheEndIsAnErrorNamingTheFile) {
    ScratchDir dir;
    write_text(dir / "small", "12345");
    io::File file = io::File::open_read(dir / "small");
    EXPECT_EQ(file.size(), 5u);
    std::vector<std::byte> buffer(8);
    try {
        file.read_at(0, buffer);
        FAIL() << "no error";
    } catch (const io::IoError& e) {
        EXPECT_NE(std::string(e.what()).find(dir / "small"), std::string::npos) << e.what();
    }
}

TEST(File, OpenMissingOrDirectoryFails) {
    ScratchDir dir;
    EXPECT_THROW(io::File::open_read(dir / "missing"), io::IoError);
    EXPECT_THROW(io::File::open_read(dir.path()), io::IoError);
}

TEST(ParallelIo, WritesAndReadsBackAcrossManyBlocks) {
    ScratchDir dir;
    io::File file = io::create_temp_file(dir.path());
    std::vector<std::uint64_t> data(3 * io::kParallelIoBlock / 8 + 12345);
    std::iota(data.begin(), data.end(), 42);
    io::write_parallel(file, 4096, std::as_bytes(std::span<const std::uint64_t>(data)));
    std::vector<std::uint64_t> back(data.size());
    io::read_parallel(file, 4096, std::as_writable_bytes(std::span<std::uint64_t>(back)));
    EXPECT_EQ(back, data);
}

// copy_parallel: streamed copies write 16-byte-aligned lines between a head and a tail copied
// plainly; offsets of source and destination that differ, lengths that are no multiple of a line or
// a block, on both sides of the size from which copies are streamed. Nothing outside is written.
TEST(CopyParallel, EveryByteArrivesAtAnyAlignmentAboveAndBelowTheStreamingSize) {
    const std::size_t largest = io::kStreamCopyBytes + (std::size_t{5} << 20) + 77;
    std::vector<std::byte> source(largest + 64);
    std::mt19937_64 random(11);
    for (auto& b : source) b = static_cast<std::byte>(random());
    for (const std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{4} << 20,
                                     io::kStreamCopyBytes - 1, io::kStreamCopyBytes, largest}) {
        for (const std::size_t from : {std::size_t{0}, std::size_t{5}}) {
            for (const std::size_t to : {std::size_t{0}, std::size_t{3}, std::size_t{16}}) {
                std::vector<std::byte> destination(length + 32, std::byte{0xEE});
                io::copy_parallel(destination.data() + to, std::span<const std::byte>(source.data() + from, length));
                ASSERT_TRUE(std::equal(source.begin() + from, source.begin() + from + length, destination.begin() + to))
                    << length << " bytes from +" << from << " to +" << to;
                EXPECT_TRUE(std::all_of(destination.begin(), destination.begin() + to, [](std::byte b) { return b == std::byte{0xEE}; }));
                EXPECT_TRUE(std::all_of(destination.begin() + to + length, destination.end(),
                                        [](std::byte b) { return b == std::byte{0xEE}; }))
                    << "written past the end: " << length << " bytes to +" << to;
            }
        }
    }
}

// Direct I/O on a spill file: writes of adjacent ranges at any offsets and of any lengths, from
// several threads at once (the partial blocks they share go through the page cache), read back at
// any offsets, equal the bytes written; checked through a second, ordinary descriptor too.
// Pieces of the largest size and of two blocks.
TEST(DirectIo, AdjacentUnalignedWritesFromManyThreadsReadBackExactly) {
    for (const std::size_t piece : {io::kMaxDirectIoPiece, 2 * io::kDirectIoAlignment}) {
        SCOPED_TRACE("pieces of " + std::to_string(piece) + " bytes");
        ScratchDir dir;
        io::File file = io::create_temp_file(dir.path());
        if (!file.use_direct_io(piece)) GTEST_SKIP() << "the file system of " << dir.path() << " does not do direct I/O";
        ASSERT_TRUE(file.direct());
        EXPECT_EQ(file.direct_piece(), piece);
        const std::size_t size = 3 * io::kMaxDirectIoPiece + 12345;
        std::vector<std::byte> data(size);
        std::mt19937_64 rng(7);
        for (auto& b : data) b = static_cast<std::byte>(rng());
        // Cut points at random, unaligned offsets: ranges from a byte to several pieces long.
        std::vector<std::size_t> cuts = {0, size};
        for (int i = 0; i < 40; ++i) cuts.push_back(rng() % size);
        for (std::size_t c : {std::size_t{1}, io::kDirectIoAlignment, io::kDirectIoAlignment + 1, 2 * io::kMaxDirectIoPiece})
            cuts.push_back(c);
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        file.allocate(size);
        std::vector<std::thread> writers;
        for (std::size_t t = 0; t < 4; ++t)
            writers.emplace_back([&, t] {
                for (std::size_t i = t; i + 1 < cuts.size(); i += 4)
                    file.write_at(cuts[i], std::span<const std::byte>(data).subspan(cuts[i], cuts[i + 1] - cuts[i]));
            });
        for (auto& w : writers) w.join();

        for (int i = 0; i < 200; ++i) {
            const std::size_t from = rng() % size;
            const std::size_t length = 1 + rng() % std::min<std::size_t>(size - from, 3 * io::kMaxDirectIoPiece);
            std::vector<std::byte> back(length);
            file.read_at(from, back);
            ASSERT_TRUE(std::equal(back.begin(), back.end(), data.begin() + static_cast<std::ptrdiff_t>(from)))
                << "bytes [" << from << ", " << from + length << ")";
        }
        std::vector<std::byte> whole(size);
        file.read_at(0, whole);
        EXPECT_TRUE(whole == data);
        // The same bytes through the page cache (a descriptor without O_DIRECT).
        io::File plain(::open(("/proc/self/fd/" + std::to_string(file.fd())).c_str(), O_RDONLY | O_CLOEXEC), "plain");
        ASSERT_TRUE(plain.is_open());
        std::vector<std::byte> cached(size);
        plain.read_at(0, cached);
        EXPECT_TRUE(cached == data);
        // Reading past the end is an error that names the file, as without direct I/O.
        std::vector<std::byte> beyond(10);
        EXPECT_THROW(file.read_at(size - 5, beyond), io::IoError);
    }
}

TEST(DirectIo, SpillFileRefusesNothingWhereTheFileSystemHasIt) {
    ScratchDir dir;
    const bool supported = io::direct_io_supported(dir.path());
    if (supported) {
        EXPECT_TRUE(io::SpillFile(dir.path(), 3, io::kMaxDirectIoPiece).direct());
    } else {
        EXPECT_THROW(io::SpillFile(dir.path(), 3, io::kMaxDirectIoPiece), io::IoError);
    }
    EXPECT_FALSE(io::SpillFile(dir.path(), 3, 0).direct());
    EXPECT_THROW(io::SpillFile(dir.path(), 0, 0), std::invalid_argument);
    EXPECT_THROW(io::create_temp_file(dir.path()).use_direct_io(io::kDirectIoAlignment + 1), std::invalid_argument);
    EXPECT_THROW(io::direct_io_supported(dir / "missing"), io::IoError);
    EXPECT_TRUE(dir.entries().empty());
}

// A spill striped over several files holds every byte where it was written: transfers that start
// and end inside turns of a stripe and cross several turns, from threads at once, through the page
// cache and with direct I/O (where the file system has it); the spill grows range by range as a
// stream's runs do. Each stripe file holds its turns, checked through its own descriptor.
TEST(SpillFile, StripedTransfersKeepEveryByteWhereItWasWritten) {
    ScratchDir dir;
    constexpr std::uint64_t kTurn = io::kSpillStripe;
    const std::uint64_t size = 7 * kTurn + 12345;  // turns over 3 stripes, the last one partial
    std::vector<std::byte> data(size);
    std::mt19937_64 rng(11);
    for (auto& b : data) b = static_cast<std::byte>(rng());
    std::vector<std::size_t> pieces = {0};
    if (io::direct_io_supported(dir.path())) pieces.push_back(64 * 1024);
    for (std::size_t piece : pieces) {
        io::SpillFile spill(dir.path(), 3, piece);
        // Reserved in three ranges that end inside turns, as a stream's runs are.
        const std::uint64_t cuts[] = {0, kTurn / 3, 4 * kTurn + 777, size};
        for (int r = 0; r < 3; ++r) EXPECT_NO_THROW(spill.allocate(cuts[r], cuts[r + 1] - cuts[r]));
        // Neighbouring ranges of odd lengths, written from several threads at once.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
        for (std::uint64_t at = 0; at < size;) {
            const std::uint64_t length = std::min<std::uint64_t>(size - at, 1 + rng() % (2 * kTurn));
            ranges.emplace_back(at, length);
            at += length;
        }
        tbb::parallel_for(std::size_t{0}, ranges.size(), [&](std::size_t i) {
            spill.write_at(ranges[i].first, std::span<const std::byte>(data).subspan(ranges[i].first, ranges[i].second));
        });
        std::vector<std::byte> back(size);
        io::read_parallel(spill, 0, back);
        EXPECT_TRUE(back == data) << "piece " << piece;
        // A read that starts and ends inside turns.
        std::vector<std::byte> middle(2 * kTurn + 5);
        spill.read_at(kTurn - 3, middle);
        EXPECT_TRUE(std::equal(middle.begin(), middle.end(), data.begin() + (kTurn - 3))) << "piece " << piece;
        // What write_parallel puts is read back by single reads.
        std::vector<std::byte> again(data.rbegin(), data.rend());
        io::write_parallel(spill, 0, again);
        spill.read_at(0, back);
        EXPECT_TRUE(back == again) << "piece " << piece;
    }
    EXPECT_TRUE(dir.entries().empty());
}

// The turns of each stripe are where the layout puts them: stripe s holds turns s, s + n, ... one
// after the other, read through that stripe's own descriptor; space reserved in ranges that end
// inside turns makes each stripe file as long as its turns (where the file system reserves space).
TEST(SpillFile, TurnsGoToTheirStripesInOrder) {
    ScratchDir dir;
    constexpr std::uint64_t kTurn = io::kSpillStripe;
    constexpr std::size_t kStripes = 3;
    io::SpillFile spill(dir.path(), kStripes, 0);
    // The stripe files are this process's descriptors of nameless files in the folder, in order.
    std::vector<int> fds;
    for (int fd = 3; fd < 1024; ++fd) {
        const std::string link = "/proc/self/fd/" + std::to_string(fd);
        char target[4096];
        const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
        if (n > 0 && std::string(target, static_cast<std::size_t>(n)).starts_with(dir.path())) fds.push_back(fd);
    }
    ASSERT_EQ(fds.size(), kStripes);
    const std::uint64_t turns = 7;
    const std::uint64_t size = turns * kTurn + 100;  // an eighth turn of 100 bytes, in stripe 1
    bool reserved = spill.allocate(0, 5000);
    reserved = spill.allocate(5000, 3 * kTurn + 17 - 5000) && reserved;
    reserved = spill.allocate(3 * kTurn + 17, size - (3 * kTurn + 17)) && reserved;
    const std::uint64_t expected_sizes[kStripes] = {3 * kTurn, 2 * kTurn + 100, 2 * kTurn};
    for (std::size_t s = 0; s < kStripes && reserved; ++s) {
        struct stat st {};
        ASSERT_EQ(::fstat(fds[s], &st), 0);
        EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), expected_sizes[s]) << "stripe " << s;
    }
    std::vector<std::byte> data(size);
    for (std::uint64_t t = 0; t <= turns; ++t)
        std::fill(data.begin() + t * kTurn, data.begin() + std::min(size, (t + 1) * kTurn), static_cast<std::byte>(t + 1));
    io::write_parallel(spill, 0, data);
    for (std::size_t s = 0; s < kStripes; ++s) {
        std::vector<std::byte> turn(kTurn);
        for (std::uint64_t t = s, k = 0; t <= turns; t += kStripes, ++k) {
            const std::uint64_t length = std::min(kTurn, size - t * kTurn);
            ASSERT_EQ(::pread(fds[s], turn.data(), length, static_cast<off_t>(k * kTurn)), static_cast<ssize_t>(length));
            EXPECT_EQ(turn.front(), static_cast<std::byte>(t + 1)) << "stripe " << s << ", turn " << t;
            EXPECT_EQ(turn[length - 1], static_cast<std::byte>(t + 1)) << "stripe " << s << ", turn " << t;
        }
    }
}

// Maps of neighbouring ranges at offsets inside pages, written from threads at once: the file holds
// every byte, and nothing outside the ranges changed.
TEST(FileMapping, RegionsAtAnyOffsetWriteTheirBytesOfTheFile) {
    ScratchDir dir;
    io::File file = io::create_temp_file(dir.path());
    const std::size_t size = 5 * 4096 + 777;
    std::vector<std::byte> data(size, std::byte{0x5a});
    ASSERT_TRUE(file.allocate(size));
    file.write_at(0, data);
    const std::size_t cuts[] = {100, 4096 + 3, 3 * 4096 + 1000, size - 10};
    std::mt19937_64 rng(4);
    for (std::size_t i = cuts[0]; i < cuts[3]; ++i) data[i] = static_cast<std::byte>(rng());
    {
        std::vector<std::thread> writers;
        for (std::size_t r = 0; r < 3; ++r)
            writers.emplace_back([&, r] {
                const io::FileMapping map(file, cuts[r], cuts[r + 1] - cuts[r]);
                EXPECT_EQ(map.size(), cuts[r + 1] - cuts[r]);
                std::memcpy(map.data(), data.data() + cuts[r], map.size());
            });
        for (auto& w : writers) w.join();
    }
    std::vector<std::byte> back(size);
    file.read_at(0, back);
    EXPECT_TRUE(back == data);
}

// Whether the page that holds `byte` is in this process's page tables (/proc/self/pagemap: bit 63).
bool page_present(const std::byte* byte) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    std::uint64_t entry = 0;
    const bool read = fd >= 0 && ::pread(fd, &entry, sizeof entry,
                                         static_cast<off_t>(reinterpret_cast<std::uintptr_t>(byte) / page * sizeof entry)) ==
                                     static_cast<ssize_t>(sizeof entry);
    if (fd >= 0) ::close(fd);
    if (!read) throw std::runtime_error("cannot read /proc/self/pagemap");
    return (entry >> 63) != 0;
}

// Released pages leave the map (whole pages before the point; the last page with the map's end),
// and their bytes stay in the file; a released page touched again gives its bytes back. The map
// goes as a whole, released pages included, when it goes out of scope (msync finds no memory there).
TEST(FileMapping, ReleasedPagesLeaveTheMapAndTheirBytesStay) {
    ScratchDir dir;
    io::File file = io::create_temp_file(dir.path());
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t size = 6 * page + 321, offset = 100, length = size - offset - 50;
    ASSERT_TRUE(file.allocate(size));
    std::vector<std::byte> data(size, std::byte{0});
    std::mt19937_64 rng(6);
    for (std::size_t i = offset; i < offset + length; ++i) data[i] = static_cast<std::byte>(rng());
    std::byte* start = nullptr;  // the file's first page in the map
    {
        io::FileMapping map(file, offset, length);
        start = map.data() - offset;
        const std::size_t half = 3 * page + 10 - offset;  // a point inside the file's fourth page
        std::memcpy(map.data(), data.data() + offset, half);
        ASSERT_TRUE(page_present(start) && page_present(start + 3 * page)) << "written pages are not in the map";
        map.release_before(half);
        EXPECT_FALSE(page_present(start)) << "the first page was kept";
        EXPECT_FALSE(page_present(start + 2 * page)) << "a page wholly before the point was kept";
        EXPECT_TRUE(page_present(start + 3 * page)) << "the page that holds the point was released";
        map.release_before(half - 5);  // an earlier point changes nothing
        EXPECT_TRUE(page_present(start + 3 * page));
        EXPECT_EQ(map.data()[page], data[offset + page]) << "a released page touched again";
        std::memcpy(map.data() + half, data.data() + offset + half, length - half);
        ASSERT_TRUE(page_present(start + 6 * page));
        map.release_before(length);
        EXPECT_FALSE(page_present(start + 3 * page));
        EXPECT_FALSE(page_present(start + 6 * page)) << "the last page stayed";
    }
    for (std::size_t k = 0; k < 7; ++k)
        EXPECT_NE(::msync(start + k * page, page, MS_ASYNC), 0) << "page " << k << " of the map is still mapped";
    std::vector<std::byte> back(size);
    file.read_at(0, back);
    EXPECT_TRUE(back == data);
}

// ReleaseBehind releases the pages before the first byte not yet written, in pieces, whatever the
// order of the writes: none while the first page is missing, all once it comes (the last piece with
// the map's end), and the bytes stay in the file.
TEST(FileMapping, ReleaseBehindReleasesWhatIsWrittenFromTheStartOn) {
    ScratchDir dir;
    io::File file = io::create_temp_file(dir.path());
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t pages = 40, size = pages * page - 77;
    ASSERT_TRUE(file.allocate(size));
    std::vector<std::byte> data(size);
    std::mt19937_64 rng(7);
    for (auto& b : data) b = static_cast<std::byte>(rng());
    auto released_by = [&](std::byte* first, std::size_t count) {  // within 10 s
        for (int i = 0; i < 1000; ++i) {
            bool any = false;
            for (std::size_t k = 0; k < count; ++k) any = any || page_present(first + k * page);
            if (!any) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };
    {
        io::FileMapping map(file, 0, size);
        io::ReleaseBehind released(map, 8 * page);
        std::vector<std::size_t> order(pages - 1);  // every page but the first, shuffled, from several threads
        std::iota(order.begin(), order.end(), 1);
        std::shuffle(order.begin(), order.end(), rng);
        tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t i) {
            const std::size_t at = order[i] * page, n = std::min(page, size - at);
            std::memcpy(map.data() + at, data.data() + at, n);
            released.written(at, n);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        for (std::size_t k = 1; k < pages; ++k) EXPECT_TRUE(page_present(map.data() + k * page)) << "page " << k << " released";
        std::memcpy(map.data(), data.data(), page);
        released.written(0, page);
        EXPECT_TRUE(released_by(map.data(), pages)) << "written pages stayed in the map";
    }
    std::vector<std::byte> back(size);
    file.read_at(0, back);
    EXPECT_TRUE(back == data);
}

// A read map of a file opened for reading, at an offset inside a page, gives the file's bytes; a
// writable map of it is refused.
TEST(FileMapping, ReadMapsGiveTheBytesOfAFileOpenedForReading) {
    ScratchDir dir;
    std::vector<std::byte> data(3 * 4096 + 555);
    std::mt19937_64 rng(5);
    for (auto& b : data) b = static_cast<std::byte>(rng());
    write_text(dir / "in", std::string(reinterpret_cast<const char*>(data.data()), data.size()));
    const io::File file = io::File::open_read(dir / "in");
    const std::size_t offset = 4096 + 3, length = data.size() - offset - 7;
    const io::FileMapping map(file, offset, length, io::FileMapping::Access::read);
    ASSERT_EQ(map.size(), length);
    EXPECT_EQ(std::memcmp(map.data(), data.data() + offset, length), 0);
    EXPECT_THROW(io::FileMapping(file, 0, data.size()), io::IoError);
}

TEST(TempFile, LeavesNothingInItsFolder) {
    ScratchDir dir;
    {
        io::File file = io::create_temp_file(dir.path());
        const char text[] = "spilled";
        file.write_at(0, std::as_bytes(std::span(text)));
        EXPECT_TRUE(dir.entries().empty());
    }
    EXPECT_TRUE(dir.entries().empty());
    EXPECT_THROW(io::create_temp_file(dir / "missing"), io::IoError);
    write_text(dir / "plain", "x");
    EXPECT_THROW(io::create_temp_file(dir / "plain"), io::IoError);
}

TEST(AtomicOutputFile, NothingAppearsWithoutCommit) {
    ScratchDir dir;
    write_text(dir / "existing", "old contents");
    {
        io::AtomicOutputFile out(dir / "existing");
        const char text[] = "new";
        out.file().write_at(0, std::as_bytes(std::span(text)));
        io::AtomicOutputFile fresh(dir / "fresh");
    }
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"existing"}));
    EXPECT_EQ(read_text(dir / "existing"), "old contents");
}

TEST(AtomicOutputFile, CommitReplacesAndKeepsTheOldPermissions) {
    ScratchDir dir;
    write_text(dir / "existing", "old contents");
    ::chmod((dir / "existing").c_str(), 0640);
    {
        io::AtomicOutputFile out(dir / "existing");
        const std::string text = "new";
        out.file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
        out.commit(true);
    }
    EXPECT_EQ(read_text(dir / "existing"), "new");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{"existing"}));
    struct stat st {};
    ASSERT_EQ(::stat((dir / "existing").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// A SIGKILL between the hidden name and the rename leaves a hidden file that nobody holds; a sort
// that is still running holds its own locked (flock). The next output in the folder removes the
// first kind only.
TEST(AtomicOutputFile, RemovesTheHiddenLeftoversOfEndedSortsOnly) {
    ScratchDir dir;
    write_text(dir / ".gpusort-out-k1l2e3d4s5o6", "left by a killed sort");
    write_text(dir / ".gpusort-out-a1B2c3", "left by a killed sort, on a file system without O_TMPFILE");
    write_text(dir / ".gpusort-out-running", "a sort still running holds it");
    const int held = ::open((dir / ".gpusort-out-running").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0);
    ASSERT_EQ(::mkdir((dir / ".gpusort-out-folder").c_str(), 0755), 0);
    ASSERT_EQ(::symlink("out", (dir / ".gpusort-out-link").c_str()), 0);
    write_text(dir / ".gpusort-outside", "not ours");
    write_text(dir / "out", "old output");
    {
        io::AtomicOutputFile out(dir / "out");
        EXPECT_EQ(dir.entries(), (std::set<std::string>{".gpusort-out-running", ".gpusort-out-folder",
                                                        ".gpusort-out-link", ".gpusort-outside", "out"}));
        const std::string text = "new output";
        out.file().write_at(0, std::as_bytes(std::span(text.data(), text.size())));
        out.commit(false);
    }
    EXPECT_EQ(read_text(dir / "out"), "new output");
    EXPECT_EQ(read_text(dir / ".gpusort-out-running"), "a sort still running holds it");
    ::close(held);
    // Once its sort has ended, the next one removes it.
    io::AtomicOutputFile next(dir / "out");
    EXPECT_EQ(dir.entries(), (std::set<std::string>{".gpusort-out-folder", ".gpusort-out-link", ".gpusort-outside", "out"}));
}

TEST(AtomicOutputFile, RefusesDirectoriesAndMissingFolders) {
    ScratchDir dir;
    EXPECT_THROW(io::AtomicOutputFile(dir.path()), io::IoError);
    EXPECT_THROW(io::AtomicOutputFile(dir / "no/such/out"), io::IoError);
}

// gpusort-mpi's OUTPUT: a hidden name chosen first (next to the file a link leads to), the file made
// there, open to another process by that name, moved into place by commit; a name that is taken
// is refused and what is there left alone.
TEST(AtomicOutputFile, MadeAtAHiddenNameChosenBeforehand) {
    ScratchDir dir, elsewhere;
    ASSERT_EQ(::symlink((elsewhere / "target").c_str(), (dir / "link").c_str()), 0);
    const std::string hidden = io::AtomicOutputFile::hidden_name_for(dir / "link");
    EXPECT_EQ(hidden.rfind(elsewhere / ".gpusort-out-", 0), 0u) << hidden;
    EXPECT_NE(hidden, io::AtomicOutputFile::hidden_name_for(dir / "link"));
    EXPECT_TRUE(elsewhere.entries().empty());  // a name only
    {
        io::AtomicOutputFile out(dir / "link", hidden);
        EXPECT_EQ(out.temp_path(), hidden);
        const io::File other(::open(hidden.c_str(), O_RDWR | O_CLOEXEC), hidden);
        ASSERT_TRUE(other.is_open());
        const std::string text = "parts";
        other.write_at(0, std::as_bytes(std::span(text)));
        out.commit(false);
    }
    EXPECT_EQ(read_text(elsewhere / "target"), "parts");
    EXPECT_EQ(elsewhere.entries(), (std::set<std::string>{"target"}));

    write_text(elsewhere / "taken", "not ours");
    EXPECT_THROW(io::AtomicOutputFile(elsewhere / "out", elsewhere / "taken"), io::IoError);
    EXPECT_EQ(read_text(elsewhere / "taken"), "not ours");
    {
        io::AtomicOutputFile dropped(elsewhere / "out", io::AtomicOutputFile::hidden_name_for(elsewhere / "out"));
    }
    EXPECT_EQ(elsewhere.entries(), (std::set<std::string>{"target", "taken"}));
}

TEST(ReadAhead, EveryReadRunsOnItsThreadsAndEndsItsFuture) {
    std::vector<int> done(200, 0);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    {
        io::ReadAhead reads(3);
        std::vector<std::future<void>> futures;
        for (int i = 0; i < 200; ++i)
            futures.push_back(reads.start([&, i] {
                done[i] = i + 1;
                std::lock_guard lock(mutex);
                threads.insert(std::this_thread::get_id());
            }));
        for (int i = 0; i < 200; ++i) {
            futures[i].get();
            EXPECT_EQ(done[i], i + 1);
        }
    }
    EXPECT_FALSE(threads.contains(std::this_thread::get_id()));
    EXPECT_LE(threads.size(), 3u);
}

TEST(ReadAhead, AFailedReadThrowsFromItsFutureAndTheOthersGoOn) {
    io::ReadAhead reads(2);
    auto failing = reads.start([] { throw io::IoError("cannot read 'run': Input/output error"); });
    int value = 0;
    auto fine = reads.start([&] { value = 7; });
    EXPECT_THROW(failing.get(), io::IoError);
    fine.get();
    EXPECT_EQ(value, 7);
}

TEST(ReadAhead, ReadsStartedBeforeItGoesAllRun) {
    std::atomic<int> ran = 0;
    std::vector<std::future<void>> futures;
    {
        io::ReadAhead reads(1);
        for (int i = 0; i < 50; ++i)
            futures.push_back(reads.start([&] {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
                ++ran;
            }));
    }
    EXPECT_EQ(ran.load(), 50);
    for (auto& future : futures) EXPECT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
}
