// gpusort-bench-kernels: times our DeviceSorter beside cub::DeviceMergeSort and
// cub::DeviceRadixSort on the same uniform random data (device-generated, fixed seed) for u32 keys,
// u64 keys and (u64 key, u32 index) pairs at 2^24, 2^28 and 2^30 keys. Each sort is timed with CUDA
// events around the sort call alone (scratch allocated beforehand, input restored between runs);
// the median of the repetitions is reported in GKeys/s, with the ratio ours/CUB. Our output is
// verified (ascending, same multiset of keys, and for pairs the stable-sort index check); CUB's is
// checked for order. Sizes that do not fit in free device memory are skipped, and say so.
//
// Options: --reps N (default 5)  --sizes 24,28,30  --types u32,u64,u64+u32  --methods ours,merge,radix
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_sorter.hpp"
#include "gpu/event.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/stream.hpp"
#include "tests/gpu/support/device_fill.hpp"
#include "tests/gpu/support/order_check.hpp"

namespace {

using namespace gpusort::gpu;

constexpr std::uint64_t kSeed = 20240601;

struct Options {
    int reps = 5;
    std::vector<int> size_logs = {24, 28, 30};
    std::vector<std::string> types = {"u32", "u64", "u64+u32"};
    std::vector<std::string> methods = {"ours", "merge", "radix"};
};

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        if (!item.empty()) items.push_back(item);
    }
    return items;
}

Options parse_options(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--reps" && has_value) {
            options.reps = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--sizes" && has_value) {
            options.size_logs.clear();
            for (const auto& item : split_list(argv[++i])) options.size_logs.push_back(std::atoi(item.c_str()));
        } else if (arg == "--types" && has_value) {
            options.types = split_list(argv[++i]);
        } else if (arg == "--methods" && has_value) {
            options.methods = split_list(argv[++i]);
        } else {
            std::fprintf(stderr,
                         "usage: gpusort-bench-kernels [--reps N] [--sizes 24,28,30] [--types u32,u64,u64+u32] "
                         "[--methods ours,merge,radix]\n");
            std::exit(2);
        }
    }
    return options;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

struct LessThan {
    template <class T>
    __device__ bool operator()(const T& a, const T& b) const {
        return a < b;
    }
};

double median(std::vector<float> values) {
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Median milliseconds of `reps` timed runs of `sort`, after one untimed warm-up run; `restore`
// (untimed) puts the input back before each run.
double time_median_ms(int reps, cudaStream_t stream, const std::function<void()>& restore,
                      const std::function<void()>& sort) {
    Event start;
    Event stop;
    std::vector<float> times;
    for (int rep = 0; rep <= reps; ++rep) {
        restore();
        start.record(stream);
        sort();
        stop.record(stream);
        stop.synchronize();
        if (rep > 0) times.push_back(Event::elapsed_ms(start, stop));
    }
    return median(times);
}

void copy_device(void* to, const void* from, std::size_t bytes, cudaStream_t stream) {
    check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync D2D");
}

std::string gib(std::size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
    return text;
}

struct Row {
    std::string type;
    int size_log = 0;
    std::optional<double> ours_ms, merge_ms, radix_ms;
    std::string verified = "-";
    std::string note;
};

// CUB's temporary storage for n keys (pairs): its merge sort's and its radix sort's.
template <class Key, class Payload>
std::pair<std::size_t, std::size_t> cub_temp_bytes(std::size_t n, cudaStream_t stream) {
    std::size_t merge_temp = 0;
    std::size_t radix_temp = 0;
    if constexpr (kIsPayload<Payload>) {
        check_cuda(cub::DeviceMergeSort::StableSortPairs(nullptr, merge_temp, static_cast<Key*>(nullptr),
                                                         static_cast<Payload*>(nullptr), static_cast<std::int64_t>(n),
                                                         LessThan{}, stream),
                   "cub merge temp size");
        check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, radix_temp, static_cast<const Key*>(nullptr),
                                                   static_cast<Key*>(nullptr), static_cast<const Payload*>(nullptr),
                                                   static_cast<Payload*>(nullptr), static_cast<std::int64_t>(n), 0,
                                                   int(sizeof(Key) * 8), stream),
                   "cub radix temp size");
    } else {
        check_cuda(cub::DeviceMergeSort::SortKeys(nullptr, merge_temp, static_cast<Key*>(nullptr),
                                                  static_cast<std::int64_t>(n), LessThan{}, stream),
                   "cub merge temp size");
        check_cuda(cub::DeviceRadixSort::SortKeys(nullptr, radix_temp, static_cast<const Key*>(nullptr),
                                                  static_cast<Key*>(nullptr), static_cast<std::int64_t>(n), 0,
                                                  int(sizeof(Key) * 8), stream),
                   "cub radix temp size");
    }
    return {merge_temp, radix_temp};
}

