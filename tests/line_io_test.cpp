// The text sort's own reading, writing and merging in parts (src/text/line_input, line_chunk,
// line_output, merge_in_parts), each way checked against bytes built here: an input file read by parallel positional reads and cut into
// lines in parallel, large and small, with and without a last terminator, chunks cut by the budget;
// and LineWriter::write_many() through a map of a regular file, through write(2) where the file
// cannot be mapped (write only, O_APPEND) and through a sink, between lines written one by one;
// runs read by RunSource, freeing the blocks behind it; sorted runs merged in parts against
// std::stable_sort.
#include "gpusort/errors.hpp"
#include "src/text/line_chunk.hpp"
#include "src/text/line_order.hpp"
#include "src/text/line_output.hpp"
#include "io/temp_file.hpp"
#include "src/text/merge_in_parts.hpp"
#include "tests/scratch_dir.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace gpusort {
namespace {

using testing::ScratchDir;

// Lines of 0 to 200 random letters, `bytes` of them or a little more.
std::string random_lines(std::mt19937_64& random, std::size_t bytes) {
    std::string text;
    while (text.size() < bytes) {
        text.append(random() % 201, static_cast<char>('a' + random() % 26));
        text += '\n';
    }
    return text;
}

// The lines of `text`, each without its terminator; a last line without one is a line.
std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return lines;
}

// Every line of every chunk `file` is cut into under `budget`, and the number of chunks.
std::pair<std::vector<std::string>, std::size_t> read_chunks(const std::string& file, std::uint64_t budget) {
    InputFile input(file, "cannot read");
    ChunkReader reader({&input}, TextBudget(budget), '\n');
    std::vector<std::string> lines;
    std::size_t chunks = 0;
    while (reader.fill()) {
        ++chunks;
        for (std::size_t i = 0; i < reader.chunk().lines(); ++i) lines.emplace_back(reader.chunk().line(i));
    }
    EXPECT_TRUE(reader.done());
    return {lines, chunks};
}

// `text` written to a file and read in chunks under `budget`: every line given once, in order;
// returns the number of chunks.
std::size_t chunks_of(const std::string& text, std::uint64_t budget) {
    ScratchDir dir;
    std::ofstream(dir / "in", std::ios::binary) << text;
    const auto [lines, chunks] = read_chunks(dir / "in", budget);
    EXPECT_EQ(lines, split(text));
    return chunks;
}

TEST(LineInput, LargeFileReadAndCutInParallelGivesEveryLine) {
    std::mt19937_64 random(1401);
    // Over the sizes read and cut in parallel.
    EXPECT_EQ(chunks_of(random_lines(random, 40u << 20) + "last line without a terminator", std::uint64_t{1} << 30), 1u);
}

TEST(LineInput, ChunksCutByTheBudgetGiveEveryLineOnce) {
    std::mt19937_64 random(1402);
    EXPECT_GT(chunks_of(random_lines(random, 24u << 20), std::uint64_t{8} << 20), 3u);
}

// A line longer than the budget allows is refused with its number, however the text is cut.
TEST(LineInput, LineOverTheLimitIsRefusedWithItsNumber) {
    ScratchDir dir;
    std::mt19937_64 random(1403);
    std::string text = random_lines(random, 20u << 20);
    const std::size_t number = split(text).size() + 1;
    text += std::string(3u << 20, 'x') + "\nafter\n";  // a budget of 8 MiB takes lines of 2 MiB
    std::ofstream(dir / "in", std::ios::binary) << text;
    try {
        read_chunks(dir / "in", std::uint64_t{8} << 20);
        FAIL() << "no error";
    } catch (const SortError& e) {
        EXPECT_NE(std::string(e.what()).find(":" + std::to_string(number) + ": line too long"), std::string::npos) << e.what();
    }
}

// What write_many() is given: `bytes` bytes whose byte i is a function of i.
char pattern(std::uint64_t i) { return static_cast<char>('a' + (i * 7 + i / 4099) % 26); }
const LineWriter::Fill kPattern = [](std::span<char> into, std::uint64_t from) {
    for (std::size_t i = 0; i < into.size(); ++i) into[i] = pattern(from + i);
};

