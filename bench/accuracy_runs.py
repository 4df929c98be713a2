"""What bench/model_ablation.py and bench/split_host_path.py share: their arguments (one
calibration, one spmv-bench run, where the matrices are, the model-accuracy binary) and one
model-accuracy run on them, its JSON report read back."""
import argparse
import gzip
import json
import os
import shutil
import subprocess


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--calibration", required=True)
    p.add_argument("--bench", required=True)
    p.add_argument("--data-dir", default=os.environ.get("BUNDLE_DATA"))
    p.add_argument("--model-accuracy", default="model-accuracy")
    return p


def plain(path, directory):
    """path itself, or for a .gz its contents unpacked into directory (model-accuracy reads
    plain JSON)."""
    if not path.endswith(".gz"):
        return path
    out = os.path.join(directory, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def model_accuracy(args, calibration, bench, out, without=None):
    """model-accuracy's JSON report (written to out) of calibration against bench, plain paths;
    exits with its stderr where it fails."""
    command = [args.model_accuracy, "--calibration", calibration, "--bench", bench, "--json", out]
    if args.data_dir:
        command += ["--data-dir", args.data_dir]
    if without:
        command += ["--without", without]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}")
    with open(out) as f:
        return json.load(f)
