// The ranks of a distributed sort as the sort sees them, over MPI (MPI_COMM_WORLD): who we are
// and who shares our host, the collectives it needs on bytes and counts, the rounds of the
// exchange (Exchange), and agreement on failure. A rank that fails keeps
// taking part in the collectives of the step it is in, with nothing to send, and says so when the
// step ends: agree() then ends the step on every rank with the first failing rank's message, so
// that no rank waits for a peer that has given up. A rank that dies ends the job through MPI's
// own error handling (mpirun stops the others, whose signal cleanup removes what it had named:
// job_output.hpp).
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
    int host_size() const;  // the ranks on this rank's host, itself included
    // Whether MPI may be called from any thread, one at a time (MPI_THREAD_SERIALIZED or more), so
    // that a round of the exchange can move on another thread.
    bool any_thread() const { return any_thread_; }

    // Every rank's `mine`, one after the other in rank order (sizes may differ between ranks).
    std::vector<std::byte> all_gather(std::span<const std::byte> mine) const;
    // Every rank's `text`, one string per rank in rank order.
    std::vector<std::string> all_gather(const std::string& text) const;
    // Every rank's `mine` (the same count on every rank), in rank order.
    std::vector<std::uint64_t> all_gather(std::span<const std::uint64_t> mine) const;
    // `text` from rank `root` to every rank.
    std::string broadcast(const std::string& text, int root) const;
    // Ends a step: `failure` is this rank's (empty: it went well). Throws RankError with the failure
    // of the lowest failing rank on every rank when any failed.
    void agree(const std::string& failure) const;

private:
    friend class Exchange;
    // Every rank's `mine`, whose sizes (every rank's, in rank order) were gathered already.
    std::vector<std::byte> all_gather(std::span<const std::byte> mine, const std::vector<std::uint64_t>& sizes) const;
    struct Host;  // the ranks of this host, as MPI sees them
    int rank_ = 0;
    int size_ = 1;
    bool any_thread_ = false;
    std::unique_ptr<Host> host_;
};

// The rounds of an exchange, in which every rank sends a piece to every other. Between the ranks
// of one host the pieces go through shared memory: each rank lays its pieces out in its send area,
// its region of an MPI shared-memory window over the ranks of its host (MPI_Win_allocate_shared),
// and each receiver copies its own out on all its threads, where MPI would move each message on
// one core. Pieces for other hosts (all of them, without shared memory) go by MPI messages, above
// 1 GiB as several. Two rounds may be under way at once: round r + 1 laid out (piece) on one thread
// while round r moves (round) on another; the rounds alternate between two halves of every send
// area and two sets of messages, so round r + 2 may be laid out once round(r) has returned. Made and
// freed by every rank of the job at once (collective).
class Exchange {
public:
    // `round_bytes`: the most this rank sends in one round. With `shared_memory` false, on a host
    // with one rank, or where a host has no room for the window (Open MPI's window folder,
    // /dev/shm, is checked first: shared_memory_refused() then says why), messages alone.
    Exchange(const Communicator& ranks, std::uint64_t round_bytes, bool shared_memory);
    ~Exchange();
    Exchange(const Exchange&) = delete;
    Exchange& operator=(const Exchange&) = delete;
    bool shared_memory() const { return !areas_.empty(); }  // with the other ranks of this host
    const std::string& shared_memory_refused() const { return refused_; }

    // Where this rank lays its piece of round `round` for rank `to` (not itself): `bytes` bytes, at
    // most once per rank and round, in all at most `round_bytes`.
    std::byte* piece(std::uint64_t round, int to, std::uint64_t bytes);
    // Where the piece that rank `source` sends in a round lands: `bytes` bytes at the address
    // returned, which stays valid until the round ends.
    using Landing = std::function<std::byte*(int source, std::uint64_t bytes)>;
    // Sends the pieces laid out for round `round` (every rank takes part in every round, in order,
    // with or without pieces); what rank s sent lands where land(s, its size) says. Returns the bytes
    // this rank sent through shared memory.
    std::uint64_t round(std::uint64_t round, const Landing& land);

private:
    struct Window;
    // What this rank lays out for one round: in its half of the send area (offsets from the area's
    // start), or as messages for other hosts.
    struct Side {
        std::vector<Piece> messages;              // the pieces for other hosts, reused every other round
        std::vector<std::uint64_t> sizes, offsets;  // per rank
        std::uint64_t used = 0;                   // bytes of the half laid out
    };
    Side& side(std::uint64_t round) { return sides_[round % 2]; }
    const Communicator& ranks_;
    std::uint64_t round_bytes_ = 0;
    std::unique_ptr<Window> window_;
    std::vector<std::span<std::byte>> areas_;  // every rank's send area on this host (none without shared memory)
    std::string refused_;
    Side sides_[2];
};

}  // namespace gpusort::distributed