// Lines, many bytes, then a line, through `writer`; the bytes it should have written.
std::string write_between_lines(LineWriter& writer, std::uint64_t bytes) {
    writer.write("first");
    writer.write_many(bytes, kPattern);
    writer.write("last");
    writer.flush();
    std::string expected = "first\n";
    for (std::uint64_t i = 0; i < bytes; ++i) expected += pattern(i);
    EXPECT_EQ(writer.bytes(), expected.size() + 5);
    return expected + "last\n";
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Many bytes (enough to be mapped) into a file open for reading and writing, one open write
// only (not mapped), one open to append, and small ones: the file holds what was written, at
// the descriptor's offset, which ends after it.
// A file at `path` holding "before\n", opened with `flags`, its offset at its end; -1 where it
// cannot be opened so.
int open_after_before(const std::string& path, int flags) {
    std::ofstream(path, std::ios::binary) << "before\n";
    const int fd = ::open(path.c_str(), flags);
    if (fd >= 0 && ::lseek(fd, 0, SEEK_END) != 7) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// A map holds the file's bytes from any offset, and one byte more after them that may be written
// (on a page of its own where the file ends on a page's end) without changing the file; a
// descriptor that cannot be mapped gives none.
TEST(MappedInput, BytesOfTheFileAndOneMoreThatMayBeWritten) {
    ScratchDir dir;
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::mt19937_64 random(77);
    for (const std::size_t size : {std::size_t{1}, page, 3 * page + 5}) {
        std::string text(size, ' ');
        for (char& c : text) c = static_cast<char>('a' + random() % 26);
        std::ofstream(dir / "in", std::ios::binary) << text;
        const int fd = ::open((dir / "in").c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        for (const std::size_t offset : {std::size_t{0}, std::min<std::size_t>(7, size - 1)}) {
            const std::unique_ptr<MappedInput> mapped = MappedInput::map(fd, offset, size - offset);
            ASSERT_TRUE(mapped);
            EXPECT_EQ(mapped->size(), size - offset);
            EXPECT_EQ(std::string_view(mapped->data(), size - offset), std::string_view(text).substr(offset)) << size << " " << offset;
            mapped->data()[size - offset] = '\n';
            mapped->data()[0] = '#';
        }
        ::close(fd);
        std::ifstream in(dir / "in", std::ios::binary);
        EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text) << "the file was changed";
    }
    EXPECT_FALSE(MappedInput::map(-1, 0, page));
}

TEST(LineOutput, WriteManyGivesTheBytesWhateverTheDescriptor) {
    ScratchDir dir;
    const std::uint64_t large = (std::uint64_t{65} << 20) + 12345;
    const std::vector<std::pair<int, std::uint64_t>> cases = {
        {O_RDWR, large}, {O_WRONLY, large}, {O_RDWR | O_APPEND, large}, {O_RDWR, 100000}, {O_RDWR, 0}};
    for (const auto& [flags, bytes] : cases) {
        const std::string path = dir / "out";
        const int fd = open_after_before(path, flags);
        ASSERT_GE(fd, 0);
        LineWriter writer(fd, path, 1 << 16, '\n');
        const std::string expected = "before\n" + write_between_lines(writer, bytes);
        EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), static_cast<off_t>(expected.size()));
        ::close(fd);
        EXPECT_TRUE(read_file(path) == expected) << "flags " << flags << ", " << bytes << " bytes";
    }
}

// write_placed(): pieces put from several threads in a shuffled order land at their places after
// what was written before, and the descriptor's offset follows them; where it declines (O_APPEND,
// a read-only descriptor, too few bytes) nothing is written and lines go on through write().
TEST(LineOutput, WritePlacedPutsPiecesAtTheirPlaces) {
    ScratchDir dir;
    std::mt19937_64 random(48);
    const std::uint64_t large = (std::uint64_t{65} << 20) + 4321;
    std::string bytes(large, '\0');
    for (char& c : bytes) c = static_cast<char>('a' + random() % 26);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;  // [offset, end)
    for (std::uint64_t at = 0; at < large;) {
        const std::uint64_t end = std::min(large, at + 1 + random() % (std::uint64_t{3} << 20));
        pieces.emplace_back(at, end);
        at = end;
    }
    std::shuffle(pieces.begin(), pieces.end(), random);
    const std::vector<std::tuple<int, std::uint64_t, bool>> cases = {
        {O_RDWR, large, true}, {O_WRONLY, large, true}, {O_RDWR | O_APPEND, large, false}, {O_RDONLY, large, false}, {O_RDWR, 100000, false}};
    for (const auto& [flags, size, placed] : cases) {
        const std::string path = dir / "out";
        const int fd = open_after_before(path, flags);
        ASSERT_GE(fd, 0);
        LineWriter writer(fd, path, 1 << 16, '\n');
        const bool wrote = writer.write_placed(size, [&](const LineWriter::PutAt& put) {
            std::vector<std::thread> threads;
            for (std::size_t t = 0; t < 4; ++t)
                threads.emplace_back([&, t] {
                    for (std::size_t i = t; i < pieces.size(); i += 4)
                        if (pieces[i].first < size)
                            put(pieces[i].first, std::span<const char>(bytes).subspan(pieces[i].first, std::min(size, pieces[i].second) - pieces[i].first));
                });
            for (std::thread& thread : threads) thread.join();
        });
        EXPECT_EQ(wrote, placed) << "flags " << flags << ", " << size << " bytes";
        if (flags == O_RDONLY) {
            ::close(fd);
            continue;
        }
        writer.write("after");
        writer.flush();
        const std::string expected = "before\n" + (placed ? bytes.substr(0, size) : std::string()) + "after\n";
        EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), static_cast<off_t>(expected.size())) << "flags " << flags;
        EXPECT_EQ(writer.bytes(), expected.size() - 7) << "flags " << flags;
        ::close(fd);
        EXPECT_TRUE(read_file(path) == expected) << "flags " << flags << ", " << size << " bytes";
    }
}

