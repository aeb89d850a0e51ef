// The fault-injection sweep. gpusort-file-faults (gpusort-file with the system-call hook of
// io/syscalls.hpp) sorts 300,000 u64 keys on the CPU with a 1 MiB budget and 4 merge tasks, so that
// it forms several runs and merges them in more than one pass, in these scenarios: file to file with
// --sync, the same where the file system has no O_TMPFILE (played by the hook), stdin to stdout
// through pipes, a .gz input to a .zst output with --verify, in place, file to file with the runs
// spilled with direct I/O, and file to file with INPUT read and OUTPUT written with direct I/O, in
// one chunk (under a budget that holds it) and with the runs spilled with direct I/O too; and keys
// with two value files and an index (columns: four outputs committed together, one of them there
// before), file to file.
// For each scenario a clean run logs every system-call site it reaches; then, for every site and
// every fault that fits its call, one run makes that call fail once (at its first hit, its second,
// its middle one and its last). An interrupted call or a short transfer must not matter: the sort succeeds with
// the right bytes. Any other fault must end the sort by the failure contract: status 1, one line
// "gpusort-file: " naming the file the failed call worked on and the cause, no new OUTPUT, an existing
// OUTPUT as it was, the input as it was, and no file left in any folder involved. With columns, on
// success every output right; on a failure none of the new outputs (none without the others), the
// existing one as it was, every input as it was.
#include "tests/cli_run.hpp"
#include "tests/fault_hook_log.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/faults/zstd_bytes.hpp"
#include "tests/wait_bounds.hpp"

#include <gtest/gtest.h>

#include <boost/iostreams/copy.hpp>
#include <boost/iostreams/device/array.hpp>
#include <boost/iostreams/device/back_inserter.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

using namespace gpusort::testing;
namespace bio = boost::iostreams;
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// What to inject.

struct ErrorName {
    const char* name;
    int value;
};
constexpr ErrorName kErrors[] = {{"EINTR", EINTR},   {"EIO", EIO},       {"ENOSPC", ENOSPC},
                                 {"EFBIG", EFBIG},   {"ENOMEM", ENOMEM}, {"EOPNOTSUPP", EOPNOTSUPP}};

int error_value(const std::string& kind) {
    for (const ErrorName& error : kErrors)
        if (kind == error.name) return error.value;
    return 0;
}

// The faults that fit each call. "short" and EINTR must not matter; EOPNOTSUPP from open and
// fallocate is how a file system says it has no O_TMPFILE or cannot reserve space, which the
// program works around where it can (a named temp file, pwrite instead of the map); every other
// errno must end the sort.
const std::map<std::string, std::vector<std::string>> kFaults = {
    {"read", {"short", "EINTR", "EIO"}},
    {"pread", {"short", "EINTR", "EIO"}},
    {"write", {"short", "EINTR", "ENOSPC", "EIO", "EFBIG"}},
    {"pwrite", {"short", "EINTR", "ENOSPC", "EIO", "EFBIG"}},
    {"open", {"EINTR", "EIO", "EOPNOTSUPP"}},
    {"fallocate", {"EINTR", "ENOSPC", "EOPNOTSUPP"}},
    {"ftruncate", {"EINTR", "EIO"}},
    {"fdatasync", {"EIO"}},
    {"fsync", {"EIO"}},
    {"mmap", {"ENOMEM"}},
    {"lseek", {"EIO"}},
    {"fchmod", {"EIO"}},
    {"linkat", {"EIO"}},
    {"rename", {"EIO"}},
    {"mkostemp", {"EIO"}},
    {"close", {"EIO"}},
};

bool must_not_matter(const std::string& kind) { return kind == "short" || kind == "EINTR"; }
bool may_be_worked_around(const std::string& kind) { return kind == "EOPNOTSUPP"; }

// Calls whose failure the program survives by design, by the function that makes them and the call:
// a destructor cannot report (the output is closed and checked before it is renamed into place), and
// the flush of the output's folder comes after the rename, which it cannot undo.
struct Survivable {
    const char* function;
    const char* op;
};
constexpr Survivable kSurvivable[] = {
    {"::~File()", "close"}, {"File::operator=", "close"},
    {"flush_folder", "open"}, {"flush_folder", "fsync"}, {"flush_folder", "close"},
};

bool survivable(const std::string& function, const std::string& op) {
    for (const Survivable& s : kSurvivable)
        if (op == s.op && function.find(s.function) != std::string::npos) return true;
    return false;
}

