// cgroup_memory against fake trees of /proc/self and /sys/fs/cgroup (v2, v1, hybrid, a cgroup
// namespace, files missing); and sort_file's notice when --memory is more than the memory available.
#include "scratch_dir.hpp"
#include "gpusort/sort_file.hpp"
#include "src/plan/cgroup_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

using namespace gpusort;
using namespace gpusort::testing;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr const char* kV1Unlimited = "9223372036854771712";

// The usual mounts: cgroup2 at /sys/fs/cgroup (a v2 system).
const char* const kV2Mounts =
    "25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

// A hybrid system: v1 controllers each on their own, the v2 hierarchy (no controllers) at unified/.
const char* const kHybridMounts =
    "25 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
    "31 25 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

// A fake root: files written under it, their folders made as needed.
class FakeTree {
public:
    void write(const std::string& path, const std::string& text) const {
        const std::filesystem::path file = std::filesystem::path(dir_.path()) / path;
        std::filesystem::create_directories(file.parent_path());
        write_text(file.string(), text);
    }
    // One v2 group's files ("max" or a number); memory.stat only where `inactive` is given.
    void v2_group(const std::string& folder, const std::string& max, std::uint64_t current,
                  std::optional<std::uint64_t> inactive = std::nullopt) const {
        write(folder + "/memory.max", max + "\n");
        write(folder + "/memory.current", std::to_string(current) + "\n");
        if (inactive)
            write(folder + "/memory.stat", "anon 4096\ninactive_anon 0\nactive_file 77\ninactive_file " +
                                               std::to_string(*inactive) + "\nfile_dirty 0\n");
    }
    // One v1 group's files.
    void v1_group(const std::string& folder, const std::string& limit, std::uint64_t usage,
                  const std::string& stat = "") const {
        write(folder + "/memory.limit_in_bytes", limit + "\n");
        write(folder + "/memory.usage_in_bytes", std::to_string(usage) + "\n");
        if (!stat.empty()) write(folder + "/memory.stat", stat);
    }
    CgroupMemory memory() const { return cgroup_memory(dir_.path()); }

private:
    ScratchDir dir_;
};

std::string number(std::uint64_t n) { return std::to_string(n); }

}  // namespace

TEST(CgroupMemory, V2AncestorWithLessRoomWins) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/system.slice/job.service\n");
    tree.write("proc/self/mountinfo", kV2Mounts);
    tree.write("sys/fs/cgroup/memory.stat", "inactive_file 0\n");  // the root has no memory.max
    tree.v2_group("sys/fs/cgroup/system.slice", number(4 * kGiB), 3 * kGiB);  // room 1 GiB
    tree.v2_group("sys/fs/cgroup/system.slice/job.service", number(8 * kGiB), kGiB);  // room 7 GiB
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 4 * kGiB);
    EXPECT_EQ(memory.room, kGiB);
}

TEST(CgroupMemory, V2LeafWithLessRoomWins) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/a/b\n");
    tree.write("proc/self/mountinfo", kV2Mounts);
    tree.v2_group("sys/fs/cgroup/a", number(2 * kGiB), kGiB / 2);
    tree.v2_group("sys/fs/cgroup/a/b", number(3 * kGiB), 2 * kGiB);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 2 * kGiB);  // the smallest limit, though the leaf has less room
    EXPECT_EQ(memory.room, kGiB);
}

TEST(CgroupMemory, V2MaxEverywhereIsNoLimit) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/user.slice/session-1.scope\n");
    tree.write("proc/self/mountinfo", kV2Mounts);
    tree.v2_group("sys/fs/cgroup/user.slice", "max", kGiB);
    tree.v2_group("sys/fs/cgroup/user.slice/session-1.scope", "max", kGiB);
    const CgroupMemory memory = tree.memory();
    EXPECT_FALSE(memory.limit);
    EXPECT_FALSE(memory.room);
}

TEST(CgroupMemory, V2InactiveFileIsNotCountedAsUsed) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/job\n");
    tree.write("proc/self/mountinfo", kV2Mounts);
    tree.v2_group("sys/fs/cgroup/job", "1000000", 900000, 300000);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 1000000u);
    EXPECT_EQ(memory.room, 400000u);  // 1000000 - (900000 - 300000)
}

