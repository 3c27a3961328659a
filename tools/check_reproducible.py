"""Re-run the first updates of committed runs with the flags in their config.json and compare the rows
of progress.csv with the committed ones (all columns but the three timings). Run it before committing a
change to a training script or envs.py: committed results must stay reproducible from HEAD.

    python tools/check_reproducible.py results/runs/InvertedPendulum-v5__sar__dt0.002__action__s1 --updates 3
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
from tools import ROOT, promises, status  # noqa: E402 - status: a training script's own parsing of its flags
from tools.promises import brief, fail, within  # noqa: E402

TIMINGS = {"wall_time_s", "decisions_per_s", "env_steps_per_s", "gradient_steps_per_s"}
NOT_FLAGS = {"method", "script", "dt0", "gamma_dt", "learning_rate_used", "resumed_at_decision_steps", "versions",
             "resume", "log_dir", "run_name", "total_steps", "save_model", "code", "physical_time", "rmsprop_alpha"}


def row_size(config):
    """Decisions per row of progress.csv: an update's --num-steps; DAU's --num-envs × --train-every transitions."""
    keys = ("num_envs", "train_every") if str(config.get("method")).startswith("DAU") else ("num_steps",)
    sizes = [config.get(key) for key in keys]
    return sizes[0] * sizes[-1] if all(isinstance(n, int) and n > 0 for n in sizes) else None


def command(config, updates, log_dir):
    if config["method"].startswith("DAU"):  # its budget is physical time: `updates` rows of δ-steps
        script, budget = "dau.py", ["--physical-time", repr(updates * row_size(config) * config["dt"])]
    else:
        script, budget = status.script_of(config), ["--total-steps", str(updates * config["num_steps"])]
    if status.module(script) is None:
        fail(f"runs: {script}, which made the run, is not in {ROOT}")
    config = {**status.module(script).FLAGS_ADDED_LATER, **config}  # a run made before a flag had its value
    flags = []
    for key, value in config.items():
        flag = "--" + key.replace("_", "-")
        if key in NOT_FLAGS or value is None or value is False and key not in ("norm_obs", "norm_reward"):
            continue
        if config.get("a2c") and key in ("update_epochs", "minibatch_size"):  # --a2c sets them (and refuses them)
            continue
        text = ",".join(map(str, value)) if isinstance(value, list) else str(value)  # --delta-dims 2,3
        flags += [flag] if value is True else [f"--no-{flag[2:]}"] if value is False else [flag, text]
    return [sys.executable, os.path.join(ROOT, script), *flags, *budget, "--log-dir", log_dir, "--run-name", "check"]


def rows(path, updates):
    """The first `updates` whole rows of a progress.csv, without the timings (a torn last line is not a row)."""
    with open(path, newline="") as f:
        text = f.read()
    reader = csv.DictReader(text[:text.rfind("\n") + 1].splitlines())
    return [{k: v for k, v in r.items() if k not in TIMINGS} for r in reader][:updates]


def committed(run, updates):
    """(config, rows) of a committed run, checked before any work: one line and exit 2 if unreadable."""
    if not os.path.isdir(run):
        fail(f"runs: {run} is not a run folder")
    try:
        with open(os.path.join(run, "config.json")) as f:
            config = json.load(f)
        if not (isinstance(config.get("method"), str) and row_size(config)):
            raise ValueError("no method or row size")
        found = rows(os.path.join(run, "progress.csv"), updates)
    except Exception as e:  # noqa: BLE001 - missing, torn or foreign files: OS, JSON, attribute and CSV errors alike
        fail(f"runs: {run} has no readable config.json and progress.csv ({brief(e)})")
    if not found or None in found[0] or None in found[-1].values():
        fail(f"runs: {run}'s progress.csv has no whole row to compare")
    script = command(config, updates, "LOG_DIR")
    try:  # flags the script would refuse are found now, before any run is re-made
        status.parsed(status.module(os.path.basename(script[1])), script[2:])
    except ValueError as e:
        fail(f"runs: {run}'s config.json has flags its script refuses ({e})")
    return config, found


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("runs", nargs="+", help="committed run folders")
    p.add_argument("--updates", type=within(int, 1, 10 ** 5), default=3,
                   help="updates (rows) to re-run per run (default 3; at most the rows the run has)")
    args = p.parse_args(argv)
    runs = [(run, *committed(run, args.updates)) for run in args.runs]
    failed = 0
    for run, config, expected in runs:
        n = len(expected)  # fewer than --updates when the run has fewer rows
        with tempfile.TemporaryDirectory() as log_dir:
            result = subprocess.run(command(config, n, log_dir), capture_output=True, text=True)
            same = result.returncode == 0 and rows(os.path.join(log_dir, "check", "progress.csv"), n) == expected
        failed += not same
        print(f"{'identical' if same else 'DIFFERENT'}: first {n} rows of {run}"
              + (f" (it has {n}, fewer than --updates {args.updates})" if n < args.updates else "")
              + ("" if result.returncode == 0 else f" ({result.stderr.strip().splitlines()[-1:]})"))
    return 1 if failed else 0


if __name__ == "__main__":
    promises.run(main)
