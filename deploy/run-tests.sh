#!/usr/bin/env bash
# The test command: installs dependencies, builds everything (CUDA kernels too where nvcc is
# present, so they are compile-checked even without a GPU) and runs every ctest label.
# GPU tests skip themselves, visibly, on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
build_dir=${SPMVD_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure --timeout 600 -j "$(nproc)"
