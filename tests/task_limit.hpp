// A limit on tasks (RLIMIT_NPROC) for a child process, so that it may start exactly `more` threads
// besides itself. As root the child becomes a user that no process of this machine runs as, whose
// tasks it can count alone, and the limit is set to fit; otherwise the limit is set to 0, which
// lets this user start no thread at all (so `more` must be 0). Call in the child only: a step
// that fails ends it with status 120 to 124.
#pragma once

#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <grp.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace gpusort::testing {

// Whether a child can be limited to a number of threads other than 0.
inline bool tasks_can_be_counted() { return ::geteuid() == 0; }

// Threads (tasks) whose real user is `user`, from /proc.
inline int tasks_of(uid_t user) {
    int count = 0;
    DIR* proc = ::opendir("/proc");
    if (!proc) return -1;
    while (dirent* process = ::readdir(proc)) {
        if (process->d_name[0] < '0' || process->d_name[0] > '9') continue;
        const std::string tasks = std::string("/proc/") + process->d_name + "/task";
        DIR* folder = ::opendir(tasks.c_str());
        if (!folder) continue;
        while (dirent* task = ::readdir(folder)) {
            if (task->d_name[0] == '.') continue;
            std::ifstream status(tasks + "/" + task->d_name + "/status");
            for (std::string line; std::getline(status, line);) {
                unsigned real = 0;
                if (std::sscanf(line.c_str(), "Uid: %u", &real) == 1) {
                    count += real == user;
                    break;
                }
            }
        }
        ::closedir(folder);
    }
    ::closedir(proc);
    return count;
}

inline void limit_threads_in_child(int more) {
    constexpr uid_t kLoneUser = 47231;
    rlim_t limit = 0;
    if (tasks_can_be_counted()) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(kLoneUser) != 0 || ::setuid(kLoneUser) != 0) ::_exit(120);
        const int tasks = tasks_of(kLoneUser);  // this child, at least
        if (tasks < 1) ::_exit(121);
        limit = static_cast<rlim_t>(tasks + more);
    } else if (more != 0) {
        ::_exit(122);
    }
    const rlimit tasks_limit{limit, limit};
    if (::setrlimit(RLIMIT_NPROC, &tasks_limit) != 0) ::_exit(123);
}

}  // namespace gpusort::testing
