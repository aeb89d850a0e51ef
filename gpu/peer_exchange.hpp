// Runs formed with the exchange through the GPUs (gpusort-mpi --exchange gpu: the ranks of one host,
// each on a GPU): every rank sorts a chunk of its range of whole-record keys on its GPU and cuts it
// at the splitters; the ranks trade the cuts, and each copies its piece of every rank's sorted chunk
// from that rank's GPU (CUDA IPC; its own piece from its own GPU) into its device memory, sorts what
// it received and copies it out as a run, normalised, into host memory of its own. No host copies
// a record between ranks: the pieces cross by NVLink or PCIe, and each rank's runs hold only its
// part, which it then merges on its own (docs/distributed.md, "How records are exchanged").
//
// The steps run in turns on every rank (collective): the caller trades words between the ranks
// (PeerTrade, by MPI); each trade carries every rank's status, so that a failure on one rank ends
// the others at the next trade rather than leaving them waiting.
#pragma once

#include "src/keys/key_rules.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

namespace gpusort::gpu {

// The collective steps the caller gives: every rank's words (the same count from each), rank after rank.
struct PeerTrade {
    std::function<std::vector<std::uint64_t>(std::span<const std::uint64_t> mine)> words;
};

// Thrown on the ranks that did not fail when another rank failed: that rank says why.
class PeerFailed : public std::runtime_error {
public:
    PeerFailed() : std::runtime_error("another rank failed") {}
};

struct PeerExchangeJob {
    int device = 0;
    KeyOrder order;                             // whole-record keys of this type, in this order
    int rank = 0, ranks = 1;
    std::size_t device_bytes = 0;               // this rank's device memory budget
    std::span<const std::byte> range;           // this rank's raw keys
    std::uint64_t first = 0;                    // input position of the range's first key
    // ranks - 1 splitters, ascending: raw keys and input positions. A key goes to the part of the
    // number of splitters at or before it (by key, then by position).
    std::vector<std::byte> splitter_keys;
    std::vector<std::uint64_t> splitter_positions;
    std::span<std::byte> runs;                  // room for this rank's runs: its part, normalised
    std::size_t staging_bytes = std::size_t{64} << 20;  // each of two pinned buffers
    // Copies host memory (a caller's parallel copy): into the pinned buffers, and out of them.
    std::function<void(std::byte* to, std::span<const std::byte> from)> copy;
};

struct PeerExchangeReport {
    std::vector<std::uint64_t> run_records;     // of each run formed, in order, one after the other in `runs`
    std::uint64_t chunk_keys = 0;               // the chunk every rank sorted at a time
    std::uint64_t chunks = 0;
    std::uint64_t peer_bytes = 0;               // copied from other ranks' GPUs
    std::uint64_t sent_bytes = 0;               // of this rank's chunks, copied by the other ranks
    double sort_seconds = 0;                    // reading chunks in, sorting and cutting them
    double pull_seconds = 0;                    // copying the pieces in (from every GPU), trades included
    double run_seconds = 0;                     // sorting what was received and copying it out
};

// Forms this rank's runs (collective). Throws GpuError (or another error) on the rank that failed,
// PeerFailed on the others, std::length_error where the runs would not fit `runs`.
PeerExchangeReport form_runs_exchanging(const PeerExchangeJob& job, const PeerTrade& trade);

}  // namespace gpusort::gpu
