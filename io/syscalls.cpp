// sys: each function asks decide() what to do with this call, then makes it (or fails as told).
// Built twice: plain, where decide() is a constant that lets every call through (and the output
// passes corrupt_output untouched), and with GPUSORT_FAULT_INJECTION, where it is the hook
// described in syscalls.hpp (and Corruption alters the output as GPUSORT_FAULT_CORRUPT asks).
#include "io/syscalls.hpp"

#include <cstdio>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef GPUSORT_FAULT_INJECTION
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits.h>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>
#endif

namespace gpusort::io::sys {

namespace {

// What to do with one call: fail with `error` without making it, or make it transferring about
// half of what was asked (`half`), or (both unset) make it as it is.
struct Decision {
    int error = 0;
    bool half = false;
};

#ifndef GPUSORT_FAULT_INJECTION

constexpr Decision decide(const char*, const Where&, int, const char*) { return {}; }

#else

// Transfers about half of what was asked.
constexpr const char* kShort = "short";
// Ends the process at once, by SIGKILL.
constexpr const char* kKill = "SIGKILL";

struct ErrnoName {
    const char* name;
    int value;
};
constexpr ErrnoName kErrnoNames[] = {
    {"eintr", EINTR},   {"EINTR", EINTR},   {"EIO", EIO},       {"ENOSPC", ENOSPC},         {"EFBIG", EFBIG},
    {"ENOMEM", ENOMEM}, {"EDQUOT", EDQUOT}, {"EACCES", EACCES}, {"EPERM", EPERM},           {"EROFS", EROFS},
    {"EMFILE", EMFILE}, {"EEXIST", EEXIST}, {"ENOENT", ENOENT}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EPIPE", EPIPE},
};

[[noreturn]] void bad_setting(const std::string& what) {
    std::fprintf(stderr, "gpusort fault hook: %s\n", what.c_str());
    std::_Exit(3);
}

// "io/file.cpp:75": the caller's file relative to the source tree, and its line.
std::string site_of(const Where& where) {
    std::string file = where.file_name();
    const std::string root = GPUSORT_SOURCE_DIR;
    if (file.compare(0, root.size(), root) == 0) file.erase(0, root.size());
    return file + ":" + std::to_string(where.line());
}

// What a call works on, for the log: the path it names, or where its descriptor leads.
std::string target_of(int fd, const char* path) {
    if (path) return path;
    if (fd < 0) return "(no file)";
    char link[PATH_MAX];
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(proc.c_str(), link, sizeof link - 1);
    if (n < 0) return "(descriptor " + std::to_string(fd) + ")";
    return std::string(link, static_cast<std::size_t>(n));
}

class Hook {
public:
    // The one hook, set up from the environment on the first call; never destroyed, so that a call
    // made while the program ends still finds it.
    static Hook& instance() {
        static Hook* hook = new Hook;
        return *hook;
    }

    Decision on_call(const char* op, const Where& where, int fd, const char* path) {
        if (log_path_.empty() && faults_.empty()) return {};
        const std::string site = site_of(where);
        std::lock_guard lock(mutex_);
        Site& calls = sites_[std::string(op) + " " + site];
        if (calls.hits++ == 0) calls.function = where.function_name();
        for (Fault& fault : faults_) {
            if (op != fault.op || site != fault.site || (fault.hit != kEveryHit && fault.hit != calls.hits)) continue;
            if (fault.kind == kKill) ::kill(::getpid(), SIGKILL);
            if (fault.injected.empty()) {
                fault.injected = "injected " + fault.op + " " + fault.site + " " + std::to_string(calls.hits) + " " +
                                 fault.kind + " " + target_of(fd, path);
            }
            return fault.decision;
        }
        return {};
    }

private:
    static constexpr std::uint64_t kEveryHit = 0;

    struct Fault {
        std::string op, site, kind;
        std::uint64_t hit = kEveryHit;
        Decision decision;
        std::string injected;  // its log line, once injected
    };

    struct Site {
        std::uint64_t hits = 0;
        std::string function;  // the caller
    };