// ---------------------------------------------------------------------------------------------
// The data: random keys, their sorted bytes computed here, and the compressed forms.

constexpr std::size_t kKeys = 300000;

std::string as_bytes(const std::vector<std::uint64_t>& keys) {
    return std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(std::uint64_t));
}

std::string gzip_bytes(const std::string& plain) {
    std::string packed;
    {
        bio::filtering_ostream out;
        out.push(bio::gzip_compressor());
        out.push(bio::back_inserter(packed));
        out.write(plain.data(), static_cast<std::streamsize>(plain.size()));
    }
    return packed;
}

struct Data {
    std::string input;   // the keys as they come
    std::string sorted;  // the same keys in order
    std::string input_gz;
    // The columns scenario: value files of 4 and 3 bytes a record, and what its outputs hold: the
    // values in the keys' stable order, and that order as record numbers (u32).
    std::string values4, values3;
    std::string sorted_values4, sorted_values3, index;
};

// The records of `column` (`width` bytes each) in the order of `order`.
std::string gathered(const std::string& column, std::size_t width, const std::vector<std::uint32_t>& order) {
    std::string out;
    out.reserve(order.size() * width);
    for (const std::uint32_t i : order) out.append(column, std::size_t{i} * width, width);
    return out;
}

// Value columns of the keys, and their outputs by the keys' stable order.
void add_columns(const std::vector<std::uint64_t>& keys, Data& made) {
    std::mt19937_64 random(20261128);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::uint64_t bits = random();
        made.values4.append(reinterpret_cast<const char*>(&bits), 4);
        made.values3.append(reinterpret_cast<const char*>(&bits) + 4, 3);
    }
    std::vector<std::uint32_t> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
    made.sorted_values4 = gathered(made.values4, 4, order);
    made.sorted_values3 = gathered(made.values3, 3, order);
    made.index.assign(reinterpret_cast<const char*>(order.data()), order.size() * 4);
}

const Data& data() {
    static const Data d = [] {
        std::mt19937_64 random(20240611);
        std::vector<std::uint64_t> keys(kKeys);
        for (auto& key : keys) key = random() >> (random() % 40);  // many magnitudes, some equal keys
        Data made;
        made.input = as_bytes(keys);
        add_columns(keys, made);
        std::sort(keys.begin(), keys.end());
        made.sorted = as_bytes(keys);
        made.input_gz = gzip_bytes(made.input);
        return made;
    }();
    return d;
}

// ---------------------------------------------------------------------------------------------
// Scenarios and one run of each.

enum class Scenario { file_to_file, no_tmpfile, streams, compressed, in_place, direct_spill, direct_files, direct_all, columns };

const char* name_of(Scenario scenario) {
    switch (scenario) {
    case Scenario::file_to_file: return "file to file";
    case Scenario::no_tmpfile: return "file to file without O_TMPFILE";
    case Scenario::streams: return "stdin to stdout";
    case Scenario::compressed: return "gz to zst";
    case Scenario::in_place: return "in place";
    case Scenario::direct_spill: return "file to file, runs spilled with direct I/O";
    case Scenario::direct_files: return "file to file in one chunk, INPUT and OUTPUT with direct I/O";
    case Scenario::direct_all: return "file to file, INPUT, OUTPUT and spilled runs with direct I/O";
    case Scenario::columns: return "keys with two value files and an index, file to file, several runs and merge passes";
    }
    return "";
}

// Which files a scenario reads or writes with direct I/O.
bool input_direct(Scenario scenario) { return scenario == Scenario::direct_files || scenario == Scenario::direct_all; }
bool output_direct(Scenario scenario) { return input_direct(scenario); }
bool spill_direct(Scenario scenario) { return scenario == Scenario::direct_spill || scenario == Scenario::direct_all; }
bool any_direct(Scenario scenario) { return input_direct(scenario) || spill_direct(scenario); }
// Whether the sort forms runs and merges them (else it sorts one chunk).
bool forms_runs(Scenario scenario) { return scenario != Scenario::direct_files; }

