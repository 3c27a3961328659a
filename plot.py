"""Aggregate the logs of many runs (runs/<name>/config.json + progress.csv) into the paper's figures.

Runs are grouped by (env, setting, method, δ), where the setting is `deterministic`, a --noise kind,
and/or `hold-penalty`. Seeds are averaged; bands and error bars are 95% confidence intervals of the
mean over seeds from Student's t distribution: mean ± t(0.975, n-1) · s / sqrt(n), s the sample
standard deviation (no band for a single seed).

Per setting it writes five figures. Three put every method and δ of a task in one panel: training
return and mean action duration against --x (raw per-update means), and final return as bars. Two
are drawn as the paper draws its grid: `<setting>_grid_return_vs_<x>`, a row per method and a column
per task (in the paper's order), a colour per δ (darkest the smallest, lightest the task's largest),
each seed's curve smoothed by --smooth, y shared within a column; `<setting>_final_return_normalised`,
each task's final returns divided by R*, the best method's mean final return at the task's largest δ
(δ0 in the δ-invariance runs), so that 1 is "as good as the best at δ0" (if R* < 0, as on Reacher,
2 - R / R*: still 1 at R*, higher is better).

    python plot.py results/runs --out results/figures               # all figures + table
    python plot.py results/runs --x physical_time_s --format pdf     # App. F.2's axis
    python plot.py results/runs --table                              # the table only, as Markdown
    python plot.py results/runs --summary                            # a row per task (Fig. 4 at a glance)
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
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

# Two-sided 95% Student t quantiles t(0.975, df), df = 1..30; beyond that 1.96 is within 2%.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
X_LABELS = {"decision_steps": "decision steps", "physical_time_s": "physical time (s)",
            "wall_time_s": "wall time (s)"}
LINE_STYLES = ["-", "--", ":", "-."]
# The order of the paper's tasks (Sec. 5) and methods; any other comes after them, sorted.
TASKS = ["InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Hopper-v5", "Walker2d-v5", "HalfCheetah-v5",
         "Ant-v5", "Reacher-v5", "Swimmer-v5"]
METHODS = ["SAR-PPO", "λ-SAR-PPO", "FiGAR-C-PPO", "PPO", "PPO (scaled)"]


def mean_ci(values):
    """Mean and half-width of the 95% Student t interval over seeds (0 for one seed)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n < 2:
        return float(values.mean()), 0.0
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return float(values.mean()), float(t * values.std(ddof=1) / math.sqrt(n))


def ordered(names, first):
    """`names` in the order of `first`, a variant ("SAR-PPO (d_max=0.2)") right after its base; others last."""
    rank = lambda name: min([i for i, f in enumerate(first) if name == f or name.startswith(f + " ")], default=len(first))
    return sorted(names, key=lambda name: (rank(name), name))


def moving_average(y, window):
    """At each update the mean of the values (nan: none logged) of the last `window` updates, the first
    window-1 updates averaging those so far; nan where the window holds none."""
    means = []
    for i in range(len(y)):
        values = y[max(0, i + 1 - window):i + 1]
        values = values[~np.isnan(values)]
        means.append(values.mean() if len(values) else math.nan)
    return np.array(means)


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
                    "action_duration_mean_s", "safe_radius_mean")}
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


def finals(runs):
    return [final_return(columns) for _, columns, _ in runs]


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


def seed_curves(runs, x_key, y_key, points=100, smooth=1):
    """Each seed's y (its moving average over `smooth` updates) interpolated on a common x grid up to
    the shortest run; (grid, mean, ci)."""
    curves = []
    for _, columns, _ in runs:
        x, y = columns[x_key], moving_average(columns[y_key], smooth)
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


def rank_colors(dts):
    """{δ: colour}, darkest the smallest δ, lightest the largest."""
    dts = sorted(set(dts))
    return {dt: plt.cm.viridis(i / max(1, len(dts) - 1) * 0.85) for i, dt in enumerate(dts)}


def style_maps(groups):
    methods = sorted({key[2] for key in groups})
    colors = rank_colors(key[3] for key in groups)
    styles = {m: LINE_STYLES[i % len(LINE_STYLES)] for i, m in enumerate(methods)}
    return colors, styles


