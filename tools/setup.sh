#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages gpusort needs to build and test (only those missing; the
# compressors are used by the tests to check compressed outputs),
# using sudo when not run as root. The CUDA toolkit is optional and not installed here: when
# nvcc is found (on PATH or in /usr/local/cuda) the GPU layer is built as well. Open MPI brings
# gpusort-mpi, the distributed mode, and its tests (mpirun on this host). numpy is the reference of
# tools/soak.py. STXXL and matplotlib are
# for the benchmarks (tools/bench/compare.py): its STXXL peer and its plots. The Python module
# (import gpusort) is built against python3-dev, numpy and pybind11, and tested with pytest;
# pip and setuptools install it with `pip install --no-build-isolation .`.
# `tools/setup.sh fuzz` also installs clang with its libFuzzer and sanitizer runtimes (tools/fuzz.sh).
set -euo pipefail
packages=(build-essential cmake libboost-program-options-dev libboost-iostreams-dev liblzma-dev libtbb-dev
          libgtest-dev libips4o-dev gzip bzip2 xz-utils zstd help2man openmpi-bin libopenmpi-dev
          libstxxl-dev python3-matplotlib python3-numpy python3-dev pybind11-dev python3-pybind11 python3-pytest
          python3-setuptools python3-pip)
if [ "${1:-}" = fuzz ]; then
  packages+=(clang libclang-rt-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
