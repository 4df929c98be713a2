#!/usr/bin/env python3
"""Compares one format's kernel between two spmv-bench runs (before and after a change), each
run holding the format's rivals too, so that every ratio is taken within its own run.

    python3 bench/kernel_ab.py --format cuda_bce --rivals cuda_ell,cuda_hyb BEFORE.json AFTER.json

A row per matrix and precision: the format's best candidate after / before, the same for the
candidates of one params value (--params-key/--params-value, e.g. variant 1: BCE's hopper
kernel), and the format's best against its best rival in each run (< 1: ahead). Last line: how
often the format is ahead of every rival in each run, and the geometric means of after / before
for the inputs below and above 3M non-zeros. Inputs may be .json.gz.

BEFORE and AFTER may each name several runs, comma-separated (runs taken in turns, a b b a: a
launch in L2 moves 1-2 % from one run of the same binary to the next); each time is then the
geometric mean over its side's runs.
"""
import argparse
import gzip
import json
import math


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def best_times(run, params_key, params_value):
    """{(label, precision, format): ms} of each format's best correct candidate, and under
    (label, precision, format + '*') the best of the candidates whose params_key is
    params_value; {label: nnz}."""
    best, nnz = {}, {}
    for matrix in run["matrices"]:
        nnz[matrix["label"]] = matrix["features"].get("nnz", 0)
        for r in matrix["results"]:
            if r["status"] != "ok" or not r.get("correct", True):
                continue
            keys = [(matrix["label"], r["precision"], r["format"])]
            if params_key and r["params"].get(params_key) == params_value:
                keys.append((matrix["label"], r["precision"], r["format"] + "*"))
            for k in keys:
                best[k] = min(best.get(k, math.inf), r["time_ms"])
    return best, nnz


def mean_best_times(paths, params_key, params_value):
    """best_times of each comma-separated run, their geometric mean per key (keys of every run)."""
    runs = [best_times(load(p), params_key, params_value) for p in paths.split(",")]
    keys = set.intersection(*(set(best) for best, _ in runs))
    best = {k: geomean([b[k] for b, _ in runs]) for k in keys}
    return best, runs[0][1]


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", required=True)
    parser.add_argument("--rivals", required=True, help="comma-separated format names")
    parser.add_argument("--params-key", default="")
    parser.add_argument("--params-value", type=int, default=0)
    parser.add_argument("before", help="a run's bench.json, or several comma-separated")
    parser.add_argument("after", help="likewise")
    a = parser.parse_args()
    rivals = a.rivals.split(",")
    before, nnz = mean_best_times(a.before, a.params_key, a.params_value)
    after, _ = mean_best_times(a.after, a.params_key, a.params_value)
    ahead = {"before": 0, "after": 0}
    ratios = {"small": [], "large": []}
    pairs = 0
    print(f"| matrix | precision | after / before | {a.params_key}={a.params_value} after / before "
          f"| vs best rival, before | after |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key in sorted(k for k in after if k[2] == a.format and k in before):
        label, precision, _ = key
        rival = {run: min((times.get((label, precision, r), math.inf) for r in rivals))
                 for run, times in (("before", before), ("after", after))}
        if not all(math.isfinite(v) for v in rival.values()):
            continue
        pairs += 1
        ratio = after[key] / before[key]
        ratios["large" if nnz[label] > 3e6 else "small"].append(ratio)
        starred = (label, precision, a.format + "*")
        variant = after[starred] / before[starred] if starred in after and starred in before \
            else float("nan")
        for run, times in (("before", before), ("after", after)):
            ahead[run] += times[key] < rival[run]
        print(f"| {label} | {precision} | {ratio:.3f} | {variant:.3f} | "
              f"{before[key] / rival['before']:.2f} | {after[key] / rival['after']:.2f} |")
    print(f"\n{a.format} ahead of {'/'.join(rivals)} on {ahead['before']} of {pairs} before, "
          f"{ahead['after']} after; after / before geomean {geomean(ratios['small']):.3f} "
          f"(<= 3M non-zeros), {geomean(ratios['large']):.3f} (above)")


if __name__ == "__main__":
    main()
