#!/usr/bin/env bash
# Runs spmv-bench over the benchmark suite and writes bench.json, bench.csv and bench.log into
# OUT_DIR. Extra arguments go to spmv-bench after the defaults (later ones win in CLI11 for
# single-valued options), e.g. `--precision fp64` or `--formats cusparse_csr,cuda_csr_vector`.
#
#   bench/run_suite.sh OUT_DIR [spmv-bench options...]
#
# Environment:
#   SPMV_BENCH  the spmv-bench binary (default: spmv-bench on PATH, e.g. after sourcing a
#               gpu-bundle's env.sh, else build*/bin/spmv-bench in this checkout)
#   DATA_DIR    where the suite's relative paths live (default: $BUNDLE_DATA/matrices,
#               $BUNDLE_DATA, or /work/shared/matrices, whichever holds cage11.mtx.gz)
#   SUITE       the suite file (default: suite.txt beside this script)
#
# Defaults keep the GPU run of the whole suite near 5 minutes on an H100: both precisions, at
# most 3 evenly spaced candidates per format (cuSPARSE CSR ALG1 always runs), 30 timed reps,
# and no new input started after 300 s (the inputs not run are listed as skipped).
set -euo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,19p' "$0"; exit 2
fi
out=$1; shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

bench=${SPMV_BENCH:-}
if [ -z "$bench" ]; then
  if command -v spmv-bench >/dev/null 2>&1; then
    bench=$(command -v spmv-bench)
  else
    for candidate in "$repo"/build*/bin/spmv-bench; do
      if [ -x "$candidate" ]; then bench=$candidate; break; fi
    done
  fi
fi
[ -n "$bench" ] && [ -x "$bench" ] || { echo "run_suite.sh: no spmv-bench found (set SPMV_BENCH)" >&2; exit 1; }

data=${DATA_DIR:-}
if [ -z "$data" ]; then
  for candidate in "${BUNDLE_DATA:-/nonexistent}/matrices" "${BUNDLE_DATA:-/nonexistent}" /work/shared/matrices; do
    if [ -f "$candidate/cage11.mtx.gz" ]; then data=$candidate; break; fi
  done
fi
[ -n "$data" ] || { echo "run_suite.sh: no data directory with the suite's matrices (set DATA_DIR)" >&2; exit 1; }
suite=${SUITE:-$here/suite.txt}

mkdir -p "$out"
echo "run_suite.sh: $bench on $(grep -c -v -E '^\s*(#|$)' "$suite") inputs of $suite, data from $data"
echo "run_suite.sh: expected about 5 minutes on an H100 (no new input is started after 300 s)"
start=$(date +%s)
"$bench" --suite "$suite" --data-dir "$data" \
  --precision both --reps 30 --warmup 5 --max-candidates-per-format 3 --time-budget-s 300 \
  --json "$out/bench.json" --csv "$out/bench.csv" "$@" 2>&1 | tee "$out/bench.log"
status=${PIPESTATUS[0]}
echo "run_suite.sh: finished with status $status in $(( $(date +%s) - start )) s; results in $out"
exit "$status"
