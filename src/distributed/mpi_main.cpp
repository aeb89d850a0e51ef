// gpusort-mpi: the sort of gpusort-file, run by every rank of an MPI job (mpirun -n N gpusort-mpi
// [OPTIONS] INPUT OUTPUT), with --partitioned, --input-list FILE (in place of INPUT) and --exchange
// auto|gpu|runs|shared|messages. Rank r uses local GPU r mod count, or the CPU backend. Its help is
// mpi_help.hpp. Exit status: 0 sorted; 1 the sort failed on some rank (rank 0 says which and why; no
// OUTPUT appeared); 2 a bad command line.
#include "gpusort/sort_plan.hpp"
#include "io/file.hpp"
#include "io/signal_cleanup.hpp"
#include "src/cli/cli_options.hpp"
#include "src/cli/progress_line.hpp"
#include "src/cli/option_values.hpp"
#include "src/distributed/distributed_sort.hpp"
#include "src/distributed/host_share.hpp"
#include "src/distributed/mpi_help.hpp"
#include "src/distributed/notes.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::distributed;

namespace {

// Takes `--NAME VALUE` or `--NAME=VALUE` out of `args`: its value, if given (once at most).
std::optional<std::string> take_option(std::vector<std::string>& args, const std::string& name) {
    std::vector<std::string> values;
    for (std::size_t i = 0; i < args.size();) {
        if (args[i] == name) {
            if (i + 1 == args.size()) throw std::invalid_argument(name + " needs a value");
            if (looks_like_option(args[i + 1])) throw value_is_an_option(name, args[i + 1]);
            values.push_back(args[i + 1]);
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        } else if (args[i].rfind(name + "=", 0) == 0) {
            values.push_back(args[i].substr(name.size() + 1));
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
    if (values.size() > 1) throw std::invalid_argument(name + " is given more than once");
    if (values.empty()) return std::nullopt;
    if (values[0].empty()) throw std::invalid_argument(name + " needs a value");
    return values[0];
}

// This rank's index among the ranks of its host, and their number, as the launcher says them.
int local_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
        if (const char* value = std::getenv(name)) return std::atoi(value);
    return 0;
}
int local_ranks() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
        if (const char* value = std::getenv(name)) return std::max(1, std::atoi(value));
    return 1;
}

// The CPUs that the ranks' launcher may run on: the host's, or what a container or a batch system
// allots to the job.
unsigned launcher_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    const long cpus = ::sched_getaffinity(::getppid(), sizeof set, &set) == 0 ? CPU_COUNT(&set) : ::sysconf(_SC_NPROCESSORS_ONLN);
    return static_cast<unsigned>(std::max(1L, cpus));
}

// Launchers bind ranks to CPUs (Open MPI binds each rank to one core when there are at most two),
// and a rank's threads default to the CPUs it may run on: the ranks of a host may leave most of its
// CPUs idle. Says so (and how to give them all) when the ranks of this host are bound to `mine` of
// the `host` CPUs their launcher may use and --threads was not given.
std::optional<std::string> idle_cpus_note(const SortOptions& sort, unsigned mine, unsigned host) {
    if (sort.threads || !leaves_cpus_idle(mine, host, local_ranks())) return std::nullopt;
    return "this rank may run on " + std::to_string(mine) + " of the host's " + std::to_string(host) +
           " CPUs (the launcher bound it), so it uses " + std::to_string(mine) + " thread" + (mine == 1 ? "" : "s") +
           "; to let the ranks use every CPU, give mpirun --bind-to none (or a binding of several CPUs per rank)";
}

