#!/usr/bin/env bash
# The test command: installs dependencies, builds everything (CUDA kernels too where nvcc is
# present, so they are compile-checked even without a GPU) and runs every ctest label.
# GPU tests skip themselves, visibly, on a machine without a GPU.
#
# The PlanStore tests need a real PostgreSQL server: one is started here on loopback under a
# temporary data directory (deploy/test-postgres.sh), named to the tests by
# SPMVD_TEST_POSTGRES_URL, and stopped and deleted on exit, however the tests end.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
build_dir=${SPMVD_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build_dir" -j "$(nproc)"

postgres_dir=$(mktemp -d "${TMPDIR:-/tmp}/spmvd-test-postgres.XXXXXX")
stop_postgres() {
  bash deploy/test-postgres.sh stop "$postgres_dir" || true
  rm -rf "$postgres_dir"
}
trap stop_postgres EXIT
SPMVD_TEST_POSTGRES_URL=$(bash deploy/test-postgres.sh start "$postgres_dir")
export SPMVD_TEST_POSTGRES_URL
echo "run-tests: PostgreSQL for the tests at $SPMVD_TEST_POSTGRES_URL"

ctest --test-dir "$build_dir" --output-on-failure --timeout 600 -j "$(nproc)"
