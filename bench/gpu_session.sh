#!/usr/bin/env bash
# One GPU-machine session, run from the repository root through the device tool:
#   source .gpu/env.sh && bash bench/gpu_session.sh STAGE...
# with the bundle made by bench/make_gpu_bundle.sh. Logs go to $OUT, packed at the end into
# $OUT/gpu_session.tgz beside $OUT/summary.txt (KEEP_OUT=1: not packed); a short table ends it.
# Stages:
#   tests   GPU conformance tests of every registered format (gtest)
#   daemon  spmvd on loopback + `spmv run` on real matrices (twice: the 2nd is a cache hit),
#           fp32 once, then SIGTERM (exit code checked)
#   models  spmv-calibrate (both precisions), SVG plots (CALIBRATE_ARGS go to spmv-calibrate,
#           e.g. "--verbose": every timed sample in calibrate.log)
#   suite   spmv-bench over bench/suite.txt (JSON/CSV; SUITE_ARGS go to spmv-bench, e.g.
#           "--vectors hot"), with --calibration and then model-accuracy if calibrated
#           (CALIBRATION, default $OUT/calibration.json)
#   accuracy  model-accuracy of $OUT/calibration.json against BENCH_JSON (an earlier suite)
#   tuner-live  the tuner's modes live in spmvd (issue 17's evaluation): LIVE_SUITE (bench/suite_tuner_unseen.txt)
#           written as .mtx, each uploaded with `spmv run --repeat LIVE_REPEAT` to a daemon
#           under --tune-mode exhaustive (the oracle), auto (LIVE_EXPECTED multiplies, default
#           100000) and model-only in turn, each on a fresh copy of the daemon stage's database
#           (for its calibration: every matrix is tuned at upload, as a first contact), or of one
#           seeded with LIVE_CALIBRATION (a spmv-calibrate JSON; by default, with no daemon
#           stage's database, the models stage's of the same call: `models tuner-live`);
#           LIVE_MODES picks fewer modes (e.g. "model-only" for the upload-to-servable times);
#           everything in $OUT/tuner-live.tgz for bench/tuner_live.py
#   memory  the daemon's resident memory across upload/release rounds (spmvd-memory-churn),
#           under the glibc malloc settings MALLOC_VARIANTS lists (issue 18's retention)
#   lock    other matrices uploaded and multiplied while one matrix (LOCK_MATRIX, a suite line)
#           is tuned exhaustively, every format built (host phases without the device lock:
#           kernels/device_lock.hpp); each upload + first multiply timed by the client
#           (LOCK_DB: a calibrated database, default the daemon stage's)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
data=${BUNDLE_DATA:?source .gpu/env.sh first}
summary=()

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
lscpu 2>/dev/null | grep -E "^(Model name|CPU\(s\)|Socket)" | tee -a "$OUT/gpu.txt" || true

stage_tests() {
  kernels_conformance_gpu --gtest_brief=1 > "$OUT/tests_gpu.log" 2>&1
  local rc=$?
  calibration_gpu > "$OUT/calibration_gpu.log" 2>&1
  summary+=("tests: calibration_gpu exit $? ($(grep -E '^\[  PASSED|^\[  FAILED|predicted' "$OUT/calibration_gpu.log" | tr '\n' ' '))")
  tail -n 5 "$OUT/tests_gpu.log"
  summary+=("tests: kernels_conformance_gpu exit $rc ($(grep -c '^\[       OK' "$OUT/tests_gpu.log" || true) ok lines; $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/tests_gpu.log" | tr '\n' ' '))")
  # Every other GPU test program of the bundle (one log for all).
  local t
  for t in $(compgen -c | grep -E '^[a-z0-9_]+_gpu_tests?$' | sort -u); do
    echo "== $t" >> "$OUT/tests_gpu_more.log"
    "$t" --gtest_brief=1 > /tmp/one_gpu_test.log 2>&1
    rc=$?
    cat /tmp/one_gpu_test.log >> "$OUT/tests_gpu_more.log"
    summary+=("tests: $t exit $rc ($(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' /tmp/one_gpu_test.log | tr '\n' ' '))")
  done
}

