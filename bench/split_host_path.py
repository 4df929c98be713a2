#!/usr/bin/env python3
"""What the CPU-GPU split's host path costs beyond the model's terms, by the host part's chunks:
each cpu_gpu_split candidate of a suite run predicted with the calibration's round trip and
wake-up set to 0, measured less predicted, grouped by the chunks of its host part (oneTBB tasks:
kernels/formats/cpu_gpu_split/cpu_gpu_split_layout.hpp's host_chunk_count). The inputs read from
.mtx.gz files only (generated and replicated ones are left out); docs/MODELS.md "Known gaps".

    python3 bench/split_host_path.py --calibration C --bench B [--data-dir DIR] [--model-accuracy BIN]
"""
import collections
import gzip
import json
import os
import re
import statistics
import tempfile

from accuracy_runs import model_accuracy, parser, plain

CHUNK_MIN_ENTRIES = 4096  # kHostChunkMinEntries
CHUNKS_MAX = 256          # kHostChunksMax


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def row_lengths(path):
    """Row lengths of a Matrix Market file (symmetric ones mirrored)."""
    with gzip.open(path, "rt") as f:
        symmetric = "symmetric" in f.readline()
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows = int(line.split()[0])
        lengths = [0] * rows
        for line in f:
            fields = line.split()
            if len(fields) < 2:
                continue
            i, j = int(fields[0]) - 1, int(fields[1]) - 1
            lengths[i] += 1
            if symmetric and i != j:
                lengths[j] += 1
    return lengths


def chunks(host_entries):
    return 0 if host_entries == 0 else max(1, min(CHUNKS_MAX, host_entries // CHUNK_MIN_ENTRIES))


def main():
    args = parser(__doc__.split("\n")[0]).parse_args()
    calibration = load(args.calibration)
    for precision in ("fp32", "fp64"):
        host = calibration[precision]["families"]["cpu_gpu"]
        host["host_round_trip_ms"] = 0.0
        host["host_wake_ms"] = 0.0
    with tempfile.TemporaryDirectory() as directory:
        calibration_path = os.path.join(directory, "calibration.json")
        with open(calibration_path, "w") as f:
            json.dump(calibration, f)
        bench_path = plain(args.bench, directory)
        report = model_accuracy(args, calibration_path, bench_path,
                                os.path.join(directory, "accuracy.json"))
        bench = load(bench_path)
    sources = {m["label"]: m for m in bench["matrices"]}
    lengths = {}
    left = collections.defaultdict(list)
    for p in report["predictions"]:
        if p["format"] != "cpu_gpu_split":
            continue
        matrix = sources[p["matrix"]]
        if not matrix["source"].endswith(".mtx.gz") or matrix.get("derived"):
            continue
        if p["matrix"] not in lengths:
            lengths[p["matrix"]] = row_lengths(os.path.join(args.data_dir, matrix["source"]))
        width = int(re.search(r"ell_width=(\d+)", p["candidate"]).group(1))
        host_entries = sum(max(0, n - width) for n in lengths[p["matrix"]])
        left[chunks(host_entries)].append(1e3 * (p["measured_ms"] - p["predicted_ms"]))
    print("| host chunks | candidates | measured − predicted without round trip, µs: median | p25 | p75 |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for count in sorted(left):
        values = sorted(left[count])
        print(f"| {count} | {len(values)} | {statistics.median(values):.1f} | "
              f"{values[len(values) // 4]:.1f} | {values[3 * len(values) // 4]:.1f} |")


if __name__ == "__main__":
    main()
