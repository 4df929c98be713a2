#!/usr/bin/env python3
"""Turns spmv-bench's JSON into the tables of docs/BENCHMARKS.md.

    python3 bench/summarize_bench.py bench.json > tables.md

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


if __name__ == "__main__":
    main(sys.argv[1])
