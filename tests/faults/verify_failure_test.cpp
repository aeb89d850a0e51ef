// --verify tested failing. gpusort-file-faults corrupts what reaches OUTPUT as GPUSORT_FAULT_CORRUPT
// asks (io/syscalls.hpp: a flipped bit, a dropped record, a duplicated record, two records swapped,
// at the middle record of the output), for each way OUTPUT is written: a file through its memory
// map, a file with direct I/O (pwrite), stdout to a pipe, a compressed file, in place (OUTPUT is
// INPUT), and with --unique. With --verify the sort must fail by the failure contract: status 1,
// one line "gpusort-file: --verify: 'OUTPUT' ..." saying what it found, an existing OUTPUT as it
// was, no new OUTPUT, the input as it was and nothing left in the folders (stdout, written as it
// goes, cannot be taken back). Without --verify the same corruption must reach the output: the
// run succeeds with the std::stable_sort reference corrupted exactly as asked.
#include "tests/cli_run.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/faults/zstd_bytes.hpp"

#include <gtest/gtest.h>

#include <boost/iostreams/copy.hpp>
#include <boost/iostreams/device/array.hpp>
#include <boost/iostreams/device/back_inserter.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace gpusort::testing;
namespace bio = boost::iostreams;
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// The data: 16-byte records, a u64 key (little-endian, at offset 0) and the record's place in
// the input. The keys are 0, 1, 2, ... shuffled: a key changed by the flip (the top bit of its low
// byte: by 128) is out of order, and so are two neighbours swapped. In the input for --unique a
// quarter of the keys come twice. 100,000 records under a 1 MiB budget: several runs, merged.

constexpr std::size_t kRecordBytes = 16;
constexpr std::uint64_t kRecords = 100000;
const char* const kOldOutput = "the OUTPUT that was there before\n";

struct Record {
    std::uint64_t key;
    std::uint64_t place;
};
static_assert(sizeof(Record) == kRecordBytes);

std::vector<Record> make_input(bool duplicates) {
    const std::uint64_t distinct = duplicates ? kRecords * 3 / 4 : kRecords;
    std::vector<Record> records(kRecords);
    for (std::uint64_t i = 0; i < kRecords; ++i) records[i].key = i % distinct;
    std::shuffle(records.begin(), records.end(), std::mt19937_64(20240917));
    for (std::uint64_t i = 0; i < kRecords; ++i) records[i].place = i;
    return records;
}

std::string as_bytes(const std::vector<Record>& records) {
    return std::string(reinterpret_cast<const char*>(records.data()), records.size() * kRecordBytes);
}

// The input sorted by std::stable_sort; with --unique, the first of each key (in input order) kept.
std::string reference(std::vector<Record> records, bool unique) {
    std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.key < b.key; });
    if (unique) {
        const auto same = [](const Record& a, const Record& b) { return a.key == b.key; };
        records.erase(std::unique(records.begin(), records.end(), same), records.end());
    }
    return as_bytes(records);
}

// ---------------------------------------------------------------------------------------------
// The corruptions, as GPUSORT_FAULT_CORRUPT names them, and what each does to the sorted bytes.

enum class Kind { flip, drop, duplicate, swap };
constexpr Kind kKinds[] = {Kind::flip, Kind::drop, Kind::duplicate, Kind::swap};

const char* name_of(Kind kind) {
    switch (kind) {
    case Kind::flip: return "flip";
    case Kind::drop: return "drop";
    case Kind::duplicate: return "duplicate";
    case Kind::swap: return "swap";
    }
    return "";
}

