# Sourced by the benchmarks of one sitting (columns.sh, text.sh): timed runs, each with fresh
# outputs, and the medians of the rounds. They need $work (where the outputs $work/out.* go) and
# $out (times.txt: a line "CASE ROUND SECONDS" per run; medians.txt).

seconds() {  # seconds COMMAND...: runs it, prints its wall time
    local start end
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    awk "BEGIN { print $end - $start }"
}

run() {  # run CASE ROUND COMMAND...: the outputs deleted and `sync`, then the timed command
    local name=$1 round=$2
    shift 2
    rm -f "$work"/out.*
    sync
    echo "$name $round $(seconds "$@")" | tee -a "$out/times.txt"
}

medians() {  # the median of each case's rounds, with the rounds, into medians.txt
    awk '{ t[$1] = t[$1] " " $3 } END { for (c in t) print c, t[c] }' "$out/times.txt" | sort |
        while read -r name rest; do
            echo "$name median $(echo "$rest" | tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') of$rest"
        done | tee "$out/medians.txt"
}