def panels(groups, setting):
    envs_ = ordered({key[0] for key in groups if key[1] == setting}, TASKS)  # the paper's order
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
        color = colors[dt] if len(colors) > 1 else plt.cm.tab10(list(styles).index(method) % 10)  # one δ: by method
        ax.plot(grid, mean, styles[method], color=color, label=f"{method}, δ = {dt:g} s (n={len(runs)})")
        ax.fill_between(grid, mean - ci, mean + ci, color=color, alpha=0.1, linewidth=0)
    for env_id, ax in axes.items():
        ax.set_title(f"{env_id} ({setting})", fontsize=9)
        ax.set_xlabel(X_LABELS.get(x_key, x_key))
        ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter())  # 100 k, not 100000
        ax.set_ylabel(y_label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    return save(fig, path)


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def draw_bars(ax, values, methods, dts, colors):
    """Per method (ticks) a bar per δ (colours): mean and 95% CI over seeds, each seed a dot.
    `values`: {(method, δ): the seeds' values}."""
    width = 0.8 / max(1, len(dts))
    labelled = set()
    for j, dt in enumerate(dts):
        for i, method in enumerate(methods):
            seeds = values.get((method, dt))
            if seeds is None:
                continue
            mean, ci = mean_ci(seeds)
            x = i + (j - (len(dts) - 1) / 2) * width
            ax.bar(x, mean, width, yerr=ci, capsize=2, color=colors[dt],
                   label=None if dt in labelled else f"δ = {dt:g} s")
            labelled.add(dt)
            ax.scatter([x] * len(seeds), seeds, s=6, color="black", zorder=3)
    ax.set_xticks(range(len(methods)), methods, fontsize=7)


def plot_final_bars(groups, setting, path):
    colors, _ = style_maps(groups)
    fig, axes = panels(groups, setting)
    for env_id, ax in axes.items():
        keys = sorted(k for k in groups if k[0] == env_id and k[1] == setting)
        values = {k[2:]: finals(groups[k]) for k in keys}
        draw_bars(ax, values, ordered({k[2] for k in keys}, METHODS), sorted({k[3] for k in keys}), colors)
        ax.set_title(f"{env_id} ({setting})", fontsize=9)
        ax.set_ylabel("final training return (dots: seeds)")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=6)
    return save(fig, path)


def grid_figure(groups, setting, x_key, smooth):
    """The paper's grid of training curves: a row per method, a column per task, a curve per δ; y shared
    within a column."""
    keys = [k for k in groups if k[1] == setting]
    tasks, methods = ordered({k[0] for k in keys}, TASKS), ordered({k[2] for k in keys}, METHODS)
    fig, axes = plt.subplots(len(methods), len(tasks), figsize=(max(6.0, 4.2 * len(tasks)), 2.5 * len(methods) + 1.2),
                             sharex="col", sharey="col", squeeze=False)
    for col, env_id in enumerate(tasks):
        colors = rank_colors(k[3] for k in keys if k[0] == env_id)
        for row, method in enumerate(methods):
            ax, seeds = axes[row, col], set()
            for dt, color in colors.items():
                runs = groups.get((env_id, setting, method, dt), [])
                curve = seed_curves(runs, x_key, "return_mean", smooth=smooth)
                if curve is None:
                    continue
                grid, mean, ci = curve
                ax.plot(grid, mean, color=color, lw=1.2)
                ax.fill_between(grid, mean - ci, mean + ci, color=color, alpha=0.2, linewidth=0)
                seeds.add(len(runs))
            n = "–".join(str(s) for s in sorted({min(seeds), max(seeds)})) if seeds else "0"
            on = "\non" if len(method) + len(env_id) > 38 else " on"  # a long title on two lines, within its panel
            ax.set_title(f"{method}{on} {env_id} (n = {n})", fontsize=9)
            ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter())
            ax.grid(alpha=0.3)
        bottom = axes[-1, col]
        bottom.set_xlabel(X_LABELS.get(x_key, x_key))
        handles = [plt.Line2D([], [], color=color, lw=2) for color in colors.values()]
        bottom.legend(handles, [f"δ = {dt:g} s" for dt in colors], fontsize=8, ncol=len(colors),
                      loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)
    for row in axes:
        row[0].set_ylabel("training return")
    # the title 0.1 inch below the top edge: tight_layout lets a tall grid's first row run into it
    fig.suptitle(f"{setting}: training return, each seed's moving average over {smooth} updates\n"
                 "lines: mean over seeds; bands: 95% CI", fontsize=10, y=1 - 0.1 / fig.get_figheight())
    return fig


