// SortOptions::input_memory: a sort reads its records from memory instead of INPUT (as the ranks of
// gpusort-mpi sort what they received): in one chunk and as runs, keys and records, with --verify,
// into a file and into a region of one; INPUT's name only names them in messages.
#include "record_sort_cases.hpp"

#include <fcntl.h>
#include <random>
#include <unistd.h>

using namespace gpusort;
using namespace gpusort::testing;

TEST(InputMemory, KeysAndRecordsAreSortedFromMemory) {
    std::mt19937_64 rng(8);
    std::vector<std::uint32_t> keys(600000);
    for (auto& k : keys) k = static_cast<std::uint32_t>(rng() % 50000);
    std::vector<std::byte> data(keys.size() * 4);
    std::memcpy(data.data(), keys.data(), data.size());
    std::sort(keys.begin(), keys.end());
    std::vector<std::byte> expected(keys.size() * 4);
    std::memcpy(expected.data(), keys.data(), expected.size());
    for (const bool runs : {false, true}) {
        ScratchDir dir, tmp;
        SortOptions options;
        options.backend = Backend::cpu;
        options.threads = 2;
        options.order = {KeyType::u32, false};
        options.input = dir / "not-there";  // only a name
        options.input_memory = std::span<const std::byte>(data);
        options.output = dir / "out";
        options.tmp_dir = tmp.path();
        options.verify = true;
        if (runs) options.memory_bytes = kMinMemoryBudget;
        const SortReport report = sort_file(options);
        EXPECT_EQ(report.runs > 1, runs);
        EXPECT_TRUE(read_bytes(dir / "out") == expected) << (runs ? "runs" : "one chunk");
        EXPECT_EQ(dir.entries(), (std::set<std::string>{"out"}));
        EXPECT_TRUE(tmp.entries().empty());
    }
    // Records, as runs, into a region of a file that holds other bytes around it.
    const RecordCase c = record_cases()[1];
    const std::vector<std::byte> records = make_records(c.records, c.spec, 21);
    const std::vector<std::byte> sorted = reference_record_sort(records, c.spec, false);
    ScratchDir dir, tmp;
    const std::size_t head = 7 * c.spec.record_size;
    std::vector<std::byte> host(head + records.size() + 100, std::byte{0x77});
    write_bytes(dir / "host", host);
    const int fd = ::open((dir / "host").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    SortOptions options;
    options.backend = Backend::cpu;
    options.threads = 2;
    options.records = c.spec;
    options.input = "received";
    options.input_memory = std::span<const std::byte>(records);
    options.output = dir / "host";
    options.output_region = OutputRegion{fd, head};
    options.tmp_dir = tmp.path();
    options.memory_bytes = kMinMemoryBudget;
    sort_file(options);
    ::close(fd);
    std::copy(sorted.begin(), sorted.end(), host.begin() + static_cast<std::ptrdiff_t>(head));
    EXPECT_TRUE(read_bytes(dir / "host") == host);
    EXPECT_TRUE(tmp.entries().empty());
}
