// gpusort-file: the command-line program. Every failure ends in one line on stderr that
// starts with "gpusort-file: " and a non-zero exit status (2: bad command line, 1: failed sort).
#include "src/cli_options.hpp"

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
    using namespace gpusort;
    CliCommand command;
    try {
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
    try {
        SortReport report = sort_file(command.sort);
        if (command.stats_path) {
            const std::string json = stats_json(command.sort, report);
            if (*command.stats_path == "-") {
                std::cerr << json;
            } else {
                std::ofstream stats(*command.stats_path);
                stats << json;
                if (!stats.flush())
                    throw std::runtime_error("cannot write the stats file '" + *command.stats_path + "'");
            }
        }
    } catch (const std::bad_alloc&) {
        std::cerr << "gpusort-file: out of memory; try a smaller --memory\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "gpusort-file: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