def normalised_finals(groups, setting):
    """({env: (R*, method, δ)}, {(env, method, δ): seeds' final return / R*}), R* the best method's mean
    final return at the task's largest δ; 2 - R / R* where R* < 0. A task without a usable R* is left out."""
    refs, scores = {}, {}
    for env_id in sorted({k[0] for k in groups if k[1] == setting}):
        keys = [k for k in groups if k[0] == env_id and k[1] == setting]
        top = max(k[3] for k in keys)
        means = {m: mean_ci(finals(groups[(env_id, setting, m, top)]))[0]
                 for m in ordered({k[2] for k in keys if k[3] == top}, METHODS)}  # ties: the paper's order
        method = max(means, key=lambda m: np.nan_to_num(means[m], nan=-math.inf))
        ref = means[method]
        if not abs(ref) > 0:  # nan or 0: no ratio
            print(f"warning: {env_id} ({setting}) left out of the normalised figure: best final return "
                  f"at δ = {top:g} s is {ref:g}", file=sys.stderr)
            continue
        refs[env_id] = (ref, method, top)
        for k in keys:
            ratio = np.array(finals(groups[k])) / ref
            scores[k] = ratio if ref > 0 else 2 - ratio
    return refs, scores


def normalised_figure(groups, setting):
    """Per task a panel of the final returns / R*, a bar per method and δ, seeds as dots. Each panel has its
    own y: a task whose R* is near 0 (an Ant that learned nothing) would flatten every other panel."""
    refs, scores = normalised_finals(groups, setting)
    tasks = ordered(refs, TASKS)
    methods = ordered({k[2] for k in scores}, METHODS)
    columns = min(4, max(1, len(tasks)))  # at most 4 tasks a row
    rows = math.ceil(max(1, len(tasks)) / columns)
    width = max(8.5, 1.5 + max(3.6, 0.9 * len(methods)) * columns)
    fig, axes = plt.subplots(rows, columns, figsize=(width, 4.6 * rows), squeeze=False)
    for ax in axes.flat[len(tasks):]:
        ax.axis("off")
    for ax, env_id in zip(axes.flat, tasks):
        values = {k[2:]: v for k, v in scores.items() if k[0] == env_id}
        dts = sorted({dt for _, dt in values})
        draw_bars(ax, values, methods, dts, rank_colors(dts))
        ax.axhline(1.0, color="gray", lw=0.8, ls="--")
        ref, method, top = refs[env_id]
        ax.set_title(f"{env_id}\nR* = {ref:.1f} ({method}, δ = {top:g} s)", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8, ncol=len(dts), loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False)
    for row in axes:
        row[0].set_ylabel("final training return / R*")
    fig.suptitle(f"{setting}: final training return R / R* (bars: mean and 95% CI over seeds; dots: seeds)\n"
                 "R* = the best method's mean final return at the task's largest δ (2 − R / R* if R* < 0)",
                 fontsize=9)
    return fig