// expect() maps the file's end ahead: then as many bytes, fewer, or only lines written one by one
// leave the file holding just what was written.
TEST(LineOutput, WritesAfterExpectLeaveOnlyWhatWasWritten) {
    ScratchDir dir;
    const std::uint64_t expected_bytes = std::uint64_t{80} << 20;
    for (const std::uint64_t bytes : {expected_bytes, expected_bytes / 2 + 7, std::uint64_t{0}}) {
        const std::string path = dir / "out";
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        ASSERT_GE(fd, 0);
        std::string expected;
        {
            LineWriter writer(fd, path, 1 << 16, '\n');
            writer.expect(expected_bytes);
            if (bytes > 0) {
                writer.write_many(bytes, kPattern);
                writer.write("last");
                writer.flush();
                for (std::uint64_t i = 0; i < bytes; ++i) expected += pattern(i);
                expected += "last\n";
            } else {
                writer.write("only a line");
                writer.flush();
                expected = "only a line\n";
            }
        }
        ::close(fd);
        EXPECT_TRUE(read_file(path) == expected) << bytes << " bytes";
    }
    // Nothing written at all.
    const std::string path = dir / "none";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    { LineWriter(fd, path, 1 << 16, '\n').expect(expected_bytes); }
    ::close(fd);
    EXPECT_EQ(read_file(path), "");
}

TEST(LineOutput, WriteManyThroughASinkGivesTheBytes) {
    std::string got;
    LineWriter writer([&](std::span<const char> bytes) { got.append(bytes.data(), bytes.size()); }, 1 << 16, '\n');
    const std::string expected = write_between_lines(writer, (std::uint64_t{65} << 20) + 3);
    EXPECT_TRUE(got == expected);
}

class StringLines final : public LineSequence {
public:
    explicit StringLines(const std::vector<std::string>& lines) : lines_(lines) {}
    std::size_t size() const override { return lines_.size(); }
    std::string_view line(std::size_t i) const override { return lines_[i]; }

private:
    const std::vector<std::string>& lines_;
};

// Lines written through write_all(), with -u dropping repeats, into a mapped file and through a
// sink (pieces of 64 KiB, which cut the blocks of lines placed together): as written one by one.
TEST(LineOutput, WriteAllOfManyLinesGivesThemInOrderWithoutRepeats) {
    ScratchDir dir;
    std::mt19937_64 random(1404);
    std::vector<std::string> lines;
    for (std::size_t bytes = 0; bytes < (std::size_t{70} << 20); bytes += lines.back().size() + 1)
        lines.push_back(std::string(random() % 3 == 0 ? 0 : 1 + random() % 120, static_cast<char>('a' + random() % 3)));
    for (const bool unique : {false, true}) {
        std::string expected;
        std::size_t count = 0;
        for (std::size_t i = 0; i <= lines.size(); ++i) {
            const std::string& line = i == 0 ? lines.front() : lines[i - 1];
            if (unique && i > 0 && line == (i == 1 ? lines.front() : lines[i - 2])) continue;
            expected += line + '\n';
            ++count;
        }
        TextKeys keys;  // whole lines
        keys.unique = unique;
        for (const bool mapped : {true, false}) {
            const std::string path = dir / "out";
            const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
            ASSERT_GE(fd, 0);
            std::string sunk;
            LineWriter writer = mapped ? LineWriter(fd, path, 1 << 16, '\n')
                                       : LineWriter([&](std::span<const char> bytes) { sunk.append(bytes.data(), bytes.size()); }, 1 << 16, '\n');
            UniqueLines out(writer, keys);
            out.write(lines.front());
            out.write_all(StringLines(lines));
            writer.flush();
            ::close(fd);
            EXPECT_EQ(out.lines(), count);
            EXPECT_TRUE((mapped ? read_file(path) : sunk) == expected) << "unique " << unique << ", mapped " << mapped;
        }
    }
}