    Hook() {
        if (const char* log = std::getenv("GPUSORT_FAULT_LOG")) log_path_ = log;
        if (const char* spec = std::getenv("GPUSORT_FAULT_INJECT")) {
            std::istringstream faults(spec);
            for (std::string fault; std::getline(faults, fault, ';');) faults_.push_back(parse_fault(fault));
        }
        if (!log_path_.empty()) std::atexit([] { instance().write_log(); });
    }

    // "OP FILE:LINE HIT KIND", HIT from 1 or "*".
    static Fault parse_fault(const std::string& spec) {
        std::istringstream in(spec);
        Fault fault;
        std::string hit, extra;
        if (!(in >> fault.op >> fault.site >> hit >> fault.kind) || in >> extra)
            bad_setting("GPUSORT_FAULT_INJECT: '" + spec + "' is not 'OP FILE:LINE HIT KIND'");
        if (hit != "*") {
            fault.hit = std::strtoull(hit.c_str(), nullptr, 10);
            if (fault.hit == 0 || hit.find_first_not_of("0123456789") != std::string::npos)
                bad_setting("GPUSORT_FAULT_INJECT: the hit '" + hit + "' is not a number from 1 or '*'");
        }
        if (fault.kind == kKill) return fault;
        if (fault.kind == kShort) {
            if (fault.op != "read" && fault.op != "write" && fault.op != "pread" && fault.op != "pwrite")
                bad_setting("GPUSORT_FAULT_INJECT: 'short' applies to read, write, pread and pwrite, not " + fault.op);
            fault.decision.half = true;
            return fault;
        }
        for (const ErrnoName& name : kErrnoNames)
            if (fault.kind == name.name) fault.decision.error = name.value;
        if (fault.decision.error == 0) bad_setting("GPUSORT_FAULT_INJECT: unknown kind '" + fault.kind + "'");
        return fault;
    }

    void write_log() {
        std::lock_guard lock(mutex_);
        std::FILE* out = std::fopen(log_path_.c_str(), "w");
        if (!out) bad_setting("cannot write GPUSORT_FAULT_LOG='" + log_path_ + "': " + std::strerror(errno));
        for (const auto& [site, calls] : sites_)
            std::fprintf(out, "%s %llu %s\n", site.c_str(), static_cast<unsigned long long>(calls.hits),
                         calls.function.c_str());
        for (const Fault& fault : faults_)
            if (!fault.injected.empty()) std::fprintf(out, "%s\n", fault.injected.c_str());
        if (std::fclose(out) != 0) bad_setting("cannot write GPUSORT_FAULT_LOG='" + log_path_ + "'");
    }

    std::string log_path_;
    std::vector<Fault> faults_;
    std::mutex mutex_;
    std::map<std::string, Site> sites_;  // "OP FILE:LINE" -> its calls so far
};

Decision decide(const char* op, const Where& where, int fd, const char* path) {
    return Hook::instance().on_call(op, where, fd, path);
}

// GPUSORT_FAULT_CORRUPT: the output's records pass through pass() in order, each as it is or
// altered; the record `target_` and the next one are where the fault lies.
class Corruption {
public:
    // The one corruption, set up from the environment at the first use; never destroyed.
    static Corruption& instance() {
        static Corruption* corruption = new Corruption;
        return *corruption;
    }

    bool active() const { return kind_ != Kind::none; }

    // Bytes [offset, offset + size) of the output as they reach it: `bytes` themselves unless they
    // touch the two records, else the records written in their place (in out_).
    std::span<const std::byte> pass(std::span<const std::byte> bytes, std::uint64_t offset) {
        const std::uint64_t begin = target_ * record_, end = begin + 2 * record_;
        if (!active() || offset >= end || offset + bytes.size() <= begin) return bytes;
        if (offset % record_ != 0 || bytes.size() % record_ != 0)
            bad_setting("GPUSORT_FAULT_CORRUPT: the output came in parts of records of " + std::to_string(record_) + " bytes");
        out_.clear();
        for (std::size_t at = 0; at < bytes.size(); at += record_) emit((offset + at) / record_, bytes.subspan(at, record_));
        return out_;
    }

