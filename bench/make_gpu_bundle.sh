#!/usr/bin/env bash
# Packs the GPU build (build-gpu, -DCMAKE_CUDA_ARCHITECTURES=90) with the shared matrices into
# .gpu/ for the device tool (carry: [".gpu"], or [".gpux"] once the bundle outgrows 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
programs=()
for p in "$build"/bin/spmvd "$build"/bin/spmv "$build"/bin/spmvctl "$build"/bin/spmv-bench \
         "$build"/bin/matrix_stats "$build"/bin/feature_timing "$build"/bin/spmvd-memory-churn "$build"/bin/spmv-calibrate "$build"/bin/model-accuracy \
         "$build"/tests/kernels_conformance_gpu "$build"/tests/kernels_conformance \
         "$build"/tests/calibration_gpu "$build"/tests/*_gpu_test "$build"/tests/*_gpu_tests; do
  [ -x "$p" ] && programs+=("$p")
done
mkdir -p /tmp/gpu-matrices/matrices
cp -u ../shared/matrices/*.mtx.gz /tmp/gpu-matrices/matrices/
../shared/tools/gpu-bundle .gpu "${programs[@]}" -- /tmp/gpu-matrices/matrices
strip --strip-debug .gpu/bin/* .gpu/lib/* 2>/dev/null || true
du -sh .gpu
# The device tool carries at most 64 MiB: the bundle also goes as one xz archive (.gpux/, also
# in .git/info/exclude), unpacked on the GPU machine by
#   mkdir -p /tmp/g && tar xJf .gpux/b.tar.xz -C /tmp/g && source /tmp/g/.gpu/env.sh && ...
rm -rf .gpux && mkdir .gpux && tar cJf .gpux/b.tar.xz .gpu
du -sh .gpux
