#!/usr/bin/env python3
"""The tuner's modes replayed on measured data (docs/TUNER.md "Evaluation").

    python3 bench/tuner_evaluation.py [--expected-multiplies=N] BENCH.json ACCURACY.json [...]

With --expected-multiplies=N the ranking charges each candidate its build over N multiplies as
the tuner does (rank_candidates with TunerOptions' build rates); without, it ranks by the
prediction alone.

BENCH is spmv-bench --json (every candidate measured: the oracle, and each candidate's build
time); ACCURACY is model-accuracy --json of the same run (each candidate's prediction). For
every matrix and precision the tuner's measurement order is rebuilt exactly as
tuner/tuner.cpp measurement_order builds it (the top prediction, the cuSPARSE CSR ALG1 baseline,
each other format's best-ranked candidate, the rest by rank), and each mode keeps the fastest
of what it would measure:

  model-only      the top prediction and the baseline (the baseline is measured in every mode)
  verify-top-k    the first k of the order (k = 3, 5, 8)
  exhaustive      every candidate the benchmark measured (the oracle)

Cost: each measured candidate's build (spmv-bench's build_ms: the same builders, from the CSR
already on the device; none for the ALG1 baseline, which is the serving build) plus its runs
(model-only 1 warm-up + 1 timed, the others 3 + 20, the daemon's defaults) at its measured time,
in SpMV-equivalents of the plan the mode keeps. The feature pass is not included (it is the
same for every mode; the daemon logs it). Candidates the models cannot predict are ranked last.
"""
import json
import math
import sys
from collections import defaultdict

RUNS = {"model-only": 2, "verify": 23}

# The tuner's ranking charge (tuner/tuner.hpp TunerOptions): ns per nonzero of a build, over
# the expected multiplies; the ALG1 baseline (the serving build) costs nothing.
DEVICE_BUILD_NS, HOST_BUILD_NS = 0.1, 28.0
# Runs made before spmv-bench wrote builds_on_device: the formats this build still builds on
# the host (FormatEntry::builds_on_device false).
HOST_BUILT = {"cuda_bce", "cuda_strip", "cpu_gpu_split", "cuda_bro_ell", "cuda_bro_coo",
              "cuda_bro_hyb", "cuda_ehyb", "cusparse_bsr", "cpu_coo"}


def load(path):
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def is_alg1(result):
    return result["format"] == "cusparse_csr" and result["params"].get("library_algorithm") == 2


def measurement_order(ranked):
    """ranked: list of dicts with 'format', 'alg1', sorted best first."""
    order, placed = [], set()

    def place(i):
        order.append(ranked[i])
        placed.add(i)

    if not ranked:
        return order
    place(0)
    for i in range(1, len(ranked)):
        if ranked[i]["alg1"]:
            place(i)
    formats = {ranked[0]["format"]}
    for i in range(1, len(ranked)):
        if i not in placed and ranked[i]["format"] not in formats:
            formats.add(ranked[i]["format"])
            place(i)
    for i in range(1, len(ranked)):
        if i not in placed:
            place(i)
    return order


def build_charge_ms(result, nnz):
    if is_alg1(result):
        return 0.0
    on_device = result.get("builds_on_device", result["format"] not in HOST_BUILT)
    return (DEVICE_BUILD_NS if on_device else HOST_BUILD_NS) * nnz * 1e-6


def evaluate(bench, accuracy, expected_multiplies=None):
    predicted = {}
    for p in accuracy["predictions"]:
        predicted[(p["matrix"], p["precision"], p["format"], p["measured_ms"])] = p["predicted_ms"]
    rows = []
    for m in bench["matrices"]:
        by_precision = defaultdict(list)
        for r in m["results"]:
            if r["correct"] and r["time_ms"] > 0:
                by_precision[r["precision"]].append(r)
        for precision, results in by_precision.items():
            cands = []
            nnz = m["features"]["nnz"]
            for index, r in enumerate(results):
                key = (m["label"], precision, r["format"], r["time_ms"])
                p = predicted.get(key)
                if p is not None and expected_multiplies:
                    p = p + build_charge_ms(r, nnz) / expected_multiplies
                cands.append({"format": r["format"], "alg1": is_alg1(r), "ms": r["time_ms"],
                              "build_ms": r["build_ms"], "predicted": p, "index": index})
            if not any(c["alg1"] for c in cands):
                continue
            ranked = sorted(cands, key=lambda c: (c["predicted"] is None,
                                                  c["predicted"] if c["predicted"] is not None else 0,
                                                  c["index"]))
            order = measurement_order(ranked)
            oracle = min(c["ms"] for c in cands)
            alg1 = next(c["ms"] for c in cands if c["alg1"])
            row = {"matrix": m["label"], "precision": precision, "oracle": oracle, "alg1": alg1,
                   "candidates": len(cands)}

            def mode(measured, runs):
                best = min(c["ms"] for c in measured)
                # The baseline is the build serving the matrix: measured in place, not rebuilt.
                cost = sum((0.0 if c["alg1"] else c["build_ms"]) + runs * c["ms"] for c in measured)
                return best, cost / best

            row["model-only"] = mode(order[:2], RUNS["model-only"])
            for k in (3, 5, 8):
                row[f"verify-{k}"] = mode(order[:k], RUNS["verify"])
            row["exhaustive"] = mode(order, RUNS["verify"])
            rows.append(row)
    return rows


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(argv):
    expected = None
    if argv and argv[0].startswith("--expected-multiplies="):
        expected = int(argv[0].split("=", 1)[1])
        argv = argv[1:]
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    rows = []
    for bench_path, accuracy_path in zip(argv[0::2], argv[1::2]):
        rows += evaluate(load(bench_path), load(accuracy_path), expected)
    modes = ["model-only", "verify-3", "verify-5", "verify-8", "exhaustive"]
    print(f"{len(rows)} matrix-precision pairs\n")
    print("| mode | within 5 % of the oracle | geomean loss vs oracle | worst | vs ALG1 (geomean) | "
          "slower than ALG1 | tuning cost, SpMV-eq. (median / max) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in modes:
        ratios = [r[name][0] / r["oracle"] for r in rows]
        within = sum(1 for x in ratios if x <= 1.05)
        vs_alg1 = [r["alg1"] / r[name][0] for r in rows]
        slower = sum(1 for x in vs_alg1 if x < 1.0 - 1e-9)
        costs = sorted(r[name][1] for r in rows)
        print(f"| {name} | {within}/{len(rows)} ({100 * within / len(rows):.0f} %) | "
              f"{100 * (geomean(ratios) - 1):.1f} % | {100 * (max(ratios) - 1):.0f} % | "
              f"{geomean(vs_alg1):.3f}x | {slower} | {costs[len(costs) // 2]:.0f} / {costs[-1]:.0f} |")
    print("\n| matrix | precision | oracle ms | ALG1 ms | model-only ms | verify-5 ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['matrix']} | {r['precision']} | {r['oracle']:.4f} | {r['alg1']:.4f} | "
              f"{r['model-only'][0]:.4f} | {r['verify-5'][0]:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
