#!/usr/bin/env python3
"""The ablation of model version 32's banded ratio at equal bytes (docs/MODELS.md "Correction
steps"): rewrites a calibration's bytes records' banded ratios as the plain time ratio
T_banded / T_random, recovering each banded twin's time and bytes from the log of
`spmv-calibrate --verbose` of the same calibration.

    python3 bench/plain_banded_ratio.py calibration.json calibrate.log out.json

then `model-accuracy --calibration out.json ...` beside the original. Prints each record's ratio
both ways.
"""
import json
import re
import sys


def main(cal_path, log_path, out_path):
    cal = json.load(open(cal_path))
    # "  [fp32 format_bytes 12/146, 3.1 s] format_bytes NAME ... banded[ mixed]: 0.0123 ms, x 5.67e+07"
    line_re = re.compile(r"\[(fp\d\d) format_bytes [^\]]*\] .* banded(?: mixed)?: ([0-9.eE+-]+) ms, x ([0-9.eE+-]+)")
    banded = [(m.group(1), float(m.group(2)), float(m.group(3)))
              for m in map(line_re.search, open(log_path)) if m]
    if not banded:
        sys.exit(f"{log_path}: no banded format_bytes sample (was it written with --verbose?)")
    for precision in ("fp32", "fp64"):
        for record in cal[precision]["families"]["bytes"]["formats"]:
            bytes_fit = record["bytes"]["time_vs_bytes"]
            line = lambda x: bytes_fit["intercept"] + bytes_fit["slope"] * x
            random_ms = {x: ms for x, ms in record["bytes"]["samples"]}
            plain = []
            for x_random, rho in record["bytes"]["banded_ratio"]:
                # The twin whose time over the line at its own bytes is the stored ratio.
                twins = [(ms, x) for p, ms, x in banded
                         if p == precision and line(x) > 0 and abs(ms / line(x) - rho) <= 1e-5 * rho]
                if len(twins) != 1 or x_random not in random_ms:
                    sys.exit(f"{precision} format {record['format']}: {len(twins)} twins for x {x_random}")
                ms, x_banded = twins[0]
                plain.append([x_random, ms / random_ms[x_random]])
                print(f"{precision} format {record['format']} {json.dumps(record['params'])} "
                      f"lanes {record.get('threads_per_row')}: bytes random {x_random:.4g} banded "
                      f"{x_banded:.4g}; ratio at equal bytes {rho:.3f}, plain {plain[-1][1]:.3f}")
            record["bytes"]["banded_ratio"] = plain
    json.dump(cal, open(out_path, "w"))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
