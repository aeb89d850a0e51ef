#!/usr/bin/env bash
# Text lines beside GNU sort and cp, in one sitting, the inputs in the page cache (issue targets:
# 10 GB of log lines and of CSV, by the whole line and by one numeric field; then a spilled case):
#   CASE-gnu      LC_ALL=C sort --parallel=THREADS -S 50% [KEYS] (in the first round only: it is slow)
#   CASE-gpusort  gpusort-file --lines [KEYS] --stats (the same engine as gpusort-sort)
#   CASE-cp       cp of the input
# with the cases log (whole lines), log-key (-k2,2 -k6n: level, then the number after it), csv
# (whole lines) and csv-num (-t, -k4,4n); with SPILL set (e.g. 20G), a file of that many bytes of
# log lines is sorted under -S 4G / --memory 4G by both (spill-gnu, spill-gpusort). The first
# round's output of gpusort is compared with GNU sort's (cmp; by cksum in the spilled case).
# SIZE=0 leaves the four cases out. Each output is fresh (deleted,
# then `sync`). Prints each run's seconds into OUT/times.txt, the stats into OUT, the medians last.
# Only the cases in $CASES run (default: all four); GNU sort only on those also in $GNU_CASES
# (unset: all four; empty: none). With $BEFORE (another build folder), that build's gpusort-file
# runs in turns with this one (CASE-before), for an A/B of two builds; its output is compared too.
#   tools/bench/text.sh BIN WORK OUT [SIZE=10G] [ROUNDS=3] [THREADS=16] [SPILL=]
# BIN: the build folder (src/gpusort-file, tools/gpusort-gen).
set -euo pipefail
bin=$1 work=$2 out=$3 size=${4:-10G} rounds=${5:-3} threads=${6:-16} spill=${7:-}
file=$bin/src/gpusort-file gen=$bin/tools/gpusort-gen
mkdir -p "$work" "$out"
# shellcheck source=sitting.sh
. "$(dirname "$0")/sitting.sh"

if [ "$size" != 0 ]; then
    "$gen" --lines log --size "$size" --seed 1 "$work/log.txt"
    "$gen" --lines csv --size "$size" --seed 2 "$work/csv.txt"
    cat "$work/log.txt" "$work/csv.txt" > /dev/null  # into the page cache
fi

# The case's input and its keys as GNU sort's options and gpusort-file's.
case_input() { case $1 in log*) echo "$work/log.txt" ;; csv*) echo "$work/csv.txt" ;; esac; }
gnu_keys() { case $1 in log-key) echo "-k2,2 -k6n" ;; csv-num) echo "-t, -k4,4n" ;; *) echo "" ;; esac; }
gpusort_keys() {
    case $1 in
        log-key) echo "--line-key 2,2 --line-key 6n" ;;
        csv-num) echo "--field-separator , --line-key 4,4n" ;;
        *) echo "" ;;
    esac
}

for round in $(seq 1 "$([ "$size" = 0 ] && echo 0 || echo "$rounds")"); do
    for c in ${CASES:-log log-key csv csv-num}; do
        input=$(case_input "$c")
        gnu=$([ "$round" = 1 ] && [[ " ${GNU_CASES-log log-key csv csv-num} " == *" $c "* ]] && echo 1 || true)
        if [ -n "$gnu" ]; then
            # shellcheck disable=SC2046  # the keys are words
            run "$c-gnu" "$round" env LC_ALL=C sort --parallel="$threads" -S 50% $(gnu_keys "$c") "$input" -o "$work/out.gnu"
            mv "$work/out.gnu" "$work/expected"
        fi
        for build in ${BEFORE:+before} gpusort; do
            binary=$([ "$build" = before ] && echo "$BEFORE/src/gpusort-file" || echo "$file")
            # shellcheck disable=SC2046
            run "$c-$build" "$round" "$binary" --lines $(gpusort_keys "$c") "$input" "$work/out.gpusort" \
                --stats "$out/stats-$c-$build-$round.json"
            if [ "$round" = 1 ]; then  # compared with GNU sort's output, or else with the first build's
                [ -f "$work/expected" ] || { mv "$work/out.gpusort" "$work/expected"; continue; }
                cmp "$work/expected" "$work/out.gpusort" || { echo "$c: $build's output differs"; exit 1; }
            fi
        done
        rm -f "$work/expected"
        run "$c-cp" "$round" cp "$input" "$work/out.copy"
    done
done
rm -f "$work/log.txt" "$work/csv.txt"
if [ -n "$spill" ]; then
    "$gen" --lines log --size "$spill" --seed 3 "$work/big.txt"
    cat "$work/big.txt" > /dev/null
    run spill-gnu 1 env LC_ALL=C sort --parallel="$threads" -S 4G -T "$work" "$work/big.txt" -o "$work/out.gnu"
    expected=$(cksum < "$work/out.gnu")  # not kept: the disk holds the input, the runs and one output
    for round in $(seq 1 "$rounds"); do
        run spill-gpusort "$round" "$file" --lines --memory 4G --tmp-dir "$work" "$work/big.txt" "$work/out.gpusort" \
            --stats "$out/stats-spill-$round.json"
        if [ "$round" = 1 ] && [ "$(cksum < "$work/out.gpusort")" != "$expected" ]; then
            echo "spill: gpusort's output differs from GNU sort's"
            exit 1
        fi
        run spill-cp "$round" cp "$work/big.txt" "$work/out.copy"
    done
    rm -f "$work/big.txt"
fi
rm -f "$work"/out.*
medians