TEST(CgroupMemory, UsageOverTheLimitLeavesNoRoom) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/job\n");
    tree.write("proc/self/mountinfo", kV2Mounts);
    tree.v2_group("sys/fs/cgroup/job", "1000000", 1500000, 100000);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 1000000u);
    EXPECT_EQ(memory.room, 0u);
}

TEST(CgroupMemory, V2WithoutMountinfoLooksInSysFsCgroup) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/job\n");
    tree.v2_group("sys/fs/cgroup/job", "5000", 1000);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 5000u);
    EXPECT_EQ(memory.room, 4000u);
}

TEST(CgroupMemory, V2MountPointFromMountinfo) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "0::/job\n");
    tree.write("proc/self/mountinfo",
               "25 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
               "30 25 0:26 / /mnt/my\\040cgroups rw,nosuid - cgroup2 none rw\n");
    tree.v2_group("mnt/my cgroups/job", "5000", 1000);
    tree.v2_group("sys/fs/cgroup/job", "9000", 0);  // not the mounted hierarchy
    EXPECT_EQ(tree.memory().limit, 5000u);
}

TEST(CgroupMemory, V1MemoryControllerAmongOthers) {
    FakeTree tree;
    tree.write("proc/self/cgroup",
               "12:cpu,cpuacct:/x\n"
               "5:devices:/slurm/job1\n"
               "4:memory:/slurm/job1\n"
               "1:name=systemd:/user.slice\n"
               "0::/\n");
    tree.write("proc/self/mountinfo", kHybridMounts);
    tree.v1_group("sys/fs/cgroup/memory", kV1Unlimited, 50 * kGiB);
    tree.v1_group("sys/fs/cgroup/memory/slurm", kV1Unlimited, 10 * kGiB);
    // total_inactive_file (the group with its children) is taken before inactive_file (its own).
    tree.v1_group("sys/fs/cgroup/memory/slurm/job1", number(2 * kGiB), 3 * kGiB / 2,
                  "cache 100\ninactive_file 1000\ntotal_cache 100\ntotal_inactive_file " + number(kGiB / 2) + "\n");
    tree.v2_group("sys/fs/cgroup/unified", "1000", 0);  // the v2 hierarchy of a hybrid system: not used
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 2 * kGiB);
    EXPECT_EQ(memory.room, kGiB);  // 2 GiB - (1.5 GiB - 0.5 GiB)
}

TEST(CgroupMemory, V1InactiveFileWithoutTotal) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "4:memory:/job\n");
    tree.write("proc/self/mountinfo", kHybridMounts);
    tree.v1_group("sys/fs/cgroup/memory/job", "10000", 8000, "inactive_file 3000\n");
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.room, 5000u);
}

TEST(CgroupMemory, V1HugeLimitIsNoLimit) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "4:memory:/slurm/job1\n");
    tree.write("proc/self/mountinfo", kHybridMounts);
    tree.v1_group("sys/fs/cgroup/memory", kV1Unlimited, kGiB);
    tree.v1_group("sys/fs/cgroup/memory/slurm", kV1Unlimited, kGiB);
    tree.v1_group("sys/fs/cgroup/memory/slurm/job1", kV1Unlimited, kGiB);
    const CgroupMemory memory = tree.memory();
    EXPECT_FALSE(memory.limit);
    EXPECT_FALSE(memory.room);
}

TEST(CgroupMemory, V1WithoutMountinfoLooksInSysFsCgroupMemory) {
    FakeTree tree;
    tree.write("proc/self/cgroup", "3:memory:/job\n");
    tree.v1_group("sys/fs/cgroup/memory/job", "7000", 2000);
    EXPECT_EQ(tree.memory().room, 5000u);
}

TEST(CgroupMemory, V1MountedRootIsStrippedFromThePath) {
    FakeTree tree;  // a container that sees only its own group, mounted at the usual place
    tree.write("proc/self/cgroup", "4:memory:/docker/abc\n");
    tree.write("proc/self/mountinfo", "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup ro,memory\n");
    tree.v1_group("sys/fs/cgroup/memory", number(6 * kGiB), kGiB);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 6 * kGiB);
    EXPECT_EQ(memory.room, 5 * kGiB);
}

