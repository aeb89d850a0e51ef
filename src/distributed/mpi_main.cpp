// gpusort-mpi: the options of gpusort-file, run by every rank of an MPI job (mpirun -n N
// gpusort-mpi [OPTIONS] INPUT OUTPUT), plus --partitioned, --input-list FILE (in place of
// INPUT) and --exchange auto|gpu|runs|shared|messages. Rank r uses local GPU r mod count, or the CPU backend. Exit status: 0 sorted; 1 the sort failed on some rank (rank 0 says which and
// why; no OUTPUT appeared); 2 a bad command line.
#include "gpusort/sort_plan.hpp"
#include "io/signal_cleanup.hpp"
#include "src/cli/cli_options.hpp"
#include "src/cli/progress_line.hpp"
#include "src/cli/option_values.hpp"
#include "src/distributed/distributed_sort.hpp"
#include "src/distributed/host_share.hpp"
#include "src/distributed/notes.hpp"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

}  // namespace

int main(int argc, char** argv) {
    // A round of the exchange moves on a thread of its own while the next is laid out: MPI is
    // called from one thread at a time (Communicator::any_thread says whether MPI allows it).
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    int status = 0;
    {
        const Communicator ranks;
        const bool speaker = ranks.rank() == 0;
        std::vector<std::string> args(argv + 1, argv + argc);
        DistributedOptions options;
        const auto partitioned = std::find(args.begin(), args.end(), "--partitioned");
        if (partitioned != args.end()) {
            options.partitioned = true;
            args.erase(partitioned);
        }
        CliCommand command;
        try {
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
            try {
                command = parse_command_line(args);
            } catch (const std::invalid_argument& e) {
                if (options.input_list && std::string(e.what()).rfind("too many operands", 0) == 0)
                    throw std::invalid_argument("with --input-list, give OUTPUT alone: the list stands for INPUT");
                throw;
            }
            if (command.action == CliCommand::Action::plan) throw std::invalid_argument("--plan is not taken by gpusort-mpi");
        } catch (const std::exception& e) {
            if (speaker) std::cerr << "gpusort-mpi: " << e.what() << "\n";
            status = 2;
        }
        if (status == 0 && command.action == CliCommand::Action::help) {
            if (speaker)
                std::cout << "Usage: mpirun -n N gpusort-mpi [OPTIONS] [--partitioned] INPUT OUTPUT\n"
                             "       mpirun -n N gpusort-mpi [OPTIONS] [--partitioned] --input-list FILE OUTPUT\n"
                             "For whole-record keys, the ranks of one host that each have a GPU copy their pieces of every\n"
                             "rank's sorted chunks from that rank's GPU into runs of their own and merge them into OUTPUT\n"
                             "(--exchange gpu); else they sort their ranges first, into runs in OUTPUT, and each merges its\n"
                             "part of all the runs where they lie (--exchange runs); else, and with --exchange shared, they\n"
                             "send the records to their parts through shared memory and sort after; with --exchange\n"
                             "messages, by MPI messages alone (as between hosts). --exchange auto, the default, takes the\n"
                             "first of these ways that the job allows; gpu says why where it cannot be used.\n"
                             "Every rank sorts a share of INPUT (a file all ranks see) into one sorted OUTPUT, or with\n"
                             "--partitioned into OUTPUT.00000, OUTPUT.00001, ... (one per rank, in key order). With\n"
                             "--input-list, INPUT is the files FILE names, one path per line, one after the other. Rank r uses\n"
                             "GPU r mod the GPUs of its host; without --threads, ranks that may all run on the host's CPUs\n"
                             "(mpirun --bind-to none) take an equal share of them. The options are those of gpusort-file:\n\n"
                          << command.help_text;
        } else if (status == 0 && command.action == CliCommand::Action::version) {
            if (speaker) std::cout << "gpusort-mpi " << GPUSORT_VERSION << "\n";
        } else if (status == 0) {
            options.sort = command.sort;
            options.sort.device = device_of_local_rank(local_rank());
            options.local_rank = local_rank();
            options.local_ranks = local_ranks();
            // Rank 0 says its notes as they come; the others' that it did not say come at the end, once each.
            Notes notes;
            if (!command.quiet)
                options.sort.notice = [&notes, speaker](const std::string& text) {
                    if (speaker) std::cerr << "gpusort-mpi: rank 0: note: " << text << "\n";
                    notes.add(text);
                };
            auto say_other_ranks_notes = [&] {  // every rank calls it, at the same point of the job
                std::string mine;
                for (const std::string& text : notes.kept()) mine += text + "\n";
                const std::vector<std::string> all = ranks.all_gather(mine);
                if (!speaker) return;
                std::vector<std::vector<std::string>> notes_of_rank;
                for (const std::string& theirs : all) {
                    std::istringstream in(theirs);
                    std::vector<std::string>& lines = notes_of_rank.emplace_back();
                    for (std::string line; std::getline(in, line);) lines.push_back(line);
                }
                for (const std::string& line : unsaid_notes(notes_of_rank)) std::cerr << line << "\n";
            };
            const unsigned mine = default_threads(), host = launcher_cpus();
            if (speaker && options.sort.notice)
                if (const auto note = idle_cpus_note(options.sort, mine, host)) options.sort.notice(*note);
            if (!options.sort.threads) options.sort.threads = rank_threads(mine, host, local_ranks());
            // Rank 0 draws the line (as gpusort-file: with --progress, or by default on a terminal):
            // its own progress through the job's steps, which every rank ends together.
            ProgressCounters counters;
            std::unique_ptr<ProgressLine> progress;
            if (speaker && command.progress.value_or(!command.quiet && ::isatty(STDERR_FILENO))) {
                try {
                    progress = std::make_unique<ProgressLine>(counters, STDERR_FILENO);
                    options.sort.progress = &counters;
                } catch (const std::exception& e) {
                    if (options.sort.notice) options.sort.notice(std::string("no progress line: ") + e.what());
                }
            }
            try {
                const DistributedReport report = distributed_sort(options, ranks);
                if (progress) progress->finish(job_summary(report, ranks.size()));
                say_other_ranks_notes();
                // Every rank's figures, one JSON object each, gathered in rank order.
                const std::vector<std::string> ranks_json = ranks.all_gather(rank_json(report, ranks.rank()));
                if (speaker && command.stats_path) {
                    const std::string json = stats_json(report, ranks_json);
                    if (*command.stats_path == "-") {
                        std::cerr << json;
                    } else {
                        std::ofstream file(*command.stats_path);
                        file << json;
                        if (!file.flush()) throw std::runtime_error("cannot write the stats file '" + *command.stats_path + "'");
                    }
                }
            } catch (const RankError& e) {
                progress.reset();  // the line ends before the message
                say_other_ranks_notes();  // every rank ends the job here, with the same RankError
                if (speaker) std::cerr << "gpusort-mpi: rank " << e.rank() << ": " << e.what() << "\n";
                status = 1;
            } catch (const std::exception& e) {
                progress.reset();
                // Outside a step (the stats file): this rank alone knows.
                std::cerr << "gpusort-mpi: rank " << ranks.rank() << ": " << e.what() << "\n";
                status = 1;
            }
        }
    }
    MPI_Finalize();
    return status;
}
