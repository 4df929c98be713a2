#!/usr/bin/env python3
"""What each correction step buys: model-accuracy with every step, then without each, on one
calibration and one spmv-bench run; prints docs/MODELS.md's ablation table (favourites within
the tolerance, Spearman where it moves, and each format whose median error moves by half a point
or more).

    python3 bench/model_ablation.py --calibration C --bench B [--data-dir DIR] [--model-accuracy BIN]

Inputs may be .json.gz (unpacked to a temporary directory for model-accuracy).
"""
import os
import tempfile

from accuracy_runs import model_accuracy, parser, plain

# models/correction_steps.cpp's kSteps, in order (measured_refit has no samples in a
# calibration file).
STEPS = ["locality", "cache_resident", "coo_row_writes", "bsr_block_rows", "bsr_block_row_chain",
         "launch_floor", "critical_path", "long_row_step", "dram_rate", "composed_floor",
         "shared_launch_overlap", "row_block_waves"]


def summary(report):
    """Favourites, pairs, median Spearman and each format's median error (%) of a report."""
    pairs = len(report["matrices"])
    favourites = round(report["fraction_top_within_tolerance"] * pairs)
    medians = {f["name"]: 100.0 * f["median_abs_relative_error"] for f in report["formats"]}
    return favourites, pairs, report["median_spearman"], medians


def main():
    args = parser(__doc__.split("\n")[0]).parse_args()
    with tempfile.TemporaryDirectory() as directory:
        calibration = plain(args.calibration, directory)
        bench = plain(args.bench, directory)

        def run(without):
            out = os.path.join(directory, f"accuracy-{without or 'all'}.json")
            return summary(model_accuracy(args, calibration, bench, out, without))

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
