// gpusort-mpi: the options of gpusort-file, run by every rank of an MPI job (mpirun -n N
// gpusort-mpi [OPTIONS] INPUT OUTPUT), plus --partitioned. Rank r uses local GPU r mod count, or
// the CPU backend. Exit status: 0 sorted; 1 the sort failed on some rank (rank 0 says which and
// why; no OUTPUT appeared); 2 a bad command line.
#include "src/cli/cli_options.hpp"
#include "src/distributed/distributed_sort.hpp"
#include "io/signal_cleanup.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace gpusort;
using namespace gpusort::distributed;

namespace {

// This rank's index among the ranks of its host, as the launcher says it.
int local_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
        if (const char* value = std::getenv(name)) return std::atoi(value);
    return 0;
}

std::string stats_json(const DistributedReport& report, const std::vector<std::uint64_t>& range_of_rank,
                       const std::vector<std::uint64_t>& sent_of_rank, double seconds) {
    std::ostringstream out;
    auto list = [&](const std::vector<std::uint64_t>& values) {
        std::string text = "[";
        for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
        return text + "]";
    };
    out << "{\n"
        << "  \"ranks\": " << report.part_records.size() << ",\n"
        << "  \"splitters\": " << report.splitters << ",\n"
        << "  \"range_records\": " << list(range_of_rank) << ",\n"
        << "  \"part_records\": " << list(report.part_records) << ",\n"
        << "  \"imbalance\": " << report.imbalance << ",\n"
        << "  \"output_records\": " << report.output_records << ",\n"
        << "  \"exchange_bytes_sent\": " << list(sent_of_rank) << ",\n"
        << "  \"rank0_seconds\": {\"samples\": " << report.step_seconds.samples
        << ", \"counting\": " << report.step_seconds.counting << ", \"exchange\": " << report.step_seconds.exchange
        << ", \"sort\": " << report.step_seconds.sort << ", \"output\": " << report.step_seconds.output << "},\n"
        << "  \"seconds\": " << seconds << "\n"
        << "}\n";
    return out.str();
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
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
            io::install_signal_cleanup();
            command = parse_command_line(args);
            if (command.action == CliCommand::Action::plan) throw std::invalid_argument("--plan is not taken by gpusort-mpi");
        } catch (const std::exception& e) {
            if (speaker) std::cerr << "gpusort-mpi: " << e.what() << "\n";
            status = 2;
        }
        if (status == 0 && command.action == CliCommand::Action::help) {
            if (speaker)
                std::cout << "Usage: mpirun -n N gpusort-mpi [OPTIONS] [--partitioned] INPUT OUTPUT\n"
                             "Every rank sorts a share of INPUT (a file all ranks see) into one sorted OUTPUT, or with\n"
                             "--partitioned into OUTPUT.00000, OUTPUT.00001, ... (one per rank, in key order). Rank r uses\n"
                             "GPU r mod the GPUs of its host. The options are those of gpusort-file:\n\n"
                          << command.help_text;
        } else if (status == 0 && command.action == CliCommand::Action::version) {
            if (speaker) std::cout << "gpusort-mpi " << GPUSORT_VERSION << "\n";
        } else if (status == 0) {
            options.sort = command.sort;
            options.sort.device = device_of_local_rank(local_rank());
            if (!command.quiet) {
                const int rank = ranks.rank();
                options.sort.notice = [rank](const std::string& text) {
                    std::cerr << "gpusort-mpi: rank " << rank << ": note: " << text << "\n";
                };
            }
            if (command.progress.value_or(false) && speaker && options.sort.notice)
                options.sort.notice("--progress: gpusort-mpi draws no progress line yet");
            try {
                const DistributedReport report = distributed_sort(options, ranks);
                const std::vector<std::uint64_t> range_of_rank =
                    ranks.all_gather(std::span<const std::uint64_t>(&report.range_records, 1));
                const std::vector<std::uint64_t> sent_of_rank =
                    ranks.all_gather(std::span<const std::uint64_t>(&report.exchange_bytes_sent, 1));
                if (speaker && command.stats_path) {
                    const std::string json = stats_json(report, range_of_rank, sent_of_rank, report.seconds);
                    if (*command.stats_path == "-") {
                        std::cerr << json;
                    } else {
                        std::ofstream file(*command.stats_path);
                        file << json;
                        if (!file.flush()) throw std::runtime_error("cannot write the stats file '" + *command.stats_path + "'");
                    }
                }
            } catch (const RankError& e) {
                if (speaker) std::cerr << "gpusort-mpi: rank " << e.rank() << ": " << e.what() << "\n";
                status = 1;
            } catch (const std::exception& e) {
                // Outside a step (the stats file): this rank alone knows.
                std::cerr << "gpusort-mpi: rank " << ranks.rank() << ": " << e.what() << "\n";
                status = 1;
            }
        }
    }
    MPI_Finalize();
    return status;
}