# Starts spmvd with the given flags on a loopback port, logging to $1; sets daemon_pid and
# daemon_port (empty when it did not start: its log says why).
start_daemon() {
  local log=$1; shift
  rm -f /tmp/spmvd.port
  spmvd --listen 127.0.0.1:0 --port-file /tmp/spmvd.port "$@" ${SPMVD_EXTRA_FLAGS:-} > "$log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 600); do
    [ -s /tmp/spmvd.port ] && break
    kill -0 $daemon_pid 2>/dev/null || break
    sleep 0.5
  done
  daemon_port=$(cat /tmp/spmvd.port 2>/dev/null)
}

stage_daemon() {
  local db=/tmp/spmvd-plans.db log="$OUT/daemon.log"
  rm -f "$db"
  start_daemon "$log" --database "$db"
  local pid=$daemon_pid port=$daemon_port
  if [ -z "$port" ]; then summary+=("daemon: did not start"); tail -n 5 "$log"; return; fi
  local runs="$OUT/spmv_run.log"; : > "$runs"
  for m in cage11 bcsstk16 ego-Twitter_u rajat01 luxembourg_osm_fz; do
    for attempt in 1 2; do
      echo "== $m fp64 attempt $attempt" >> "$runs"
      spmv --server 127.0.0.1:$port run "$data/matrices/$m.mtx.gz" >> "$runs" 2>&1
      echo "exit $?" >> "$runs"
    done
    echo "== $m fp32" >> "$runs"
    spmv --server 127.0.0.1:$port run --precision fp32 "$data/matrices/$m.mtx.gz" >> "$runs" 2>&1
    echo "exit $?" >> "$runs"
  done
  # The admin side: models the daemon calibrated (or loaded) at start, their plots, the plans.
  spmvctl --server 127.0.0.1:$port model show > "$OUT/spmvctl_model_show.txt" 2>&1
  spmvctl --server 127.0.0.1:$port model plot --out /tmp/daemon-plots > /dev/null 2>&1
  spmvctl --server 127.0.0.1:$port plans > "$OUT/spmvctl_plans.txt" 2>&1
  # The refit from the tunings above (refused with too few samples: the answer is shown).
  spmvctl --server 127.0.0.1:$port model refit > "$OUT/spmvctl_model_refit.txt" 2>&1
  summary+=("spmvctl model refit: exit $? ($(tail -n 1 "$OUT/spmvctl_model_refit.txt"))")
  # The daemon's own calibration, for a later suite stage (CALIBRATION) and model-accuracy.
  [ -s "$OUT/calibration.json" ] || spmvctl --server 127.0.0.1:$port model export > "$OUT/calibration.json" 2>/dev/null
  summary+=("spmvctl: model show $(wc -l < "$OUT/spmvctl_model_show.txt") lines, $(ls /tmp/daemon-plots 2>/dev/null | wc -l) plots, $(($(wc -l < "$OUT/spmvctl_plans.txt") - 1)) plans")
  grep -E "calibrat|models" "$log" | head -n 12
  kill -TERM $pid; wait $pid; local rc=$?
  cp "$db" "$OUT/plans-calibrated.db"  # its calibration, for a later tuner-live (LIVE_DB)
  summary+=("daemon: SIGTERM exit $rc; spmv run exits: $(grep -c '^exit 0' "$runs") ok of $(grep -c '^exit' "$runs"); cache hits $(grep -c 'cache:     hit' "$runs")")
  grep -E "^==|first:|plan:|cache:|check:" "$runs" | paste - - - - - | cut -c1-260
}

stage_models() {
  mkdir -p "$OUT/plots"
  spmv-calibrate --out "$OUT/calibration.json" --plots "$OUT/plots" ${CALIBRATE_ARGS:-} \
    > "$OUT/calibrate.log" 2>&1
  local rc=$?
  tail -n 25 "$OUT/calibrate.log"
  (cd "$OUT" && tar czf plots.tgz plots && rm -rf plots)
  summary+=("models: spmv-calibrate exit $rc")
}

