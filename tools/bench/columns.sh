#!/usr/bin/env bash
# Columns and the permutation beside their peers, in one sitting, the inputs in the page cache:
#   values      N u64 keys with N u64 values (--values), one chunk on the device
#   values-dm   the same with --device-memory DM (runs merged on the device)
#   records16   the same bytes as 16-byte records sorted by their first u64 (--key 0:u64): 2N
#               random u64 read as records (random keys and values, as the columns hold)
#   cp-columns  cp of the key file and of the value file
#   argsort     --index-out alone over 2N u64 keys (the records16 file read as keys)
#   cp-keys     cp of that file
# The cases run in turns, --rounds times; each output is fresh (deleted, then `sync`); the
# first round's outputs are checked with gpusort-check. Prints each run's seconds and the
# stats of gpusort's runs (stats-CASE-ROUND.json) into OUT.
#   tools/bench/columns.sh BIN WORK OUT [COUNT=1G] [ROUNDS=3] [DM=2G]
# BIN: the build folder (src/gpusort-file, tools/gpusort-gen, tools/gpusort-check).
set -euo pipefail
bin=$1 work=$2 out=$3 count=${4:-1G} rounds=${5:-3} dm=${6:-2G}
file=$bin/src/gpusort-file gen=$bin/tools/gpusort-gen check=$bin/tools/gpusort-check
mkdir -p "$work" "$out"

"$gen" --type u64 --count "$count" --seed 1 "$work/keys"
"$gen" --type u64 --count "$count" --seed 2 "$work/values"
records=$(($(stat -c %s "$work/keys") / 8 * 2))
"$gen" --type u64 --count "$records" --seed 3 "$work/big"
cat "$work/keys" "$work/values" "$work/big" > /dev/null  # into the page cache

clean() { rm -f "$work"/out.*; sync; }
run() {  # run CASE ROUND COMMAND...: times the command, its stats into OUT
    local name=$1 round=$2
    shift 2
    clean
    local start end
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    echo "$name $round $(awk "BEGIN { print $end - $start }")" | tee -a "$out/times.txt"
}
stats() { echo "--stats=$out/stats-$1-$2.json"; }

for round in $(seq 1 "$rounds"); do
    run values "$round" "$file" --type u64 "$work/keys" "$work/out.keys" --values "$work/values:$work/out.values" "$(stats values "$round")"
    [ "$round" = 1 ] && "$check" --input "$work/keys" --values "$work/values:$work/out.values" "$work/out.keys"
    run values-dm "$round" "$file" --type u64 --device-memory "$dm" "$work/keys" "$work/out.keys" \
        --values "$work/values:$work/out.values" "$(stats values-dm "$round")"
    [ "$round" = 1 ] && "$check" --input "$work/keys" --values "$work/values:$work/out.values" "$work/out.keys"
    run records16 "$round" "$file" --record-size 16 --key 0:u64 "$work/big" "$work/out.records" "$(stats records16 "$round")"
    [ "$round" = 1 ] && "$check" --record-size 16 --key 0:u64 --input "$work/big" "$work/out.records"
    run cp-columns "$round" sh -c "cp '$work/keys' '$work/out.k' && cp '$work/values' '$work/out.v'"
    run argsort "$round" "$file" --type u64 "$work/big" --index-out "$work/out.index" "$(stats argsort "$round")"
    [ "$round" = 1 ] && "$check" --input "$work/big" --index "$work/out.index"
    run cp-keys "$round" cp "$work/big" "$work/out.copy"
done
clean
# Medians per case.
awk '{ t[$1] = t[$1] " " $3 } END { for (c in t) print c, t[c] }' "$out/times.txt" |
    while read -r name rest; do
        echo "$name median $(echo "$rest" | tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') of$rest"
    done | tee "$out/medians.txt"
