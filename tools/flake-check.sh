#!/usr/bin/env bash
# Runs the default test suite (ctest -LE long) RUNS times (default 20) from a Release build in
# build-flake/ while one busy loop per CPU competes with it, and stops at the first failing run:
# tests that pass only on an idle machine fail here. Further arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
shift $(($# > 0 ? 1 : 0))
tools/setup.sh
cmake -S . -B build-flake -DCMAKE_BUILD_TYPE=Release -DGPUSORT_ENABLE_CUDA=OFF
cmake --build build-flake -j "$(nproc)"

burners=()
stop_burners() { for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_burners EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < $(nproc); ++i)); do
  (while :; do :; done) &
  burners+=($!)
done

cd build-flake
start=$SECONDS
for ((run = 1; run <= runs; ++run)); do
  run_start=$SECONDS
  if ! ctest --output-on-failure -j "$(nproc)" -LE long "$@" > flake-check.log 2>&1; then
    cat flake-check.log
    echo "flake-check: run $run of $runs failed after $((SECONDS - run_start)) s (log: build-flake/flake-check.log)"
    exit 1
  fi
  echo "flake-check: run $run of $runs passed in $((SECONDS - run_start)) s"
done
echo "flake-check: all $runs runs passed in $((SECONDS - start)) s"
