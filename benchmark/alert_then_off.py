"""Proposition 2 measured: the policy gradient's variance of the optimal FiGAR-C and SAR policies on
AlertThenOff (Sec. 4.3, App. C) as the reaction window x shrinks, with δ = x/5.

    python benchmark/alert_then_off.py                   # about 4 minutes on one core
    python benchmark/alert_then_off.py --episodes 2000 --out /tmp/alert_then_off.csv   # a quick look

With its defaults it remakes the committed results/theory/alert_then_off.csv and .png; other --xs,
--episodes or --seed need another --out.

The proof's policies (f ≡ 0 and ν large, so that R(τ) = ξ ~ N(0, 1)), stepped through the scripts'
own repetition wrappers:
  FiGAR-C  off = s, num ~ N(μ, 1), duration t = x while normal (figar_ppo.DurativeRepetition with
           t_max = x and u = 1: ⌈x/δ⌉ = 5 δ-steps); switching off lasts one δ-step (u = 0), because
           holding off = 1 once s is back to 0 ends the episode with −ν.
  SAR      off = s, num ~ N(μ, 1), d = 1/2 (u = 1, d_max = 1/2), no cap on t (t_max = inf), with
           Δ = |s − s_i| (sar_ppo.SafeActionRepetition with its Δ statistics pinned to mean 0, var 1).
μ is the only parameter: G = (Σ_i ∂/∂μ log N(num_i; μ, 1)) · R(τ) = (Σ_i ε_i) · ξ, and
total_variance = V̂[G] over --episodes episodes (pg_variance.total_variance); ci95 is the half-width
of the 95% normal interval of that estimate (it is the mean of the squared deviations).

Since N is independent of ε and ξ, tr V[G] = E[N], the mean number of decisions. The proof counts
N = 2 for SAR; in this δ-discretisation SAR takes 3 decisions: normal until the alert, the switch-off
(which itself moves s from 1 back to 0, so Δ = 1 ≥ d ends it after one δ-step), normal to the end.
Exactly, E[N] = 3 − 3δ for SAR and 1/x + 1 − x for FiGAR-C (an alert in the last decision or last
steps saves decisions); the figure shows these beside the proof's lines (SAR: 2; FiGAR-C: ≥ 1/x).
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import envs
import figar_ppo
import plot
import sar_ppo
from benchmark.pg_variance import plt, total_variance
from tools import ROOT, promises
from tools.promises import fail, save_figure, within

COLUMNS = ["method", "x", "dt", "episodes", "total_variance", "ci95", "decisions_mean"]
XS = (0.2, 0.1, 0.05, 0.02, 0.01, 0.005)
NU = 1e6  # "ν → ∞": never paid by these policies (checked)
COMMITTED = os.path.join(ROOT, "results", "theory", "alert_then_off.csv")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--xs", nargs="+", type=within(float, 0, 1, open_low=True), default=list(XS),
                   help="reaction windows x in seconds; δ = x/5")
    p.add_argument("--episodes", type=within(int, 2, 10 ** 7), default=20_000,
                   help="episodes per (method, x) (default 20,000)")
    p.add_argument("--seed", type=promises.SEED, default=1, help="seeds the episodes and the num samples (default 1)")
    p.add_argument("--out", default=None, help="the CSV (default results/theory/alert_then_off.csv, the committed "
                                               "numbers: only with the default --xs, --episodes and --seed)")
    p.add_argument("--figure", default=None, help="default: the CSV's path with .png")
    args = p.parse_args(argv)
    args.out, args.figure = promises.output_paths(p, args, COMMITTED, ("xs", "episodes", "seed"), COLUMNS)
    return args


def make_decision_env(method, x):
    """AlertThenOff at δ = x/5 inside the scripts' repetition wrapper of `method`; δ is the env's own
    `dt`, and γ_δ = 1 (no discount: R(τ) = ξ, as in the proof)."""
    env = envs.AlertThenOff(dt=x / 5, x=x, nu=NU)
    if method == "FiGAR-C":
        return figar_ppo.DurativeRepetition(env, max_t=x, gamma_dt=1.0)
    env = sar_ppo.SafeActionRepetition(env, max_d=0.5, max_t=math.inf, gamma_dt=1.0)
    env.update_stats = False  # Δ = |s - s_i| / 1.001: pinned statistics, s ∈ {0, 1}
    env.obs_stats.mean, env.obs_stats.var = np.zeros(1), np.ones(1)
    return env


def gradient_samples(method, x, episodes, seed):
    """G = (Σ_i ε_i)·R(τ) and N of each episode under the proof's optimal policy (μ = 0)."""
    env, rng = make_decision_env(method, x), np.random.default_rng(seed)
    G, N = np.zeros(episodes), np.zeros(episodes, np.int64)
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed * 1_000_000 + episode)
        score, R, done = 0.0, 0.0, False
        while not done:
            s = obs[0]
            eps = rng.standard_normal()  # num = μ + ε
            u_raw = 1.0 if method == "SAR" or s == 0 else -1.0  # FiGAR-C: switching off lasts one δ-step
            obs, reward, terminated, truncated, _ = env.step(np.array([1.0 if s else -1.0, eps, u_raw]))
            score, R, N[episode], done = score + eps, R + reward, N[episode] + 1, terminated or truncated
        if R < -NU / 2:
            raise RuntimeError(f"{method} x={x}: the optimal policy paid −ν in episode {episode}")
        G[episode] = score * R
    return G, N


