"""App. E, rising stochasticity: final return and the learned normalised duration (FiGAR-C-PPO: t/t_max)
or radius (SAR-PPO: d/d_max) against p_ext, the probability of an external force per decision, on
InvertedPendulum-v5 at δ_lowest (the runs of benchmark/appE_rising_stochasticity.sh). The paper's claim:
FiGAR-C's durations shrink as p_ext grows, SAR's radii do not. Each value is a run's mean over the last
10% of its decisions; the mean over seeds, whiskers the seeds' min–max, seeds as dots. FiGAR-C's duration is
the realised one (⌈t/δ⌉ δ-steps, cut short at an episode's end), logged as action_duration_mean_s.

    python benchmark/plot_rising_stochasticity.py results/runs --out results/figures
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import plot
from plot import plt
from tools import promises
from tools.promises import check_folder, fail, save_figure

NORMALISED = {"SAR-PPO": ("safe_radius_mean", "max_d", "d / d_max"),
              "FiGAR-C-PPO": ("action_duration_mean_s", "max_t", "t / t_max")}


def last(columns, key, fraction=0.1):
    steps = columns["decision_steps"]
    return float(np.nanmean(columns[key][steps >= steps.max() * (1 - fraction)]))


def selected(env_id, setting, method, dt):
    return env_id == "InvertedPendulum-v5" and dt == 0.002 and method in NORMALISED and \
        (setting == "ext-force" or setting.startswith("ext-force+p=") and "+std=" not in setting)


def cells(groups):
    """{(method, p_ext): [(final return, normalised duration or radius) per seed]}."""
    out = {}
    for (env_id, setting, method, dt), runs in groups.items():
        if not selected(env_id, setting, method, dt):
            continue
        key, scale, _ = NORMALISED[method]
        p_ext = runs[0][0].get("noise_prob")
        p_ext = 0.05 if p_ext is None else p_ext  # the paper's default when --noise-prob is not given
        out[(method, p_ext)] = [(plot.final_return(c), last(c, key) / config[scale]) for config, c, _ in runs]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("paths", nargs="+", help="run folders, or folders holding them")
    p.add_argument("--out", default="figures", help="folder of the figure"
                   " (default figures/, git-ignored; the committed results/figures only if named)")
    args = p.parse_args(argv)
    for path in args.paths:
        if not os.path.isdir(path):
            fail(f"paths: {path} is not a folder")
    check_folder("--out", args.out)
    groups = plot.load_groups(args.paths)
    found = cells(groups)
    if not found:
        fail("no finished InvertedPendulum-v5 ext-force run at δ = 0.002 s found")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    print("| method | p_ext | seeds | final return | normalised duration or radius |\n|---|---|---|---|---|")
    for method in ("SAR-PPO", "FiGAR-C-PPO"):
        color = plot.method_color(method)
        ps = sorted(p_ext for m, p_ext in found if m == method)
        for i, ax in enumerate(axes):
            stats = np.array([plot.mean_range([seed[i] for seed in found[(method, p_ext)]])
                              for p_ext in ps]).reshape(-1, 3)
            ax.errorbar(ps, stats[:, 0], yerr=[stats[:, 0] - stats[:, 1], stats[:, 2] - stats[:, 0]], fmt="o-",
                        color=color, capsize=3, label=f"{method} ({NORMALISED[method][2]})" if i else method)
            for p_ext in ps:
                ax.scatter([p_ext] * len(found[(method, p_ext)]), [seed[i] for seed in found[(method, p_ext)]],
                           s=8, color="black", zorder=3)
        for p_ext in ps:
            (r, rc), (n, nc) = (plot.mean_ci([seed[i] for seed in found[(method, p_ext)]]) for i in (0, 1))
            print(f"| {method} | {p_ext:g} | {len(found[(method, p_ext)])} | {r:.1f} ± {rc:.1f} | {n:.3f} ± {nc:.3f} |")
    ticks = sorted({p_ext for _, p_ext in found})
    for ax, label in zip(axes, ("final training return", "learned normalised duration or radius")):
        ax.set_xscale("log")
        ax.set_xticks(ticks, [f"{p_ext:g}" for p_ext in ticks])
        ax.minorticks_off()
        ax.set_xlabel("p_ext (probability of a force per decision)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    path = os.path.join(args.out, "ip_rising_stochasticity.png")
    with promises.locked("--out", args.out):
        save_figure(fig, "PPO: InvertedPendulum-v5, δ = 2 ms, external forces, "
                         f"{plot.budget([r for k, v in groups.items() if selected(*k) for r in v])}: "
                         "App. E (mean; whiskers: the seeds' min–max; dots: seeds)", path)
    print(f"wrote {path}")


if __name__ == "__main__":
    promises.run(main)
