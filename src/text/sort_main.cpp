// gpusort-sort: a drop-in for `LC_ALL=C sort` (GNU coreutils) on gpusort's engine. Exit status as
// GNU sort's: 0, 1 when -c/-C finds disorder, 2 on any error, with one line on stderr that starts
// with "gpusort-sort: ". SIGINT, SIGTERM and SIGHUP end it by that signal, leaving no temp file
// and no output file (one that was there is left as it was).
#include "io/signal_cleanup.hpp"
#include "src/text/sort_args.hpp"
#include "src/text/text_sort.hpp"

#include <exception>
#include <iostream>
#include <new>

namespace {

constexpr const char* kHelp = R"(Usage: gpusort-sort [OPTION]... [FILE]...
Sort the lines of the FILEs together, in the C locale's byte order (as LC_ALL=C sort
does), and write them to standard output. With no FILE, or where FILE is -, standard
input is read.

Options:
  -b, --ignore-leading-blanks  skip the blanks before each key
  -f, --ignore-case            compare lower-case letters as upper-case ones
  -n, --numeric-sort           compare keys as decimal numbers
  -r, --reverse                reverse the order
  -k, --key=KEYDEF             sort by a key (F[.C][OPTS][,F[.C][OPTS]], OPTS of bfnr);
                               several keys are compared in turn
  -t, --field-separator=SEP    fields end at SEP, not where blanks begin
  -s, --stable                 no last-resort comparison of whole lines
  -u, --unique                 keep the first of each group of lines with equal keys;
                               with -c, check that the keys strictly increase
  -z, --zero-terminated        lines end with a NUL byte, not a newline

Other options:
  -c, --check[=diagnose-first]  check that the input is sorted; report the first
                               line out of order (exit status 1)
  -C, --check=quiet, --check=silent  the same, without the report
  -m, --merge                  merge inputs that are sorted already
  -o, --output=FILE            write to FILE (put in place once complete; FILE may be
                               one of the inputs)
  -S, --buffer-size=SIZE       memory to sort in (suffixes b K M G T P E, %: of the
                               memory; default: half of what is available)
  -T, --temporary-directory=DIR  where runs go when the input is larger than -S
                               (default: $TMPDIR, else /tmp); several spread them
      --parallel=N             threads (default: all the CPUs)
      --help                   print this help and exit
      --version                print the version and exit

Not supported (refused by name): -d -g -h -i -M -R -V, --sort, --random-source,
--files0-from, --compress-program, --batch-size, --debug, +POS keys.

Chunks of lines are sorted on an NVIDIA GPU when one can be used, else on all CPUs.

Exit status:
  0  sorted or merged (or -c, -C found the input in order)
  1  -c or -C found a line out of order
  2  an error (a FILE named by -o was not created, an existing one is unchanged)
)";

}  // namespace

int main(int argc, char** argv) {
    using namespace gpusort;
    try {
        io::install_signal_cleanup();
        const SortCommand command = parse_sort_args(argc, argv);
        if (command.help) {
            std::cout << kHelp << std::flush;
            return 0;
        }
        if (command.version) {
            std::cout << "gpusort-sort (gpusort) " << GPUSORT_VERSION << std::endl;
            return 0;
        }
        return run_sort_command(command);
    } catch (const std::bad_alloc&) {
        std::cerr << "gpusort-sort: out of memory (try a smaller -S)\n";
    } catch (const std::exception& e) {
        std::cerr << "gpusort-sort: " << e.what() << "\n";
    }
    return 2;
}
