// Communicator over MPI_COMM_WORLD (and the ranks of each host), and the rounds of the exchange.
#include "src/distributed/communicator.hpp"

#include <mpi.h>

#include <sys/statvfs.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>

namespace gpusort::distributed {

namespace {

// The largest message: counts are ints.
constexpr std::size_t kMaxMessage = std::size_t{1} << 30;

void check(int code, const char* what) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

// The folder of the files behind Open MPI's shared-memory windows (its osc_sm_backing_directory,
// read through the MPI tool interface), /dev/shm where it does not say.
std::string window_folder() {
    std::string folder = "/dev/shm";
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return folder;
    int index = 0;
    MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
    int count = 0;
    if (MPI_T_cvar_get_index("osc_sm_backing_directory", &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
        std::vector<char> text(static_cast<std::size_t>(std::max(count, 0)) + 1, '\0');
        if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS && text[0] != '\0') folder = text.data();
        MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
    return folder;
}

// Why the ranks of this host cannot share `host_bytes` bytes in all (empty: they can). Open MPI
// makes a window's memory one file in its folder, and where that file does not fit, one rank's
// call fails while the others wait for it for ever: so the room is checked first. Each rank's
// region is rounded up to whole pages, with some of Open MPI's own per rank.
std::string no_room_for(std::uint64_t host_bytes, int host_ranks) {
    const std::string folder = window_folder();
    struct statvfs room {};
    if (::statvfs(folder.c_str(), &room) != 0)
        return "cannot read the free space of '" + folder + "': " + std::strerror(errno);
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(room.f_bavail) * room.f_frsize;
    const std::uint64_t needed = host_bytes + static_cast<std::uint64_t>(host_ranks) * (std::uint64_t{3} << 21);
    if (needed <= free_bytes) return {};
    return "the ranks of this host need " + std::to_string(needed >> 20) + " MiB of shared memory, and '" + folder +
           "' has " + std::to_string(free_bytes >> 20) + " MiB free";
}

}  // namespace

struct Communicator::Host {
    MPI_Comm comm = MPI_COMM_NULL;  // the ranks of this host; its errors are returned, not fatal
    std::vector<int> rank_of;       // rank_of[world rank]: its rank in `comm`, or -1 on another host
};

Communicator::Communicator() : host_(std::make_unique<Host>()) {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    int level = MPI_THREAD_SINGLE;
    check(MPI_Query_thread(&level), "MPI_Query_thread");
    any_thread_ = level >= MPI_THREAD_SERIALIZED;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host_->comm),
          "MPI_Comm_split_type");
    check(MPI_Comm_set_errhandler(host_->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    MPI_Group world = MPI_GROUP_NULL, host = MPI_GROUP_NULL;
    check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
    check(MPI_Comm_group(host_->comm, &host), "MPI_Comm_group");
    std::vector<int> all(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) all[static_cast<std::size_t>(r)] = r;
    host_->rank_of.resize(all.size());
    check(MPI_Group_translate_ranks(world, size_, all.data(), host, host_->rank_of.data()), "MPI_Group_translate_ranks");
    for (int& r : host_->rank_of)
        if (r == MPI_UNDEFINED) r = -1;
    MPI_Group_free(&world);
    MPI_Group_free(&host);
}

Communicator::~Communicator() { MPI_Comm_free(&host_->comm); }

bool Communicator::on_this_host(int rank) const { return host_->rank_of.at(static_cast<std::size_t>(rank)) >= 0; }

int Communicator::host_size() const {
    return static_cast<int>(std::count_if(host_->rank_of.begin(), host_->rank_of.end(), [](int r) { return r >= 0; }));
}

std::vector<std::byte> Communicator::all_gather(std::span<const std::byte> mine) const {
    return all_gather(mine, all_gather(std::span<const std::uint64_t>(std::array{std::uint64_t{mine.size()}})));
}

std::vector<std::string> Communicator::all_gather(const std::string& text) const {
    const std::vector<std::uint64_t> sizes = all_gather(std::span<const std::uint64_t>(std::array{std::uint64_t{text.size()}}));
    const std::vector<std::byte> all = all_gather(std::as_bytes(std::span(text)), sizes);
    std::vector<std::string> texts;
    std::size_t at = 0;
    for (const std::uint64_t size : sizes) {
        texts.emplace_back(reinterpret_cast<const char*>(all.data()) + at, static_cast<std::size_t>(size));
        at += static_cast<std::size_t>(size);
    }
    return texts;
}

std::vector<std::byte> Communicator::all_gather(std::span<const std::byte> mine, const std::vector<std::uint64_t>& sizes) const {
    std::uint64_t total = 0;
    for (const std::uint64_t s : sizes) total += s;
    if (total > INT_MAX) throw std::runtime_error("all_gather: more than 2 GiB in all");
    std::vector<int> counts(sizes.begin(), sizes.end()), offsets(sizes.size(), 0);
    for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<std::byte> all(static_cast<std::size_t>(total));
    check(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), counts.data(), offsets.data(),
                         MPI_BYTE, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    return all;
}

std::vector<std::uint64_t> Communicator::all_gather(std::span<const std::uint64_t> mine) const {
    std::vector<std::uint64_t> all(mine.size() * static_cast<std::size_t>(size_));
    check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(), static_cast<int>(mine.size()),
                        MPI_UINT64_T, MPI_COMM_WORLD),
          "MPI_Allgather");
    return all;
}

