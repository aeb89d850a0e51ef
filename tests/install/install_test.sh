#!/usr/bin/env bash
# The installed package, as a user meets it: `cmake --install` of this build into a fresh prefix,
# then a separate project (consumer/) found through find_package(gpusort) is configured, built and
# run; it sorts through the library and checks the results. Neither the library nor the program
# may need Boost.Program_options (the command line's library), the programs are installed, and the
# headers hold no internals.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work"
mkdir -p "$work/data"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
programs=(gpusort-file gpusort-sort gpusort-gen gpusort-check)
[ -x "$build/src/distributed/gpusort-mpi" ] && programs+=(gpusort-mpi)  # where MPI was found
for program in "${programs[@]}"; do
  test -x "$work/prefix/bin/$program" || { echo "install_test: bin/$program was not installed"; exit 1; }
  # The manual page, where help2man made one: its options and exit statuses come from --help.
  if command -v help2man > /dev/null; then
    page="$work/prefix/share/man/man1/$program.1"
    test -f "$page" || { echo "install_test: share/man/man1/$program.1 was not installed"; exit 1; }
    grep -q "^\.SH OPTIONS" "$page" && grep -qi "exit status" "$page" ||
      { echo "install_test: $page lacks the options or the exit statuses"; exit 1; }
  fi
done
# The installed headers show a user the API only: none of gpusort-mpi's plumbing, testing aids,
# the planner's inputs or what the stages read off the plan (src/sort/sort_part.hpp,
# src/plan/plan_sort.hpp, src/plan/merge_plan.hpp), and nothing from src/.
if grep -rnE 'SharedRuns|OutputRegion|input_memory|max_fan_in|max_run_records|PlanInput|ChunkCapacity|plan_sort|merge_buffer_bytes|merge_slices|merge_groups|spill_piece|#include "src/' \
    "$work/prefix/include/gpusort"; then
  echo "install_test: the installed headers show internals (above)"; exit 1
fi
cmake -S "$source/tests/install/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
if ldd "$work/build/consumer" | grep -q program_options; then
  echo "install_test: the consumer links Boost.Program_options:"; ldd "$work/build/consumer"; exit 1
fi
"$work/build/consumer" "$work/data"
