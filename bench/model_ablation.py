#!/usr/bin/env python3
"""What each correction step buys: model-accuracy with every step, then without each, on one
calibration and one spmv-bench run; prints docs/MODELS.md's ablation table (favourites within
the tolerance, Spearman where it moves, and each format whose median error moves by half a point
or more).

    python3 bench/model_ablation.py --calibration C --bench B [--data-dir DIR] [--model-accuracy BIN]

Inputs may be .json.gz (unpacked to a temporary directory for model-accuracy).
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import tempfile

# models/correction_steps.cpp's kSteps, in order (measured_refit has no samples in a
# calibration file).
STEPS = ["locality", "cache_resident", "coo_row_writes", "bsr_block_rows", "bsr_block_row_chain",
         "launch_floor", "critical_path", "long_row_step", "dram_rate", "composed_floor",
         "shared_launch_overlap"]


def plain(path, directory):
    if not path.endswith(".gz"):
        return path
    out = os.path.join(directory, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def accuracy(binary, calibration, bench, data_dir, directory, without):
    out = os.path.join(directory, f"accuracy-{without or 'all'}.json")
    command = [binary, "--calibration", calibration, "--bench", bench, "--json", out]
    if data_dir:
        command += ["--data-dir", data_dir]
    if without:
        command += ["--without", without]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}")
    with open(out) as f:
        report = json.load(f)
    pairs = len(report["matrices"])
    favourites = round(report["fraction_top_within_tolerance"] * pairs)
    medians = {f["name"]: 100.0 * f["median_abs_relative_error"] for f in report["formats"]}
    return favourites, pairs, report["median_spearman"], medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calibration", required=True)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--data-dir", default=os.environ.get("BUNDLE_DATA"))
    parser.add_argument("--model-accuracy", default="model-accuracy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        calibration = plain(args.calibration, directory)
        bench = plain(args.bench, directory)
        run = lambda without: accuracy(args.model_accuracy, calibration, bench, args.data_dir,
                                       directory, without)
        favourites, pairs, spearman, medians = run(None)
        print("| without | favourites; median error per format |")
        print("| --- | --- |")
        print(f"| (every step) | {favourites}/{pairs}, Spearman {spearman:.2f} |")
        for step in STEPS:
            f, p, s, m = run(step)
            moved = [f"{fmt} {medians[fmt]:.1f} → {m[fmt]:.1f}" for fmt in sorted(medians)
                     if fmt in m and abs(m[fmt] - medians[fmt]) >= 0.5]
            rank = f", Spearman {s:.2f}" if round(s, 2) != round(spearman, 2) else ""
            print(f"| `{step}` | {f}/{p}{rank}; " + (", ".join(moved) or "no format moves") + " |")


if __name__ == "__main__":
    main()