// The line the progress line ends with, e.g.
//   "sorted 1000000 records (7.63 MiB) on 4 ranks in 0.41 s, 19.51 MB/s; parts within 0.52% of even"
// with ", N kept" after the records when --unique dropped some.
std::string job_summary(const DistributedReport& report, int ranks) {
    const std::size_t width = report.record_size;
    std::uint64_t input = 0;
    for (const std::uint64_t n : report.part_records) input += n;
    char text[320];
    const std::string kept = report.output_records == input ? "" : ", " + std::to_string(report.output_records) + " kept";
    std::snprintf(text, sizeof text, "sorted %llu records%s (%.2f MiB) on %d rank%s in %.2f s, %.2f MB/s; parts within %.2f%% of even",
                  static_cast<unsigned long long>(input), kept.c_str(), static_cast<double>(input * width) / (1 << 20), ranks,
                  ranks == 1 ? "" : "s", report.seconds,
                  report.seconds > 0 ? static_cast<double>(input * width) / report.seconds / 1e6 : 0.0, report.imbalance * 100);
    return text;
}

// The rate at which this rank read the other ranks' records: over its merge where it read their
// runs where they lie, over the copies between the GPUs where it copied its pieces from them.
double peer_read_rate(const DistributedReport& report) {
    const double seconds = report.exchange == "gpu" ? report.step_seconds.transfer : report.part.times.merge;
    return seconds > 0 ? static_cast<double>(report.peer_bytes_read) / seconds / 1e9 : 0;
}

// This rank's figures, as one JSON object of the "per_rank" list.
std::string rank_json(const DistributedReport& report, int rank) {
    const auto& t = report.step_seconds;
    const std::uint64_t part = report.part_records.empty() ? 0 : report.part_records[static_cast<std::size_t>(rank)];
    std::ostringstream out;
    out << "{\"rank\": " << rank << ", \"range_records\": " << report.range_records << ", \"range_read\": \""
        << report.range_read << "\", \"part_records\": " << part
        << ", \"memory_budget\": " << report.memory_budget
        << ", \"threads\": " << report.threads
        << ", \"device_memory_budget\": " << (report.part.plan.device ? report.part.plan.device->budget_bytes : 0)
        << ", \"backend\": \"" << report.part.backend << "\", \"runs\": " << report.part.runs
        << ", \"merge_passes\": " << report.part.merge_passes << ", \"exchange_bytes_sent\": " << report.exchange_bytes_sent
        << ", \"shared_bytes_sent\": " << report.shared_bytes_sent << ", \"exchange_rounds\": " << report.exchange_rounds
        << ", \"exchange_gb_per_s\": " << (t.exchange > 0 ? report.exchange_bytes_sent / t.exchange / 1e9 : 0)
        << ", \"transfer_gb_per_s\": " << (t.transfer > 0 ? report.exchange_bytes_sent / t.transfer / 1e9 : 0)
        << ", \"peer_bytes_read\": " << report.peer_bytes_read << ", \"peer_read_gb_per_s\": "
        << peer_read_rate(report)
        << ", \"seconds\": {\"samples\": " << t.samples << ", \"counting\": " << t.counting
        << ", \"exchange\": " << t.exchange << ", \"transfer\": " << t.transfer << ", \"sort\": " << t.sort
        << ", \"output\": " << t.output << ", \"total\": " << report.seconds << "}"
        << ", \"part_sort\": {\"seconds\": " << phase_seconds_json(report.part)
        << ", \"merge_phases\": " << merge_phases_json(report.part.merge) << "}}";
    return out.str();
}

// The job's figures (rank 0 writes them): the totals, then every rank's (rank_json, gathered).
std::string stats_json(const DistributedReport& report, const std::vector<std::string>& ranks_json) {
    std::ostringstream out;
    std::string parts = "[";
    for (std::size_t i = 0; i < report.part_records.size(); ++i)
        parts += (i ? ", " : "") + std::to_string(report.part_records[i]);
    out << "{\n"
        << "  \"ranks\": " << report.part_records.size() << ",\n"
        << "  \"splitters\": " << report.splitters << ",\n"
        << "  \"exchange\": \"" << report.exchange << "\",\n"
        << "  \"part_records\": " << parts << "],\n"
        << "  \"imbalance\": " << report.imbalance << ",\n"
        << "  \"output_records\": " << report.output_records << ",\n"
        << "  \"seconds\": " << report.seconds << ",\n"
        << "  \"per_rank\": [\n";
    for (std::size_t i = 0; i < ranks_json.size(); ++i) out << "    " << ranks_json[i] << (i + 1 < ranks_json.size() ? ",\n" : "\n");
    out << "  ]\n}\n";
    return out.str();
}

