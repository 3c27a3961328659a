"""The decisions after which each run first reaches a return: the first row of its progress.csv whose mean
training return (`return_mean`) is at or above it, as the report's "first ≥ 990" columns read it.

    python tools/first_reach.py 990 results/runs/InvertedPendulum-v5__sar__dt0.002__s*

One line a run: its folder and the row's decisions, or "never" and the best return it logged.
"""
import argparse
import csv
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
from tools import promises  # noqa: E402
from tools.promises import fail  # noqa: E402


def returns_of(folder):
    """[(decisions, mean training return)] of a run's rows that logged one; one line and exit 2 if it is no run."""
    path = os.path.join(folder, "progress.csv")
    if not os.path.isfile(path):
        fail(f"{folder}: no progress.csv there (give run folders, such as results/runs/<run>)")
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.DictReader(f))
    if not rows or "return_mean" not in rows[0] or "decision_steps" not in rows[0]:
        fail(f"{path}: not a training run's progress.csv (no decision_steps and return_mean columns)")
    try:
        return [(int(r["decision_steps"]), float(r["return_mean"])) for r in rows if r["return_mean"] not in ("", None)]
    except (TypeError, ValueError) as e:
        fail(f"{path}: a row that is not numbers ({e})")


def first_reach(rows, value):
    """The decisions of the first row whose return is ≥ value, else None."""
    return next((decisions for decisions, ret in rows if ret >= value), None)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("value", type=promises.within(float, -1e12, 1e12), help="the return to reach")
    p.add_argument("runs", nargs="+", help="run folders (each holding a progress.csv)")
    args = p.parse_args(argv)
    found = [(folder, returns_of(folder)) for folder in args.runs]  # every folder checked before any line
    for folder, rows in found:
        decisions = first_reach(rows, args.value)
        if decisions is not None:
            print(f"{folder}  {decisions:,}")
        elif rows:
            print(f"{folder}  never (best {max(ret for _, ret in rows):.1f})")
        else:
            print(f"{folder}  never (no episode ended)")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `... | head` ends quietly
    promises.run(main)
