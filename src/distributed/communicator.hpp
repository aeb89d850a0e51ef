// The ranks of a distributed sort as the sort sees them, over MPI (MPI_COMM_WORLD): who we are,
// the collectives it needs on bytes and counts, and agreement on failure. A rank that fails keeps
// taking part in the collectives of the step it is in, with nothing to send, and says so when the
// step ends: agree() then ends the step on every rank with the first failing rank's message, so
// that no rank waits for a peer that has given up. A rank that dies ends the job through MPI's
// own error handling (mpirun stops the others).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpusort::distributed {

// Allocates as std::allocator does, but a resize leaves new bytes uninitialised (default-initialised):
// a buffer that is about to be filled is not zeroed first.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = UninitializedAllocator<U>;
    };
    using std::allocator<T>::allocator;
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// A piece of one round of the exchange.
using Piece = std::vector<std::byte, UninitializedAllocator<std::byte>>;

// The failure of a distributed sort, on every rank: which rank failed, and why.
class RankError : public std::runtime_error {
public:
    RankError(int rank, const std::string& cause) : std::runtime_error(cause), rank_(rank) {}
    int rank() const { return rank_; }

private:
    int rank_;
};

class Communicator {
public:
    Communicator();  // MPI must be initialised, and still be when this ends
    ~Communicator();
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;
    int rank() const { return rank_; }
    int size() const { return size_; }
    // Whether `rank` runs on this rank's host (its memory can be shared with this rank).
    bool on_this_host(int rank) const;

    // Every rank's `mine`, one after the other in rank order (sizes may differ between ranks).
    std::vector<std::byte> all_gather(std::span<const std::byte> mine) const;
    // Every rank's `mine` (the same count on every rank), in rank order.
    std::vector<std::uint64_t> all_gather(std::span<const std::uint64_t> mine) const;
    // `text` from rank `root` to every rank.
    std::string broadcast(const std::string& text, int root) const;
    // Where the piece that rank `source` sends in a round lands: `bytes` bytes at the address
    // returned, which stays valid until the round ends.
    using Landing = std::function<std::byte*(int source, std::uint64_t bytes)>;
    // One round of the exchange: to[d] goes to rank d (d other than this rank; to[rank] is left
    // alone), and what rank s sends here is received where land(s, its size) says, straight from
    // MPI (nothing is copied on this side). Any size: pieces above 1 GiB go as several messages.
    void exchange(const std::vector<Piece>& to, const Landing& land) const;
    // Ends a step: `failure` is this rank's (empty: it went well). Throws RankError with the failure
    // of the lowest failing rank on every rank when any failed.
    void agree(const std::string& failure) const;

private:
    friend class SharedMemory;
    struct Host;  // the ranks of this host, as MPI sees them
    int rank_ = 0;
    int size_ = 1;
    std::unique_ptr<Host> host_;
};

// Memory that the ranks of each host share: every rank's own region of an MPI shared-memory window
// over the ranks of its host (MPI_Win_allocate_shared). A rank writes into the regions of the
// others of its host with plain stores, on all its threads: no message, and no copy by MPI.
// publish() makes every rank's writes seen by the others of its host. Made and freed by every rank
// of the job at once (collective), each with the size of its own region (it may be 0).
class SharedMemory {
public:
    // Throws std::runtime_error on every rank when any host could not share the memory (the
    // window is then freed wherever it was made).
    SharedMemory(const Communicator& ranks, std::uint64_t bytes);
    ~SharedMemory();
    SharedMemory(const SharedMemory&) = delete;
    SharedMemory& operator=(const SharedMemory&) = delete;
    // The region of `rank`, empty when it is on another host (or asked for none).
    std::span<std::byte> of(int rank) const { return regions_.at(static_cast<std::size_t>(rank)); }
    // After every rank of the job has written what it writes: all of it is seen by the ranks of
    // each host (collective).
    void publish() const;

private:
    struct Window;
    const Communicator& ranks_;
    std::unique_ptr<Window> window_;
    std::vector<std::span<std::byte>> regions_;
};

}  // namespace gpusort::distributed