// The command line of gpusort-mpi: gpusort-file's (parse_command_line), less --plan, plus
// --partitioned, --input-list FILE (in place of INPUT) and --exchange WAY, which go to `options`.
// Throws std::invalid_argument with a one-line message for a malformed one.
CliCommand parse_mpi_command_line(std::vector<std::string> args, DistributedOptions& options) {
    const auto partitioned = std::find(args.begin(), args.end(), "--partitioned");
    if (partitioned != args.end()) {
        options.partitioned = true;
        args.erase(partitioned);
    }
    // --input-list LIST stands in for INPUT: LIST becomes the first operand, read as a list.
    if (const auto list = take_option(args, "--input-list")) {
        options.input_list = true;
        args.insert(args.begin(), *list);
    }
    if (const auto exchange = take_option(args, "--exchange")) {
        if (*exchange != "auto" && *exchange != "runs" && *exchange != "gpu" && *exchange != "shared" && *exchange != "messages")
            throw std::invalid_argument("--exchange takes auto, gpu, runs, shared or messages, not '" + *exchange + "'");
        options.exchange = *exchange;
    }
    io::install_signal_cleanup();
    CliCommand command;
    try {
        command = parse_command_line(args);
    } catch (const std::invalid_argument& e) {
        if (options.input_list && std::string(e.what()).rfind("too many operands", 0) == 0)
            throw std::invalid_argument("with --input-list, give OUTPUT alone: the list stands for INPUT");
        throw;
    }
    if (command.action == CliCommand::Action::plan) throw std::invalid_argument("--plan is not taken by gpusort-mpi");
    if (!command.sort.values.empty() || command.sort.index_output || command.gather_index)
        throw std::invalid_argument("--values, --index-out and --gather are not supported by gpusort-mpi yet: "
                                    "sort columns with gpusort-file");
    if (command.lines)
        throw std::invalid_argument("--lines is not supported by gpusort-mpi yet: sort text lines with gpusort-file "
                                    "or gpusort-sort");
    return command;
}

// What the ranks note: rank 0 says its notes as they come (through the sort's notice); the others'
// that it did not say come at the end, once each, with the ranks that had them (say_others()).
class RankNotes {
public:
    explicit RankNotes(const Communicator& ranks) : ranks_(ranks) {}

    std::function<void(const std::string&)> notice() {
        return [this](const std::string& text) {
            if (ranks_.rank() == 0) std::cerr << "gpusort-mpi: rank 0: note: " << text << "\n";
            notes_.add(text);
        };
    }

    // Every rank calls it, at the same point of the job (collective).
    void say_others() const {
        std::string mine;
        for (const std::string& text : notes_.kept()) mine += text + "\n";
        const std::vector<std::string> all = ranks_.all_gather(mine);
        if (ranks_.rank() != 0) return;
        std::vector<std::vector<std::string>> notes_of_rank;
        for (const std::string& theirs : all) {
            std::istringstream in(theirs);
            std::vector<std::string>& lines = notes_of_rank.emplace_back();
            for (std::string line; std::getline(in, line);) lines.push_back(line);
        }
        for (const std::string& line : unsaid_notes(notes_of_rank)) std::cerr << line << "\n";
    }

private:
    const Communicator& ranks_;
    Notes notes_;
};

// The rank's GPU and threads, as the launcher placed it: GPU local rank mod the GPUs of its host;
// without --threads, its share of the CPUs (with a note where the launcher's binding leaves CPUs idle).
void place_rank(const Communicator& ranks, DistributedOptions& options) {
    options.sort.device = device_of_local_rank(local_rank());
    options.local_rank = local_rank();
    options.local_ranks = local_ranks();
    const unsigned mine = default_threads(), host = launcher_cpus();
    if (ranks.rank() == 0 && options.sort.notice)
        if (const auto note = idle_cpus_note(options.sort, mine, host)) options.sort.notice(*note);
    if (!options.sort.threads) options.sort.threads = rank_threads(mine, host, local_ranks());
}