stage_suite() {
  local calibration=${CALIBRATION:-$OUT/calibration.json}
  # With a calibration the composed formats also run the partitions they choose by the models.
  local with_models=(); [ -s "$calibration" ] && with_models=(--calibration "$calibration")
  bash bench/run_suite.sh "$OUT" ${SUITE_ARGS:-} "${with_models[@]}" > "$OUT/suite.log" 2>&1
  local rc=$?
  tail -n 40 "$OUT/suite.log"
  summary+=("suite: exit $rc")
  if [ -s "$calibration" ] && [ -s "$OUT/bench.json" ]; then
    model-accuracy --calibration "$calibration" --bench "$OUT/bench.json" \
      --data-dir "$data/matrices" --markdown "$OUT/accuracy.md" --json "$OUT/accuracy.json" \
      > "$OUT/accuracy.log" 2>&1
    summary+=("accuracy: exit $?")
    tail -n 30 "$OUT/accuracy.log"
  fi
}

stage_memory() {
  local variants=${MALLOC_VARIANTS:-"default MALLOC_ARENA_MAX=2 GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576"}
  local log="$OUT/memory.log"; : > "$log"
  for variant in $variants; do
    local env_setting=(); [ "$variant" != default ] && env_setting=("$variant")
    rm -f /tmp/churn.port /tmp/churn.db*
    env "${env_setting[@]}" spmvd --listen 127.0.0.1:0 --port-file /tmp/churn.port \
      --database /tmp/churn.db --metrics-listen "" --calibrate-on-start false \
      --tune-timed-runs 3 --log-level warn --trim-memory-interval-ms 1000 >> "$log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 100); do [ -s /tmp/churn.port ] && break; sleep 0.2; done
    echo "# variant=$variant" >> "$log"
    spmvd-memory-churn --server "127.0.0.1:$(cat /tmp/churn.port)" --pid "$pid" \
      ${CHURN_ARGS:---clients 32 --rounds 3} >> "$log" 2>&1
    grep -E "^(Rss|Anonymous|Private_Dirty)" "/proc/$pid/smaps_rollup" | tr -s ' ' | paste -sd' ' >> "$log"
    echo "threads=$(ls /proc/$pid/task | wc -l) anon_mappings=$(grep -c -E '^[0-9a-f]+-[0-9a-f]+ rw-p 00000000 00:00 0 *$' /proc/$pid/maps)" >> "$log"
    # The device memory the daemon still holds with every matrix released (its pool gives freed
    # memory back on each trim): the CUDA context's own plus what is still allocated.
    local gpu_mib
    gpu_mib=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', ' -v p="$pid" '$1 == p {print $2}')
    echo "gpu_used_mib_after_release=${gpu_mib:-?}" >> "$log"
    kill -TERM "$pid"; wait "$pid"
    summary+=("memory $variant: $(grep -E 'phase=released' "$log" | tail -n 3 | awk '{print $3}' | paste -sd' ') (rss after each round's release); device ${gpu_mib:-?} MiB after the last")
  done
  grep -vE "^\[" "$log" | tail -n 40
}

# Writes the calibration JSON $1 (spmv-calibrate --out) into a new plan database $2, as the
# daemon would have stored it had it calibrated itself: the daemon creates the schema, the row
# goes in with sqlite3 under the JSON's own device signature and model version.
seed_database() {
  local calibration=$1 db=$2
  rm -f "$db"*
  start_daemon /tmp/seed-daemon.log --database "$db" --calibrate-on-start false --metrics-listen ""
  [ -n "$daemon_port" ] && { kill -TERM $daemon_pid; wait $daemon_pid; }
  python3 - "$calibration" "$db" <<'PY'
import json, sqlite3, sys, time
text = open(sys.argv[1]).read()
j = json.loads(text)
with sqlite3.connect(sys.argv[2]) as db:
    db.execute("INSERT OR REPLACE INTO calibrations (device, model_version, model_json, created_ms)"
               " VALUES (?, ?, ?, ?)",
               (j["device_signature"], j["model_version"], text, int(time.time() * 1000)))
PY
}

