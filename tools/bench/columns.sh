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
# shellcheck source=sitting.sh
. "$(dirname "$0")/sitting.sh"

"$gen" --type u64 --count "$count" --seed 1 "$work/keys"
"$gen" --type u64 --count "$count" --seed 2 "$work/values"
records=$(($(stat -c %s "$work/keys") / 8 * 2))
"$gen" --type u64 --count "$records" --seed 3 "$work/big"
cat "$work/keys" "$work/values" "$work/big" > /dev/null  # into the page cache

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
rm -f "$work"/out.*
medians
