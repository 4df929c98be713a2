#!/usr/bin/env python3
"""Turns spmv-bench's JSON into the tables of docs/BENCHMARKS.md.

    python3 bench/summarize_bench.py bench.json > tables.md
    python3 bench/summarize_bench.py --per-format cuda_bce,cuda_ell,... bench.json [more.json]

With --per-format: one table per precision, a row per matrix, each named format's best
candidate as a speed-up over cuSPARSE CSR ALG1 + preprocess in the same run (> 1: faster), the
best of all, and each format's geometric mean (inputs may be .json.gz).

Groups: cache-resident (the CSR byte count of the fp64 matrix fits in the GPU's L2: every real
matrix of ../shared/matrices and the ~1M-nonzero generated ones) and memory-bound (it does not:
the large generated inputs and the real ones replicated block-diagonally, "derived", marked *).
Every ratio is a time ratio measured in the same run.
"""
import json
import math
import sys


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def describe(result):
    parts = [f"{k}={v}" for k, v in result["params"].items() if v]
    parts += [f"{k}={v}" for k, v in result["launch"].items() if v]
    return result["format"] + (" " + " ".join(parts) if parts else "")


def main(path):
    data = json.load(open(path))
    l2_bytes = data["device"]["l2_bytes"]
    copy = data["copy_bandwidth"]["gb_per_s"]
    print(f"Device: {data['device']['name']} ({data['device']['signature']}), "
          f"L2 {l2_bytes / 1e6:.1f} MB, measured copy bandwidth {copy:.0f} GB/s "
          f"(read + write, {data['copy_bandwidth']['buffer_bytes'] >> 20} MiB buffers).\n")
    print(f"Settings: {json.dumps(data['settings'])}\n")
    resident, bound = "cache-resident (fits in L2)", "memory-bound (larger than L2)"
    groups = {resident: [], bound: []}
    candidates = failures = 0
    for matrix in data["matrices"]:
        fp64_bytes = max(r["csr_model_bytes"] for r in matrix["results"] if r["precision"] == "fp64")
        groups[bound if fp64_bytes > l2_bytes else resident].append(matrix)
        candidates += len(matrix["results"])
        failures += sum(1 for r in matrix["results"] if not r["correct"])
    print(f"{candidates} candidates measured; {failures} failed the check against the "
          f"double-precision CPU reference (a failed candidate is not timed).\n")
    for precision in ("fp64", "fp32"):
        for group, matrices in groups.items():
            print(f"### {precision}, {group}\n")
            print("| matrix | nnz | best candidate | ms | GFLOP/s | % copy BW | vs cuSPARSE ALG1 | vs best cuSPARSE | ALG1 % copy BW | sweep s |")
            print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            vs_alg1, vs_best = [], []
            for matrix in matrices:
                results = [r for r in matrix["results"] if r["precision"] == precision and r["correct"]]
                if not results:
                    continue
                best = min(results, key=lambda r: r["time_ms"])
                alg1 = [r for r in results if r["format"] == "cusparse_csr" and r["params"]["library_algorithm"] == 2]
                alg1_copy = f"{100 * alg1[0]['fraction_of_copy_bandwidth']:.0f}%" if alg1 else "-"
                label = matrix["label"] + ("*" if matrix["derived"] else "")
                vs_alg1.append(best["speedup_vs_cusparse_alg1"])
                vs_best.append(best["speedup_vs_best_cusparse"])
                print(f"| {label} | {matrix['features']['nnz']:,} | {describe(best)} | {best['time_ms']:.4f} | "
                      f"{best['gflops']:.0f} | {100 * best['fraction_of_copy_bandwidth']:.0f}% | "
                      f"{best['speedup_vs_cusparse_alg1']:.2f}x | {best['speedup_vs_best_cusparse']:.2f}x | "
                      f"{alg1_copy} | {matrix['sweep_s']:.1f} |")
            print(f"| **geometric mean** | | | | | | **{geomean(vs_alg1):.2f}x** | **{geomean(vs_best):.2f}x** | | |")
            print(f"\nLowest vs ALG1: {min(vs_alg1):.2f}x\n" if vs_alg1 else "")


def load(path):
    import gzip
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def per_format(formats, paths):
    matrices = [m for path in paths for m in load(path)["matrices"]]
    for precision in ("fp64", "fp32"):
        rows, ratios = [], {f: [] for f in formats}
        for m in matrices:
            results = [r for r in m["results"] if r["precision"] == precision and r["correct"]]
            alg1 = [r for r in results if r["format"] == "cusparse_csr" and r["params"]["library_algorithm"] == 2]
            if not alg1:
                continue
            best = {}
            for r in results:
                if r["format"] not in best or r["time_ms"] < best[r["format"]]["time_ms"]:
                    best[r["format"]] = r
            overall = min(results, key=lambda r: r["time_ms"])
            cells = []
            for f in formats:
                if f in best:
                    ratio = alg1[0]["time_ms"] / best[f]["time_ms"]
                    ratios[f].append(ratio)
                    cells.append(f"{ratio:.2f}")
                else:
                    cells.append("–")
            rows.append(f"| {m['label']} | {alg1[0]['time_ms']:.4f} | " + " | ".join(cells) +
                        f" | {overall['format']} {alg1[0]['time_ms'] / overall['time_ms']:.2f} |")
        if not rows:
            continue
        print(f"### {precision}\n")
        print("| matrix | ALG1 ms | " + " | ".join(formats) + " | best |")
        print("| --- | ---: | " + " | ".join("---:" for _ in formats) + " | --- |")
        print("\n".join(rows))
        print("| **geometric mean** | | " + " | ".join(f"**{geomean(ratios[f]):.2f}**" if ratios[f] else "–" for f in formats) + " | |\n")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--per-format":
        per_format(sys.argv[2].split(","), sys.argv[3:])
    else:
        main(sys.argv[1])
