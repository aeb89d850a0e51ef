// cgroup_memory: the memory limit of the process's own cgroup (v2 or v1) and of its ancestors, and
// the room left under it, read from /proc/self/cgroup, /proc/self/mountinfo and the cgroup's files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpusort {

// Both are empty when neither the group nor any ancestor has a limit, or when nothing can be read.
struct CgroupMemory {
    std::optional<std::uint64_t> limit;  // the smallest limit of the group and its ancestors
    // The least room of those groups: the limit less what is used, where what is used is the usage
    // less the page cache that can be reclaimed (inactive files); 0 when the usage is over the limit.
    std::optional<std::uint64_t> room;
};

// The memory of the process's cgroup. The files are read under `root` ("/" on a real system; a
// folder holding proc/self/... and sys/fs/cgroup/... in tests), mount points included.
// The group is found from /proc/self/cgroup: the v1 memory controller's line where there is one
// (a hybrid system), else the v2 line "0::/path"; the hierarchy's mount point and mounted root
// from /proc/self/mountinfo, else /sys/fs/cgroup (v2) or /sys/fs/cgroup/memory (v1). Ancestors
// above the mounted root (outside a cgroup namespace) cannot be seen and are not counted.
CgroupMemory cgroup_memory(const std::string& root = "/");

}  // namespace gpusort