stage_tuner-live() {
  # The database of an earlier daemon stage (LIVE_DB, e.g. carried in), for its calibration;
  # or, with LIVE_CALIBRATION (e.g. the models stage's $OUT/calibration.json), a new database
  # holding that calibration.
  local dir=/tmp/live db=${LIVE_DB:-/tmp/spmvd-plans.db}
  # No daemon stage's database, but a models stage's calibration in this call: that one.
  if [ -z "${LIVE_CALIBRATION:-}" ] && [ -z "${LIVE_DB:-}" ] && [ ! -f "$db" ] &&
     [ -s "$OUT/calibration.json" ]; then
    LIVE_CALIBRATION=$OUT/calibration.json
  fi
  if [ -n "${LIVE_CALIBRATION:-}" ]; then
    db=/tmp/live-seeded.db
    seed_database "$LIVE_CALIBRATION" $db
    summary+=("tuner-live: database seeded with $LIVE_CALIBRATION (exit $?)")
  fi
  rm -rf $dir && mkdir -p $dir/mtx
  matrix_stats --suite "${LIVE_SUITE:-bench/suite_tuner_unseen.txt}" --data-dir "$data/matrices" \
    --write-mtx $dir/mtx --json > $dir/features.json 2> $dir/matrix_stats.err
  local rc=$?
  summary+=("tuner-live: $(ls $dir/mtx | wc -l) matrices written (matrix_stats exit $rc)")
  local mode flags
  for mode in ${LIVE_MODES:-exhaustive auto model-only}; do
    # Each mode on a fresh copy of the calibrated database: every matrix is new to it, so it is
    # tuned at upload while cuSPARSE ALG1 serves, as a user's first upload is.
    local mode_db=/tmp/live-$mode.db
    rm -f $mode_db*; [ -f "$db" ] && cp "$db" $mode_db
    flags=(--database $mode_db --tune-mode "$mode" --samples-per-format 1000000
           --refit-interval-s 0 --log-level debug)
    [ "$mode" = auto ] && flags+=(--expected-multiplies "${LIVE_EXPECTED:-100000}")
    start_daemon "$dir/daemon-$mode.log" "${flags[@]}"
    if [ -z "$daemon_port" ]; then summary+=("tuner-live $mode: daemon did not start"); continue; fi
    for f in $dir/mtx/*.mtx; do
      echo "== $(basename "$f" .mtx)"
      spmv --server 127.0.0.1:$daemon_port run --repeat "${LIVE_REPEAT:-11}" "$f"
      echo "exit $?"
    done > "$dir/run-$mode.log" 2>&1
    kill -TERM $daemon_pid; wait $daemon_pid
    summary+=("tuner-live $mode: exit $?, runs ok $(grep -c '^exit 0' "$dir/run-$mode.log") of $(grep -c '^exit' "$dir/run-$mode.log"), tuned lines $(grep -c ', tuned ' "$dir/daemon-$mode.log"); $(grep -m1 -o 'performance models: [a-z ]*' "$dir/daemon-$mode.log")")
    # After each mode, so that a run cut short still brings back what it measured.
    cp $mode_db $dir/plans-$mode.db
    tar czf "$OUT/tuner-live.tgz" --exclude live/mtx -C /tmp live
  done
  python3 bench/tuner_live.py $dir 2>&1 | head -n 14 || true
}

stage_lock() {
  local dir=/tmp/lock log="$OUT/lock.log" db=/tmp/lock.db
  rm -rf $dir && mkdir -p $dir/mtx && : > "$log"
  echo "${LOCK_MATRIX:-fem:blocks=60000,block=3,coupling=8,seed=9 label=fem-b3-4M}" > $dir/suite.txt
  matrix_stats --suite $dir/suite.txt --data-dir "$data/matrices" --write-mtx $dir/mtx \
    > /dev/null 2> $dir/matrix_stats.err
  local big; big=$(ls $dir/mtx/*.mtx | head -n 1)
  rm -f $db*; cp "${LOCK_DB:-/tmp/spmvd-plans.db}" $db 2>/dev/null
  start_daemon "$OUT/daemon-lock.log" --database $db --tune-mode exhaustive --log-level debug
  if [ -z "$daemon_port" ]; then summary+=("lock: daemon did not start"); return; fi
  local server=127.0.0.1:$daemon_port
  spmv --server $server run --force "$big" > $dir/big.log 2>&1 &
  local big_pid=$!
  sleep 2  # its upload and feature pass; then its candidates build
  local small="$data/matrices/${LOCK_SMALL:-bcsstk16}.mtx.gz" n=0
  while kill -0 $big_pid 2>/dev/null; do
    local handle t0
    handle=$(spmv --server $server upload "$small" 2>> "$log" | tail -n 1 | tr -d '[:space:]')
    # The client's whole call: process start, connection, x out and y back (4884 rows).
    t0=$(date +%s%N)
    spmv --server $server multiply "$handle" > /dev/null 2>> "$log" &&
      echo "multiply_ms $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$log"
    spmv --server $server release "$handle" > /dev/null 2>> "$log"
  done
  wait $big_pid; local big_rc=$?
  kill -TERM $daemon_pid; wait $daemon_pid
  cat $dir/big.log >> "$log"
  # Median and max of a column of numbers.
  stats() { sort -n | awk '{v[NR] = $1} END {if (!NR) print "none"; else printf "%d, median %.1f ms, max %.1f ms", NR, v[int((NR + 1) / 2)], v[NR]}'; }
  local multiplies servable builds
  multiplies=$(awk '/^multiply_ms/ {print $2}' "$log" | stats)
  servable=$(grep "${LOCK_SMALL:-bcsstk16}.mtx.gz' resident" "$OUT/daemon-lock.log" |
    sed -E 's/.*servable ([0-9.]+) ms after.*/\1/' | stats)
  builds=$(grep -oE "build [0-9.]+ ms" "$OUT/daemon-lock.log" | awk '{print $2}' | stats)
  summary+=("lock: big run exit $big_rc; the big tuning's builds: $builds")
  summary+=("lock: meanwhile small uploads servable after arrival: $servable; multiplies (client wall time): $multiplies")
  grep -E "waited" "$OUT/daemon-lock.log" | head -n 3
  grep -E "plan:|tuning|builds:|total:" $dir/big.log | head -n 8
}

# Predictions of a fresh calibration against an earlier suite run (BENCH_JSON).
stage_accuracy() {
  model-accuracy --calibration "$OUT/calibration.json" --bench "${BENCH_JSON:?}" \
    --data-dir "$data/matrices" --markdown "$OUT/accuracy.md" --json "$OUT/accuracy.json" \
    > "$OUT/accuracy.log" 2>&1
  summary+=("accuracy: exit $?; $(head -n 1 "$OUT/accuracy.md")")
}

for stage in "$@"; do
  start=$(date +%s)
  "stage_$stage"
  summary+=("  ($stage took $(( $(date +%s) - start )) s)")
done
echo "================ summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# The device tool brings back at most 8 files of $OUT and drops the rest (a calibration.json was
# lost that way): everything goes into one archive, which comes back beside summary.txt.
# KEEP_OUT=1 leaves the files as they are (for a later invocation reading $OUT/calibration.json).
[ "${KEEP_OUT:-0}" = 1 ] || ( cd "$OUT" && tar czf /tmp/gpu_session.tgz --exclude=gpu_session.tgz . &&
  find . -mindepth 1 -maxdepth 1 ! -name summary.txt -exec rm -rf {} + &&
  mv /tmp/gpu_session.tgz . )