    // The finished file `fd` of `size` bytes: its records from the target on pass through pass() and
    // are written back where they now belong (after a drop the rest moves down a record).
    std::uint64_t rewrite(int fd, std::uint64_t size) {
        if (!active()) return size;
        if ((target_ + 2) * record_ > size)
            bad_setting("GPUSORT_FAULT_CORRUPT: the output holds no record " + std::to_string(target_ + 1));
        const std::uint64_t stop = kind_ == Kind::drop ? size : (target_ + 2) * record_;
        const std::size_t piece = std::max<std::size_t>(2 * record_, (std::size_t{1} << 20) / record_ * record_);
        std::vector<std::byte> bytes;
        std::uint64_t read_at = target_ * record_, write_at = read_at;
        while (read_at < stop) {
            bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(piece, stop - read_at)));
            transfer_all(bytes.size(), [&](std::size_t done) {
                return ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(read_at + done));
            });
            const std::span<const std::byte> out = pass(bytes, read_at);
            transfer_all(out.size(), [&](std::size_t done) {
                return ::pwrite(fd, out.data() + done, out.size() - done, static_cast<off_t>(write_at + done));
            });
            read_at += bytes.size();
            write_at += out.size();
        }
        const std::uint64_t left = size - (read_at - write_at);
        if (left < size && ::ftruncate(fd, static_cast<off_t>(left)) != 0) failed("truncating");
        return left;
    }

private:
    enum class Kind { none, flip, drop, duplicate, swap };

    Corruption() {
        const char* spec = std::getenv("GPUSORT_FAULT_CORRUPT");
        if (!spec) return;
        std::istringstream in(spec);
        std::string kind, extra;
        const std::map<std::string, Kind> kinds = {
            {"flip", Kind::flip}, {"drop", Kind::drop}, {"duplicate", Kind::duplicate}, {"swap", Kind::swap}};
        if (!(in >> kind >> record_ >> target_) || in >> extra || !kinds.count(kind) || record_ == 0)
            bad_setting(std::string("GPUSORT_FAULT_CORRUPT: '") + spec +
                        "' is not 'flip|drop|duplicate|swap RECORD_BYTES RECORD'");
        kind_ = kinds.at(kind);
    }

    // Record `index` of the output, written as the fault has it.
    void emit(std::uint64_t index, std::span<const std::byte> record) {
        if (index == target_) {
            held_.assign(record.begin(), record.end());
            if (kind_ == Kind::flip) held_.front() ^= std::byte{0x80};
            if (kind_ == Kind::flip || kind_ == Kind::duplicate) append(held_);
            return;  // dropped, or held back to follow the next one (swap)
        }
        const bool next = index == target_ + 1;
        append(next && kind_ == Kind::duplicate ? std::span<const std::byte>(held_) : record);
        if (next && kind_ == Kind::swap) append(held_);
    }

    void append(std::span<const std::byte> record) { out_.insert(out_.end(), record.begin(), record.end()); }

    // Calls `step(done)`, a pread or pwrite of what is left from byte `done` on, until `size` bytes
    // are done.
    template <class Step>
    static void transfer_all(std::size_t size, Step step) {
        for (std::size_t done = 0; done < size;) {
            const ssize_t n = step(done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) failed("rewriting");
            done += static_cast<std::size_t>(n);
        }
    }

    [[noreturn]] static void failed(const char* what) {
        bad_setting(std::string("GPUSORT_FAULT_CORRUPT: ") + what + " the output failed: " + std::strerror(errno));
    }

    Kind kind_ = Kind::none;
    std::size_t record_ = 0;
    std::uint64_t target_ = 0;
    std::vector<std::byte> held_;  // the target record, altered or held back
    std::vector<std::byte> out_;   // what pass() returned last
};

#endif

int fail(int error) {
    errno = error;
    return -1;
}

std::size_t half(std::size_t size) { return size > 1 ? size / 2 : size; }

}  // namespace