// `sorted` with record `target` and the one after it corrupted as the hook is to do it.
std::string corrupted(std::string sorted, Kind kind, std::uint64_t target) {
    const std::size_t at = target * kRecordBytes, next = at + kRecordBytes;
    switch (kind) {
    case Kind::flip: sorted[at] = static_cast<char>(sorted[at] ^ 0x80); break;
    case Kind::drop: sorted.erase(at, kRecordBytes); break;
    case Kind::duplicate: sorted.replace(next, kRecordBytes, sorted, at, kRecordBytes); break;
    case Kind::swap: std::swap_ranges(sorted.begin() + at, sorted.begin() + next, sorted.begin() + next); break;
    }
    return sorted;
}

// ---------------------------------------------------------------------------------------------
// The ways OUTPUT is written, and the folder of one run.

enum class Way { file, direct, stream, compressed, in_place, unique };
constexpr Way kWays[] = {Way::file, Way::direct, Way::stream, Way::compressed, Way::in_place, Way::unique};

const char* name_of(Way way) {
    switch (way) {
    case Way::file: return "file";
    case Way::direct: return "direct";
    case Way::stream: return "stdout";
    case Way::compressed: return "zst";
    case Way::in_place: return "in_place";
    case Way::unique: return "unique";
    }
    return "";
}

// A fresh folder: DIR/in.bin the input, DIR/OUTPUT (an existing one for direct, zst and unique),
// DIR/tmp the --tmp-dir; and what was there before the run.
class Workspace {
public:
    explicit Workspace(Way way) : way_(way) {
        const std::string dir = fs::canonical(dir_.path()).string();
        input_ = dir + "/in.bin";
        tmp_ = dir + "/tmp";
        if (way == Way::in_place) output_ = input_;
        else if (way == Way::compressed) output_ = dir + "/out.bin.zst";
        else if (way != Way::stream) output_ = dir + "/out.bin";
        fs::create_directory(tmp_);
        const std::vector<Record> records = make_input(way == Way::unique);
        write_text(input_, as_bytes(records));
        if (way == Way::direct || way == Way::compressed || way == Way::unique) write_text(output_, kOldOutput);
        sorted_ = reference(records, way == Way::unique);
        input_before_ = read_text(input_);
        if (!output_.empty() && fs::exists(output_)) output_before_ = read_text(output_);
        for (const std::string& folder : {dir, tmp_}) before_[folder] = entries_of(folder);
    }

    std::uint64_t records() const { return sorted_.size() / kRecordBytes; }
    // The middle record of the output, where the fault is put.
    std::uint64_t target() const { return records() / 2; }
    const std::string& sorted() const { return sorted_; }

    std::vector<std::string> args(bool verify) const {
        std::vector<std::string> args = {"--backend", "cpu", "--memory", "1M", "--threads", "2", "--record-size", "16",
                                         "--key", "0:u64", "--tmp-dir", tmp_};
        if (way_ == Way::direct) args.insert(args.end(), {"--output-io", "direct"});
        if (way_ == Way::unique) args.push_back("--unique");
        if (verify) args.push_back("--verify");
        args.push_back(input_);
        args.push_back(output_.empty() ? "-" : output_);
        return args;
    }

    // The sorted records that the run `r` left at OUTPUT (or wrote to stdout).
    std::string output(const Result& r) const {
        if (way_ == Way::stream) return r.out;
        if (way_ == Way::compressed) return zstd_unpacked(read_text(output_)).value_or("(not zstd data)");
        return read_text(output_);
    }

    // What the error line of a run with --verify must say: the output's name, what was found.
    std::vector<std::string> expected_message(Kind kind) const {
        const std::string name = output_.empty() ? "standard output" : output_;
        const std::string count = std::to_string(records());
        const std::string one_less = std::to_string(records() - 1);
        std::string found;
        if (kind == Kind::flip) found = "is out of order at record ";
        if (kind == Kind::swap) found = "is out of order at record " + std::to_string(target() + 1);
        if (kind == Kind::drop && way_ == Way::stream) found = "was read back as " + one_less + " records, not " + count;
        if (kind == Kind::drop && way_ != Way::stream) found = "holds " + one_less + " records, not " + count;
        // --unique checks that keys increase strictly, and has no checksum of the input.
        if (kind == Kind::duplicate && way_ == Way::unique) found = "is out of order at record " + std::to_string(target() + 1);
        if (kind == Kind::duplicate && way_ != Way::unique) found = "(checksums differ)";
        return {"gpusort-file: --verify: '" + name + "' ", found, "; the output was not kept"};
    }

