#!/usr/bin/env bash
# Resident memory of spmvd after releasing every matrix, with and without malloc_trim after
# releases (--trim-memory-interval-ms 0 turns it off). Usage, from the repository root:
#   bench/memory_churn.sh [BUILD_DIR] [churn flags...]   (default build, 64 clients x 20 multiplies x 3 rounds)
set -euo pipefail
build=${1:-build}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for interval in 0 1000; do
  rm -f "$work/port" "$work/plans.db"*
  "$build/bin/spmvd" --listen 127.0.0.1:0 --port-file "$work/port" --database "$work/plans.db" \
    --metrics-listen "" --calibrate-on-start false --tune-timed-runs 3 --log-level warn \
    --trim-memory-interval-ms "$interval" &
  pid=$!
  while [ ! -s "$work/port" ]; do sleep 0.1; done
  echo "# trim-memory-interval-ms=$interval"
  "$build/bin/spmvd-memory-churn" --server "127.0.0.1:$(cat "$work/port")" --pid "$pid" "$@"
  kill -TERM "$pid"
  wait "$pid"
done
