#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (ASan + UBSan) into build-fuzz/ and runs
# each for SECONDS (default 60), one after the other, on a fresh copy of its saved inputs
# (tests/fuzz/corpus/TARGET and regressions/TARGET; the repository's folders are not grown).
#   tools/fuzz.sh [SECONDS] [TARGET...]     targets: key_spec size cli stream_reader sort text (default: all)
# Fails when a target finds a crash, a leak, a timeout (10 s per input), too much memory (2 GiB) or
# a wrong result; the input that did it stays in build-fuzz/fuzz/TARGET/artifacts/ and its path is
# printed (replay it with build-fuzz/tests/fuzz/gpusort_fuzz_TARGET FILE). A new bug's input goes
# to tests/fuzz/regressions/TARGET/, where the normal test suite replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift $(($# > 0 ? 1 : 0))
targets=("$@")
((${#targets[@]})) || targets=(key_spec size cli stream_reader sort text)

tools/setup.sh fuzz
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" \
  -DGPUSORT_ENABLE_CUDA=OFF -DGPUSORT_FUZZ=ON
cmake --build build-fuzz -j "$(nproc)" --target gpusort_fuzzers

found=()
for target in "${targets[@]}"; do
  work="build-fuzz/fuzz/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  for saved in "tests/fuzz/corpus/$target" "tests/fuzz/regressions/$target"; do
    [ -d "$saved" ] && cp "$saved"/* "$work/corpus/" 2>/dev/null || true
  done
  echo "fuzz: $target for $seconds s"
  status=0
  "build-fuzz/tests/fuzz/gpusort_fuzz_$target" "$work/corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" >"$work/log" 2>&1 || status=$?
  # The last status line (coverage, corpus) and the totals.
  grep -E '^#[0-9]+' "$work/log" | tail -n 1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/log" || true
  artifacts=$(find "$work/artifacts" -type f)
  if ((status != 0)) || [ -n "$artifacts" ]; then
    echo "fuzz: $target FAILED (status $status); the end of $work/log:"
    tail -n 40 "$work/log"
    for artifact in $artifacts; do echo "fuzz: input that failed: $artifact"; done
    found+=("$target")
  fi
done
if ((${#found[@]})); then
  echo "fuzz: failures in ${found[*]}"
  exit 1
fi
echo "fuzz: no failures"
