#!/usr/bin/env python3
"""The tuner's modes as the daemon ran them (docs/TUNER.md "Evaluation, live").

    python3 bench/tuner_live.py DIR [--svg-dir DIR2]

DIR is what `bench/gpu_session.sh tuner-live` leaves (tuner-live.tgz in gpu_session.tgz, unpacked):
daemon-<mode>.log, run-<mode>.log and plans-<mode>.db (the daemon's SQLite database, a fresh
copy of the calibrated one per mode, so each matrix was tuned once, at upload) per mode
(exhaustive, auto, model-only). For each matrix:

  oracle   the fastest candidate the exhaustive tuning measured (its `samples`, 3 warm-up and
           20 timed runs each, all kept with --samples-per-format);
  a mode's plan is looked up among those same samples (same format, parameters and launch), so
           every mode is judged by the oracle's own measurement of the plan it chose, not by
           its own (model-only times its candidates with one run);
  cost     the tuning's total (features, ranking, builds, measurements) as the daemon logged
           it, in SpMV-equivalents of the chosen plan;
  first    how long after the Upload returned the first Multiply was answered (`spmv run`'s
           "first:" line: the default plan, before any tuning ends), and how long the daemon
           took from the matrix's arrival to servable (its "servable" log line).

Prints one Markdown table per mode and a per-matrix table; with --svg-dir, one figure per mode
(loss against the oracle versus tuning cost, log-x).
"""
import json
import math
import re
import sqlite3
import statistics
import sys
from pathlib import Path

MODES = ["exhaustive", "auto", "model-only"]

RESIDENT = re.compile(r"matrix (\S+) '(.*?)' resident: .*servable ([\d.]+) ms after the matrix "
                      r"arrived, ([\d.]+) ms of it")
TUNED = re.compile(r"matrix (\S+): plan (\S+) \[.*?\] \[.*?\] ([\d.]+) ms, tuned (\S+) \(k (\d+), "
                   r"(\d+) measured; budget ([\d.]+) ms for (\d+) multiplies\): features ([\d.]+) "
                   r"ms \((\d+) SpMV\), ranking ([\d.]+) ms \((\d+)\), builds ([\d.]+) ms "
                   r"\((\d+)\), measurements ([\d.]+) ms \((\d+)\), total ([\d.]+) ms = (\d+) "
                   r"SpMV-equivalents")
FIRST = re.compile(r"first:\s+multiply answered ([\d.]+) ms after the upload returned \(plan (\S+),")
DELIVERED = re.compile(r"delivered: median ([\d.eE+-]+) ms on the device over (\d+) multiplies")
HEADER = re.compile(r"^== (.+)$")


def candidate_key(plan):
    return json.dumps([plan["format_name"], plan["params"], plan["launch"]], sort_keys=True)


def parse_daemon_log(path):
    """{matrix label: {"servable_ms", "tuned": dict}} from one daemon log (last tuning wins)."""
    names, out = {}, {}
    for line in Path(path).read_text(errors="replace").splitlines():
        m = RESIDENT.search(line)
        if m:
            label = Path(m.group(2)).stem
            names[m.group(1)] = label
            out.setdefault(label, {})["servable_ms"] = float(m.group(3))
            continue
        m = TUNED.search(line)
        if m and m.group(1) in names:
            g = m.groups()
            out[names[g[0]]]["tuned"] = {
                "format": g[1], "measured_ms": float(g[2]), "mode": g[3], "k": int(g[4]),
                "measured": int(g[5]), "features_ms": float(g[8]), "builds_ms": float(g[12]),
                "measurements_ms": float(g[14]), "total_ms": float(g[16]),
                "spmv_eq": float(g[17]), "spmv_eq_without_features": float(g[17]) - float(g[9]),
            }
    return out


def parse_run_log(path):
    """{matrix label: {"first_ms": the first multiply after the upload returned, "delivered_ms":
    the median device time of the tuned plan's multiplies (`run --repeat`)}}."""
    out, label = {}, None
    for line in Path(path).read_text(errors="replace").splitlines():
        m = HEADER.match(line)
        if m:
            label = m.group(1)
            continue
        if not label:
            continue
        m = FIRST.search(line)
        if m:
            out.setdefault(label, {})["first_ms"] = float(m.group(1))
        m = DELIVERED.search(line)
        if m:
            out.setdefault(label, {})["delivered_ms"] = float(m.group(1))
    return out


