"""Whether the longer runs of one folder repeat the committed runs of another of the same name row for row,
timings aside: integer columns exactly, the others to 12 significant digits (a mean of episode returns can
differ in its last bit between CPUs, as numpy's reductions follow the CPU's vector width). Reads only.

    python tools/same_prefix.py results/runs_1m results/runs
"""
import argparse
import csv
import os
import sys

TIMINGS = {"wall_time_s", "decisions_per_s", "env_steps_per_s", "gradient_steps_per_s"}


def fail(message):
    print(f"same_prefix.py: error: {message}".splitlines()[0], file=sys.stderr)
    sys.exit(2)


def same(a, b):
    """'exact', '12 digits' or None: one cell of each run."""
    if a == b:
        return "exact"
    try:
        x, y = float(a), float(b)
    except ValueError:
        return None
    if f"{x:.11e}" == f"{y:.11e}" and not (a.lstrip("-").isdigit() or b.lstrip("-").isdigit()):
        return "12 digits"
    return None


def compare(longer, committed):
    """One line: how the rows both runs have agree."""
    with open(longer, newline="") as f:
        new = list(csv.DictReader(f))
    with open(committed, newline="") as f:
        old = list(csv.DictReader(f))
    n = min(len(new), len(old))
    worst = "exact"
    for i in range(n):
        for column in old[0]:
            if column in TIMINGS:
                continue
            verdict = same(old[i][column], new[i].get(column, ""))
            if verdict is None:
                return f"differs at row {i + 1}, {column}: {old[i][column]} against {new[i].get(column, '')}"
            if verdict != "exact":
                worst = verdict
    if worst == "exact":
        return f"same in its {n} rows"
    return f"same to 12 digits in its {n} rows"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("longer", help="folder of the longer runs (results/runs_1m)")
    p.add_argument("committed", help="folder of the runs they must repeat (results/runs)")
    p.error = fail  # bad input: one line, exit 2
    args = p.parse_args()
    for folder in (args.longer, args.committed):
        if not os.path.isdir(folder):
            fail(f"{folder}: no such folder")
    counts = {}
    for run in sorted(os.listdir(args.longer)):
        new = os.path.join(args.longer, run, "progress.csv")
        old = os.path.join(args.committed, run, "progress.csv")
        if not (os.path.isfile(new) and os.path.isfile(old)):
            continue
        line = compare(new, old)
        print(f"{run}: {line}")
        kind = line.split(" in its")[0].split(" at row")[0]
        counts[kind] = counts.get(kind, 0) + 1
    print(", ".join(f"{k}: {v}" for k, v in counts.items()) or "no run of the same name in both folders")


if __name__ == "__main__":
    main()
