// cgroup_memory: the memory limit of the process's cgroup and of its ancestors, and the room left
// under it; every file is read under a root folder so that tests can give a fake tree.
#include "src/plan/cgroup_memory.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpusort {

namespace {

namespace fs = std::filesystem;

// A limit this large is no limit: v1 gives "unlimited" as LONG_MAX rounded down to a page.
constexpr std::uint64_t kNoLimit = std::uint64_t{1} << 62;

// The files of one version of the memory controller, in each group's folder.
struct Controller {
    bool v1;
    const char* limit;
    const char* usage;
    std::vector<std::string> inactive_keys;  // memory.stat's reclaimable page cache: the first key found
    const char* default_mount;               // where the hierarchy usually is
};
const Controller kV2{false, "memory.max", "memory.current", {"inactive_file"}, "/sys/fs/cgroup"};
const Controller kV1{true, "memory.limit_in_bytes", "memory.usage_in_bytes", {"total_inactive_file", "inactive_file"},
                     "/sys/fs/cgroup/memory"};

// The process's group in the hierarchy that holds the memory controller.
struct OwnGroup {
    const Controller* controller;
    std::string path;  // as /proc/self/cgroup gives it: "/slurm/job1"
};

// A mount of that hierarchy, from /proc/self/mountinfo.
struct Mount {
    std::string root;   // the part of the hierarchy mounted there: "/" or "/user.slice/job"
    std::string point;  // "/sys/fs/cgroup"
};

// `absolute` (a path of the system) under `root`.
fs::path under_root(const std::string& root, const std::string& absolute) {
    return fs::path(root) / fs::path(absolute).relative_path();
}

// The number that a file starts with; none where it is missing, "max" or not a number.
std::optional<std::uint64_t> read_number(const fs::path& file) {
    std::ifstream in(file);
    std::string text;
    std::uint64_t value = 0;
    if (!(in >> text)) return std::nullopt;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// The value of the first of `keys` that memory.stat (lines "key value") has.
std::optional<std::uint64_t> stat_value(const fs::path& file, const std::vector<std::string>& keys) {
    std::ifstream in(file);
    std::vector<std::optional<std::uint64_t>> values(keys.size());
    std::string key;
    std::uint64_t value = 0;
    while (in >> key >> value)
        for (std::size_t i = 0; i < keys.size(); ++i)
            if (key == keys[i]) values[i] = value;
    for (const auto& found : values)
        if (found) return found;
    return std::nullopt;
}

// True when `list` (comma-separated) holds `item`.
bool list_has(const std::string& list, const std::string& item) {
    std::istringstream in(list);
    for (std::string part; std::getline(in, part, ',');)
        if (part == item) return true;
    return false;
}

// From /proc/self/cgroup ("id:controllers:path" a line): the v1 line of the memory controller where
// there is one (on a hybrid system the v2 hierarchy has no memory controller), else the v2 line.
std::optional<OwnGroup> own_group(const std::string& root) {
    std::ifstream in(under_root(root, "/proc/self/cgroup"));
    std::optional<OwnGroup> v2;
    for (std::string line; std::getline(in, line);) {
        const std::size_t first = line.find(':');
        const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const std::string id = line.substr(0, first);
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (list_has(controllers, "memory")) return OwnGroup{&kV1, path};
        if (id == "0" && controllers.empty()) v2 = OwnGroup{&kV2, path};
    }
    return v2;
}

bool octal_digit(char c) { return c >= '0' && c <= '7'; }

// A mountinfo field with its octal escapes ("\040" for a space) undone.
std::string unescape(const std::string& field) {
    std::string text;
    std::size_t i = 0;
    while (i < field.size()) {
        const bool escape = field[i] == '\\' && i + 3 < field.size() && octal_digit(field[i + 1]) &&
                            octal_digit(field[i + 2]) && octal_digit(field[i + 3]);
        if (!escape) {
            text += field[i++];
            continue;
        }
        text += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
        i += 4;
    }
    return text;
}

// The mounts of the hierarchy of `controller` in /proc/self/mountinfo, whose lines are
// "id parent device root point options [optional fields...] - type source super-options".
std::vector<Mount> mounts_of(const std::string& root, const Controller& controller) {
    std::ifstream in(under_root(root, "/proc/self/mountinfo"));
    std::vector<Mount> mounts;
    for (std::string line; std::getline(in, line);) {
        const std::size_t dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        std::istringstream before(line.substr(0, dash)), after(line.substr(dash + 3));
        std::string id, parent, device, mounted_root, point, type, source, options;
        if (!(before >> id >> parent >> device >> mounted_root >> point) || !(after >> type >> source >> options))
            continue;
        const bool wanted = controller.v1 ? type == "cgroup" && list_has(options, "memory") : type == "cgroup2";
        if (wanted) mounts.push_back({unescape(mounted_root), unescape(point)});
    }
    return mounts;
}

// True when `path` is `prefix` or lies under it.
bool path_under(const std::string& path, const std::string& prefix) {
    if (prefix == "/" || path == prefix) return true;
    return path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 && path[prefix.size()] == '/';
}

// Where the group's hierarchy is mounted: a mount that holds the group where there is one, else
// the first (in a cgroup namespace the group is "/" and the mount's root may be any group), else
// the usual place.
Mount mount_of(const std::string& root, const OwnGroup& group) {
    const std::vector<Mount> mounts = mounts_of(root, *group.controller);
    for (const Mount& mount : mounts)
        if (path_under(group.path, mount.root)) return mount;
    if (!mounts.empty()) return mounts.front();
    return {"/", group.controller->default_mount};
}

// One group's limit and room; none where it has no limit. A usage that cannot be read counts as 0.
std::optional<CgroupMemory> level_of(const fs::path& folder, const Controller& controller) {
    const std::optional<std::uint64_t> limit = read_number(folder / controller.limit);
    if (!limit || *limit >= kNoLimit) return std::nullopt;
    const std::uint64_t usage = read_number(folder / controller.usage).value_or(0);
    const std::uint64_t inactive = stat_value(folder / "memory.stat", controller.inactive_keys).value_or(0);
    const std::uint64_t used = usage > inactive ? usage - inactive : 0;
    return CgroupMemory{limit, *limit > used ? *limit - used : 0};
}

// The folders of the group and of its ancestors up to the mount point, the mount point first;
// none where the group lies outside the part of the hierarchy mounted (a path with "..").
std::vector<fs::path> group_folders(const std::string& root, const OwnGroup& group) {
    const Mount mount = mount_of(root, group);
    std::string path = group.path;
    if (path_under(path, mount.root) && mount.root != "/") path = path.substr(mount.root.size());
    std::vector<fs::path> folders{under_root(root, mount.point)};
    for (const fs::path& part : fs::path(path).relative_path()) {
        if (part == "..") return {};  // a group outside the mounted part: none of its folders is seen
        if (part.empty() || part == ".") continue;
        folders.push_back(folders.back() / part);
    }
    return folders;
}

}  // namespace

CgroupMemory cgroup_memory(const std::string& root) {
    const std::optional<OwnGroup> group = own_group(root);
    if (!group) return {};
    CgroupMemory memory;
    for (const fs::path& folder : group_folders(root, *group)) {
        const std::optional<CgroupMemory> level = level_of(folder, *group->controller);
        if (!level) continue;
        memory.limit = std::min(memory.limit.value_or(*level->limit), *level->limit);
        memory.room = std::min(memory.room.value_or(*level->room), *level->room);
    }
    return memory;
}

}  // namespace gpusort