int open(const char* path, int flags, mode_t mode, Where where) {
    const Decision d = decide("open", where, -1, path);
    return d.error ? fail(d.error) : ::open(path, flags, mode);
}

int close(int fd, Where where) {
    const Decision d = decide("close", where, fd, nullptr);
    return d.error ? fail(d.error) : ::close(fd);
}

ssize_t read(int fd, void* data, std::size_t size, Where where) {
    const Decision d = decide("read", where, fd, nullptr);
    return d.error ? fail(d.error) : ::read(fd, data, d.half ? half(size) : size);
}

ssize_t write(int fd, const void* data, std::size_t size, Where where) {
    const Decision d = decide("write", where, fd, nullptr);
    return d.error ? fail(d.error) : ::write(fd, data, d.half ? half(size) : size);
}

ssize_t pread(int fd, void* data, std::size_t size, off_t offset, Where where) {
    const Decision d = decide("pread", where, fd, nullptr);
    return d.error ? fail(d.error) : ::pread(fd, data, d.half ? half(size) : size, offset);
}

ssize_t pwrite(int fd, const void* data, std::size_t size, off_t offset, Where where) {
    const Decision d = decide("pwrite", where, fd, nullptr);
    return d.error ? fail(d.error) : ::pwrite(fd, data, d.half ? half(size) : size, offset);
}

int fallocate(int fd, int mode, off_t offset, off_t length, Where where) {
    const Decision d = decide("fallocate", where, fd, nullptr);
    return d.error ? fail(d.error) : ::fallocate(fd, mode, offset, length);
}

int ftruncate(int fd, off_t length, Where where) {
    const Decision d = decide("ftruncate", where, fd, nullptr);
    return d.error ? fail(d.error) : ::ftruncate(fd, length);
}

int fdatasync(int fd, Where where) {
    const Decision d = decide("fdatasync", where, fd, nullptr);
    return d.error ? fail(d.error) : ::fdatasync(fd);
}

int fsync(int fd, Where where) {
    const Decision d = decide("fsync", where, fd, nullptr);
    return d.error ? fail(d.error) : ::fsync(fd);
}

void* mmap(void* address, std::size_t length, int protection, int flags, int fd, off_t offset, Where where) {
    const Decision d = decide("mmap", where, fd, nullptr);
    if (d.error) {
        errno = d.error;
        return MAP_FAILED;
    }
    return ::mmap(address, length, protection, flags, fd, offset);
}

off_t lseek(int fd, off_t offset, int whence, Where where) {
    const Decision d = decide("lseek", where, fd, nullptr);
    return d.error ? fail(d.error) : ::lseek(fd, offset, whence);
}

int fchmod(int fd, mode_t mode, Where where) {
    const Decision d = decide("fchmod", where, fd, nullptr);
    return d.error ? fail(d.error) : ::fchmod(fd, mode);
}

int linkat(int old_folder, const char* old_path, int new_folder, const char* new_path, int flags, Where where) {
    const Decision d = decide("linkat", where, -1, new_path);
    return d.error ? fail(d.error) : ::linkat(old_folder, old_path, new_folder, new_path, flags);
}

int rename(const char* old_path, const char* new_path, Where where) {
    const Decision d = decide("rename", where, -1, new_path);
    return d.error ? fail(d.error) : ::rename(old_path, new_path);
}

int mkostemp(char* name_template, int flags, Where where) {
    const Decision d = decide("mkostemp", where, -1, name_template);
    return d.error ? fail(d.error) : ::mkostemp(name_template, flags);
}

#ifndef GPUSORT_FAULT_INJECTION

std::span<const std::byte> corrupt_output(std::span<const std::byte> bytes, std::uint64_t) { return bytes; }

std::uint64_t corrupt_output_file(int, std::uint64_t size) { return size; }

#else

std::span<const std::byte> corrupt_output(std::span<const std::byte> bytes, std::uint64_t offset) {
    return Corruption::instance().pass(bytes, offset);
}

std::uint64_t corrupt_output_file(int fd, std::uint64_t size) { return Corruption::instance().rewrite(fd, size); }

#endif

}  // namespace gpusort::io::sys
