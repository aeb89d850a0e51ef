// The exchange through the GPUs (peer_exchange.hpp): a chunk sorted on each rank's GPU, cut at the
// splitters, each rank's pieces copied from every rank's GPU, sorted together and copied out as a run.
#include "gpu/peer_exchange.hpp"

#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/event.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/key_mapping.hpp"
#include "gpu/pinned_buffer.hpp"
#include "gpu/splitter_cuts.hpp"
#include "gpu/stream.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <optional>
#include <string>

namespace gpusort::gpu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What one round may bring a rank beyond a chunk before it forms a second run: a sixteenth. A
// round's pieces add up to a chunk give or take the splitters' imbalance and the keys' spread
// between rounds, which for random keys is far below that.
std::size_t received_keys_for(std::size_t chunk) { return chunk + chunk / 16; }

// Device memory for chunks of `keys` keys of `width` bytes, sorted as T: the sorted chunk, what is
// received (with its margin) and the sorter's scratch for it, and for narrow keys (wider ones are
// mapped in place) the raw keys coming in and the run going out.
template <class T>
std::size_t device_bytes_for(std::uint64_t keys, std::size_t width) {
    const std::size_t n = static_cast<std::size_t>(keys), received = received_keys_for(n);
    return (width < sizeof(T) ? (n + received) * width : 0) + (n + received) * sizeof(T) + DeviceSorter<T>::scratch_bytes(received);
}

template <class T>
class Exchange {
public:
    Exchange(const PeerExchangeJob& job, const PeerTrade& trade) : job_(job), trade_(trade) {}
    Exchange(const Exchange&) = delete;
    Exchange& operator=(const Exchange&) = delete;
    // The other ranks' sorted chunks, opened by open_peers(), are closed before the buffers go.
    ~Exchange() {
        for (std::size_t s = 0; s < peers_.size(); ++s)
            if (static_cast<int>(s) != job_.rank && peers_[s]) cudaIpcCloseMemHandle(peers_[s]);
    }

    PeerExchangeReport run() {
        width_ = key_width(job_.order.type);
        const std::uint64_t records = job_.range.size() / width_;
        const std::uint64_t chunk = choose_chunk(records);
        allocate(chunk);
        open_peers();
        for (std::uint64_t c = 0; c < report_.chunks; ++c) exchange_chunk(records, chunk, c);
        local([&] { finish_run(); });
        agreed({});
        return report_;
    }

private:
    // The chunk: the largest that this rank's budget holds, the same on every rank (the least), and
    // no larger than the largest range. Sets up the device, the streams and the events first.
    std::uint64_t choose_chunk(std::uint64_t records) {
        local([&] {
            check_cuda(cudaSetDevice(job_.device), "cudaSetDevice");
            in_.emplace();
            out_.emplace();
            for (auto& event : in_copied_) event.emplace(false);
            for (auto& event : out_copied_) event.emplace(false);
            received_sorted_.emplace(false);
            std::uint64_t lo = 0, hi = job_.device_bytes / sizeof(T) + 1;
            while (lo + 1 < hi) {
                const std::uint64_t mid = lo + (hi - lo) / 2;
                (device_bytes_for<T>(mid, width_) <= job_.device_bytes ? lo : hi) = mid;
            }
            capacity_ = lo;
            if (capacity_ == 0) throw GpuError(cudaErrorMemoryAllocation, "the device memory budget holds no chunk to exchange");
        });
        std::uint64_t chunk = ~std::uint64_t{0}, largest = 0;
        const std::uint64_t mine[] = {capacity_, records};
        const std::vector<std::uint64_t> all = agreed(mine);
        for (int s = 0; s < job_.ranks; ++s) {
            chunk = std::min(chunk, all[2 * static_cast<std::size_t>(s)]);
            largest = std::max(largest, all[2 * static_cast<std::size_t>(s) + 1]);
        }
        chunk = std::max<std::uint64_t>(1, std::min(chunk, largest));
        report_.chunk_keys = chunk;
        report_.chunks = (largest + chunk - 1) / chunk;
        return chunk;
    }

