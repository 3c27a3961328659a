"""Aggregate the logs of many runs (runs/<name>/config.json + progress.csv) into the paper's figures.

Runs are grouped by (env, setting, method, δ), where the setting is `deterministic`, a --noise kind,
and/or `hold-penalty`. Seeds are averaged; bands and error bars are 95% confidence intervals of the
mean over seeds from Student's t distribution: mean ± t(0.975, n-1) · s / sqrt(n), s the sample
standard deviation (no band for a single seed).

    python plot.py results/runs --out results/figures               # all figures + table
    python plot.py results/runs --x physical_time_s --format pdf     # App. F.2's axis
    python plot.py results/runs --table                              # the table only, as Markdown
"""
import argparse
import csv
import io
import json
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# Two-sided 95% Student t quantiles t(0.975, df), df = 1..30; beyond that 1.96 is within 2%.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
X_LABELS = {"decision_steps": "decision steps", "physical_time_s": "physical time (s)",
            "wall_time_s": "wall time (s)"}
LINE_STYLES = ["-", "--", ":", "-."]


def mean_ci(values):
    """Mean and half-width of the 95% Student t interval over seeds (0 for one seed)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n < 2:
        return float(values.mean()), 0.0
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return float(values.mean()), float(t * values.std(ddof=1) / math.sqrt(n))


def number(cell):
    return float(cell) if cell not in ("", None) else math.nan


def load_run(folder, partial=False, max_steps=None):
    """(config, columns as float arrays) of a run folder, or None with a one-line warning when it is
    malformed or (unless `partial`) has not reached its --total-steps yet. With `max_steps`, rows past
    that many decisions are dropped and a run that reached it counts as finished."""
    try:
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        with open(os.path.join(folder, "progress.csv"), newline="") as f:
            text = f.read()
        rows = list(csv.DictReader(io.StringIO(text)))
        torn = [i for i, r in enumerate(rows, 2) if None in r or None in r.values()]
        if torn or not text.endswith("\n"):
            raise ValueError(f"progress.csv has a torn row (line {torn[0] if torn else len(rows) + 1})")
        if max_steps is not None:
            rows = [r for r in rows if int(r["decision_steps"]) <= max_steps]
        if not rows:
            raise ValueError("progress.csv has no rows")
        columns = {k: np.array([number(r[k]) for r in rows]) for k in
                   ("decision_steps", "env_steps", "physical_time_s", "wall_time_s", "return_mean",
                    "action_duration_mean_s")}
        for key in ("env_id", "method", "dt", "seed", "total_steps"):
            config[key]  # noqa: B018 - raises KeyError if missing
        goal = config["total_steps"] if max_steps is None else min(max_steps, config["total_steps"])
        if not partial and columns["decision_steps"][-1] < goal:
            raise ValueError(f"unfinished: {int(columns['decision_steps'][-1])} of {goal} decisions")
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
        print(f"warning: skipping {folder}: {type(e).__name__}: {e}", file=sys.stderr)
        return None
    return config, columns


def setting_of(config):
    parts = [config.get("noise")] if config.get("noise") else []
    parts += [f"p={config['noise_prob']:g}"] if config.get("noise_prob") is not None else []
    parts += [f"std={config['noise_std']:g}"] if config.get("noise_std") is not None else []
    parts += ["hold-penalty"] if config.get("hold_penalty") else []
    return "+".join(parts) or "deterministic"


def final_return(columns, fraction=0.1):
    """Mean training return of the updates in the last `fraction` of the run's decision steps
    (updates with no finished episode have none); the last known return if that window is empty."""
    steps, returns = columns["decision_steps"], columns["return_mean"]
    known = ~np.isnan(returns)
    window = known & (steps >= steps.max() * (1 - fraction))
    if window.any():
        return float(returns[window].mean())
    return float(returns[known][-1]) if known.any() else math.nan


def decisions_per_physical_second(columns):
    return float(columns["decision_steps"][-1] / columns["physical_time_s"][-1])


def run_folders(path):
    """The run folders at or anywhere under `path`: those holding a progress.csv or config.json."""
    found = []
    for folder, subfolders, files in os.walk(path):
        if "progress.csv" in files or "config.json" in files:
            found.append(folder)
            subfolders.clear()  # a run folder holds no other run
        subfolders.sort()
    return found


def load_groups(paths, partial=False, max_steps=None, only=None):
    """{(env, setting, method, δ): [(config, columns, folder), ...]} over every run folder found
    (only those whose name contains one of the texts in `only`, if given). Two folders of the same
    (env, setting, method, δ, seed) are one seed: the one with more decisions is kept, with a warning."""
    folders = []
    for path in paths:
        if not os.path.isdir(path):
            print(f"warning: skipping {path}: not a folder", file=sys.stderr)
        folders += run_folders(path)
    if only:
        folders = [f for f in folders if any(text in os.path.basename(os.path.normpath(f)) for text in only)]
    seeds = {}
    for folder in folders:
        run = load_run(folder, partial, max_steps)
        if run is None:
            continue
        config, columns = run
        key = (config["env_id"], setting_of(config), config["method"], config["dt"], config["seed"])
        if key in seeds:
            kept, dropped = sorted([seeds[key], (config, columns, folder)], key=lambda r: -r[1]["decision_steps"][-1])
            print(f"warning: {dropped[2]} and {kept[2]} are the same seed; keeping {kept[2]} (more decisions)",
                  file=sys.stderr)
            seeds[key] = kept
        else:
            seeds[key] = (config, columns, folder)
    groups = defaultdict(list)
    for key, run in seeds.items():
        groups[key[:4]].append(run)
    return groups


def seed_curves(runs, x_key, y_key, points=100):
    """Each seed's y interpolated on a common x grid up to the shortest run; (grid, mean, ci)."""
    curves = []
    for _, columns, _ in runs:
        x, y = columns[x_key], columns[y_key]
        known = ~np.isnan(y)
        if known.sum() >= 2:
            curves.append((x[known], y[known]))
    if not curves:
        return None
    end = min(x[-1] for x, _ in curves)
    start = max(x[0] for x, _ in curves)
    grid = np.linspace(start, end, points)
    values = np.array([np.interp(grid, x, y) for x, y in curves])
    stats = [mean_ci(values[:, i]) for i in range(points)]
    return grid, np.array([m for m, _ in stats]), np.array([c for _, c in stats])