def table(groups):
    """Markdown: final return (mean ± 95% CI over seeds), decisions per physical second, wall time."""
    lines = ["| env | setting | method | δ (s) | seeds | decisions | final return | decisions / physical s | wall time (min) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (env_id, setting, method, dt), runs in sorted(groups.items()):
        mean, ci = mean_ci(finals(runs))
        rate = np.mean([decisions_per_physical_second(c) for _, c, _ in runs])
        steps = min(int(c["decision_steps"][-1]) for _, c, _ in runs)
        wall = np.mean([c["wall_time_s"][-1] / 60 for _, c, _ in runs])
        final = f"{mean:.1f} ± {ci:.1f}" if len(runs) > 1 else f"{mean:.1f} (one seed)"
        lines.append(f"| {env_id} | {setting} | {method} | {dt:g} | {len(runs)} | {steps:,} | "
                     f"{final} | {rate:.1f} | {wall:.1f} |")
    return "\n".join(lines)


def summary(groups):
    """Markdown, the paper's Fig. 4 at a glance: per setting a row per task and, per method, the final
    return (mean ± 95% CI over seeds, the seeds' count in brackets) at the task's largest and smallest δ
    (δ0 and δ_lowest in the δ-invariance runs); – where a cell has no finished run or the task one δ."""
    tables = []
    for setting in sorted({k[1] for k in groups}):
        keys = [k for k in groups if k[1] == setting]
        methods = ordered({k[2] for k in keys}, METHODS)
        lines = [f"{setting}:", "",
                 "| task | δ (s) | decisions | " + " | ".join(f"{m}, largest δ | {m}, smallest δ" for m in methods) + " |",
                 "|---|---|---|" + "---|" * 2 * len(methods)]
        for env_id in ordered({k[0] for k in keys}, TASKS):
            dts = sorted({k[3] for k in keys if k[0] == env_id}, reverse=True)
            ends = (dts[0], dts[-1] if len(dts) > 1 else None)  # None: a task run at one δ only
            cells = []
            for method in methods:
                for dt in ends:
                    values = finals(groups.get((env_id, setting, method, dt), []))
                    if not values:
                        cells.append("–")
                        continue
                    mean, ci = mean_ci(values)
                    cells.append(f"{mean:.1f} ± {ci:.1f} ({len(values)})" if len(values) > 1 else f"{mean:.1f} (1)")
            decisions = sorted({int(c["decision_steps"][-1]) for k in keys if k[0] == env_id for _, c, _ in groups[k]})
            budget = f"{decisions[0]:,}" + (f"–{decisions[-1]:,}" if len(decisions) > 1 else "")
            lines.append(f"| {env_id} | {', '.join(f'{dt:g}' for dt in ends if dt is not None)} | {budget} | " + " | ".join(cells) + " |")
        tables.append("\n".join(lines))
    return "\n\n".join(tables)


def runs_table(groups):
    """Markdown: one line per run."""
    lines = ["| run | decisions | final return | wall time (min) |", "|---|---|---|---|"]
    for key, runs in sorted(groups.items()):
        for _, columns, folder in sorted(runs, key=lambda r: r[0]["seed"]):
            lines.append(f"| {os.path.basename(folder)} | {int(columns['decision_steps'][-1]):,} | "
                         f"{final_return(columns):.1f} | {columns['wall_time_s'][-1] / 60:.1f} |")
    return "\n".join(lines)


def fail(message):
    print(f"plot.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail  # argparse's own errors as one line too
    p.add_argument("paths", nargs="+", help="run folders, or folders holding run folders")
    p.add_argument("--out", default="results/figures", help="folder for the figures")
    p.add_argument("--x", choices=list(X_LABELS), default="decision_steps", help="x-axis of the curves")
    p.add_argument("--format", choices=["png", "pdf"], default="png")
    p.add_argument("--table", action="store_true", help="print the Markdown tables only, draw nothing")
    p.add_argument("--summary", action="store_true",
                   help="print only a row per task: each method's final return at the task's largest and smallest δ")
    p.add_argument("--prefix", default="", help="prefix of the figure file names")
    p.add_argument("--partial", action="store_true", help="include runs that have not finished yet")
    p.add_argument("--max-steps", type=int, default=None,
                   help="use each run's first N decisions only (e.g. the 100k mark of a longer run)")
    p.add_argument("--only", nargs="+", default=None, help="only run folders whose name contains one of these texts")
    p.add_argument("--smooth", type=int, default=10, metavar="N",
                   help="the grid figure's curves: at each update, each seed's mean training return over "
                        "its last N updates (the first N-1 updates: over those so far; updates with no "
                        "finished episode add nothing); 1 draws the raw curves (default 10)")
    args = p.parse_args(argv)
    out = os.path.abspath(args.out)
    while not os.path.exists(out):  # the folder it will be made in
        out = os.path.dirname(out)
    if not os.path.isdir(out):
        fail(f"--out: {out} is a file, not a folder")
    if args.smooth < 1:
        fail(f"--smooth: {args.smooth} updates; it must be 1 or more")
    groups = load_groups(args.paths, args.partial, args.max_steps, args.only)
    if not groups:
        fail("no complete run found")
    if args.summary:
        print(summary(groups))
        return 0
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
            save(grid_figure(groups, setting, args.x, args.smooth),
                 os.path.join(args.out, f"{name}_grid_return_vs_{args.x}.{args.format}")),
            save(normalised_figure(groups, setting),
                 os.path.join(args.out, f"{name}_final_return_normalised.{args.format}")),
        ]
        for path in written:
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