    // Device memory for chunks of `chunk` keys, the pinned buffers, and the splitters as sort keys.
    void allocate(std::uint64_t chunk) {
        const int k = job_.ranks - 1;
        local([&] {
            const std::size_t n = static_cast<std::size_t>(chunk), received = received_keys_for(n);
            if (width_ < sizeof(T)) {
                raw_ = DeviceBuffer<std::byte>(n * width_);
                run_raw_ = DeviceBuffer<std::byte>(received * width_);
            }
            sorted_ = DeviceBuffer<T>(n);
            received_ = DeviceBuffer<T>(received);
            sorter_.emplace(received);
            for (auto* pair : {&in_staging_, &out_staging_})
                for (auto& buffer : *pair) buffer = PinnedBuffer<std::byte>(std::max(job_.staging_bytes, width_ * sizeof(T)));
            small_ = PinnedBuffer<std::uint64_t>(2 * static_cast<std::size_t>(std::max(k, 1)));
            small_device_ = DeviceBuffer<std::uint64_t>(2 * static_cast<std::size_t>(std::max(k, 1)));
            if (k > 0) {
                DeviceBuffer<std::byte> keys(static_cast<std::size_t>(k) * width_);
                check_cuda(cudaMemcpy(keys.data(), job_.splitter_keys.data(), keys.size(), cudaMemcpyHostToDevice),
                           "cudaMemcpy (splitters to the device)");
                splitters_ = DeviceBuffer<T>(static_cast<std::size_t>(k));
                map_to_sort_keys(keys.data(), splitters_.data(), static_cast<std::size_t>(k), job_.order, true, in_->get());
                in_->synchronize();
            }
        });
    }

    // This rank's sorted chunk exported to the other ranks, and theirs opened (CUDA IPC).
    void open_peers() {
        cudaIpcMemHandle_t handle{};
        local([&] {
            check_cuda(cudaIpcGetMemHandle(&handle, sorted_.data()), "cudaIpcGetMemHandle (the sorted chunk, for the other ranks)");
        });
        constexpr std::size_t kHandleWords = (sizeof(handle) + 7) / 8;
        std::uint64_t words[kHandleWords] = {};
        std::memcpy(words, &handle, sizeof handle);
        const std::vector<std::uint64_t> handles = agreed(words);
        peers_.assign(static_cast<std::size_t>(job_.ranks), nullptr);
        local([&] {
            for (int s = 0; s < job_.ranks; ++s) {
                if (s == job_.rank) continue;
                cudaIpcMemHandle_t theirs{};
                std::memcpy(&theirs, handles.data() + static_cast<std::size_t>(s) * kHandleWords, sizeof theirs);
                check_cuda(cudaIpcOpenMemHandle(&peers_[static_cast<std::size_t>(s)], theirs, cudaIpcMemLazyEnablePeerAccess),
                           "cudaIpcOpenMemHandle (another rank's sorted chunk)");
            }
        });
        agreed({});
    }

    // Chunk `c` of `chunk` keys: this rank's sorted and cut, the cuts traded; this rank's piece of
    // every rank's chunk copied in, then every rank is done with the others'; what it brought becomes
    // a run, copied out while the next chunk comes in.
    void exchange_chunk(std::uint64_t records, std::uint64_t chunk, std::uint64_t c) {
        const int k = job_.ranks - 1;
        const std::uint64_t at = std::min(records, c * chunk);
        const std::uint64_t n = std::min(chunk, records - at);
        std::vector<std::uint64_t> mine(static_cast<std::size_t>(k) + 1, 0);
        mine[0] = n;
        auto start = Clock::now();
        local([&] { sort_and_cut(at, n, std::span<std::uint64_t>(mine).subspan(1)); });
        const std::vector<std::uint64_t> cuts = agreed(mine);
        report_.sort_seconds += seconds_since(start);
        const std::size_t each = static_cast<std::size_t>(k) + 1;
        const std::uint64_t* own = cuts.data() + static_cast<std::size_t>(job_.rank) * each;
        const std::uint64_t kept = (job_.rank == k ? own[0] : own[job_.rank + 1]) - (job_.rank == 0 ? 0 : own[job_.rank]);
        report_.sent_bytes += (n - kept) * width_;
        start = Clock::now();
        local([&] { pull(cuts, each); });
        agreed({});  // every rank has its pieces: the sorted chunks may go
        report_.pull_seconds += seconds_since(start);
        local([&] { flush(); });
    }

    // Runs `work`; a failure is kept for the next trade.
    template <class F>
    void local(F&& work) {
        if (failure_) return;
        try {
            work();
        } catch (...) {
            failure_ = std::current_exception();
        }
    }

