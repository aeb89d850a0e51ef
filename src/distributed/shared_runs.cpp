#include "src/distributed/shared_runs.hpp"

#include "gpusort/sort_file.hpp"
#include "io/io_error.hpp"

#include <algorithm>
#include <unistd.h>

namespace gpusort::distributed {

OwnRuns::OwnRuns(const io::File& file, std::uint64_t offset, std::uint64_t bytes, unsigned threads)
    : address_("/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(file.fd())) {
    if (bytes == 0) return;
    if (!file.allocate(offset, bytes))
        throw SortError("cannot reserve space in '" + file.path() +
                        "' for this rank's runs (the file system does not); give --exchange shared");
    map_ = std::make_unique<io::FileMapping>(file, offset, bytes);
    for (unsigned t = 0; t < threads; ++t)
        threads_.emplace_back([this] {
            constexpr std::uint64_t kBlock = std::uint64_t{64} << 20;
            for (std::uint64_t b = next_++; b * kBlock < map_->size() && !stop_; b = next_++)
                if (!map_->populate(b * kBlock, std::min(kBlock, map_->size() - b * kBlock))) return;  // the writes fault them in
        });
}

OwnRuns::~OwnRuns() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
}

std::span<std::byte> OwnRuns::bytes() const {
    return map_ ? std::span<std::byte>(map_->data(), map_->size()) : std::span<std::byte>();
}

PeerRuns::PeerRuns(const std::string& address, std::uint64_t offset, std::uint64_t bytes) {
    if (bytes == 0) return;
    file_ = io::File::open_existing(address, false, "cannot open another rank's runs", address);
    if (file_.size() < offset + bytes) throw io::IoError("another rank's runs at '" + address + "' are not where expected");
    map_ = std::make_unique<io::FileMapping>(file_, offset, bytes, io::FileMapping::Access::read);
}

std::span<const std::byte> PeerRuns::bytes() const {
    return map_ ? std::span<const std::byte>(map_->data(), map_->size()) : std::span<const std::byte>();
}

}  // namespace gpusort::distributed