def expected_decisions(method, x):
    """E[N] = tr V[G] of the proof's policy in this discretisation (δ = x/5, 1/x a whole number)."""
    return 3 - 3 * x / 5 if method == "SAR" else 1 / x + 1 - x


def estimate(G):
    """V̂[G] and the half-width of its 95% interval."""
    squared = (G - G.mean()) ** 2
    return total_variance(G), 1.96 * squared.std(ddof=1) / math.sqrt(len(G))


def plot_figure(rows, path):
    fig, (ax_v, ax_n) = plt.subplots(1, 2, figsize=(10, 4))
    inv = np.array(sorted({1 / float(r["x"]) for r in rows}))
    for method, color in (("FiGAR-C", plot.method_color("FiGAR-C-PPO")), ("SAR", plot.method_color("SAR-PPO"))):
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: -float(r["x"]))
        x = np.array([1 / float(r["x"]) for r in mine])
        ax_v.errorbar(x, [float(r["total_variance"]) for r in mine], yerr=[float(r["ci95"]) for r in mine],
                      fmt="o", color=color, capsize=3, label=f"{method}, measured")
        ax_n.plot(x, [float(r["decisions_mean"]) for r in mine], "o", color=color, label=f"{method}, measured")
        for ax in (ax_v, ax_n):
            ax.plot(inv, [expected_decisions(method, 1 / i) for i in inv], ":", color=color,
                    label=f"{method}, E[N] of this discretisation")
    for ax in (ax_v, ax_n):
        ax.plot(inv, np.full(len(inv), 2.0), "-", color=plot.method_color("SAR-PPO"), alpha=0.5,
                label="SAR, Prop. 2: 2")
        ax.plot(inv, inv, "-", color=plot.method_color("FiGAR-C-PPO"), alpha=0.5, label="FiGAR-C, Prop. 2: ≥ 1/x")
        ax.set_xscale("log"), ax.set_yscale("log"), ax.set_xlabel("1/x  (δ = x/5)"), ax.grid(alpha=0.3)
    ax_v.set_ylabel("tr V̂[G] w.r.t. μ"), ax_n.set_ylabel("decisions per episode")
    ax_v.legend(fontsize=7)
    save_figure(fig, "AlertThenOff (Prop. 2): the optimal policies' gradient variance and decisions, 95% CI", path)


def main(argv=None):
    args = parse_args(argv)
    rows = []
    for x in args.xs:
        for method in ("FiGAR-C", "SAR"):
            G, N = gradient_samples(method, x, args.episodes, args.seed)
            variance, ci = estimate(G)
            rows.append({"method": method, "x": f"{x:g}", "dt": f"{x / 5:g}", "episodes": args.episodes,
                         "total_variance": f"{variance:.5g}", "ci95": f"{ci:.3g}", "decisions_mean": f"{N.mean():.4g}"})
            print(", ".join(f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    with promises.locked("--out", os.path.dirname(os.path.abspath(args.out))):  # the CSV and figure of one run
        promises.write_rows(args.out, COLUMNS, rows)
        plot_figure(rows, args.figure)


if __name__ == "__main__":
    promises.run(main)