    // After a failed run: the input as it was, an existing OUTPUT as it was, no new one, nothing
    // left in the folders.
    void expect_as_it_was() const {
        EXPECT_TRUE(read_text(input_) == input_before_) << "the input changed";
        if (output_before_) {
            EXPECT_TRUE(read_text(output_) == *output_before_) << "the existing OUTPUT changed";
        } else if (!output_.empty()) {
            EXPECT_FALSE(fs::exists(fs::symlink_status(output_))) << "a new OUTPUT: " << output_;
        }
        for (const auto& [folder, names] : before_) EXPECT_EQ(entries_of(folder), names) << "entries of " << folder;
    }

private:
    static std::set<std::string> entries_of(const std::string& folder) {
        std::set<std::string> names;
        for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename());
        return names;
    }

    Way way_;
    ScratchDir dir_;
    std::string input_, output_, tmp_, sorted_, input_before_;
    std::optional<std::string> output_before_;
    std::map<std::string, std::set<std::string>> before_;
};

// Runs gpusort-file-faults in `work` with `kind` of corruption at the middle record.
Result run_corrupted(const Workspace& work, Kind kind, bool verify) {
    const std::string spec = std::string(name_of(kind)) + " " + std::to_string(kRecordBytes) + " " +
                             std::to_string(work.target());
    ::setenv("GPUSORT_FAULT_CORRUPT", spec.c_str(), 1);
    ChildProcess child(GPUSORT_FILE_FAULTS_BIN, work.args(verify));
    ::unsetenv("GPUSORT_FAULT_CORRUPT");
    return child.wait();
}

// For gtest's messages.
std::ostream& operator<<(std::ostream& out, Way way) { return out << name_of(way); }
std::ostream& operator<<(std::ostream& out, Kind kind) { return out << name_of(kind); }

class VerifyFailure : public ::testing::TestWithParam<std::tuple<Way, Kind>> {};

// With --verify: the corruption is found and nothing is kept.
TEST_P(VerifyFailure, IsFoundAndNothingIsKept) {
    const auto [way, kind] = GetParam();
    const Workspace work(way);
    const Result r = run_corrupted(work, kind, true);
    expect_one_error_line(r, work.expected_message(kind));
    work.expect_as_it_was();
}

// Without --verify: the run succeeds with the reference corrupted as asked, so the run above had
// a corrupted output to find.
TEST_P(VerifyFailure, ReachesTheOutputWithoutVerify) {
    const auto [way, kind] = GetParam();
    const Workspace work(way);
    const Result r = run_corrupted(work, kind, false);
    ASSERT_TRUE(r.exited() && r.exit_code() == 0) << r.how_it_ended() << "; stderr: " << r.err;
    EXPECT_EQ(r.err, "");
    const std::string output = work.output(r);
    EXPECT_FALSE(output == work.sorted()) << "the output is the sorted input: nothing was corrupted";
    EXPECT_TRUE(output == corrupted(work.sorted(), kind, work.target()))
        << "the output is not the sorted input with record " << work.target() << " corrupted by " << name_of(kind)
        << " (" << output.size() << " bytes, " << work.sorted().size() << " sorted)";
}

std::string test_name(const ::testing::TestParamInfo<std::tuple<Way, Kind>>& info) {
    return std::string(name_of(std::get<0>(info.param))) + "_" + name_of(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Corruptions, VerifyFailure, ::testing::Combine(::testing::ValuesIn(kWays), ::testing::ValuesIn(kKinds)),
                         test_name);

}  // namespace
