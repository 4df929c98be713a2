#!/usr/bin/env python3
"""Build cost per format from spmv-bench JSON runs, side by side (docs/BENCHMARKS.md "Builds").

    python3 bench/build_costs.py BEFORE.json[.gz] AFTER.json[.gz]

For each format: the median over its correct candidates of build_ms and of build_ms in
SpMV-equivalents of that candidate's own time, in each run, and the AFTER run's median build
time per nonzero; then the AFTER run's CSR upload per input (csr_upload_ms), which no build
pays since the builds start from the CSR already on the device.
"""
import gzip
import json
import statistics
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def per_format(run):
    out = {}
    for m in run["matrices"]:
        nnz = m["features"]["nnz"]
        for r in m["results"]:
            if r.get("status") != "ok" or not r.get("time_ms"):
                continue
            out.setdefault(r["format"], []).append((r["build_ms"], r["build_ms"] / r["time_ms"], nnz))
    return out


def median(values):
    return statistics.median(values) if values else None


def cell(rows):
    if not rows:
        return "–"
    return f"{median([r[0] for r in rows]):.2f} ({median([r[1] for r in rows]):.0f})"


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (per_format(load(p)) for p in argv)
    print("| format | before: build ms (SpMV-eq.), median | after: build ms (SpMV-eq.), median "
          "| after: ns per nonzero |")
    print("| --- | ---: | ---: | ---: |")
    for f in sorted(set(before) | set(after)):
        rows = after.get(f, [])
        ns = median([r[0] * 1e6 / r[2] for r in rows])
        print(f"| {f} | {cell(before.get(f, []))} | {cell(rows)} | "
              f"{'–' if ns is None else f'{ns:.2f}'} |")
    uploads = [m["csr_upload_ms"] for m in load(argv[1])["matrices"] if m.get("csr_upload_ms")]
    values = sorted(v for u in uploads for v in u.values())
    if values:
        print(f"\nCSR upload per input (after): {values[0]:.1f}–{values[-1]:.1f} ms, "
              f"median {median(values):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
