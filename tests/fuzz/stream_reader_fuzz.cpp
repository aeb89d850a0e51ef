// Fuzz target: io::StreamReader over plain, gz, bz2, xz and zst data, whole, corrupt or truncated,
// from a memory file or a pipe. The first byte chooses:
//   bits 0-2  the format (value % 5: none, gz, bz2, xz, zst)
//   bit 3     a pipe (filled by a thread in small pieces) instead of a memory file
//   bit 4     round trip: the rest is a payload that StreamWriter compresses first, then byte 1
//             says what is done to the compressed bytes (0 nothing, 1 cut, 2 one byte changed,
//             and the block size), bytes 2-3 where, byte 4 the change; else the rest is read as is
//   bits 5-7  how many bytes each read() asks for
// Every read must end with data or an io::IoError that names the file (and comes again on the
// next call), never crash or hang. Plain data must come out unchanged; a round trip must give the
// payload back exactly, a cut one a prefix of it and an error (or, cut between members or frames, a
// prefix ending on a block boundary), a changed one an error or the payload (zst frames have no
// checksum: anything may come out).
#include "fuzz_targets.hpp"

#include "fuzz_io.hpp"
#include "io/io_error.hpp"
#include "io/stream_reader.hpp"
#include "io/stream_writer.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace gpusort::fuzz {

namespace {

constexpr Compression kFormats[] = {Compression::none, Compression::gzip, Compression::bzip2,
                                        Compression::xz, Compression::zstd};
constexpr std::size_t kReadSizes[] = {1, 7, 512, 4096, 65536, 1 << 20, 3 << 20, (8 << 20) + 3};
// Decompressed bytes read at most (the reader must stop its thread on destruction when more come).
constexpr std::size_t kMostOutput = std::size_t{24} << 20;
const std::string kName = "fuzz input";

// The bytes `payload` becomes through StreamWriter: blocks of `block_size`, the fastest level.
std::vector<std::byte> compress(Compression format, std::span<const std::byte> payload, std::size_t block_size) {
    io::File file = memory_file({});
    const int level = format == Compression::xz ? 0 : 1;
    {
        io::StreamWriter writer(file.fd(), "compressed", format, 1, format == Compression::none ? -1 : level,
                                block_size);
        writer.write(payload);
        writer.finish();
    }
    std::vector<std::byte> bytes(file.size());
    file.read_at(0, bytes);
    return bytes;
}

struct Outcome {
    std::vector<std::byte> data;
    std::optional<std::string> error;
};

// Reads everything (up to kMostOutput) through a StreamReader on fd, `step` bytes per call.
Outcome read_all(int fd, Compression format, std::size_t step) {
    Outcome out;
    io::StreamReader reader(fd, kName, format);
    const auto storage = std::make_unique_for_overwrite<std::byte[]>(step);
    const std::span<std::byte> buffer(storage.get(), step);
    const std::size_t most = std::min(kMostOutput, step * 65536);
    try {
        while (out.data.size() < most) {
            const std::size_t n = reader.read(buffer);
            check(n <= step, "read() placed more bytes than asked for");
            out.data.insert(out.data.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
            if (n == 0) {
                check(reader.read(buffer) == 0, "read() gave data after the end");
                break;
            }
        }
    } catch (const io::IoError& e) {
        out.error = e.what();
        check(out.error->find("'" + kName + "'") != std::string::npos,
              "the error does not name the file: " + *out.error);
        try {
            reader.read(buffer);
            check(false, "read() after an error did not throw");
        } catch (const io::IoError& again) {
            check(again.what() == *out.error,
                  "read() after an error threw another error: " + std::string(again.what()));
        }
    }
    return out;
}

bool is_prefix(std::span<const std::byte> part, std::span<const std::byte> whole) {
    return part.size() <= whole.size() && std::equal(part.begin(), part.end(), whole.begin());
}

}  // namespace

void stream_reader_target(Input data) {
    if (data.empty()) return;
    const std::uint8_t mode = data[0];
    const Compression format = kFormats[(mode & 7) % 5];
    const bool from_pipe = mode & 8;
    const bool round_trip = mode & 16;
    const std::size_t step = kReadSizes[mode >> 5];
    auto rest = std::as_bytes(data.subspan(1));

    std::vector<std::byte> bytes(rest.begin(), rest.end());
    std::vector<std::byte> payload;
    enum class Damage { none, cut, change } damage = Damage::none;
    std::size_t block_size = 0;
    if (round_trip) {
        if (rest.size() < 4) return;
        const auto how = std::to_integer<unsigned>(rest[0]);
        const std::size_t where = std::to_integer<std::size_t>(rest[1]) | std::to_integer<std::size_t>(rest[2]) << 8;
        const std::byte change = rest[3] == std::byte{0} ? std::byte{1} : rest[3];
        payload.assign(rest.begin() + 4, rest.end());
        damage = static_cast<Damage>(how % 3);
        block_size = std::size_t{256} << (how / 3 % 8);  // small blocks: several members or frames
        bytes = compress(format, payload, block_size);
        if (bytes.empty()) damage = Damage::none;  // an empty plain payload: nothing to cut or change
        if (damage == Damage::cut) bytes.resize(where % bytes.size());
        if (damage == Damage::change) bytes[where % bytes.size()] ^= change;
    }

    Outcome out;
    if (from_pipe) {
        PipeFeeder feeder(bytes, 1 + (mode >> 5) * 1000);
        out = read_all(feeder.read_fd(), format, step);
    } else {
        io::File file = memory_file(bytes);
        out = read_all(file.fd(), format, step);
    }
    const bool complete = !out.error && out.data.size() < std::min(kMostOutput, step * 65536);

    if (format == Compression::none) {
        check(!out.error, "plain data gave an error: " + out.error.value_or(""));
        check(is_prefix(out.data, bytes) && (!complete || out.data.size() == bytes.size()),
              "plain data came out changed");
        return;
    }
    if (!round_trip) return;
    switch (damage) {
    case Damage::none:
        check(!out.error, "a round trip gave an error: " + out.error.value_or(""));
        check(out.data == payload, "a round trip gave other data");
        break;
    case Damage::cut:
        check(is_prefix(out.data, payload), "cut data gave bytes that are not a prefix of the payload");
        check(out.error || out.data.size() % block_size == 0 || out.data.size() == payload.size(),
              "data cut within a member or frame gave no error");
        break;
    case Damage::change:
        if (format == Compression::zstd) break;
        check(out.error || out.data == payload, "changed data gave wrong data and no error");
        break;
    }
}

}  // namespace gpusort::fuzz

GPUSORT_FUZZ_ENTRY_POINT(gpusort::fuzz::stream_reader_target)
