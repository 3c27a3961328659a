"""How long a list of training commands takes, from the wall times of the committed runs: the CPU-hours
of a figure script's --list (the paper's whole grid: benchmark/full_grid.sh), and the hours on N cores.

    bash benchmark/full_grid.sh --list | python tools/grid_hours.py --cores 16

Each command's time is its --total-steps times the seconds per decision of the committed runs (results/runs,
results/runs_1m) of the same task, method, δ and setting, averaged over their seeds. A command with no such
run takes the nearest measured one, in this order: the same cell on another learner (TRPO, A2C and ARP-PPO
from PPO's), then the same task and method at the nearest δ on a log scale, then the same method at the
nearest δ on the other tasks (their mean: DAU's cost is its gradient steps, alike on every task); the
counts of each are printed.
On N cores, N runs at once each ran at --speed of one run's speed (0.91, measured with 16 runs on a
16-core machine); nothing is trained or written.
"""
import argparse
import csv
import json
import math
import os
import signal
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
from tools import ROOT
from tools.promises import fail, within
from tools.status import training_args  # a training command's flags, as its script parses them


def measured(folders):
    """{(env, method, δ, setting): [(seconds per decision, seconds per physical second) of each committed run]}."""
    rates = defaultdict(list)
    for folder in folders:
        for run in sorted(os.listdir(folder)):
            try:
                with open(os.path.join(folder, run, "config.json")) as f:
                    c = json.load(f)
                if c["method"] == "DAU" and "no_input_norm" not in c:  # made before dau.py normalised its inputs
                    c["method"] = "DAU (no normalisation)"
                with open(os.path.join(folder, run, "progress.csv"), newline="") as f:
                    last = list(csv.DictReader(f))[-1]
                wall = float(last["wall_time_s"])
                rates[(c["env_id"], c["method"], c["dt"], c.get("noise"))].append(
                    (wall / int(last["decision_steps"]), wall / float(last["physical_time_s"])))
            except (OSError, ValueError, KeyError, IndexError, json.JSONDecodeError):
                continue  # not a whole run: it measures nothing
    return rates


def mean(pairs):
    return tuple(sum(column) / len(pairs) for column in zip(*pairs))


def estimate(rates, key):
    """((seconds per decision, per physical second), how it was found) for a cell, from the nearest measured
    one (DAU (no normalisation)'s for DAU's: the same gradient steps)."""
    env_id, method, dt, noise = key
    if key in rates:
        return mean(rates[key]), "by their own cell"
    if method == "DAU" and (env_id, "DAU (no normalisation)", dt, noise) in rates:
        return mean(rates[(env_id, "DAU (no normalisation)", dt, noise)]), "by their cell without normalisation"
    figar = (env_id, "FiGAR-C-PPO", dt, noise)
    if method.startswith("TaCoS-PPO") and figar in rates:  # FiGAR-C-PPO with a cost: the same work per decision
        return mean(rates[figar]), "by FiGAR-C-PPO's cell"
    ppo = (env_id, method.removeprefix("ARP-").replace("TRPO", "PPO").replace("A2C", "PPO"), dt, noise)
    if ppo in rates:
        return mean(rates[ppo]), "by PPO's cell"
    near = [k for k in rates if k[0] == env_id and k[1] == ppo[1] and k[3] == noise] or \
           [k for k in rates if k[0] == env_id and k[1] == ppo[1]]
    if near:
        k = min(near, key=lambda k: abs(math.log(k[2] / dt)))
        return mean(rates[k]), "by the nearest δ"
    near = [k for k in rates if k[1] == method]
    if not near:
        return None, "none"
    nearest = min(abs(math.log(k[2] / dt)) for k in near)
    cells = [mean(rates[k]) for k in near if abs(math.log(k[2] / dt)) == nearest]
    return mean(cells), "by other tasks"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--cores", type=within(int, 1, 100_000), default=16, help="runs at once (default 16)")
    p.add_argument("--speed", type=within(float, 0.01, 1), default=0.91,
                   help="each run's speed with --cores runs at once, as a share of one run's (default 0.91)")
    args = p.parse_args(argv)
    rates = measured([os.path.join(ROOT, "results", "runs"), os.path.join(ROOT, "results", "runs_1m")])
    hours, found = 0.0, defaultdict(int)
    for line in sys.stdin:
        if not line.strip():
            continue
        _, flags = training_args(line)  # as status.py reads it: anything else is one line and exit 2
        noise = getattr(flags, "noise", None)  # dau.py has no stochastic settings
        rate, how = estimate(rates, (flags.env_id, flags.method, flags.dt, noise))
        if rate is None:
            fail(f"no committed run of {flags.env_id} with {flags.method} to time: {line.strip()}")
        if flags.total_steps is None:  # a budget of physical time (--physical-time); evaluations not counted
            hours += rate[1] * flags.physical_time / 3600
        else:
            hours += rate[0] * flags.total_steps / 3600
        found[how] += 1
    runs = sum(found.values())
    if not runs:
        fail("no command on stdin (pipe a figure script's --list into it)")
    print(f"{runs:,} runs: {hours:,.0f} CPU-hours "
          f"(runs timed {', '.join(f'{how}: {n:,}' for how, n in found.items())}); "
          f"on {args.cores} cores at {args.speed:.0%} of one run's speed: {hours / args.cores / args.speed:,.1f} hours")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
