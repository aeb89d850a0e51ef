// plan_sort: chunk sizes, fan-in and merge buffers from the budgets; machine defaults.
#include "gpusort/sort_plan.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace gpusort {

namespace {

std::uint64_t round_up_pow2(std::uint64_t x) {
    std::uint64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

// Bytes from /proc/meminfo's MemAvailable, 0 when unknown.
std::uint64_t mem_available() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t value = 0;
    std::string unit;
    while (meminfo >> key >> value >> unit)
        if (key == "MemAvailable:") return value * 1024;
    return 0;
}

// The cgroup (v2 or v1) memory limit minus what is used, max() when there is none.
std::uint64_t cgroup_room() {
    auto read_number = [](const char* path, std::uint64_t& out) {
        std::ifstream in(path);
        std::string text;
        if (!(in >> text) || text == "max") return false;
        try {
            out = std::stoull(text);
        } catch (...) {
            return false;
        }
        return true;
    };
    std::uint64_t limit = 0, used = 0;
    if (read_number("/sys/fs/cgroup/memory.max", limit)) {
        read_number("/sys/fs/cgroup/memory.current", used);
    } else if (read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit)) {
        read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", used);
    } else {
        return std::numeric_limits<std::uint64_t>::max();
    }
    return limit > used ? limit - used : 0;
}

}  // namespace

std::uint64_t default_memory_budget() {
    std::uint64_t available = mem_available();
    if (available == 0) available = std::uint64_t{2} << 30;
    available = std::min(available, cgroup_room());
    // Half of what is free leaves room for the page cache of the files being sorted.
    return std::max<std::uint64_t>(available / 2, kMinMemoryBudget);
}

unsigned default_threads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return static_cast<unsigned>(count);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<std::uint64_t> address_space_room() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
    std::ifstream statm("/proc/self/statm");  // the size of the address space in pages comes first
    std::uint64_t pages = 0;
    statm >> pages;
    const std::uint64_t mapped = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    return limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
}

std::uint64_t address_space_overhead(unsigned threads) {
    // A thread's stack is as large as RLIMIT_STACK (8 MiB unless set otherwise); 96 MiB for a
    // second malloc arena (64 MiB) and the buffers of streams.
    std::uint64_t stack = std::uint64_t{8} << 20;
    rlimit limit{};
    if (::getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) stack = limit.rlim_cur;
    return (std::uint64_t{96} << 20) + 2 * std::uint64_t{std::max(1u, threads)} * stack;
}

SortPlan plan_sort(std::uint64_t records, std::size_t record_size, const Budgets& budgets, const ChunkCapacity& capacity) {
    if (budgets.memory_bytes < kMinMemoryBudget)
        throw std::invalid_argument("the memory budget must be at least 1M");
    SortPlan plan;
    plan.records = records;
    plan.record_size = record_size;
    plan.threads = std::max(1u, budgets.threads);
    plan.memory_bytes = budgets.memory_bytes;

    const std::uint64_t usable = chunk_memory(budgets.memory_bytes);
    const std::uint64_t bytes = records * record_size;
    plan.in_memory = records <= capacity.one_slot;
    if (plan.in_memory) {
        plan.run_records = records;
        return plan;
    }

    // Two chunks at once: one is read while the other is sorted and written.
    if (capacity.per_slot_of_two == 0)
        throw std::invalid_argument("the memory budget of the chunk sorter (--memory, or --device-memory on the GPU) holds no key");
    plan.run_records = capacity.per_slot_of_two;
    plan.runs_in_memory = !capacity.uses_host_memory && bytes <= usable / 2;

    // Samples of all runs take at most 1/32 of the budget (and one record in 1024 at most).
    const std::uint64_t sample_budget = std::max<std::uint64_t>(usable / 32, record_size);
    plan.sample_stride =
        round_up_pow2(std::max<std::uint64_t>(1024, (bytes + sample_budget - 1) / sample_budget));
    const std::uint64_t sample_bytes = (records / plan.sample_stride + 1) * record_size;

    plan.merge_memory = usable - std::min(usable / 2, sample_bytes + (plan.runs_in_memory ? bytes : 0));
    plan.merge_tasks = plan.threads;
    // Each task holds one buffer per run plus one for its output.
    while (plan.merge_tasks > 1 && plan.merge_memory / plan.merge_tasks / kMinMergeBuffer < 3)
        --plan.merge_tasks;
    plan.fan_in = static_cast<std::size_t>(plan.merge_memory / plan.merge_tasks / kMinMergeBuffer - 1);
    if (plan.fan_in < 2) throw std::invalid_argument("the memory budget is too small to merge");
    return plan;
}

std::uint64_t SortPlan::merge_buffer_bytes(std::size_t runs) const {
    std::uint64_t per_buffer = merge_memory / merge_tasks / (runs + 1);
    per_buffer = std::clamp(per_buffer, kMinMergeBuffer, kMaxMergeBuffer);
    return std::max<std::uint64_t>(per_buffer / record_size, 1) * record_size;
}

std::uint64_t SortPlan::merge_slices(std::uint64_t out_records) const {
    const std::uint64_t bytes = out_records * record_size;
    const std::uint64_t by_size = std::max<std::uint64_t>(1, bytes / kMinMergeSlice);
    return std::max<std::uint64_t>(1, std::min<std::uint64_t>(by_size, std::uint64_t{4} * merge_tasks));
}

}  // namespace gpusort
