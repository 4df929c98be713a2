#!/usr/bin/env python3
"""A tuner-live run's exhaustive samples as a spmv-bench JSON, for model-accuracy --bench.

The daemon stores each measured candidate with the features it was ranked on; a build whose
features changed since (a field added to a format's own features) cannot re-predict them from
the database (`model-accuracy --samples` counts them as not predicted). --bench regenerates
every input from its suite line and extracts its features afresh, so the same measurements are
judged by the current build:

    python3 bench/samples_to_bench.py live/plans-exhaustive.db live/features.json \\
        bench/suite_tuner_unseen.txt cal.json unseen.json
    model-accuracy --calibration cal.json --bench unseen.json --data-dir ../shared/matrices \\
        --tolerance 0.05

live/ is bench/gpu_session.sh tuner-live's directory (its tarball's), features.json its
matrix_stats output (fingerprint, label, input and copies of each input), cal.json the
calibration the run used (its device becomes the benchmark's). Without a build charge: the
favourite is the prediction's alone, as for any --bench input.
"""
import json
import re
import sqlite3
import sys


def renumber_seeds(suite_path):
    """label -> renumber seed (0 where none) of each line of a suite file."""
    seeds = {}
    for line in open(suite_path):
        line = line.split("#")[0].strip()
        if not line:
            continue
        label = re.search(r"label=(\S+)", line)
        if label is None:
            continue
        seed = re.search(r"renumber=(\d+)", line)
        seeds[label.group(1)] = int(seed.group(1)) if seed else 0
    return seeds


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    db_path, features_path, suite_path, calibration_path, out_path = sys.argv[1:]
    inputs = {f["fingerprint"]: f for f in json.load(open(features_path))}
    seeds = renumber_seeds(suite_path)
    calibration = json.load(open(calibration_path))
    matrices = {}
    rows = sqlite3.connect(db_path).execute("SELECT fingerprint, sample_json FROM samples")
    for fingerprint, sample_json in rows:
        sample = json.loads(sample_json)
        if fingerprint not in inputs:
            sys.exit(f"{db_path}: fingerprint {fingerprint} is not in {features_path}")
        f = inputs[fingerprint]
        matrix = matrices.setdefault(fingerprint, {
            "source": f["input"], "label": f["label"], "derived_copies": f["derived_copies"],
            "renumber_seed": seeds.get(f["label"], 0), "features": {"fingerprint": fingerprint},
            "results": []})
        matrix["results"].append({
            "correct": True, "time_ms": sample["measured_ms"], "precision": sample["precision"],
            "format_id": sample["format"], "format": sample["format_name"],
            "params": sample["params"], "launch": sample["launch"]})
    device = dict(calibration["device"], signature=calibration["device_signature"])
    json.dump({"device": device, "matrices": list(matrices.values())}, open(out_path, "w"))
    print(f"{len(matrices)} inputs, {sum(len(m['results']) for m in matrices.values())} "
          f"measured candidates -> {out_path}")


if __name__ == "__main__":
    main()