// The input of one case (random keys, and for pairs their indices) and the arrays each method sorts.
template <class Key, class Payload>
struct CaseData {
    static constexpr bool kPairs = kIsPayload<Payload>;
    using PayloadStorage = std::conditional_t<kPairs, Payload, std::uint32_t>;

    CaseData(std::size_t n, int size_log, cudaStream_t stream)
        : n(n), stream(stream), input_keys(n), keys(n), input_payload(kPairs ? n : 0), payload(kPairs ? n : 0) {
        fill_random_keys(input_keys.data(), n, kSeed + static_cast<std::uint64_t>(size_log), stream);
        if constexpr (kPairs) fill_index_sequence(input_payload.data(), n, stream);
        input_hash = key_multiset_hash(input_keys.data(), n, stream);
    }
    // The input copied into the arrays that a sort in place works on.
    void restore() {
        copy_device(keys.data(), input_keys.data(), n * sizeof(Key), stream);
        if constexpr (kPairs) copy_device(payload.data(), input_payload.data(), n * sizeof(Payload), stream);
    }
    bool keys_sorted() { return count_descents(keys.data(), n, stream) == 0; }

    std::size_t n;
    cudaStream_t stream;
    DeviceBuffer<Key> input_keys;
    DeviceBuffer<Key> keys;
    DeviceBuffer<PayloadStorage> input_payload;
    DeviceBuffer<PayloadStorage> payload;
    std::uint64_t input_hash = 0;
};

// Our DeviceSorter, in place; its output verified: in order, the same keys, and for pairs stable.
template <class Key, class Payload>
void bench_ours(CaseData<Key, Payload>& d, const Options& options, Row& row, std::vector<std::string>& failures) {
    const std::size_t n = d.n;
    DeviceSorter<Key, Payload> sorter(n);
    row.ours_ms = time_median_ms(options.reps, d.stream, [&] { d.restore(); }, [&] {
        if constexpr (CaseData<Key, Payload>::kPairs) {
            sorter.sort(d.keys.data(), d.payload.data(), n, d.stream);
        } else {
            sorter.sort(d.keys.data(), n, d.stream);
        }
    });
    bool ok = d.keys_sorted() && key_multiset_hash(d.keys.data(), n, d.stream) == d.input_hash;
    if constexpr (CaseData<Key, Payload>::kPairs) {
        ok = ok && count_stable_index_errors(d.keys.data(), d.payload.data(), d.input_keys.data(), n, d.stream) == 0;
    }
    row.verified = ok ? "yes" : "NO";
    if (!ok) failures.push_back("ours");
}

// cub::DeviceMergeSort, in place; its output checked for order.
template <class Key, class Payload>
void bench_cub_merge(CaseData<Key, Payload>& d, std::size_t merge_temp, const Options& options, Row& row,
                     std::vector<std::string>& failures) {
    DeviceBuffer<char> temp(merge_temp);
    row.merge_ms = time_median_ms(options.reps, d.stream, [&] { d.restore(); }, [&] {
        std::size_t bytes = merge_temp;
        if constexpr (CaseData<Key, Payload>::kPairs) {
            check_cuda(cub::DeviceMergeSort::StableSortPairs(temp.data(), bytes, d.keys.data(), d.payload.data(),
                                                             static_cast<std::int64_t>(d.n), LessThan{}, d.stream),
                       "cub::DeviceMergeSort::StableSortPairs");
        } else {
            check_cuda(cub::DeviceMergeSort::SortKeys(temp.data(), bytes, d.keys.data(), static_cast<std::int64_t>(d.n),
                                                      LessThan{}, d.stream),
                       "cub::DeviceMergeSort::SortKeys");
        }
    });
    if (!d.keys_sorted()) failures.push_back("cub-merge");
}

// cub::DeviceRadixSort, out of place: it reads the untouched input and writes keys (and payload),
// so there is nothing to restore; its output checked for order.
template <class Key, class Payload>
void bench_cub_radix(CaseData<Key, Payload>& d, std::size_t radix_temp, const Options& options, Row& row,
                     std::vector<std::string>& failures) {
    DeviceBuffer<char> temp(radix_temp);
    row.radix_ms = time_median_ms(options.reps, d.stream, [] {}, [&] {
        std::size_t bytes = radix_temp;
        if constexpr (CaseData<Key, Payload>::kPairs) {
            check_cuda(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, d.input_keys.data(), d.keys.data(),
                                                       d.input_payload.data(), d.payload.data(),
                                                       static_cast<std::int64_t>(d.n), 0, int(sizeof(Key) * 8), d.stream),
                       "cub::DeviceRadixSort::SortPairs");
        } else {
            check_cuda(cub::DeviceRadixSort::SortKeys(temp.data(), bytes, d.input_keys.data(), d.keys.data(),
                                                      static_cast<std::int64_t>(d.n), 0, int(sizeof(Key) * 8), d.stream),
                       "cub::DeviceRadixSort::SortKeys");
        }
    });
    if (!d.keys_sorted()) failures.push_back("cub-radix");
}

