// The log of the fault-injection hook (io/syscalls.hpp, GPUSORT_FAULT_LOG): one line per site
// reached, "OP FILE:LINE HITS FUNCTION", and one per fault injected, "injected OP FILE:LINE HIT KIND
// TARGET". Read by the tests of gpusort-file-faults and gpusort-mpi-faults.
#pragma once

#include "scratch_dir.hpp"

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace gpusort::testing {

struct Site {
    std::string op, location, function;
    std::uint64_t hits = 0;
};

struct Injected {
    std::string op, location, kind, target;
    std::uint64_t hit = 0;
};

struct HookLog {
    std::vector<Site> sites;
    std::vector<Injected> injected;

    // The fault injected at the site "OP FILE:LINE", if any.
    std::optional<Injected> injected_at(const std::string& site) const {
        for (const Injected& f : injected)
            if (f.op + " " + f.location == site) return f;
        return std::nullopt;
    }
};

inline HookLog read_log(const std::string& path) {
    HookLog log;
    std::istringstream lines(read_text(path));
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream in(line);
        std::string first;
        in >> first;
        if (first == "injected") {
            Injected f;
            in >> f.op >> f.location >> f.hit >> f.kind >> std::ws;
            std::getline(in, f.target);
            log.injected.push_back(f);
            continue;
        }
        Site site;
        site.op = first;
        in >> site.location >> site.hits >> std::ws;
        std::getline(in, site.function);
        log.sites.push_back(site);
    }
    return log;
}

}  // namespace gpusort::testing
