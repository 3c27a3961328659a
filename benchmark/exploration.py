"""App. B's exploration example measured: how likely a uniformly random policy is to find the reward
of a 1-D random walk as δ shrinks, and what holding each random action for a fixed time buys.

    python benchmark/exploration.py            # a few seconds: remakes results/theory/exploration.csv and .png
    python benchmark/exploration.py --walks 2000 --out /tmp/exploration.csv   # other --walks or --seed: another --out

The walk (App. B): T = 2, s_0 = 0, a_i ∈ {−1, +1} with probability 1/2 each, s_{i+1} = s_i + δ·a_i for
N = 2/δ steps; the reward is positive iff |s_N| ≥ 1. With every action drawn afresh (hold_s = 0),
P(R > 0) = 1 − P(N/4 < X < 3N/4), X ~ B(N, 1/2) (`p_exact`), ≈ 1 − P(|Z| < √N/2) (`p_normal`),
→ 0 as δ → 0. With each action held for hold_s seconds (⌈hold_s/δ⌉ δ-steps, at least one, as in
FiGAR-C; on this walk SAR with a radius d on the position holds an action for d seconds too), the
walk takes M = ⌈N/k⌉ decisions and P(R > 0) stops depending on δ once δ ≤ hold_s. `p_exact` sums the
binomial distribution of the decisions (the last one may be shorter), `p_normal` uses the normal
with the same variance, `p_monte_carlo` simulates `walks` walks action by action. `log10_p_exact`
keeps the probabilities that underflow a float (below 1e-308).
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import plot
from plot import plt  # matplotlib without a display, as plot.py sets it
from tools import ROOT, promises
from tools.promises import fail, save_figure, within

COLUMNS = ["hold_s", "dt", "N", "decisions", "p_exact", "log10_p_exact", "p_normal", "p_monte_carlo", "walks"]
DTS = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4)
HOLDS = (0.0, 0.05, 0.4)  # 0: a fresh action every δ; 0.05 s: the scripts' t_max
COMMITTED = os.path.join(ROOT, "results", "theory", "exploration.csv")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--walks", type=within(int, 1, 10 ** 9), default=20_000,
                   help="Monte-Carlo walks per (hold, δ) (default 20,000)")
    p.add_argument("--seed", type=promises.SEED, default=1)
    p.add_argument("--out", default=None, help="the CSV (default results/theory/exploration.csv, the committed "
                                               "numbers: only with the default --walks and --seed)")
    p.add_argument("--figure", default=None, help="default: the CSV's path with .png")
    args = p.parse_args(argv)
    args.out, args.figure = promises.output_paths(p, args, COMMITTED, ("walks", "seed"), COLUMNS)
    return args


def lengths(dt, hold_s):
    """The δ-steps of each decision: ⌈hold_s/δ⌉ (at least one), the last one cut at N = 2/δ."""
    n, k = round(2 / dt), max(1, math.ceil(hold_s / dt - 1e-9))
    m = math.ceil(n / k)
    return np.array([k] * (m - 1) + [n - k * (m - 1)])


def log_p_exact(steps):
    """log P(|Σ_j steps_j·a_j| ≥ N/2): X ~ B(M−1, 1/2) of the full decisions are +1, the last is ±1."""
    n, m, k, last = steps.sum(), len(steps), steps[0], steps[-1]
    x = np.arange(m)  # X = 0..M−1
    log_choose = np.concatenate([[0.0], np.cumsum(np.log((m - x[1:]) / x[1:]))])  # log C(M−1, X)
    log_pmf = log_choose - (m - 1) * math.log(2) - math.log(2)  # and the last decision's sign
    position = k * (2 * x - (m - 1)) if m > 1 else np.zeros(1, np.int64)
    terms = np.concatenate([log_pmf[np.abs(position + s * last) * 2 >= n] for s in (1, -1)])
    return float(np.logaddexp.reduce(terms)) if len(terms) else -math.inf


def p_normal(steps):
    """The normal approximation: Σ_j steps_j·a_j ≈ N(0, Σ_j steps_j²); for hold_s = 0, 1 − P(|Z| < √N/2)."""
    return math.erfc(steps.sum() / 2 / math.sqrt(2 * np.square(steps).sum()))


def p_monte_carlo(steps, walks, rng, chunk=1_000_000):
    hits = 0
    for begin in range(0, walks, max(1, chunk // len(steps))):
        count = min(walks - begin, max(1, chunk // len(steps)))
        actions = 2 * rng.integers(0, 2, size=(count, len(steps)), dtype=np.int8) - 1
        hits += int((np.abs(actions @ steps) * 2 >= steps.sum()).sum())
    return hits / walks


def plot_figure(rows, path):
    fig, (ax, ax_log) = plt.subplots(1, 2, figsize=(11, 4))
    # plot.py's colours: a fresh action every δ as PPO, an action held a fixed time as FiGAR-C (shades)
    colors = (plot.method_color("PPO"), plot.method_color("FiGAR-C-PPO"), plot.method_color("FiGAR-C-PPO", 0.5))
    for hold, color in zip(sorted({float(r["hold_s"]) for r in rows}), colors):
        mine = sorted((r for r in rows if float(r["hold_s"]) == hold), key=lambda r: -float(r["dt"]))
        dts = [float(r["dt"]) for r in mine]
        name, z = ("a fresh action every δ", 3) if hold == 0 else (f"each action held {hold:g} s", 2)
        ax.plot(dts, [float(r["p_exact"]) for r in mine], "-", color=color, zorder=z, label=f"{name}: exact")
        ax.plot(dts, [float(r["p_normal"]) for r in mine], "--", color=color, zorder=z)
        mc = [(d, float(r["p_monte_carlo"])) for d, r in zip(dts, mine) if float(r["p_monte_carlo"]) > 0]
        ax.plot(*zip(*mc), "o", color=color, ms=4, zorder=z,
                label="dots: Monte Carlo (zeros left out)" if hold == 0 else None)
        ax_log.plot(dts, [float(r["log10_p_exact"]) for r in mine], "-o", color=color, ms=3, label=name)
    ax.set_yscale("log"), ax.set_ylim(1e-15, 1.5), ax.set_ylabel("P(R > 0)")
    ax_log.set_ylabel("log10 P(R > 0), exact")
    for a in (ax, ax_log):
        a.set_xscale("log"), a.invert_xaxis(), a.set_xlabel("δ (s), N = 2/δ steps"), a.grid(alpha=0.3)
        a.legend(fontsize=7)
    save_figure(fig, "App. B: a random policy's chance of reward within T = 2 s (dashed: normal approximation)", path)


def main(argv=None):
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    for hold in HOLDS:
        for dt in DTS:
            steps = lengths(dt, hold)
            log_p = log_p_exact(steps)
            rows.append({"hold_s": f"{hold:g}", "dt": f"{dt:g}", "N": steps.sum(), "decisions": len(steps),
                         "p_exact": f"{math.exp(log_p):.6g}", "log10_p_exact": f"{log_p / math.log(10):.6g}",
                         "p_normal": f"{p_normal(steps):.6g}",
                         "p_monte_carlo": f"{p_monte_carlo(steps, args.walks, rng):.6g}", "walks": args.walks})
            print(", ".join(f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    with promises.locked("--out", os.path.dirname(os.path.abspath(args.out))):  # the CSV and figure of one run
        promises.write_rows(args.out, COLUMNS, rows)
        plot_figure(rows, args.figure)


if __name__ == "__main__":
    promises.run(main)
