#!/usr/bin/env bash
# Builds gpusort with sanitizers and runs tests under them; any sanitizer report fails the run.
#   tools/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (with LeakSanitizer) in
#                            build-asan/: the default suite (ctest -LE long), gpusort-mpi's
#                            tests included where MPI is found
#   tools/sanitize.sh tsan   ThreadSanitizer in build-tsan/: the tests labelled "threads"
# Further arguments go to ctest (e.g. -R StreamWriter). The GPU layer is not built.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  asan) sanitize="address,undefined"; dir=build-asan; select=(-LE 'long|mpi') ;;
  tsan) sanitize="thread"; dir=build-tsan; select=(-L threads -LE 'long|mpi') ;;
  *) echo "usage: tools/sanitize.sh asan|tsan [CTEST ARGUMENTS...]" >&2; exit 2 ;;
esac
shift
tools/setup.sh
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSORT_ENABLE_CUDA=OFF -DGPUSORT_SANITIZE="$sanitize"
cmake --build "$dir" -j "$(nproc)"
# The programs the tests start inherit these. A report ends the process with status 86, which no
# program of ours uses, so that it is not taken for an expected failure (1 or 2).
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=86"
# What Open MPI itself leaves allocated at exit is not reported (the file says how it is matched).
export LSAN_OPTIONS="suppressions=$PWD/tools/sanitize/openmpi.supp:print_suppressions=0"
cd "$dir"
ctest --output-on-failure -j "$(nproc)" "${select[@]}" "$@"
# gpusort-mpi's tests (label mpi; only the asan build has them): Open MPI's stacks are unwound
# slowly, which the suppressions need and which would slow every other test down.
if [[ "$sanitize" == address* ]]; then
  ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" \
    ctest --output-on-failure -j "$(nproc)" -L mpi -LE long --no-tests=ignore "$@"
fi