std::string Communicator::broadcast(const std::string& text, int root) const {
    std::uint64_t length = text.size();
    check(MPI_Bcast(&length, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
    std::string out = rank_ == root ? text : std::string(static_cast<std::size_t>(length), '\0');
    check(MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
    return out;
}

void Communicator::agree(const std::string& failure) const {
    const int mine = failure.empty() ? size_ : rank_;
    int first = size_;
    check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    if (first == size_) return;
    throw RankError(first, broadcast(failure, first));
}

struct Exchange::Window {
    MPI_Win win = MPI_WIN_NULL;
};

Exchange::Exchange(const Communicator& ranks, std::uint64_t round_bytes, bool shared_memory)
    : ranks_(ranks), round_bytes_(round_bytes), window_(std::make_unique<Window>()) {
    for (Side& s : sides_) {
        s.messages.resize(static_cast<std::size_t>(ranks.size()));
        s.sizes.assign(static_cast<std::size_t>(ranks.size()), 0);
        s.offsets.assign(static_cast<std::size_t>(ranks.size()), 0);
    }
    if (!shared_memory) return;  // the same on every rank: the same command line
    MPI_Comm host = ranks.host_->comm;
    const std::uint64_t area_bytes = 2 * round_bytes;  // two rounds' halves
    std::uint64_t host_bytes = 0;
    int host_ranks = 0, host_rank = 0;
    check(MPI_Allreduce(&area_bytes, &host_bytes, 1, MPI_UINT64_T, MPI_SUM, host), "MPI_Allreduce");
    check(MPI_Comm_size(host, &host_ranks), "MPI_Comm_size");
    check(MPI_Comm_rank(host, &host_rank), "MPI_Comm_rank");
    const bool alone = host_ranks == 1;  // no rank to share memory with: messages to other hosts
    // The first rank of the host judges the room for all of them: they all make the window, or none.
    std::string failure = host_rank == 0 && !alone ? no_room_for(host_bytes, host_ranks) : std::string();
    int room = failure.empty() ? 1 : 0;
    check(MPI_Bcast(&room, 1, MPI_INT, 0, host), "MPI_Bcast");
    if (!room && failure.empty()) failure = "the first rank of this host found no room for it";
    if (room && !alone) {
        // Each rank's area on its own pages.
        MPI_Info info = MPI_INFO_NULL;
        check(MPI_Info_create(&info), "MPI_Info_create");
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        void* base = nullptr;
        const int code = MPI_Win_allocate_shared(static_cast<MPI_Aint>(area_bytes), 1, info, host, &base, &window_->win);
        MPI_Info_free(&info);
        if (code != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int length = 0;
            MPI_Error_string(code, text, &length);
            failure = "MPI_Win_allocate_shared failed: " + std::string(text, static_cast<std::size_t>(length));
            window_->win = MPI_WIN_NULL;
        } else if (MPI_Win_lock_all(MPI_MODE_NOCHECK, window_->win) != MPI_SUCCESS) {
            failure = "MPI_Win_lock_all failed";
            MPI_Win_free(&window_->win);
        }
    }
    int ok = failure.empty() ? 1 : 0;
    check(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    if (!ok) {
        if (window_->win != MPI_WIN_NULL) {
            MPI_Win_unlock_all(window_->win);
            MPI_Win_free(&window_->win);
        }
        refused_ = failure.empty() ? "the ranks of another host could not share memory" : failure;
        return;
    }
    if (alone) return;
    areas_.resize(static_cast<std::size_t>(ranks.size()));
    for (int r = 0; r < ranks.size(); ++r) {
        const int in_host = ranks.host_->rank_of[static_cast<std::size_t>(r)];
        if (in_host < 0) continue;
        MPI_Aint size = 0;
        int unit = 0;
        void* area = nullptr;
        check(MPI_Win_shared_query(window_->win, in_host, &size, &unit, &area), "MPI_Win_shared_query");
        areas_[static_cast<std::size_t>(r)] = {static_cast<std::byte*>(area), static_cast<std::size_t>(size)};
    }
}

Exchange::~Exchange() {
    if (window_->win == MPI_WIN_NULL) return;
    MPI_Win_unlock_all(window_->win);
    MPI_Win_free(&window_->win);
}

std::byte* Exchange::piece(std::uint64_t round, int to, std::uint64_t bytes) {
    const auto d = static_cast<std::size_t>(to);
    if (to == ranks_.rank_) throw std::logic_error("Exchange::piece: a rank sends itself nothing");
    Side& laid = side(round);
    laid.sizes.at(d) = bytes;
    if (shared_memory() && ranks_.on_this_host(to)) {
        if (laid.used + bytes > round_bytes_) throw std::logic_error("Exchange::piece: more than the round's bytes");
        laid.offsets[d] = round % 2 * round_bytes_ + laid.used;
        laid.used += bytes;
        return areas_[static_cast<std::size_t>(ranks_.rank_)].data() + laid.offsets[d];
    }
    laid.messages[d].resize(static_cast<std::size_t>(bytes));
    return laid.messages[d].data();
}

std::uint64_t Exchange::round(std::uint64_t round, const Landing& land) {
    const auto ranks = static_cast<std::size_t>(ranks_.size_);
    const auto self = static_cast<std::size_t>(ranks_.rank_);
    Side& laid = side(round);
    // (size, offset in the send area) of every piece, sent and received.
    std::vector<std::uint64_t> sent(2 * ranks), received(2 * ranks);
    for (std::size_t d = 0; d < ranks; ++d) {
        sent[2 * d] = d == self ? 0 : laid.sizes[d];
        sent[2 * d + 1] = laid.offsets[d];
    }
    if (shared_memory()) check(MPI_Win_sync(window_->win), "MPI_Win_sync");  // this rank's pieces, written
    check(MPI_Alltoall(sent.data(), 2, MPI_UINT64_T, received.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Alltoall");
    if (shared_memory()) check(MPI_Win_sync(window_->win), "MPI_Win_sync");  // and the others' (the Alltoall orders them)
    auto shared = [&](std::size_t r) { return shared_memory() && ranks_.on_this_host(static_cast<int>(r)); };
    // Every landing place first: a throwing land() leaves no receive posted.
    std::vector<std::byte*> into(ranks, nullptr);
    for (std::size_t s = 0; s < ranks; ++s)
        if (s != self) into[s] = land(static_cast<int>(s), received[2 * s]);
    std::vector<MPI_Request> requests;
    for (std::size_t s = 0; s < ranks; ++s) {
        if (s == self || shared(s)) continue;
        const std::uint64_t size = received[2 * s];
        for (std::uint64_t at = 0; at < size; at += kMaxMessage) {
            requests.emplace_back();
            check(MPI_Irecv(into[s] + at, static_cast<int>(std::min<std::uint64_t>(kMaxMessage, size - at)), MPI_BYTE,
                            static_cast<int>(s), 0, MPI_COMM_WORLD, &requests.back()),
                  "MPI_Irecv");
        }
    }
    std::uint64_t through_memory = 0;
    for (std::size_t d = 0; d < ranks; ++d) {
        if (d == self) continue;
        if (shared(d)) {
            through_memory += laid.sizes[d];
            continue;
        }
        for (std::uint64_t at = 0; at < laid.sizes[d]; at += kMaxMessage) {
            requests.emplace_back();
            check(MPI_Isend(laid.messages[d].data() + at, static_cast<int>(std::min<std::uint64_t>(kMaxMessage, laid.sizes[d] - at)),
                            MPI_BYTE, static_cast<int>(d), 0, MPI_COMM_WORLD, &requests.back()),
                  "MPI_Isend");
        }
    }
    // While the messages move: this rank's pieces from the send areas of its host, in slices of
    // 1 MiB on all threads.
    struct Slice {
        const std::byte* from;
        std::byte* to;
        std::size_t bytes;
    };
    std::vector<Slice> slices;
    constexpr std::uint64_t kSlice = std::uint64_t{1} << 20;
    for (std::size_t s = 0; s < ranks; ++s) {
        if (s == self || !shared(s)) continue;
        const std::uint64_t size = received[2 * s], offset = received[2 * s + 1];
        if (offset + size > areas_[s].size()) throw std::logic_error("Exchange::round: a piece beyond its send area");
        for (std::uint64_t at = 0; at < size; at += kSlice)
            slices.push_back({areas_[s].data() + offset + at, into[s] + at, static_cast<std::size_t>(std::min(kSlice, size - at))});
    }
    tbb::parallel_for(std::size_t{0}, slices.size(), [&](std::size_t i) { std::memcpy(slices[i].to, slices[i].from, slices[i].bytes); });
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    // Every rank of the host has its pieces: this half of the send areas may be laid out again.
    if (shared_memory()) check(MPI_Barrier(ranks_.host_->comm), "MPI_Barrier");
    std::fill(laid.sizes.begin(), laid.sizes.end(), 0);
    std::fill(laid.offsets.begin(), laid.offsets.end(), 0);
    laid.used = 0;
    return through_memory;
}

}  // namespace gpusort::distributed
