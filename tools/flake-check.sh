#!/usr/bin/env bash
# Runs a test suite RUNS times (default 20) while one busy loop per CPU competes with it, and stops
# at the first failing run: tests that pass only on an idle machine fail here.
#   tools/flake-check.sh [RUNS] [CTEST ARGUMENTS...]         the default suite (ctest -LE long) from
#                                                           a Release build in build-flake/
#   tools/flake-check.sh --tsan [RUNS] [CTEST ARGUMENTS...]  the threaded tests under ThreadSanitizer
#                                                           (tools/sanitize.sh tsan), several times
#                                                           slower: a bounded wait is tried hardest here
set -euo pipefail
cd "$(dirname "$0")/.."
tsan=0
if [ "${1:-}" = --tsan ]; then
  tsan=1
  shift
fi
runs=${1:-20}
shift $(($# > 0 ? 1 : 0))
if ((tsan)); then
  tools/sanitize.sh tsan -N > /dev/null  # builds, lists the tests, runs none
  log=build-tsan/flake-check.log
  run_once() { tools/sanitize.sh tsan "$@"; }
else
  tools/setup.sh
  cmake -S . -B build-flake -DCMAKE_BUILD_TYPE=Release -DGPUSORT_ENABLE_CUDA=OFF
  cmake --build build-flake -j "$(nproc)"
  log=build-flake/flake-check.log
  run_once() { (cd build-flake && ctest --output-on-failure -j "$(nproc)" -LE long "$@"); }
fi

burners=()
stop_burners() { for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_burners EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < $(nproc); ++i)); do
  (while :; do :; done) &
  burners+=($!)
done

start=$SECONDS
for ((run = 1; run <= runs; ++run)); do
  run_start=$SECONDS
  if ! run_once "$@" > "$log" 2>&1; then
    cat "$log"
    echo "flake-check: run $run of $runs failed after $((SECONDS - run_start)) s (log: $log)"
    exit 1
  fi
  echo "flake-check: run $run of $runs passed in $((SECONDS - run_start)) s"
done
echo "flake-check: all $runs runs passed in $((SECONDS - start)) s"
