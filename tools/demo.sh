#!/usr/bin/env bash
# Quick start: installs what is missing, builds, generates 1 GiB of random u64 keys, sorts them
# with a 256 MiB memory budget (so runs are spilled and merged) and checks the result; then the
# same for 200 MB of Sort Benchmark records (--format gensort) with a 64 MiB budget, and once more
# through a pipe into a zstd-compressed file, verified (--verify) before it is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
mkdir -p demo
build/tools/gpusort-gen --type u64 --count 128M --seed 1 demo/random.bin
time build/src/gpusort-file --memory 256M --stats demo/stats.json demo/random.bin demo/sorted.bin
build/tools/gpusort-check --type u64 --input demo/random.bin demo/sorted.bin
cat demo/stats.json
build/tools/gpusort-gen --format gensort --count 2M --seed 1 demo/records.bin
time build/src/gpusort-file --memory 64M --format gensort demo/records.bin demo/records-sorted.bin
build/tools/gpusort-check --format gensort --input demo/records.bin demo/records-sorted.bin
time cat demo/records.bin | build/src/gpusort-file --memory 64M --format gensort --verify - demo/records-sorted.bin.zst
zstd -dc demo/records-sorted.bin.zst | cmp - demo/records-sorted.bin
ls -l demo/records.bin demo/records-sorted.bin.zst
# Every step above stops the script if it fails, so reaching here means every check passed.
echo "demo: all checks passed: 1 GiB of u64 keys and 200 MB of gensort records sorted and checked;" \
     "$(du -sh demo | cut -f1) in demo/ (rm -r demo removes it)"
