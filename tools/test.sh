#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
tools/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" -LE long