// Rank 0's progress line (as gpusort-file's: with --progress, or by default on a terminal): its own
// progress through the job's steps, which every rank ends together. None on the other ranks.
std::unique_ptr<ProgressLine> progress_line(const Communicator& ranks, const CliCommand& command, ProgressCounters& counters,
                                            SortOptions& sort) {
    if (ranks.rank() != 0 || !command.progress.value_or(!command.quiet && io::is_terminal(STDERR_FILENO))) return nullptr;
    try {
        std::unique_ptr<ProgressLine> line = std::make_unique<ProgressLine>(counters, STDERR_FILENO);
        sort.progress = &counters;
        return line;
    } catch (const std::exception& e) {
        if (sort.notice) sort.notice(std::string("no progress line: ") + e.what());
        return nullptr;
    }
}

// The job's figures, every rank's gathered in rank order, written by rank 0 to --stats FILE ('-': stderr).
void write_stats(const Communicator& ranks, const DistributedReport& report, const std::optional<std::string>& path) {
    const std::vector<std::string> ranks_json = ranks.all_gather(rank_json(report, ranks.rank()));
    if (ranks.rank() != 0 || !path) return;
    const std::string json = stats_json(report, ranks_json);
    if (*path == "-") {
        std::cerr << json;
    } else {
        std::ofstream file(*path);
        file << json;
        if (!file.flush()) throw std::runtime_error("cannot write the stats file '" + *path + "'");
    }
}

// Runs the sort on every rank; returns the exit status (0, or 1 where it failed on some rank).
int sort_on_every_rank(const Communicator& ranks, const CliCommand& command, DistributedOptions& options) {
    options.sort = command.sort;
    RankNotes notes(ranks);
    if (!command.quiet) options.sort.notice = notes.notice();
    place_rank(ranks, options);
    ProgressCounters counters;
    std::unique_ptr<ProgressLine> progress = progress_line(ranks, command, counters, options.sort);
    try {
        const DistributedReport report = distributed_sort(options, ranks);
        if (progress) progress->finish(job_summary(report, ranks.size()));
        notes.say_others();
        write_stats(ranks, report, command.stats_path);
        return 0;
    } catch (const RankError& e) {
        progress.reset();  // the line ends before the message
        notes.say_others();  // every rank ends the job here, with the same RankError
        if (ranks.rank() == 0) std::cerr << "gpusort-mpi: rank " << e.rank() << ": " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        progress.reset();
        // Outside a step (the stats file): this rank alone knows.
        std::cerr << "gpusort-mpi: rank " << ranks.rank() << ": " << e.what() << "\n";
        return 1;
    }
}

// The program on one rank: its exit status.
int run(const Communicator& ranks, const std::vector<std::string>& args) {
    const bool speaker = ranks.rank() == 0;
    DistributedOptions options;
    CliCommand command;
    try {
        command = parse_mpi_command_line(args, options);
    } catch (const std::exception& e) {
        if (speaker) std::cerr << "gpusort-mpi: " << e.what() << "\n";
        return 2;
    }
    if (command.action == CliCommand::Action::help) {
        if (speaker) std::cout << kMpiHelp;
        return 0;
    }
    if (command.action == CliCommand::Action::version) {
        if (speaker) std::cout << "gpusort-mpi " << GPUSORT_VERSION << "\n";
        return 0;
    }
    return sort_on_every_rank(ranks, command, options);
}

}  // namespace

int main(int argc, char** argv) {
    // A round of the exchange moves on a thread of its own while the next is laid out: MPI is
    // called from one thread at a time (Communicator::any_thread says whether MPI allows it).
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    int status = 0;
    {
        const Communicator ranks;
        status = run(ranks, std::vector<std::string>(argv + 1, argv + argc));
    }
    MPI_Finalize();
    return status;
}