def style_maps(groups):
    dts = sorted({key[3] for key in groups})
    methods = sorted({key[2] for key in groups})
    colors = {dt: plt.cm.viridis(i / max(1, len(dts) - 1) * 0.85) for i, dt in enumerate(dts)}
    styles = {m: LINE_STYLES[i % len(LINE_STYLES)] for i, m in enumerate(methods)}
    return colors, styles


def panels(groups, setting):
    envs_ = sorted({key[0] for key in groups if key[1] == setting})
    fig, axes = plt.subplots(1, len(envs_), figsize=(5.2 * len(envs_), 4.0), squeeze=False)
    return fig, dict(zip(envs_, axes[0]))


def plot_curves(groups, setting, x_key, y_key, y_label, path):
    colors, styles = style_maps(groups)
    fig, axes = panels(groups, setting)
    for (env_id, s, method, dt), runs in sorted(groups.items()):
        if s != setting:
            continue
        curve = seed_curves(runs, x_key, y_key)
        if curve is None:
            continue
        grid, mean, ci = curve
        ax = axes[env_id]
        ax.plot(grid, mean, styles[method], color=colors[dt], label=f"{method}, δ = {dt:g} s (n={len(runs)})")
        ax.fill_between(grid, mean - ci, mean + ci, color=colors[dt], alpha=0.1, linewidth=0)
    for env_id, ax in axes.items():
        ax.set_title(f"{env_id} ({setting})", fontsize=9)
        ax.set_xlabel(X_LABELS.get(x_key, x_key))
        ax.set_ylabel(y_label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def plot_final_bars(groups, setting, path):
    colors, _ = style_maps(groups)
    fig, axes = panels(groups, setting)
    for env_id, ax in axes.items():
        keys = sorted(k for k in groups if k[0] == env_id and k[1] == setting)
        methods = sorted({k[2] for k in keys})
        dts = sorted({k[3] for k in keys})
        width = 0.8 / max(1, len(dts))
        labelled = set()
        for j, dt in enumerate(dts):
            for i, method in enumerate(methods):
                runs = groups.get((env_id, setting, method, dt))
                if not runs:
                    continue
                finals = [final_return(c) for _, c, _ in runs]
                mean, ci = mean_ci(finals)
                x = i + (j - (len(dts) - 1) / 2) * width
                ax.bar(x, mean, width, yerr=ci, capsize=2, color=colors[dt],
                       label=None if dt in labelled else f"δ = {dt:g} s")
                labelled.add(dt)
                ax.scatter([x] * len(finals), finals, s=6, color="black", zorder=3)  # each seed
        ax.set_xticks(range(len(methods)), methods, fontsize=7)
        ax.set_title(f"{env_id} ({setting})", fontsize=9)
        ax.set_ylabel("final training return (dots: seeds)")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def table(groups):
    """Markdown: final return (mean ± 95% CI over seeds), decisions per physical second, wall time."""
    lines = ["| env | setting | method | δ (s) | seeds | decisions | final return | decisions / physical s | wall time (min) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (env_id, setting, method, dt), runs in sorted(groups.items()):
        mean, ci = mean_ci([final_return(c) for _, c, _ in runs])
        rate = np.mean([decisions_per_physical_second(c) for _, c, _ in runs])
        steps = min(int(c["decision_steps"][-1]) for _, c, _ in runs)
        wall = np.mean([c["wall_time_s"][-1] / 60 for _, c, _ in runs])
        final = f"{mean:.1f} ± {ci:.1f}" if len(runs) > 1 else f"{mean:.1f} (one seed)"
        lines.append(f"| {env_id} | {setting} | {method} | {dt:g} | {len(runs)} | {steps:,} | "
                     f"{final} | {rate:.1f} | {wall:.1f} |")
    return "\n".join(lines)


def runs_table(groups):
    """Markdown: one line per run."""
    lines = ["| run | decisions | final return | wall time (min) |", "|---|---|---|---|"]
    for key, runs in sorted(groups.items()):
        for _, columns, folder in sorted(runs, key=lambda r: r[0]["seed"]):
            lines.append(f"| {os.path.basename(folder)} | {int(columns['decision_steps'][-1]):,} | "
                         f"{final_return(columns):.1f} | {columns['wall_time_s'][-1] / 60:.1f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", help="run folders, or folders holding run folders")
    p.add_argument("--out", default="results/figures", help="folder for the figures")
    p.add_argument("--x", choices=list(X_LABELS), default="decision_steps", help="x-axis of the curves")
    p.add_argument("--format", choices=["png", "pdf"], default="png")
    p.add_argument("--table", action="store_true", help="print the Markdown tables only, draw nothing")
    p.add_argument("--prefix", default="", help="prefix of the figure file names")
    p.add_argument("--partial", action="store_true", help="include runs that have not finished yet")
    p.add_argument("--max-steps", type=int, default=None,
                   help="use each run's first N decisions only (e.g. the 100k mark of a longer run)")
    p.add_argument("--only", nargs="+", default=None, help="only run folders whose name contains one of these texts")
    args = p.parse_args(argv)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        print(f"error: --out: {args.out} is a file, not a folder", file=sys.stderr)
        return 2
    groups = load_groups(args.paths, args.partial, args.max_steps, args.only)
    if not groups:
        print("error: no complete run found", file=sys.stderr)
        return 2
    print(table(groups))
    print()
    print(runs_table(groups))
    if args.table:
        return 0
    os.makedirs(args.out, exist_ok=True)
    for setting in sorted({key[1] for key in groups}):
        name = f"{args.prefix}{setting}"
        written = [
            plot_curves(groups, setting, args.x, "return_mean", "training return",
                        os.path.join(args.out, f"{name}_return_vs_{args.x}.{args.format}")),
            plot_final_bars(groups, setting, os.path.join(args.out, f"{name}_final_return.{args.format}")),
            plot_curves(groups, setting, args.x, "action_duration_mean_s", "mean action duration (s)",
                        os.path.join(args.out, f"{name}_action_duration.{args.format}")),
        ]
        for path in written:
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