// The calls a scenario must reach, so that a change of the program cannot silently empty its sweep.
std::set<std::string> required_ops(Scenario scenario) {
    switch (scenario) {
    case Scenario::file_to_file:  // a new OUTPUT: linked into place, not renamed
        return {"open", "pread", "pwrite", "fallocate", "mmap", "fdatasync", "fchmod", "linkat", "close", "fsync"};
    case Scenario::no_tmpfile:
        return {"mkostemp", "pread", "pwrite", "fallocate", "mmap", "fdatasync", "fchmod", "rename"};
    case Scenario::streams: return {"read", "write", "open", "pread", "pwrite", "fallocate"};
    case Scenario::compressed:
        return {"open", "read", "write", "lseek", "pread", "pwrite", "fallocate", "fchmod", "linkat", "rename"};
    case Scenario::in_place:
        return {"open", "pread", "pwrite", "fallocate", "mmap", "fdatasync", "linkat", "rename", "fsync"};
    case Scenario::direct_spill: return {"open", "pread", "pwrite", "fallocate", "mmap", "linkat", "close"};
    case Scenario::direct_files:
    case Scenario::direct_all: return {"open", "pread", "pwrite", "fallocate", "fchmod", "linkat", "close"};
    case Scenario::columns:  // three new outputs linked into place, one that was there renamed over it
        return {"open", "pread", "pwrite", "fallocate", "mmap", "fchmod", "linkat", "rename", "close"};
    }
    return {};
}

std::set<std::string> entries_of(const std::string& folder) {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename());
    return names;
}

// The folders and files of one run, made afresh: DIR/in holds the input, DIR/out the output (an
// existing one for the compressed scenario), DIR/tmp is the --tmp-dir.
class Workspace {
public:
    explicit Workspace(Scenario scenario) : scenario_(scenario) {
        in_ = fs::canonical(dir_.path()).string() + "/in";
        out_ = scenario == Scenario::in_place ? in_ : fs::canonical(dir_.path()).string() + "/out";
        tmp_ = fs::canonical(dir_.path()).string() + "/tmp";
        for (const std::string& folder : {in_, out_, tmp_}) fs::create_directories(folder);
        switch (scenario) {
        case Scenario::file_to_file:
        case Scenario::no_tmpfile:
        case Scenario::direct_spill:
        case Scenario::direct_files:
        case Scenario::direct_all:
            input_ = in_ + "/keys.bin";
            output_ = out_ + "/sorted.bin";
            break;
        case Scenario::streams: break;
        case Scenario::compressed:
            input_ = in_ + "/keys.bin.gz";
            output_ = out_ + "/sorted.bin.zst";
            write_text(output_, "the OUTPUT that was there before\n");
            break;
        case Scenario::in_place:
            input_ = in_ + "/keys.bin";
            output_ = input_;
            break;
        case Scenario::columns:
            input_ = in_ + "/keys.bin";
            output_ = out_ + "/sorted.bin";
            columns_ = {{in_ + "/values4.bin", out_ + "/values4.sorted", &data().values4, &data().sorted_values4},
                        {in_ + "/values3.bin", out_ + "/values3.sorted", &data().values3, &data().sorted_values3}};
            index_ = out_ + "/index.bin";
            for (const Column& column : columns_) write_text(column.input, *column.values);
            write_text(columns_[1].output, "the column OUTPUT that was there before\n");
            column_output_before_ = read_text(columns_[1].output);
            break;
        }
        if (!input_.empty()) write_text(input_, scenario == Scenario::compressed ? data().input_gz : data().input);
        for (const std::string& folder : {in_, out_, tmp_}) before_[folder] = entries_of(folder);
        if (!output_.empty() && fs::exists(output_)) output_before_ = read_text(output_);
        if (!input_.empty()) input_before_ = read_text(input_);
    }

    std::vector<std::string> args() const {
        // One chunk: a budget that holds the 2.4 MB of keys.
        const char* memory = forms_runs(scenario_) ? "1M" : "64M";
        std::vector<std::string> args = {"--backend", "cpu", "--memory", memory, "--threads", "4", "--stats", "-",
                                         "--tmp-dir", tmp_};
        if (scenario_ == Scenario::file_to_file || scenario_ == Scenario::no_tmpfile) args.push_back("--sync");
        if (scenario_ == Scenario::compressed) args.push_back("--verify");
        if (spill_direct(scenario_)) {
            args.push_back("--spill-io");
            args.push_back("direct");
        }
        if (input_direct(scenario_)) args.insert(args.end(), {"--input-io", "direct"});
        if (output_direct(scenario_)) args.insert(args.end(), {"--output-io", "direct"});
        args.push_back(input_.empty() ? "-" : input_);
        args.push_back(output_.empty() ? "-" : output_);
        for (const Column& column : columns_) args.insert(args.end(), {"--values", column.input + ":" + column.output});
        if (!index_.empty()) args.insert(args.end(), {"--index-out", index_});
        return args;
    }

