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
# The plots need matplotlib, which Debian's python3-matplotlib installs for the system's Python: take
# that one when the python3 first on PATH (a virtual environment, say) has none.
python=python3
if ! python3 -c 'import matplotlib' 2>/dev/null && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  python=/usr/bin/python3
fi
exec "$python" tools/bench/compare.py --bin build --out bench-results "$@"