    // Every rank's words after a status word each, once every rank is fine; else this rank's
    // failure, or PeerFailed.
    std::vector<std::uint64_t> agreed(std::span<const std::uint64_t> mine) {
        std::vector<std::uint64_t> sent(mine.size() + 1);
        sent[0] = failure_ ? 1 : 0;
        std::copy(mine.begin(), mine.end(), sent.begin() + 1);
        const std::vector<std::uint64_t> all = trade_.words(sent);
        std::vector<std::uint64_t> words;
        bool failed = false;
        for (std::size_t at = 0; at < all.size(); at += sent.size()) {
            failed = failed || all[at] != 0;
            words.insert(words.end(), all.begin() + static_cast<std::ptrdiff_t>(at + 1),
                         all.begin() + static_cast<std::ptrdiff_t>(at + sent.size()));
        }
        if (failure_) std::rethrow_exception(failure_);
        if (failed) throw PeerFailed();
        return words;
    }

    // Keys [at, at + n) of the range into the device, through the pinned buffers, and sorted as
    // T; cuts[j] = the sorted keys before splitter j.
    void sort_and_cut(std::uint64_t at, std::uint64_t n, std::span<std::uint64_t> cuts) {
        if (n == 0) return;
        cudaStream_t stream = in_->get();
        std::byte* raw = width_ < sizeof(T) ? raw_.data() : reinterpret_cast<std::byte*>(sorted_.data());
        const std::span<const std::byte> keys = job_.range.subspan(static_cast<std::size_t>(at * width_),
                                                                   static_cast<std::size_t>(n * width_));
        const std::size_t piece = in_staging_[0].size() / width_ * width_;
        for (std::size_t offset = 0, p = 0; offset < keys.size(); offset += piece, ++p) {
            const std::size_t bytes = std::min(piece, keys.size() - offset);
            in_copied_[p % 2]->synchronize();  // the copy that last used this buffer
            job_.copy(in_staging_[p % 2].data(), keys.subspan(offset, bytes));
            check_cuda(cudaMemcpyAsync(raw + offset, in_staging_[p % 2].data(), bytes, cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync (a chunk to the device)");
            in_copied_[p % 2]->record(stream);
        }
        map_to_sort_keys(raw, sorted_.data(), static_cast<std::size_t>(n), job_.order, true, stream);
        // Of the keys equal to a splitter's, those before its input position: all or none where the
        // position lies outside the chunk, else counted in the chunk while it is in input order.
        const int k = job_.ranks - 1;
        const std::uint64_t begin = job_.first + at;
        for (int j = 0; j < k; ++j) {
            const std::uint64_t position = job_.splitter_positions[static_cast<std::size_t>(j)];
            small_[static_cast<std::size_t>(j)] = position >= begin + n ? ~std::uint64_t{0} : 0;
        }
        if (k > 0)
            check_cuda(cudaMemcpyAsync(small_device_.data(), small_.data(), static_cast<std::size_t>(k) * sizeof(std::uint64_t),
                                       cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync (the splitters' equal keys to the device)");
        for (int j = 0; j < k; ++j) {
            const std::uint64_t position = job_.splitter_positions[static_cast<std::size_t>(j)];
            if (position > begin && position < begin + n)
                count_equal(sorted_.data(), position - begin, splitters_.data() + j, small_device_.data() + j, stream);
        }
        received_sorted_->make_wait(stream);  // the sorter is the last run's until it is sorted
        sorter_->sort(sorted_.data(), static_cast<std::size_t>(n), stream);
        if (k == 0) {
            in_->synchronize();
            return;
        }
        cut_at_splitters(sorted_.data(), n, splitters_.data(), small_device_.data(), k, small_device_.data() + k, stream);
        check_cuda(cudaMemcpyAsync(small_.data() + k, small_device_.data() + k, static_cast<std::size_t>(k) * sizeof(std::uint64_t),
                                   cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync (the cuts to the host)");
        in_->synchronize();
        std::copy(small_.data() + k, small_.data() + 2 * k, cuts.begin());
    }

    // This rank's piece of every rank's sorted chunk (`each` words per rank: its keys, then its
    // cuts), copied in after what was received before (once the last run is out of the way); a run
    // is formed first where it would not fit.
    void pull(const std::vector<std::uint64_t>& cuts, std::size_t each) {
        finish_run();
        const int r = job_.rank;
        for (int s = 0; s < job_.ranks; ++s) {
            const std::uint64_t* theirs = cuts.data() + static_cast<std::size_t>(s) * each;
            const std::uint64_t from = r == 0 ? 0 : theirs[r];
            const std::uint64_t to = r == job_.ranks - 1 ? theirs[0] : theirs[r + 1];
            if (to <= from) continue;
            const std::uint64_t count = to - from;
            if (filled_ + count > received_.size()) {
                in_->synchronize();
                flush();
                finish_run();
            }
            const T* source = s == r ? sorted_.data() : static_cast<const T*>(peers_[static_cast<std::size_t>(s)]);
            check_cuda(cudaMemcpyAsync(received_.data() + filled_, source + from, static_cast<std::size_t>(count) * sizeof(T),
                                       cudaMemcpyDefault, in_->get()),
                       "cudaMemcpyAsync (a piece of a rank's sorted chunk)");
            filled_ += count;
            if (s != r) report_.peer_bytes += count * width_;
        }
        in_->synchronize();
    }

    // What was received becomes a run (normalised keys of the raw width): sorted on the device, then
    // copied out through the pinned buffers on a thread of its own (finish_run() waits for it).
    void flush() {
        if (filled_ == 0) return;
        const std::size_t n = static_cast<std::size_t>(filled_);
        const std::size_t bytes = n * width_;
        if (written_ + bytes > job_.runs.size()) throw std::length_error("the part received is larger than the room for its runs");
        cudaStream_t stream = out_->get();
        sorter_->sort(received_.data(), n, stream);
        std::byte* out = width_ < sizeof(T) ? run_raw_.data() : reinterpret_cast<std::byte*>(received_.data());
        map_from_sort_keys(received_.data(), out, n, job_.order, false, stream);
        received_sorted_->record(stream);
        std::byte* to = job_.runs.data() + written_;
        written_ += bytes;
        report_.run_records.push_back(filled_);
        filled_ = 0;
        copying_out_ = std::async(std::launch::async, [this, out, to, bytes] {
            const auto start = Clock::now();
            check_cuda(cudaSetDevice(job_.device), "cudaSetDevice");
            cudaStream_t stream = out_->get();
            const std::size_t piece = out_staging_[0].size() / width_ * width_;
            const std::size_t pieces = (bytes + piece - 1) / piece;
            auto write = [&](std::size_t p) {
                const std::size_t offset = p * piece, size = std::min(piece, bytes - offset);
                out_copied_[p % 2]->synchronize();
                job_.copy(to + offset, std::span<const std::byte>(out_staging_[p % 2].data(), size));
            };
            for (std::size_t p = 0; p < pieces; ++p) {
                const std::size_t offset = p * piece, size = std::min(piece, bytes - offset);
                check_cuda(cudaMemcpyAsync(out_staging_[p % 2].data(), out + offset, size, cudaMemcpyDeviceToHost, stream),
                           "cudaMemcpyAsync (a run to the host)");
                out_copied_[p % 2]->record(stream);
                if (p >= 1) write(p - 1);
            }
            write(pieces - 1);
            return seconds_since(start);
        });
    }

    // Waits for the run being copied out.
    void finish_run() {
        if (copying_out_.valid()) report_.run_seconds += copying_out_.get();
    }

    const PeerExchangeJob& job_;
    const PeerTrade& trade_;
    std::size_t width_ = 0;
    std::uint64_t capacity_ = 0;
    // Made once the device is set. `in_` takes the chunks in, sorts and cuts them and copies the
    // pieces; `out_` sorts what was received and copies the runs out.
    std::optional<Stream> in_, out_;
    DeviceBuffer<std::byte> raw_, run_raw_;  // narrow keys only: a chunk's raw keys, a run's
    DeviceBuffer<T> sorted_, received_, splitters_;
    std::optional<DeviceSorter<T>> sorter_;  // the chunks' and the runs' sorts, in turns
    PinnedBuffer<std::byte> in_staging_[2], out_staging_[2];
    std::optional<Event> in_copied_[2], out_copied_[2], received_sorted_;
    std::future<double> copying_out_;       // the last run, copied out
    PinnedBuffer<std::uint64_t> small_;
    DeviceBuffer<std::uint64_t> small_device_;
    std::vector<void*> peers_;
    std::uint64_t filled_ = 0;   // keys received since the last run
    std::size_t written_ = 0;    // bytes of runs formed
    std::exception_ptr failure_;
    PeerExchangeReport report_;
};

}  // namespace

PeerExchangeReport form_runs_exchanging(const PeerExchangeJob& job, const PeerTrade& trade) {
    return with_key_width(key_width(job.order.type), [&](auto key) {
        using T = SortKeyOf<decltype(key)>;
        return Exchange<T>(job, trade).run();
    });
}

}  // namespace gpusort::gpu
