// gpusort-file: the command-line program (or, with --plan, only the plan of the sort; with --gather,
// a saved permutation applied to a column instead of a sort; with --lines, a sort of text lines). Every failure ends in one line on
// stderr that starts with "gpusort-file: " and a non-zero exit status (2: bad command line, 1:
// failed sort); SIGINT, SIGTERM and SIGHUP end it by that signal, after removing any named temp file.
#include "io/file.hpp"
#include "io/io_error.hpp"
#include "io/signal_cleanup.hpp"
#include "src/cli/cli_options.hpp"
#include "src/cli/line_report.hpp"
#include "src/cli/progress_line.hpp"
#include "src/plan/plan_report.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <memory>
#include <sys/resource.h>
#include <system_error>
#include <unistd.h>

namespace {

// Writes a --stats FILE.
void write_stats(const std::string& path, const std::string& json) {
    std::ofstream stats(path);
    stats << json;
    if (!stats.flush()) throw std::runtime_error("cannot write the stats file '" + path + "'");
}

// A --stats FILE that cannot be written fails the command before the sort, so that OUTPUT is not
// touched: it is opened for appending (its contents stay), and made empty where it was not there.
// A file made so goes again when the sort fails (remove_if_made).
class StatsFileCheck {
public:
    explicit StatsFileCheck(const std::optional<std::string>& path) {
        if (!path || *path == "-") return;
        std::error_code error;
        made_ = !std::filesystem::exists(*path, error);
        if (!std::ofstream(*path, std::ios::app)) throw std::runtime_error("cannot write the stats file '" + *path + "'");
        path_ = *path;
    }
    void remove_if_made() const {
        std::error_code error;
        if (made_ && !path_.empty()) std::filesystem::remove(path_, error);
    }

private:
    std::string path_;
    bool made_ = false;
};

}  // namespace

int main(int argc, char** argv) {
    using namespace gpusort;
    // Under a limit on the address space (ulimit -v) malloc keeps to two arenas: each further one
    // (one per thread, up to eight per CPU) reserves 64 MiB of it.
    rlimit address_space{};
    if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY)
        ::mallopt(M_ARENA_MAX, 2);
    CliCommand command;
    try {
        io::install_signal_cleanup();
        command = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        std::cerr << "gpusort-file: " << e.what() << "\n";
        return 2;
    }
    if (command.action == CliCommand::Action::help) {
        std::cout << command.help_text;
        return 0;
    }
    if (command.action == CliCommand::Action::version) {
        std::cout << "gpusort-file " << GPUSORT_VERSION << "\n";
        return 0;
    }
    if (!command.quiet)
        command.sort.notice = [](const std::string& text) { std::cerr << "gpusort-file: note: " << text << "\n"; };
    ProgressCounters counters;
    std::unique_ptr<ProgressLine> progress;
    if (command.action == CliCommand::Action::sort && command.progress.value_or(!command.quiet && io::is_terminal(STDERR_FILENO))) {
        try {
            progress = std::make_unique<ProgressLine>(counters, STDERR_FILENO);
            command.sort.progress = &counters;
        } catch (const std::system_error& e) {  // its thread cannot be started: sort without it
            if (command.sort.notice) command.sort.notice(std::string("no progress line: ") + e.what());
        }
    }
    try {
        if (command.action == CliCommand::Action::plan) {
            // What the sort would take, on stdout (as JSON with --stats -, also into a --stats FILE).
            std::string json, text;
            if (command.lines) {
                const LinePlan plan = plan_line_file(command.sort, *command.lines);
                json = line_plan_report_json(command.sort, plan);
                text = line_plan_text(plan);
            } else {
                const SortPlan plan = plan_file(command.sort);
                json = plan_report_json(command.sort, plan);
                text = plan_text(plan);
            }
            if (command.stats_path && *command.stats_path != "-") write_stats(*command.stats_path, json);
            std::cout << (command.stats_path == "-" ? json : text);
            if (!std::cout.flush()) throw std::runtime_error("cannot write the plan to standard output");
            return 0;
        }
        const StatsFileCheck stats_file(command.stats_path);
        std::string summary, json;
        try {
            if (command.lines) {
                const LineFileReport report = sort_line_file(command.sort, *command.lines);
                summary = line_sort_summary(report);
                json = line_stats_json(command.sort, *command.lines, report);
            } else {
                const SortReport report = command.gather_index ? gather_file(*command.gather_index, command.sort) : sort_file(command.sort);
                summary = sort_summary(report);
                json = stats_json(command.sort, report);
            }
        } catch (...) {
            stats_file.remove_if_made();
            throw;
        }
        if (progress) progress->finish(summary);  // the line ends before anything else is printed
        if (command.stats_path) {
            if (*command.stats_path == "-")
                std::cerr << json;
            else
                write_stats(*command.stats_path, json);
        }
    } catch (const std::bad_alloc&) {
        progress.reset();
        std::cerr << "gpusort-file: cannot sort " << io::input_shown(command.sort.input) << ": out of memory (try a smaller --memory)\n";
        return 1;
    } catch (const std::system_error& e) {
        // A thread that could not be started (a limit on processes or on memory).
        progress.reset();
        std::cerr << "gpusort-file: cannot sort " << io::input_shown(command.sort.input) << ": " << e.what()
                  << " (try a smaller --threads or --memory)\n";
        return 1;
    } catch (const std::exception& e) {
        progress.reset();
        std::cerr << "gpusort-file: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
