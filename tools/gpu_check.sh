#!/usr/bin/env bash
# The GPU check, one prepared script for a machine with a GPU, its driver,
# CMake, a C++ compiler and Python with NumPy (JAX and PyTorch for the
# comparison), and no uir compiler or LLVM: builds the runtime-only module
# (runtime_only/), then runs tools/gpu_check.py on the executables
# `make gpu-artifacts` serialized (default build/gpu). Under 8 minutes.
#   bash tools/gpu_check.sh [ARTIFACT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
artifacts=${1:-build/gpu}
if ! ls "$artifacts"/*.uirgpu >/dev/null 2>&1; then
  echo "no serialized executables in $artifacts: run 'make gpu-artifacts' on a machine with uir" >&2
  exit 2
fi
cmake -S runtime_only -B build/runtime-only -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/runtime-only -j "$(nproc)" >/dev/null
export UIR_RUNTIME_LIB="$PWD/build/runtime-only/libuir_runtime.so"
# The custom call's target, in XLA's GPU convention, where nvcc is.
if command -v nvcc >/dev/null 2>&1; then
  nvcc -O2 -shared -Xcompiler -fPIC tools/gpu_custom_call.cu -o "$artifacts/custom_call.so" -lcudart
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true
timeout 420 python3 tools/gpu_check.py "$artifacts"