// Two readers of one spill file, side by side ([0, cut) and [cut, end)), read in turns: each gets
// its bytes (a block freed too early would read as zeros), and the blocks behind them are freed,
// all but the MiBs that hold the cut and the end, where the file system can free blocks.
TEST(RunSource, FreesTheBlocksBehindItButNoNeighboursBytes) {
    ScratchDir dir;
    const io::File file = io::create_temp_file(dir.path());
    constexpr std::uint64_t kMiB = 1 << 20, size = 150 * kMiB + 12345, cut = 70 * kMiB + 777;
    auto byte_at = [](std::uint64_t i) { return static_cast<char>(1 + i * 131 % 251); };
    std::string bytes(size, '\0');
    for (std::uint64_t i = 0; i < size; ++i) bytes[i] = byte_at(i);
    file.write_at(0, std::as_bytes(std::span<const char>(bytes)));
    const io::File probe = io::create_temp_file(dir.path());
    probe.write_at(0, std::as_bytes(std::span<const char>(bytes).first(kMiB)));
    const bool frees = probe.release(0, kMiB);

    RunSource first(file, 0, cut), second(file, cut, size);
    std::uint64_t at[2] = {0, cut};
    std::string piece(kMiB + 3, '\0');
    for (std::size_t turn = 0; at[0] < cut || at[1] < size; ++turn) {
        RunSource& source = turn % 2 == 0 ? first : second;
        const std::size_t n = source.read(piece);
        ASSERT_TRUE(std::memcmp(piece.data(), bytes.data() + at[turn % 2], n) == 0) << "at " << at[turn % 2];
        at[turn % 2] += n;
    }
    EXPECT_EQ(at[0], cut);
    EXPECT_EQ(at[1], size);
    // The MiBs that hold the cut and the end are the neighbours' too: still whole.
    for (const std::uint64_t from : {cut / kMiB * kMiB, size / kMiB * kMiB}) {
        std::string kept(std::min(kMiB, size - from), '\0');
        file.read_at(from, std::as_writable_bytes(std::span<char>(kept)));
        EXPECT_TRUE(kept == bytes.substr(from, kept.size())) << "the MiB at " << from;
    }
    struct stat status {};
    ASSERT_EQ(::fstat(file.fd(), &status), 0);
    const std::uint64_t held = static_cast<std::uint64_t>(status.st_blocks) * 512;
    if (frees)
        EXPECT_LE(held, 3 * kMiB);
    else
        EXPECT_GE(held, size);
}

// Runs of lines that compare equal by their key but differ (-s: only the key orders them) and of
// long lines, merged in parts on several threads: as std::stable_sort puts all their lines, taken
// run after run. Empty runs and runs of one line are among them.
TEST(MergeInParts, GivesTheStableOrderOfAllRuns) {
    std::mt19937_64 random(1405);
    TextKeys keys;
    keys.keys.push_back(parse_text_key("1,1"));
    keys.stable = true;
    ScratchDir dir;
    for (const std::size_t runs_wanted : {1, 2, 7, 19}) {
        SpillFiles spill({dir.path()});
        std::vector<std::string> all;
        std::vector<SpilledRun> runs;
        for (std::size_t r = 0; r < runs_wanted; ++r) {
            std::vector<std::string> lines;
            const std::size_t count = r % 5 == 3 ? 0 : r % 5 == 4 ? 1 : random() % 20000;
            for (std::size_t i = 0; i < count; ++i) {
                const std::size_t length = random() % 50 == 0 ? 5000 + random() % 9000 : random() % 12;
                std::string line = std::to_string(random() % 300) + " " + std::string(length, static_cast<char>('a' + random() % 26));
                lines.push_back(line);
            }
            std::stable_sort(lines.begin(), lines.end(), [&](const std::string& a, const std::string& b) { return compare_lines(a, b, keys) < 0; });
            all.insert(all.end(), lines.begin(), lines.end());
            runs.push_back(spill.write_run(TextBudget(64 << 20), '\n', [&](LineWriter& writer) {
                for (const std::string& line : lines) writer.write(line);
            }));
        }
        std::stable_sort(all.begin(), all.end(), [&](const std::string& a, const std::string& b) { return compare_lines(a, b, keys) < 0; });
        std::string expected;
        for (const std::string& line : all) expected += line + '\n';
        // Each byte put once, at its place (a byte put twice or never would show as a '\0' or a mismatch).
        std::string got(expected.size(), '\0');
        std::mutex putting;
        std::uint64_t put_bytes = 0;
        merge_in_parts(runs, keys, TextBudget(64 << 20), 4, 14000, expected.size(),
                       [&](std::uint64_t offset, std::span<const char> piece) {
                           const std::lock_guard lock(putting);
                           ASSERT_LE(offset + piece.size(), got.size());
                           std::memcpy(got.data() + offset, piece.data(), piece.size());
                           put_bytes += piece.size();
                       },
                       nullptr);
        EXPECT_EQ(put_bytes, expected.size()) << runs_wanted << " runs";
        EXPECT_TRUE(got == expected) << runs_wanted << " runs";
    }
}

}  // namespace
}  // namespace gpusort
