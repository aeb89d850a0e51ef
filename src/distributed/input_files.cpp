#include "src/distributed/input_files.hpp"

#include "gpusort/compression.hpp"
#include "gpusort/sort_file.hpp"
#include "io/io_error.hpp"
#include "io/parallel_io.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>

namespace gpusort::distributed {

std::vector<std::string> read_input_list(const std::string& list) {
    std::ifstream in(list);
    if (!in) io::throw_errno("cannot read the input list", list, errno);
    std::vector<std::string> paths;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) paths.push_back(line);
    }
    if (in.bad()) io::throw_errno("cannot read the input list", list, errno);
    if (paths.empty()) throw SortError("the input list '" + list + "' names no file");
    return paths;
}

InputFiles::InputFiles(const std::vector<std::string>& paths, std::size_t record_size, std::optional<Compression> forced) {
    for (const std::string& path : paths) {
        if (path == "-" || forced.value_or(compression_of(path)) != Compression::none)
            throw SortError("gpusort-mpi reads INPUT at offsets on every rank: it must be an uncompressed file, not " +
                            io::input_shown(path));
        Member member;
        member.file = io::File::open_read(path);
        const io::FileStatus status = member.file.status();
        if (!status.regular)
            throw SortError("gpusort-mpi reads INPUT at offsets on every rank: '" + path + "' is not a regular file");
        member.size = status.size;
        if (member.size % record_size != 0)
            throw SortError("'" + path + "' is " + std::to_string(member.size) +
                            " bytes long, which is not a multiple of the record size " + std::to_string(record_size));
        member.start = size_;
        size_ += member.size;
        members_.push_back(std::move(member));
    }
}

std::vector<InputFiles::Member>::const_iterator InputFiles::member_at(std::uint64_t offset) const {
    return std::upper_bound(members_.begin(), members_.end(), offset,
                            [](std::uint64_t at, const Member& m) { return at < m.start + m.size; });
}

void InputFiles::read(std::uint64_t offset, std::span<std::byte> bytes) const {
    // The first file that ends past offset, then on until the bytes are filled.
    auto it = member_at(offset);
    for (; !bytes.empty(); ++it) {
        if (it == members_.end()) throw SortError("a read past the end of INPUT (a bug)");
        const std::uint64_t within = offset - it->start;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(it->size - within, bytes.size()));
        io::read_parallel(it->file, within, bytes.first(n));
        bytes = bytes.subspan(n);
        offset += n;
    }
}

std::unique_ptr<io::FileMapping> InputFiles::map(std::uint64_t offset, std::uint64_t bytes) const {
    const auto it = member_at(offset);
    if (it == members_.end() || offset + bytes > it->start + it->size) return nullptr;
    try {
        return std::make_unique<io::FileMapping>(it->file, offset - it->start, bytes, io::FileMapping::Access::read);
    } catch (const io::IoError&) {
        return nullptr;  // a file system without maps: read() reads it as well
    }
}

}  // namespace gpusort::distributed