TEST(CgroupMemory, NamespaceMountRootIsTheOwnGroup) {
    FakeTree tree;  // in a cgroup namespace: the group is "/", the mount shows where it really is
    tree.write("proc/self/cgroup", "0::/\n");
    tree.write("proc/self/mountinfo",
               "25 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
               "30 25 0:26 /user.slice/job /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
    tree.v2_group("sys/fs/cgroup", number(3 * kGiB), kGiB, 0);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, 3 * kGiB);
    EXPECT_EQ(memory.room, 2 * kGiB);
}

TEST(CgroupMemory, NamespaceSubgroupUnderTheMountRoot) {
    FakeTree tree;  // in a namespace, in a group below its root: the path is relative to the mount
    tree.write("proc/self/cgroup", "0::/worker\n");
    tree.write("proc/self/mountinfo", "30 25 0:26 /user.slice/job /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    tree.v2_group("sys/fs/cgroup", number(3 * kGiB), kGiB);
    tree.v2_group("sys/fs/cgroup/worker", number(kGiB), kGiB / 4);
    const CgroupMemory memory = tree.memory();
    EXPECT_EQ(memory.limit, kGiB);
    EXPECT_EQ(memory.room, 3 * kGiB / 4);
}

TEST(CgroupMemory, GroupOutsideTheNamespaceIsNotSeen) {
    FakeTree tree;  // the mount's root is another group than the process's: its limit is not ours
    tree.write("proc/self/cgroup", "0::/../other\n");
    tree.write("proc/self/mountinfo", "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    tree.v2_group("sys/fs/cgroup", number(kGiB), 0);
    EXPECT_FALSE(tree.memory().limit);
}

TEST(CgroupMemory, MissingFilesGiveNoLimit) {
    FakeTree nothing;  // no /proc/self/cgroup
    EXPECT_FALSE(nothing.memory().limit);
    EXPECT_FALSE(nothing.memory().room);

    FakeTree no_group_files;  // a group named, but none of its files there
    no_group_files.write("proc/self/cgroup", "0::/gone\n");
    no_group_files.write("proc/self/mountinfo", kV2Mounts);
    EXPECT_FALSE(no_group_files.memory().limit);

    FakeTree garbage;  // unreadable lines and numbers
    garbage.write("proc/self/cgroup", "nonsense\n0::/job\n");
    garbage.write("proc/self/mountinfo", "garbage\n30 25 0:26 / /sys/fs/cgroup rw - cgroup2\n");
    garbage.v2_group("sys/fs/cgroup/job", "12abc", 0);
    EXPECT_FALSE(garbage.memory().limit);
}

TEST(CgroupMemory, ThisMachineGivesAConsistentAnswer) {
    const CgroupMemory memory = cgroup_memory();
    EXPECT_EQ(memory.limit.has_value(), memory.room.has_value());
    if (memory.limit) {
        EXPECT_LE(*memory.room, *memory.limit);
    }
}

// A --memory far above the memory available: one notice, and the sort goes on and is right.
TEST(CgroupMemoryNotice, MemoryAboveAvailableIsSaidNotRefused) {
    if (available_memory() == 0) GTEST_SKIP() << "the memory available is unknown here";
    ScratchDir dir;
    std::mt19937_64 random(7);
    std::vector<std::uint64_t> keys(10000);
    for (auto& key : keys) key = random();
    write_keys(dir / "in", keys);
    SortOptions options;
    options.input = dir / "in";
    options.output = dir / "out";
    options.backend = Backend::cpu;
    options.threads = 2;
    options.memory_bytes = std::uint64_t{1} << 50;  // 1 PiB
    std::vector<std::string> notices;
    options.notice = [&notices](const std::string& text) { notices.push_back(text); };
    sort_file(options);
    const auto about_memory = std::count_if(notices.begin(), notices.end(), [](const std::string& text) {
        return text.find("--memory") != std::string::npos && text.find("available") != std::string::npos;
    });
    EXPECT_EQ(about_memory, 1) << (notices.empty() ? "no notice" : notices.front());
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(read_keys<std::uint64_t>(dir / "out"), keys);
}
