#!/usr/bin/env bash
# Installs the Debian packages uir builds against when any is missing; a no-op
# when all are there. Used by `make demo` and `make test`. Extra package names
# given as arguments are installed too (`make lint` asks for clang-format-19).
set -euo pipefail

packages=(
  g++                 # the C++20 compiler
  llvm-19-dev         # LLVM 19 headers, static libraries and its CMake package
  llvm-19-tools       # FileCheck, for the golden-text tests
  libzstd-dev         # LLVM's CMake package links these compression libraries
  zlib1g-dev
  libtbb-dev          # oneTBB: the worker thread pool
  pkgconf             # finds OpenBLAS for CMake
  libopenblas-dev     # BLAS: the evaluator's large float dots and convolutions
  libeigen3-dev       # Eigen's FFT module: the evaluator's fft
  libkissfft-dev      # KISS FFT's C++ header: the runtime's fft
  libabsl-dev         # Abseil's flat hash tables: the IR's per-instruction maps
  libopenmpi-dev      # Open MPI: collectives across processes (uir.distributed)
  openmpi-bin         # mpirun: uir run --np N, the tests across processes
  ccache              # optional, but makes rebuilds after a clean build cheap
  clang-format-19     # the C++ format check of the test suite
  clang-19            # builds the libFuzzer target for the HLO parser
  libclang-rt-19-dev  # libFuzzer and the sanitizer runtimes for clang
  graphviz            # dot: the drawings of the rich displays (a table without it)
  chromium            # headless: the displays and reports rendered in a browser by the tests
)
packages+=("$@")
# Debian's own python3 needs its venv module and headers as separate packages.
if [[ "$(command -v python3 || true)" == /usr/bin/python3 ]]; then
  packages+=(python3-venv python3-dev)
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "uir: no dpkg here; install LLVM 19, oneTBB and a C++20 compiler by hand (README.md, 'Without apt')." >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "uir: installing Debian packages: ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "uir: need root (or sudo) to run: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
