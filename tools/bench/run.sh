#!/usr/bin/env bash
# The benchmark in one command: installs what is missing (tools/setup.sh: the STXXL peer's library,
# matplotlib for the plots), builds gpusort and the peers into build/ (tools/build.sh), then runs
# tools/bench/compare.py on every workload and writes bench-results/: table.md, results.csv and
# the plots. Arguments go to compare.py (--quick: small sizes, about a minute; --sizes 1G,4G;
# --only NAME,...; --list). The full run on 16 cores takes about half an hour and needs about
# 50 GB free in the work folder (--work DIR; default: a temp folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/setup.sh
tools/build.sh
exec python3 tools/bench/compare.py --bin build --out bench-results "$@"