    // A file an error line may name: what it is in the sort, and the name the line gives it.
    struct Named {
        std::string role;  // "INPUT", "OUTPUT", "tmp"
        std::string name;
    };

    // The names an error line may give for a failed call on `target` (a path, or where a descriptor
    // led, as the hook saw it), one of which it must give; none for anonymous memory. A file opened
    // again for direct I/O through its descriptor (/proc/self/fd/N) is any file the scenario does
    // direct I/O on.
    std::vector<Named> names_for(const Injected& fault) const {
        const std::string& target = fault.target;
        if (target == "(no file)") return {};
        if (target.rfind("pipe:", 0) == 0) return {{"stream", fault.op == "read" ? "standard input" : "standard output"}};
        std::string path = target;
        const std::string deleted = " (deleted)";
        if (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
            path.erase(path.size() - deleted.size());
        const std::string folder = fs::path(path).parent_path().string();
        if (path.rfind("/proc/self/fd/", 0) == 0) {
            std::vector<Named> names;
            if (input_direct(scenario_)) names.push_back({"INPUT", input_});
            if (output_direct(scenario_)) names.push_back({"OUTPUT", output_});
            if (spill_direct(scenario_)) names.push_back({"tmp", tmp_});
            return names;
        }
        if (!input_.empty() && path == input_) return {{"INPUT", input_}};
        for (const Column& column : columns_)
            if (path == column.input) return {{"INPUT", column.input}};
        if (path == tmp_ || folder == tmp_) return {{"tmp", tmp_}};
        if (path == out_ || folder == out_) return output_names();
        return {{"?", "(unexpected target " + target + ")"}};
    }

    // Every output: OUTPUT, and with columns each column's output and the index (a nameless file in
    // their folder may be any of them).
    std::vector<Named> output_names() const {
        std::vector<Named> names = {{"OUTPUT", output_}};
        for (const Column& column : columns_) names.push_back({"OUTPUT", column.output});
        if (!index_.empty()) names.push_back({"OUTPUT", index_});
        return names;
    }

    // A successful run: the sorted keys at OUTPUT (or on stdout), nothing else left anywhere.
    void expect_sorted(const Result& r) const {
        EXPECT_TRUE(r.exited() && r.exit_code() == 0) << r.how_it_ended() << "; stderr: " << r.err;
        EXPECT_EQ(r.err.rfind("{", 0), 0u) << "stderr holds more than the stats: " << r.err;
        EXPECT_EQ(r.err.find("gpusort-file:"), std::string::npos) << r.err;
        std::string result;
        if (scenario_ == Scenario::streams) {
            result = r.out;
        } else if (scenario_ == Scenario::compressed) {
            result = zstd_unpacked(read_text(output_)).value_or("(not zstd data)");
        } else {
            result = read_text(output_);
        }
        EXPECT_TRUE(result == data().sorted) << "the output is not the sorted input (" << result.size() << " bytes)";
        if (scenario_ != Scenario::in_place && !input_.empty()) {
            EXPECT_TRUE(read_text(input_) == input_before_) << "the input changed";
        }
        expect_columns_sorted();
        for (const auto& [folder, names] : before_) {
            std::set<std::string> expected = names;
            if (folder == out_)
                for (const Named& output : output_names())
                    if (!output.name.empty()) expected.insert(fs::path(output.name).filename());
            EXPECT_EQ(entries_of(folder), expected) << "entries of " << folder;
        }
    }

    // With columns: each column's output and the index by the keys' stable order, the value files
    // as they were.
    void expect_columns_sorted() const {
        for (const Column& column : columns_) {
            EXPECT_TRUE(read_text(column.output) == *column.sorted) << column.output << " is not its values sorted";
            EXPECT_TRUE(read_text(column.input) == *column.values) << "the value file " << column.input << " changed";
        }
        if (!index_.empty()) {
            EXPECT_TRUE(read_text(index_) == data().index) << "the index is not the keys' stable order";
        }
    }

    // A failed run: everything as it was.
    void expect_as_it_was() const {
        for (const auto& [folder, names] : before_) EXPECT_EQ(entries_of(folder), names) << "entries of " << folder;
        if (!output_.empty()) {
            if (output_before_)
                EXPECT_TRUE(read_text(output_) == *output_before_) << "the existing OUTPUT changed";
            else
                EXPECT_FALSE(fs::exists(fs::symlink_status(output_))) << "a new OUTPUT: " << output_;
        }
        if (!input_.empty()) {
            EXPECT_TRUE(read_text(input_) == input_before_) << "the input changed";
        }
        expect_columns_as_they_were();
    }

    // With columns: no new column output or index (none without the others), the one there before
    // as it was, the value files as they were.
    void expect_columns_as_they_were() const {
        for (std::size_t i = 0; i < columns_.size(); ++i) {
            const Column& column = columns_[i];
            if (i == 1)
                EXPECT_TRUE(read_text(column.output) == column_output_before_) << "the existing column OUTPUT changed";
            else
                EXPECT_FALSE(fs::exists(fs::symlink_status(column.output))) << "a new column OUTPUT: " << column.output;
            EXPECT_TRUE(read_text(column.input) == *column.values) << "the value file " << column.input << " changed";
        }
        if (!index_.empty()) {
            EXPECT_FALSE(fs::exists(fs::symlink_status(index_))) << "a new index: " << index_;
        }
    }

    bool streams() const { return scenario_ == Scenario::streams; }

private:
    // A value file of the columns scenario, its output, and their bytes (the data's).
    struct Column {
        std::string input, output;
        const std::string* values;
        const std::string* sorted;
    };

    Scenario scenario_;
    ScratchDir dir_;
    std::string in_, out_, tmp_, input_, output_;
    std::vector<Column> columns_;     // the columns scenario's; the second one's output is there before
    std::string index_;
    std::string column_output_before_;
    std::map<std::string, std::set<std::string>> before_;
    std::optional<std::string> output_before_;
    std::string input_before_;
};

struct Run {
    Result result;
    HookLog log;
    bool hung = false;
};

// Writes `bytes` to the pipe `fd` in pieces of 64 KiB, each once the one before has been read, so
// that each read of the sort takes one piece and a fault at its second read falls within its first
// chunk. Stops when the reader has gone.
void feed_in_pieces(int fd, const std::string& bytes) {
    // A reader that ends early makes the write fail with EPIPE; SIGPIPE stays with this thread.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    constexpr std::size_t kPiece = std::size_t{64} << 10;
    for (std::size_t done = 0; done < bytes.size();) {
        const std::size_t end = std::min(bytes.size(), done + kPiece);
        while (done < end) {
            const ssize_t n = ::write(fd, bytes.data() + done, end - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            done += static_cast<std::size_t>(n);
        }
        for (int waited = 0; waited < 20000; ++waited) {  // 4 s at most
            pollfd pipe_end{fd, POLLOUT, 0};
            int queued = 0;
            if (::poll(&pipe_end, 1, 0) < 0 || (pipe_end.revents & POLLERR)) return;
            if (::ioctl(fd, FIONREAD, &queued) != 0 || queued == 0) break;
            ::usleep(200);
        }
    }
}

// Runs gpusort-file-faults in `work` with the hook's log and, when given, one fault; a streamed
// input is fed through a pipe on stdin.
Run run_sort(const Workspace& work, const std::string& log_path, const std::string& fault) {
    ::setenv("GPUSORT_FAULT_LOG", log_path.c_str(), 1);
    if (fault.empty())
        ::unsetenv("GPUSORT_FAULT_INJECT");
    else
        ::setenv("GPUSORT_FAULT_INJECT", fault.c_str(), 1);
    int feed[2] = {-1, -1};
    if (work.streams() && ::pipe2(feed, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    ChildProcess child(GPUSORT_FILE_FAULTS_BIN, work.args(), [&] {
        if (feed[0] >= 0) ::dup2(feed[0], STDIN_FILENO);
    });
    ::unsetenv("GPUSORT_FAULT_LOG");
    ::unsetenv("GPUSORT_FAULT_INJECT");
    std::thread feeder;
    if (feed[0] >= 0) {
        ::close(feed[0]);
        feeder = std::thread([fd = feed[1]] {
            feed_in_pieces(fd, data().input);
            ::close(fd);
        });
    }
    Run run;
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;
    std::thread watchdog([&] {
        std::unique_lock lock(mutex);
        if (!ended.wait_for(lock, kHangBound, [&] { return done; })) {
            run.hung = true;
            ::kill(child.pid(), SIGKILL);
        }
    });
    run.result = child.wait();
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    ended.notify_all();
    watchdog.join();
    if (feeder.joinable()) feeder.join();
    run.log = read_log(log_path);
    return run;
}

// "runs": N in the stats.
std::uint64_t stat_of(const std::string& stats, const std::string& name) {
    const std::string field = "\"" + name + "\": ";
    const auto at = stats.find(field);
    return at == std::string::npos ? 0 : std::strtoull(stats.c_str() + at + field.size(), nullptr, 10);
}

// The hits of a site to fault: the first, the second (the first after some work was done), the
// middle and the last.
std::vector<std::uint64_t> hits_to_fault(std::uint64_t hits) {
    std::set<std::uint64_t> chosen = {1, std::min<std::uint64_t>(2, hits), (hits + 1) / 2, hits};
    return std::vector<std::uint64_t>(chosen.begin(), chosen.end());
}

// The same for a fault of `kind` at `site` in a scenario: where INPUT and OUTPUT are read and written
// with direct I/O, an EIO at every opening for direct I/O (INPUT's, OUTPUT's and the spill files',
// which come in an order that the log does not tell), so that each of them is made to fail.
std::vector<std::uint64_t> hits_to_fault(Scenario scenario, const Site& site, const std::string& kind) {
    if (!input_direct(scenario) || kind != "EIO" || site.function.find("File::use_direct_io") == std::string::npos)
        return hits_to_fault(site.hits);
    std::vector<std::uint64_t> every(site.hits);
    for (std::uint64_t hit = 1; hit <= site.hits; ++hit) every[hit - 1] = hit;
    return every;
}

// The calls that create nameless files (open with O_TMPFILE): failing each of them with EOPNOTSUPP
// plays a file system without O_TMPFILE, where the program gives its temp files and its output a
// hidden name for a while.
bool creates_nameless_file(const Site& site) {
    return site.op == "open" && (site.function.find("create_temp_file") != std::string::npos ||
                                 site.function.find("AtomicOutputFile::AtomicOutputFile") != std::string::npos);
}

// The faults that stay on through a whole sweep: none, or (no_tmpfile) no O_TMPFILE, found by a first run.
std::vector<std::string> lasting_faults(Scenario scenario, const std::string& log_path) {
    if (scenario != Scenario::no_tmpfile) return {};
    Workspace work(scenario);
    std::vector<std::string> faults;
    for (const Site& site : run_sort(work, log_path, "").log.sites)
        if (creates_nameless_file(site)) faults.push_back(site.op + " " + site.location + " * EOPNOTSUPP");
    EXPECT_EQ(faults.size(), 2u) << "the temp files and the output are not created where they were";
    return faults;
}

// One setting of GPUSORT_FAULT_INJECT: the lasting faults and, when given, one more.
std::string fault_setting(const std::vector<std::string>& lasting, const std::string& fault) {
    std::string setting = fault;
    for (const std::string& f : lasting) setting += (setting.empty() ? "" : ";") + f;
    return setting;
}

// Whether files in `folder` can be opened with O_DIRECT (as the program opens its spill files).
bool does_direct_io(const std::string& folder) {
    const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const int direct = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    if (direct >= 0) ::close(direct);
    ::close(fd);
    return direct >= 0;
}

// The clean run, under the lasting faults only: the sites it reaches, and proof that the scenario is
// the multi-run, multi-pass sort it is meant to be, with the direct I/O it is meant to have.
HookLog clean_run(Scenario scenario, const ScratchDir& logs, const std::vector<std::string>& lasting) {
    SCOPED_TRACE(std::string(name_of(scenario)) + ", no fault");
    Workspace work(scenario);
    const Run run = run_sort(work, logs / "clean.log", fault_setting(lasting, ""));
    work.expect_sorted(run.result);
    const std::string& stats = run.result.err;
    if (forms_runs(scenario)) {
        EXPECT_GE(stat_of(stats, "runs"), 3u) << stats;
        EXPECT_GE(stat_of(stats, "merge_passes"), 2u) << stats;
    } else {
        EXPECT_NE(stats.find("\"spill_io\": \"none\""), std::string::npos) << stats;
    }
    if (spill_direct(scenario)) {
        EXPECT_NE(stats.find("\"spill_io\": \"direct\""), std::string::npos) << stats;
    }
    if (input_direct(scenario)) {
        EXPECT_NE(stats.find("\"input_io\": \"direct\""), std::string::npos) << stats;
    }
    if (output_direct(scenario)) {
        EXPECT_NE(stats.find("\"output_io\": \"direct\""), std::string::npos) << stats;
    }
    EXPECT_EQ(run.log.injected.size(), lasting.size());
    return run.log;
}

// The clean run reached every operation the scenario must reach (the direct transfers too), and
// each operation it reached has faults listed for it.
void expect_sites_covered(Scenario scenario, const HookLog& clean) {
    std::set<std::string> reached;
    for (const Site& site : clean.sites) reached.insert(site.op);
    for (const std::string& op : required_ops(scenario)) EXPECT_TRUE(reached.count(op)) << op << " was not reached";
    if (any_direct(scenario)) {
        for (const char* function : {"File::use_direct_io", "File::read_direct", "File::write_direct"}) {
            EXPECT_TRUE(std::any_of(clean.sites.begin(), clean.sites.end(),
                                    [&](const Site& site) { return site.function.find(function) != std::string::npos; }))
                << function << " was not reached";
        }
    }
    for (const std::string& op : reached) EXPECT_TRUE(kFaults.count(op)) << "no faults listed for " << op;
}

// What the runs with a fault came to.
struct SweepTally {
    std::size_t runs = 0, failed = 0, survived = 0, not_reached = 0;
    std::set<std::string> worked_around;  // operations whose fault the program worked around
    // What the faults hit of the direct I/O: "pread INPUT", "pwrite OUTPUT", "open INPUT" (the
    // descriptor opened again for it), ...
    std::set<std::string> direct_hit;
    std::set<std::string> inputs_hit;  // the inputs that a fault's call worked on, by their names in their folder
};

// A run that must fail: status 1, one error line with the fault's cause naming one of the files the
// site works on (or "out of memory" for anonymous memory), and every file as it was.
void expect_failed_cleanly(const Result& r, const Workspace& work, const std::vector<Workspace::Named>& names,
                           const Site& site, const std::string& kind, SweepTally& tally) {
    ++tally.failed;
    EXPECT_TRUE(r.exited() && r.exit_code() == 1) << r.how_it_ended() << "; stderr: " << r.err;
    if (names.empty()) {
        expect_one_error_line(r, "out of memory");  // anonymous memory: nothing else to name
    } else {
        // "'PATH'", or "'FOLDER (temp file)'" for a temp file
        expect_one_error_line(r, std::strerror(error_value(kind)));
        const auto named = std::find_if(names.begin(), names.end(), [&](const Workspace::Named& n) {
            return r.err.find("'" + n.name) != std::string::npos;
        });
        std::string expected;
        for (const auto& n : names) expected += " '" + n.name + "'";
        EXPECT_NE(named, names.end()) << "the error line names none of" << expected << ": " << r.err;
        if (named != names.end() && site.function.find("File::use_direct_io") != std::string::npos)
            tally.direct_hit.insert("open " + named->role);
    }
    work.expect_as_it_was();
}

// One run with `kind` injected at the hit-th call of `site`: it succeeds where the fault must not
// matter or is worked around, else fails cleanly.
void run_with_fault(Scenario scenario, const ScratchDir& logs, const std::vector<std::string>& lasting, const Site& site,
                    const std::string& kind, std::uint64_t hit, SweepTally& tally) {
    const std::string fault = site.op + " " + site.location + " " + std::to_string(hit) + " " + kind;
    SCOPED_TRACE(std::string(name_of(scenario)) + ", fault '" + fault + "' in " + site.function);
    Workspace work(scenario);
    const Run run = run_sort(work, logs / ("run" + std::to_string(tally.runs) + ".log"), fault_setting(lasting, fault));
    ++tally.runs;
    const Result& r = run.result;
    EXPECT_FALSE(run.hung) << "hung; stderr: " << r.err;
    const std::optional<Injected> injected = run.log.injected_at(site.op + " " + site.location);
    if (!injected) {
        // The site was hit fewer times in this run than in the clean one (a pipe's reads vary).
        EXPECT_GT(hit, 1u) << "the fault was not injected";
        work.expect_sorted(r);
        ++tally.not_reached;
        return;
    }
    EXPECT_EQ(injected->op + " " + injected->location + " " + std::to_string(injected->hit) + " " + injected->kind, fault);
    const std::vector<Workspace::Named> names = work.names_for(*injected);
    const bool on_direct = site.function.find("File::read_direct") != std::string::npos ||
                           site.function.find("File::write_direct") != std::string::npos;
    if (on_direct && names.size() == 1) tally.direct_hit.insert(site.op + " " + names.front().role);
    if (names.size() == 1 && names.front().role == "INPUT") tally.inputs_hit.insert(fs::path(names.front().name).filename());
    if (must_not_matter(kind) || survivable(site.function, site.op)) {
        work.expect_sorted(r);
        ++tally.survived;
        return;
    }
    if (may_be_worked_around(kind) && r.exited() && r.exit_code() == 0) {
        work.expect_sorted(r);
        tally.worked_around.insert(site.op);
        ++tally.survived;
        return;
    }
    expect_failed_cleanly(r, work, names, site, kind, tally);
}

// The work-arounds were taken where the program has them, and faults hit the direct transfers of
// each file read or written so.
void expect_work_arounds_and_direct_hits(Scenario scenario, const SweepTally& tally) {
    // Named temp files without O_TMPFILE, and pwrite where the output's space cannot be reserved.
    if (scenario == Scenario::file_to_file) {
        EXPECT_TRUE(tally.worked_around.count("open")) << "no open without O_TMPFILE was worked around";
        EXPECT_TRUE(tally.worked_around.count("fallocate")) << "no fallocate without support was worked around";
    }
    // The direct transfers (and the opening for them), so that the sweep fails if direct I/O
    // silently stops being used.
    std::set<std::string> direct_expected;
    if (input_direct(scenario)) direct_expected.insert({"open INPUT", "pread INPUT"});
    if (output_direct(scenario)) direct_expected.insert({"open OUTPUT", "pwrite OUTPUT"});
    if (spill_direct(scenario)) direct_expected.insert({"open tmp", "pwrite tmp", "pread tmp"});
    for (const std::string& hit : direct_expected)
        EXPECT_TRUE(tally.direct_hit.count(hit)) << "no fault was injected into a direct " << hit;
    // With columns, faults on the reading of each value file too, not only of the keys.
    if (scenario == Scenario::columns) {
        EXPECT_EQ(tally.inputs_hit.size(), 3u) << "faults were injected into the reading of only "
                                               << tally.inputs_hit.size() << " of KEYS and the two value files";
    }
}

// The sweep of one scenario: a clean run finds the sites, then each fault of each site (but those
// of the lasting faults) is injected in a run of its own.
void sweep(Scenario scenario) {
    ScratchDir logs;
    if (any_direct(scenario) && !does_direct_io(logs.path()))
        GTEST_SKIP() << "the file system of " << logs.path() << " does not do direct I/O";
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::string> lasting = lasting_faults(scenario, logs / "first.log");
    std::set<std::string> lasting_sites;
    for (const std::string& f : lasting) lasting_sites.insert(f.substr(0, f.find(" * ")));

    const HookLog clean = clean_run(scenario, logs, lasting);
    expect_sites_covered(scenario, clean);
    ASSERT_FALSE(::testing::Test::HasFailure()) << "the clean run of " << name_of(scenario) << " failed";

    SweepTally tally;
    for (const Site& site : clean.sites) {
        if (lasting_sites.count(site.op + " " + site.location)) continue;
        for (const std::string& kind : kFaults.at(site.op))
            for (const std::uint64_t hit : hits_to_fault(scenario, site, kind))
                run_with_fault(scenario, logs, lasting, site, kind, hit, tally);
    }
    expect_work_arounds_and_direct_hits(scenario, tally);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << name_of(scenario) << ": " << clean.sites.size() << " sites, " << tally.runs << " runs with a fault: "
              << tally.failed << " failed as they must, " << tally.survived << " succeeded as they must, "
              << tally.not_reached << " not reached (" << seconds << " s)\n";
}

TEST(FaultInjection, FileToFile) { sweep(Scenario::file_to_file); }
TEST(FaultInjection, FileToFileWithoutTmpfile) { sweep(Scenario::no_tmpfile); }
TEST(FaultInjection, StdinToStdout) { sweep(Scenario::streams); }
TEST(FaultInjection, CompressedWithVerify) { sweep(Scenario::compressed); }
TEST(FaultInjection, InPlace) { sweep(Scenario::in_place); }
TEST(FaultInjection, FileToFileSpilledWithDirectIo) { sweep(Scenario::direct_spill); }
TEST(FaultInjection, DirectInputAndOutputInOneChunk) { sweep(Scenario::direct_files); }
TEST(FaultInjection, DirectInputOutputAndSpill) { sweep(Scenario::direct_all); }
TEST(FaultInjection, KeysWithTwoValueFilesAndAnIndex) { sweep(Scenario::columns); }

}  // namespace