def load_samples(db):
    """{fingerprint: [(tuned_ms, plan JSON)]} of every measured candidate, fp64."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT fingerprint, tuned_ms, sample_json FROM samples").fetchall()
    out = {}
    for fingerprint, tuned_ms, text in rows:
        sample = json.loads(text)
        plan = sample.get("measured", sample)
        out.setdefault(fingerprint, []).append((tuned_ms, plan))
    return out


def load_plans(db):
    """{fingerprint: plan JSON} of the plans table (the last mode's)."""
    con = sqlite3.connect(db)
    return {fp: json.loads(text) for fp, text in
            con.execute("SELECT fingerprint, plan_json FROM plans").fetchall()}


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def svg_figure(path, title, points):
    """points: (cost SpMV-eq, loss %, label). Log-x scatter, plain SVG."""
    w, h, left, bottom = 640, 400, 70, 50
    xs = [max(p[0], 1.0) for p in points] or [1.0]
    x0, x1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)) + 1e-9)
    x1 = max(x1, x0 + 1)
    y1 = max(5.0, max((p[1] for p in points), default=5.0) * 1.1)

    def px(c):
        return left + (math.log10(max(c, 1.0)) - x0) / (x1 - x0) * (w - left - 20)

    def py(loss):
        return h - bottom - loss / y1 * (h - bottom - 30)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'font-family="sans-serif" font-size="11">',
             f'<text x="{w / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - 20}" y2="{h - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="30" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    for e in range(x0, x1 + 1):
        x = px(10 ** e)
        parts.append(f'<line x1="{x}" y1="{h - bottom}" x2="{x}" y2="{h - bottom + 5}" stroke="black"/>')
        parts.append(f'<text x="{x}" y="{h - bottom + 18}" text-anchor="middle">1e{e}</text>')
    for k in range(6):
        loss = y1 * k / 5
        parts.append(f'<text x="{left - 6}" y="{py(loss) + 4}" text-anchor="end">{loss:.0f}%</text>')
    parts.append(f'<line x1="{left}" y1="{py(5)}" x2="{w - 20}" y2="{py(5)}" stroke="grey" '
                 f'stroke-dasharray="4 3"/>')
    parts.append(f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">tuning cost, '
                 f'SpMV-equivalents of the chosen plan (log)</text>')
    parts.append(f'<text x="16" y="{h / 2}" transform="rotate(-90 16 {h / 2})" '
                 f'text-anchor="middle">loss against the oracle</text>')
    for cost, loss, label in points:
        parts.append(f'<circle cx="{px(cost):.1f}" cy="{py(loss):.1f}" r="4" fill="steelblue">'
                     f'<title>{label}: {cost:.0f} SpMV-eq, {loss:.1f}%</title></circle>')
    parts.append("</svg>")
    Path(path).write_text("\n".join(parts) + "\n")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    svg_dir = Path(argv[argv.index("--svg-dir") + 1]) if "--svg-dir" in argv else None
    features = json.loads((root / "features.json").read_text())
    features = features if isinstance(features, list) else [features]
    fingerprint_of = {f["label"]: f["fingerprint"] for f in features}
    samples = {m: load_samples(root / f"plans-{m}.db") for m in MODES
               if (root / f"plans-{m}.db").exists()}
    logs = {m: parse_daemon_log(root / f"daemon-{m}.log") for m in MODES
            if (root / f"daemon-{m}.log").exists() and m in samples}
    runs = {m: parse_run_log(root / f"run-{m}.log") for m in MODES
            if (root / f"run-{m}.log").exists()}
    if "exhaustive" not in logs:
        print("no exhaustive run: no oracle", file=sys.stderr)
        return 1
    rows, per_mode = [], {m: [] for m in logs}
    for label in sorted(logs["exhaustive"]):
        fp = fingerprint_of.get(label)
        modes_run = [m for m in logs if "tuned" in logs[m].get(label, {}) and fp in samples[m]]
        if fp is None or "exhaustive" not in modes_run:
            print(f"{label}: no oracle tuning stored: skipped", file=sys.stderr)
            continue
        # Each mode's database saw the matrix once: its samples are that one tuning's.
        by_mode = {m: [p for _, p in samples[m][fp]] for m in modes_run}
        oracle = {}
        for plan in by_mode["exhaustive"]:
            key = candidate_key(plan)
            oracle[key] = min(plan["measured_ms"], oracle.get(key, math.inf))
        best = min(oracle.values())
        alg1 = [ms for key, ms in oracle.items()
                if json.loads(key)[0] == "cusparse_csr" and json.loads(key)[1].get("library_algorithm") == 2]
        for mode in modes_run:
            entry = logs[mode][label]
            tuned = entry["tuned"]
            # The plan a tuning keeps is the fastest it measured; judged by the oracle's
            # measurement of the same candidate where the oracle measured it.
            kept = min(by_mode[mode], key=lambda p: p["measured_ms"])
            if kept["format_name"] != tuned["format"]:
                print(f"{label} {mode}: kept {kept['format_name']} but the log says {tuned['format']}",
                      file=sys.stderr)
            judged_ms = oracle.get(candidate_key(kept), kept["measured_ms"])
            loss = 100.0 * (judged_ms / best - 1.0)
            record = {"label": label, "format": tuned["format"], "loss": loss,
                      "vs_alg1": (alg1[0] / judged_ms) if alg1 else None,
                      "cost": tuned["spmv_eq"], "cost_nf": tuned["spmv_eq_without_features"],
                      "measured": tuned["measured"], "tuned_mode": tuned["mode"],
                      "total_ms": tuned["total_ms"], "servable_ms": entry.get("servable_ms"),
                      "first_ms": runs.get(mode, {}).get(label, {}).get("first_ms")}
            delivered = runs.get(mode, {}).get(label, {}).get("delivered_ms")
            # What Multiply delivers for the plan over what the tuning measured for it.
            record["delivered_ratio"] = delivered / tuned["measured_ms"] if delivered else None
            per_mode[mode].append(record)
            rows.append((mode, record))

    print("| mode | matrices | within 5 % of the oracle | geomean loss | worst | vs ALG1 (geomean) "
          "| slower than ALG1 | cost, SpMV-eq. (median / max) | cost without the feature pass "
          "(median / max) | first multiply after Upload, ms (median / max) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode in logs:
        recs = per_mode[mode]
        if not recs:
            continue
        within = sum(1 for r in recs if r["loss"] <= 5.0)
        ratios = [r["vs_alg1"] for r in recs if r["vs_alg1"]]
        costs = [r["cost"] for r in recs]
        costs_nf = [r["cost_nf"] for r in recs]
        firsts_ms = [r["first_ms"] for r in recs if r["first_ms"] is not None]
        print(f"| {mode} | {len(recs)} | {within}/{len(recs)} ({100 * within / len(recs):.0f} %) "
              f"| {100 * (geomean([1 + r['loss'] / 100 for r in recs]) - 1):.1f} % "
              f"| {max(r['loss'] for r in recs):.0f} % "
              f"| {geomean(ratios):.3f}x | {sum(1 for x in ratios if x < 0.995)} "
              f"| {statistics.median(costs):.0f} / {max(costs):.0f} "
              f"| {statistics.median(costs_nf):.0f} / {max(costs_nf):.0f} "
              f"| {statistics.median(firsts_ms):.1f} / {max(firsts_ms):.1f} |"
              if firsts_ms else "| - |")
    print()
    print("Delivered / measured: the median device time of the tuned plan's multiplies (`spmv run "
          "--repeat`) over the plan's measured_ms.")
    print()
    print("| mode | matrices | median | min | max | within ±5 % | within ±10 % |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode in logs:
        ratios = sorted(r["delivered_ratio"] for r in per_mode[mode] if r["delivered_ratio"])
        if not ratios:
            continue
        print(f"| {mode} | {len(ratios)} | {statistics.median(ratios):.3f} | {ratios[0]:.3f} "
              f"| {ratios[-1]:.3f} | {sum(1 for x in ratios if abs(x - 1) <= 0.05)} "
              f"| {sum(1 for x in ratios if abs(x - 1) <= 0.10)} |")
    print()
    print("| matrix | mode | plan | loss | cost SpMV-eq. | measured | servable ms | first ms "
          "| delivered / measured |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode, r in sorted(rows, key=lambda x: (x[1]["label"], MODES.index(x[0]))):
        ratio = f"{r['delivered_ratio']:.3f}" if r["delivered_ratio"] else "-"
        print(f"| {r['label']} | {mode} ({r['tuned_mode']}) | {r['format']} | {r['loss']:.1f} % "
              f"| {r['cost']:.0f} | {r['measured']} | {r['servable_ms'] or 0:.1f} "
              f"| {r['first_ms'] or 0:.1f} | {ratio} |")
    if svg_dir:
        svg_dir.mkdir(parents=True, exist_ok=True)
        for mode, recs in per_mode.items():
            svg_figure(svg_dir / f"tuner-live-{mode}.svg", f"spmvd tuner, {mode}",
                       [(r["cost"], max(r["loss"], 0.0), r["label"]) for r in recs])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