// One key type (and payload, or NoPayload) at one size: all methods, the same input.
template <class Key, class Payload>
Row bench_case(const std::string& type, int size_log, const Options& options, cudaStream_t stream) {
    const std::size_t n = std::size_t{1} << size_log;
    Row row;
    row.type = type;
    row.size_log = size_log;

    // Peak device memory of any method: input copy + work arrays + a third set (our scratch, CUB's
    // output or temporary storage), plus CUB's temporary storage for radix.
    const std::size_t data_bytes = n * (sizeof(Key) + (kIsPayload<Payload> ? sizeof(Payload) : 0));
    const auto [merge_temp, radix_temp] = cub_temp_bytes<Key, Payload>(n, stream);
    const std::size_t peak = 2 * data_bytes + std::max({DeviceSorter<Key, Payload>::scratch_bytes(n), merge_temp,
                                                        data_bytes + radix_temp});
    const std::size_t free_bytes = device_info(current_device()).free_bytes;
    if (peak + (std::size_t{512} << 20) > free_bytes) {
        row.note = "skipped: needs " + gib(peak) + " of device memory, " + gib(free_bytes) + " free";
        return row;
    }

    CaseData<Key, Payload> data(n, size_log, stream);
    std::vector<std::string> failures;
    if (contains(options.methods, "ours")) bench_ours(data, options, row, failures);
    if (contains(options.methods, "merge")) bench_cub_merge(data, merge_temp, options, row, failures);
    if (contains(options.methods, "radix")) bench_cub_radix(data, radix_temp, options, row, failures);
    for (const auto& failure : failures) row.note += (row.note.empty() ? "" : "; ") + failure + " output NOT sorted";
    return row;
}

std::string rate_text(const std::optional<double>& ms, std::size_t n) {
    if (!ms) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", static_cast<double>(n) / (*ms * 1e-3) / 1e9);
    return text;
}

std::string ratio_text(const std::optional<double>& ours_ms, const std::optional<double>& other_ms) {
    if (!ours_ms || !other_ms) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", *other_ms / *ours_ms);
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    try {
        if (device_count() == 0) {
            std::printf("gpusort-bench-kernels: %s\n", device_unavailable_reason().c_str());
            return 1;
        }
        const DeviceInfo info = device_info(current_device());
        std::printf("device: %s, %d SMs, %s free of %s; %d timed runs per figure (median), uniform random keys, seed %llu\n",
                    info.name.c_str(), info.multiprocessors, gib(info.free_bytes).c_str(),
                    gib(info.total_bytes).c_str(), options.reps, static_cast<unsigned long long>(kSeed));
        Stream stream;
        std::vector<Row> rows;
        for (const int size_log : options.size_logs) {
            for (const auto& type : options.types) {
                Row row;
                if (type == "u32") {
                    row = bench_case<std::uint32_t, NoPayload>(type, size_log, options, stream.get());
                } else if (type == "u64") {
                    row = bench_case<std::uint64_t, NoPayload>(type, size_log, options, stream.get());
                } else if (type == "u64+u32") {
                    row = bench_case<std::uint64_t, std::uint32_t>(type, size_log, options, stream.get());
                } else {
                    std::fprintf(stderr, "unknown type %s\n", type.c_str());
                    return 2;
                }
                rows.push_back(row);
                std::fflush(stdout);
            }
        }
        std::printf("\n%-8s %6s | %10s %10s %10s | %11s %11s | %-8s %s\n", "type", "keys", "ours", "cub-merge",
                    "cub-radix", "ours/merge", "ours/radix", "verified", "note");
        std::printf("%-8s %6s | %10s %10s %10s | %11s %11s |\n", "", "", "GKeys/s", "GKeys/s", "GKeys/s", "", "");
        for (const auto& row : rows) {
            const std::size_t n = std::size_t{1} << row.size_log;
            const std::string keys = "2^" + std::to_string(row.size_log);
            std::printf("%-8s %6s | %10s %10s %10s | %11s %11s | %-8s %s\n", row.type.c_str(), keys.c_str(),
                        rate_text(row.ours_ms, n).c_str(), rate_text(row.merge_ms, n).c_str(),
                        rate_text(row.radix_ms, n).c_str(), ratio_text(row.ours_ms, row.merge_ms).c_str(),
                        ratio_text(row.ours_ms, row.radix_ms).c_str(), row.verified.c_str(), row.note.c_str());
        }
        bool all_verified = true;
        for (const auto& row : rows) all_verified = all_verified && row.verified != "NO" && row.note.find("NOT") == std::string::npos;
        return all_verified ? 0 : 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
}
