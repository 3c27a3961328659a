"""Curves and bars of any run folders (<folder>/config.json + progress.csv), and their final-return tables.

Runs are grouped by (env, setting, method, δ), the setting `deterministic`, a --noise kind and/or `hold-penalty`.
Each method has a colour of its own; a variant of a paper's method (a method flag off its default, "SAR-PPO
(d_max=0.2)") is read with --variants, in a shade of its base's. Seeds of different budgets are never averaged:
the budget most share is kept, the others named. Each learner (PPO, TRPO, A2C, DAU) has figures of its own, its
name first in the file names. Lines and bars: the mean over seeds; bands and whiskers: the seeds' min–max; dots:
seeds; a shade and line style (hatch) per δ, full colour the smallest. The tables: mean ± the 95% Student t
interval over seeds, a row per group, then a row per run. The paper's figures and verdict tables:
benchmark/paper_figures.py (the same flags, more --kinds).

    python plot.py runs --x physical_time_s --format pdf   # figures/ and the tables
    python plot.py runs --table                            # the tables only, as Markdown
"""
import argparse
import csv
import io
import json
import math
import os
import signal
import sys
import textwrap
from collections import defaultdict
from typing import Callable, NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from tools import promises
from tools.promises import fail, within  # bad input: one line, exit 2

# Two-sided 95% Student t quantiles t(0.975, df), df = 1..30; beyond that 1.96 is within 2%.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
X_LABELS = {"decision_steps": "decision steps", "physical_time_s": "physical time (s)",
            "wall_time_s": "wall time (s)"}
# The order of the paper's tasks (Sec. 5) and methods; any other comes after them, sorted.
TASKS = ["InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Hopper-v5", "Walker2d-v5", "HalfCheetah-v5",
         "Ant-v5", "Reacher-v5", "Swimmer-v5"]
LEARNERS = ["PPO", "TRPO", "A2C", "DAU"]  # DAU (dau.py, Fig. 4): a learner and a method of its own
METHODS = [f"{family}{learner}" for learner in LEARNERS[:3] for family in ("SAR-", "λ-SAR-", "FiGAR-C-", "")] \
    + ["PPO (scaled)", "ARP-PPO", "ARP-PPO (scaled)", "DAU", "DAU (no normalisation)", "TaCoS-PPO"]
# One colour per method family (keyed by its PPO name) in every figure, benchmark/'s theory plots too: Okabe &
# Ito's colour-blind-safe palette; DAU Tol's olive (Okabe & Ito's sky blue is too near SAR's blue).
FAMILY_COLORS = {"SAR-PPO": "#0072B2", "λ-SAR-PPO": "#009E73", "FiGAR-C-PPO": "#D55E00", "PPO": "#3A3A3A",
                 "PPO (scaled)": "#CC79A7", "ARP-PPO": "#E69F00", "ARP-PPO (scaled)": "#E69F00", "DAU": "#999933",
                 "DAU (no normalisation)": "#999933", "TaCoS-PPO": "#882255"}  # TaCoS (beyond the paper): Tol's wine
# A method of one's own (any name but the paper's): Tol's colours far from those above, in the order first drawn
OWN_COLORS = ["#332288", "#88CCEE", "#CC6677", "#661100", "#DDCC77", "#44AA99"]
own_colors = {}  # method → its colour, the same in every figure of one call
DT_LINES = ["-", "--", ":", "-."]  # smallest δ first
DT_HATCHES = ["", "//", "..", "xx"]
VARIANT_LINES = ["--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3))]
INTERVAL = "bands: the seeds' min–max"
SB3_FILES = ("model.zip", "delta_stats.npz")  # examples/sb3_sar.py's folder: SB3's format, no progress.csv
NO_EPISODE = "– (no episode ended)"  # a short DAU run's return in the tables


def mean_ci(values):
    """Mean and half-width of the 95% Student t interval over seeds (0 for one seed): the tables' numbers."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    t = T975[n - 2] if 2 <= n <= len(T975) + 1 else 1.96
    return float(values.mean()), float(t * values.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


def mean_range(values):
    """(mean, min, max) over seeds: the figures' interval, inside what the data can reach."""
    values = np.asarray(values, dtype=float)
    low, high = float(values.min()), float(values.max())
    return min(max(float(values.mean()), low), high), low, high  # a float mean of equal seeds can round past them


def ordered(names, first):
    """`names` in the order of `first`, a variant ("SAR-PPO (d_max=0.2)") right after its base; others last."""
    def rank(name):
        return min([i for i, f in enumerate(first) if name == f or name.startswith(f + " ")], default=len(first))

    return sorted(names, key=lambda name: (rank(name), name))


def base_method(method):
    """The paper's method a name is or is a variant of ("SAR-PPO (d_max=0.2)" → "SAR-PPO"); None if none."""
    return max((m for m in METHODS if method == m or method.startswith(m + " (")), key=len, default=None)


def is_variant(method):
    return method not in METHODS and base_method(method) is not None


def learner_of(method):
    """"SAR-TRPO" → "TRPO"; PPO's methods → "PPO"."""
    return next((learner for learner in LEARNERS[1:] if learner in method), "PPO")


def learners_of(keys):
    """"PPO", or "PPO and TRPO": the learners of some (env, setting, method, δ) keys, for a title."""
    return " and ".join(ordered({learner_of(k[2]) for k in keys}, LEARNERS))


def method_color(method, shade=0.0):
    """The method's family colour (a variant: its base's), mixed with white by `shade` ∈ [0, 1)."""
    base = base_method(method)
    if base is None:
        color = own_colors.setdefault(method, OWN_COLORS[len(own_colors) % len(OWN_COLORS)])
    else:
        color = FAMILY_COLORS.get(base) or FAMILY_COLORS[base.replace(learner_of(base), "PPO")]
    rgb = np.array(matplotlib.colors.to_rgb(color))
    return tuple(rgb + (1 - rgb) * shade)


def dt_shade(rank, count):
    """Full colour for the smallest δ (rank 0), lighter for the larger: at most 0.6 towards white."""
    return 0.6 * rank / max(1, count - 1)


def line_styles(keys):
    """{(method, δ): (colour, line style)}: a shade per δ, a line style per δ (or per variant, if any)."""
    methods, dts = ordered({m for m, _ in keys}, METHODS), sorted({dt for _, dt in keys})
    variants = any(is_variant(m) for m in methods)
    styles = {}
    for method, dt in keys:
        rank = dts.index(dt)
        if variants:
            siblings = [m for m in methods if (base_method(m) or m) == (base_method(method) or method)]
            k = siblings.index(method)
            line = "-" if k == 0 else VARIANT_LINES[(k - 1) % len(VARIANT_LINES)]
            shade = min(0.6, dt_shade(rank, len(dts)) + 0.12 * k)
        else:
            line, shade = DT_LINES[rank % len(DT_LINES)], dt_shade(rank, len(dts))
        styles[(method, dt)] = (method_color(method, shade), line)
    return styles


def moving_average(y, window):
    """At each update the mean of the known values (nan: none logged) of the last `window` updates (--smooth)."""
    means = []
    for i in range(len(y)):
        values = y[max(0, i + 1 - window):i + 1]
        values = values[~np.isnan(values)]
        means.append(values.mean() if len(values) else math.nan)
    return np.array(means)


class Unfinished(ValueError):
    pass


class NonFinite(ValueError):
    pass


def check_order(steps, n=None):
    """decision_steps must be n, 2n, 3n, … (a row per update; n: the run's --num-steps, else the first row's)."""
    n = n or steps[0]
    for i in range(1, len(steps)):
        if steps[i] <= steps[i - 1]:
            what = "a repeated row" if steps[i] == steps[i - 1] else "a row out of order"
            raise ValueError(f"progress.csv has {what} (line {i + 2}: decision_steps {steps[i]:g} after "
                             f"{steps[i - 1]:g}; rows must be n, 2n, 3n, …)")
    for i, value in enumerate(steps):
        if value != n * (i + 1):
            raise ValueError(f"progress.csv has a missing row (line {i + 2}: decision_steps {value:g}, expected "
                             f"{n * (i + 1):g}; rows must be n, 2n, 3n, …)")


def load_run(folder, partial=False, max_steps=None, counts=None):
    """(config, float columns) of a run folder; None, said in one line (the reason counted in `counts`), if it is
    malformed or (unless `partial`) unfinished. With `max_steps`, only its first `max_steps` decisions."""
    try:
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        if not isinstance(config, dict):
            raise ValueError("config.json is not a JSON object")
        if config.get("method") == "DAU" and "no_input_norm" not in config:  # made before dau.py normalised
            config["method"] = "DAU (no normalisation)"
        with open(os.path.join(folder, "progress.csv"), newline="") as f:
            text = f.read()
        if partial and "\n" in text:  # a run in flight may be writing its last row: the whole rows before it
            text = text[:text.rindex("\n") + 1]
        rows = list(csv.DictReader(io.StringIO(text)))
        torn = [i for i, r in enumerate(rows, 2) if None in r or None in r.values()]
        if torn or not text.endswith("\n"):
            raise ValueError(f"progress.csv has a torn row (line {torn[0] if torn else len(rows) + 1})")
        if not rows:
            raise ValueError("progress.csv has no rows")
        check_order([float(r["decision_steps"]) for r in rows], config.get("num_steps"))
        if max_steps is not None and int(rows[0]["decision_steps"]) > max_steps:  # the flag's fault, not the run's
            fail(f"--max-steps: {max_steps:,} is before the first update of {folder} "
                 f"({int(rows[0]['decision_steps']):,} decisions)")
        rows = [r for r in rows if max_steps is None or int(r["decision_steps"]) <= max_steps]
        keys = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "return_mean",
                "action_duration_mean_s", "safe_radius_mean"]
        # DAU's deterministic evaluations (Fig. 4); finished training episodes so far (decisions per episode)
        keys += [k for k in ("eval_return_mean", "episodes") if k in rows[0]]
        columns = {k: np.array([float(r[k]) if r[k] != "" else math.nan for r in rows]) for k in keys}
        for line, row in enumerate(rows, 2):  # empty: nothing logged; a written nan or inf: no number to use
            bad = [k for k in keys if row[k] != "" and not math.isfinite(float(row[k]))]
            if bad:
                raise NonFinite(f"its progress.csv holds a non-finite value (line {line}: {bad[0]} = {row[bad[0]]})")
        [config[key] for key in ("env_id", "method", "dt", "seed", "total_steps")]  # a KeyError if one is missing
        if config["total_steps"] is None:  # a budget of physical time (--physical-time)
            if not partial and columns["physical_time_s"][-1] < config["physical_time"] - 1e-9:
                raise Unfinished(f"unfinished: {columns['physical_time_s'][-1]:g} of {config['physical_time']:g} "
                                 "physical seconds (--partial plots it)")
        goal = min(max_steps or math.inf, config["total_steps"] or 0)  # a physical-time run is checked above
        if not partial and columns["decision_steps"][-1] < goal:
            raise Unfinished(f"unfinished: {int(columns['decision_steps'][-1])} of {goal} decisions "
                             "(--partial plots it)")
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
        kind = "" if isinstance(e, (Unfinished, NonFinite)) else f"{type(e).__name__}: "
        print(f"warning: skipping {folder}: {kind}{e}", file=sys.stderr)
        if counts is not None:
            counts[type(e).__name__] = counts.get(type(e).__name__, 0) + 1
        return None
    return config, columns


def setting_of(config):
    parts = [config.get("noise")] if config.get("noise") else []
    parts += [f"p={config['noise_prob']:g}"] if config.get("noise_prob") is not None else []
    parts += [f"std={config['noise_std']:g}"] if config.get("noise_std") is not None else []
    parts += ["hold-penalty"] if config.get("hold_penalty") else []
    if config.get("physical_time") and not config["method"].startswith("DAU"):  # trained to T, not to decisions
        parts += [f"T={config['physical_time']:g}s"]
    return "+".join(parts) or "deterministic"


def final_window(columns, fraction=0.1):
    """The updates in the last `fraction` of the run's decision steps that logged a training return."""
    steps, known = columns["decision_steps"], ~np.isnan(columns["return_mean"])
    return known & (steps >= steps.max() * (1 - fraction))


def final_return(columns, fraction=0.1):
    """Mean training return over `final_window`; the last known return if that window is empty (load says so)."""
    returns, window = columns["return_mean"], final_window(columns, fraction)
    if window.any():
        return float(returns[window].mean())
    known = ~np.isnan(returns)
    return float(returns[known][-1]) if known.any() else math.nan


def window_return(columns, x_key, start, end):
    """Mean training return of the updates whose `x_key` lies in [start, end] (--window)."""
    x, returns = columns[x_key], columns["return_mean"]
    window = ~np.isnan(returns) & (x >= start) & (x <= end)
    return float(returns[window].mean()) if window.any() else math.nan


def finals(runs, score=final_return):
    return [score(columns) for _, columns, _ in runs]


def run_folders(path, sb3=None):
    """The run folders at or under `path`, links followed, each once; examples/sb3_sar.py's go to the list `sb3`."""
    found, seen = [], set()
    for folder, subfolders, files in os.walk(path, followlinks=True):
        if os.path.realpath(folder) in seen:  # reached again through a link: a loop, or the same runs twice
            subfolders.clear()
            continue
        seen.add(os.path.realpath(folder))
        if "progress.csv" in files or "config.json" in files:
            found.append(folder)
            subfolders.clear()  # a run folder holds no other run
        elif sb3 is not None and any(name in files for name in SB3_FILES):
            sb3.append(folder)
        subfolders.sort()
    return found


def load_groups(paths, partial=False, max_steps=None, only=None, variants=True, counts=None):
    """{(env, setting, method, δ): [(config, columns, folder), ...]} of the run folders found (whose name holds a
    text of `only`, if given; without `variants` none of a variant). Of two folders of one seed the one with more
    decisions is kept, of seeds of different budgets those of the budget most share, each time with a note."""
    counts = {} if counts is None else counts
    folders, sb3 = [], []
    for path in paths:
        folders += run_folders(path, sb3)
    if only:
        folders, sb3 = ([f for f in found if any(text in os.path.basename(os.path.normpath(f)) for text in only)]
                        for found in (folders, sb3))
    if sb3:  # never silently
        print(f"note: left out {', '.join(sb3)}: examples/sb3_sar.py's folder(s), SB3's own format (model.zip, "
              "no progress.csv)", file=sys.stderr)
    seeds = {}
    for folder in folders:
        run = load_run(folder, partial, max_steps, counts)
        if run is None:
            continue
        config, columns = run
        if not variants and is_variant(config["method"]):
            counts["Variant"] = counts.get("Variant", 0) + 1
            continue
        key = (config["env_id"], setting_of(config), config["method"], config["dt"], config["seed"])
        run = (config, columns, folder)
        if key in seeds:  # the one with more decisions; of two alike, the one found first (folders in name order)
            run, dropped = sorted([seeds[key], run], key=lambda r: -r[1]["decision_steps"][-1])
            steps = [int(r[1]["decision_steps"][-1]) for r in (run, dropped)]
            why = (f"it has more decisions ({steps[0]:,} to {steps[1]:,})" if steps[0] > steps[1] else
                   f"both have {steps[0]:,} decisions and it comes first")
            print(f"note: {dropped[2]} and {run[2]} are the same seed of one method, task and δ; keeping {run[2]}: "
                  f"{why}", file=sys.stderr)
        seeds[key] = run
    groups = defaultdict(list)
    for key, run in seeds.items():
        groups[key[:4]].append(run)
    for key, runs in groups.items():  # one budget a cell: the one most seeds share (ties: the larger)
        # a run's budget: its decisions, or its --physical-time (its decisions then differ by seed)
        budgets = [config.get("physical_time") if config["total_steps"] is None else int(c["decision_steps"][-1])
                   for config, c, _ in runs]
        kept = max(set(budgets), key=lambda b: (budgets.count(b), b))
        if len(set(budgets)) > 1:
            odd = [f"{os.path.basename(os.path.normpath(f))} ({b:,} decisions)"
                   for (_, _, f), b in zip(runs, budgets) if b != kept]
            print(f"note: {key[2]} on {key[0]} ({key[1]}) at δ = {key[3]:g} s: left out {', '.join(odd)}, since "
                  f"{budgets.count(kept)} of its {len(runs)} seeds have {kept:,} and seeds of different budgets are "
                  f"never averaged; --max-steps {min(budgets)} compares them all", file=sys.stderr)
            groups[key] = [r for r, b in zip(runs, budgets) if b == kept]
    return groups


def seed_curves(runs, x_key, y_key, points=100, smooth=1):
    """(grid, mean, min, max) over seeds of each one's y (smoothed), on the x the seeds share."""
    curves = []
    for _, columns, _ in runs:
        x, y = columns[x_key], moving_average(columns[y_key], smooth)
        known = ~np.isnan(y)
        if known.sum() >= 2:
            curves.append((x[known], y[known]))
    if not curves:
        return None
    grid = np.linspace(max(x[0] for x, _ in curves), min(x[-1] for x, _ in curves), points)
    values = np.array([np.interp(grid, x, y) for x, y in curves])
    return grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0)


def budget(runs):
    """'200,704 decisions' (or '100,352–200,704 decisions'): how far the runs go, as plotted."""
    steps = sorted({int(c["decision_steps"][-1]) for _, c, _ in runs})
    return "–".join(dict.fromkeys([f"{steps[0]:,}", f"{steps[-1]:,}"])) + " decisions"


def style_axis(ax, x_key=None):
    if x_key is not None:
        ax.set_xlabel(X_LABELS.get(x_key, x_key))
        ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))  # 100k, not 100000
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))  # tick labels that never meet
    ax.grid(alpha=0.3)


def save(fig, path):
    """Whole or not at all, without the Software/date entries, so that a redraw gives the same bytes."""
    return promises.savefig(fig, path, dpi=150, bbox_inches="tight",
                            metadata={"Software": None} if path.endswith(".png") else
                            {"Creator": None, "Producer": None, "CreationDate": None})


def task_curves(groups, env_id, setting, x_key, y_key, y_label, what, smooth):
    """Every method and δ of one task and setting in one panel, a colour per method, a shade per δ."""
    keys = [k for k in groups if k[0] == env_id and k[1] == setting]
    styles = line_styles({k[2:] for k in keys})
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for method in ordered({k[2] for k in keys}, METHODS):
        for dt in sorted({k[3] for k in keys if k[2] == method}):
            runs = groups[(env_id, setting, method, dt)]
            curve = seed_curves(runs, x_key, y_key, smooth=smooth)
            if curve is None:
                continue
            grid, mean, low, high = curve
            color, line = styles[(method, dt)]
            ax.plot(grid, mean, color=color, ls=line, lw=1.6, label=f"{method}, δ = {dt * 1000:g} ms (n = {len(runs)})")
            ax.fill_between(grid, low, high, color=color, alpha=0.15, linewidth=0)
    style_axis(ax, x_key)
    ax.set_ylabel(y_label)
    if y_key == "action_duration_mean_s":
        ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    runs = [r for k in keys for r in groups[k]]
    smoothed = "each seed's per-update means" if smooth == 1 else f"each seed smoothed over {smooth} updates"
    ax.set_title(f"{learners_of(keys)}: {env_id}, {setting}, {budget(runs)}: {what}\n"
                 f"lines: mean over seeds ({smoothed}); {INTERVAL}", fontsize=10)
    return fig


def draw_bars(ax, values, methods, dts):
    """A bar per method (ticks) and δ (shade, hatch) of `values`, {(method, δ): the seeds' values}."""
    width = 0.8 / max(1, len(dts))
    for j, dt in enumerate(dts):
        for i, method in enumerate(methods):
            seeds = values.get((method, dt))
            if seeds is None or not len(seeds):
                continue
            mean, low, high = mean_range(seeds)
            x = i + (j - (len(dts) - 1) / 2) * width
            ax.bar(x, mean, width, yerr=[[mean - low], [high - mean]], capsize=2, error_kw={"lw": 1},
                   color=method_color(method, dt_shade(j, len(dts)) + (0.25 if is_variant(method) else 0)),
                   hatch=DT_HATCHES[j % len(DT_HATCHES)], edgecolor="white", linewidth=0)
            ax.scatter([x] * len(seeds), seeds, s=7, color="black", zorder=3)
    names = [m.replace(" (", "\n(").replace(", ", ",\n") for m in methods]  # a variant's name on lines of its own
    ax.set_xticks(range(len(methods)), names, fontsize=8)
    ax.set_xlim(-0.6, len(methods) - 0.4)
    ax.grid(alpha=0.3, axis="y")


def dt_legend(ax, dts, **kwargs):
    handles = [matplotlib.patches.Patch(facecolor=str(0.35 + 0.6 * dt_shade(j, len(dts))), edgecolor="white",
                                        hatch=DT_HATCHES[j % len(DT_HATCHES)], label=f"δ = {dt * 1000:g} ms")
               for j, dt in enumerate(dts)]
    ax.legend(handles=handles, **{"fontsize": 8, **kwargs})


def task_bars(groups, env_id, setting):
    keys = sorted(k for k in groups if k[0] == env_id and k[1] == setting)
    methods, dts = ordered({k[2] for k in keys}, METHODS), sorted({k[3] for k in keys})
    fig, ax = plt.subplots(figsize=(max(5.5, 1.3 * len(methods) + 1.5), 4.6))
    draw_bars(ax, {k[2:]: finals(groups[k]) for k in keys}, methods, dts)
    ax.set_ylabel("final training return\n(mean over the last 10% of decisions)")
    ax.set_xlabel("method")
    dt_legend(ax, dts, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, title="shade, hatch")
    ax.set_title(f"{learners_of(keys)}: {env_id}, {setting}, {budget([r for k in keys for r in groups[k]])}: "
                 "final return\nbars: mean over seeds; whiskers: the seeds' min–max; dots: seeds", fontsize=10)
    return fig


def table(groups, score=final_return, what="final return"):
    """Markdown: the score (mean ± 95% t interval over seeds), decisions per physical second, wall time."""
    lines = [f"| env | setting | method | δ (s) | seeds | decisions | {what} (mean ± 95% t interval) | "
             "decisions / physical s | wall time (min) |", "|---" * 9 + "|"]
    for (env_id, setting, method, dt), runs in sorted(groups.items()):
        mean, ci = mean_ci(finals(runs, score))
        rate = np.mean([c["decision_steps"][-1] / c["physical_time_s"][-1] for _, c, _ in runs])
        steps = min(int(c["decision_steps"][-1]) for _, c, _ in runs)
        wall = np.mean([c["wall_time_s"][-1] / 60 for _, c, _ in runs])
        final = f"{mean:.1f} ± {ci:.1f}" if len(runs) > 1 else f"{mean:.1f} (one seed)"
        lines.append(f"| {env_id} | {setting} | {method} | {dt:g} | {len(runs)} | {steps:,} | "
                     f"{NO_EPISODE if np.isnan(mean) else final} | {rate:.1f} | {wall:.1f} |")
    return "\n".join(lines)


def runs_table(groups, score=final_return, what="final return"):
    lines = [f"| run | decisions | physical s | {what} | wall time (min) |", "|---|---|---|---|---|"]
    for key, runs in sorted(groups.items()):
        for _, columns, folder in sorted(runs, key=lambda r: r[0]["seed"]):
            value = score(columns)
            shown = NO_EPISODE if np.isnan(value) else f"{value:.1f}"
            lines.append(f"| {os.path.basename(folder)} | {int(columns['decision_steps'][-1]):,} | "
                         f"{columns['physical_time_s'][-1]:.0f} | {shown} | {columns['wall_time_s'][-1] / 60:.1f} |")
    return "\n".join(lines)


def by_learner(groups):
    """{learner: its groups}, in the order PPO, TRPO, A2C, DAU."""
    split = defaultdict(dict)
    for key, runs in groups.items():
        split[learner_of(key[2])][key] = runs
    return {learner: split[learner] for learner in ordered(split, LEARNERS)}


def nonempty(text):  # --only: an empty text is in every run's name
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty text matches every run; leave it out")
    return text


class Kind(NamedTuple):
    """A kind of figure: `draw(groups, args, *where)` yields (file name, figure) for one task and setting (scope
    "task": where = env_id, setting), one setting ("setting": where = setting, its tasks), one learner's runs
    ("learner") or every run ("all"); `tables(groups, args)`, if given, the texts that --table prints too."""
    help: str
    scope: str
    draw: Callable
    tables: Callable = None


def curves(name, y_key, y_label, what):  # a "task" kind: `y_key` of every method and δ against --x
    return lambda groups, args, env_id, setting: [(f"{env_id}_{setting}_{name}_vs_{args.x}", task_curves(
        groups, env_id, setting, args.x, y_key, y_label, what, args.smooth))]


KINDS = {  # the one place a kind is named, drawn and told in --help
    "curves": Kind("<task>_<setting>_return_vs_<x>: every method and δ of a task, one panel", "task",
                   curves("return", "return_mean", "training return", "training return")),
    "durations": Kind("<task>_<setting>_action_duration_vs_<x>: the mean action duration the same way", "task",
                      curves("action_duration", "action_duration_mean_s", "mean action duration (s)",
                             "mean action duration")),
    "bars": Kind("<task>_<setting>_final_return: final return per method (ticks) and δ (bars)", "task",
                 lambda groups, args, env_id, setting: [(f"{env_id}_{setting}_final_return",
                                                         task_bars(groups, env_id, setting))]),
}


def draw(groups, args, kinds):
    """The paths of the figures of --kinds written: each learner's (its name first if several), then every run's."""
    written = []

    def save_all(scope, *where, learner=""):
        for kind in (kind for name, kind in kinds.items() if name in args.kinds and kind.scope == scope):
            for name, fig in kind.draw(*where):
                written.append(save(fig, os.path.join(args.out, f"{args.prefix}{learner}{name}.{args.format}")))
                print(f"wrote {written[-1]}")

    learners = by_learner(groups)
    for learner, part in learners.items():
        tag = f"{learner.lower()}_" if len(learners) > 1 else ""
        for setting in sorted({key[1] for key in part}):
            tasks = ordered({k[0] for k in part if k[1] == setting}, TASKS)
            for env_id in tasks:
                save_all("task", part, args, env_id, setting, learner=tag)
            save_all("setting", part, args, setting, tasks, learner=tag)
        save_all("learner", part, args, learner=tag)
    save_all("all", groups, args)
    return written


def arguments(description, kinds, default):
    """plot.py's flags, with `kinds` to choose from (`default` unless --kinds is given)."""
    told = "\n".join(textwrap.fill(kind.help, 114, initial_indent=f"  {name:<11} ", subsequent_indent=" " * 14)
                     for name, kind in kinds.items())
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=f"--kinds, each written as <prefix><its name>.<format>:\n{told}")
    p.error = fail  # argparse's own errors as one line too
    p.add_argument("paths", nargs="+", help="run folders, or folders holding run folders")
    p.add_argument("--out", help="folder for the figures (default figures/, git-ignored; results/figures if named)")
    p.add_argument("--x", choices=list(X_LABELS), default="decision_steps", help="x-axis of the curves")
    p.add_argument("--format", choices=["png", "pdf"], default="png")
    p.add_argument("--kinds", nargs="+", choices=list(kinds), default=default,
                   help=f"which figures (default: {' '.join(default)}; see below)")
    p.add_argument("--table", action="store_true", help="print the Markdown tables only, draw nothing")
    p.add_argument("--variants", action="store_true", help="also read the variants of the paper's methods")
    p.add_argument("--prefix", default="", help="prefix of the figure file names")
    p.add_argument("--partial", action="store_true", help="include runs that have not finished yet")
    p.add_argument("--max-steps", type=within(int, 1, 10 ** 12), default=None, metavar="N",
                   help="use each run's first N decisions only (e.g. the 100k mark of a longer run)")
    p.add_argument("--window", nargs=2, type=within(float, 0, math.inf), default=None, metavar=("FROM", "TO"),
                   help="the tables' return: each run's mean training return over the updates whose --x lies "
                        "in [FROM, TO], not over its last 10%% of decisions; every run must reach TO")
    p.add_argument("--only", nargs="+", type=nonempty, default=None,
                   help="only run folders whose name contains one of these texts")
    p.add_argument("--learner", choices=LEARNERS, help="only this learner's methods (default: each its own figures)")
    p.add_argument("--smooth", type=within(int, 1, 10 ** 6), default=10, metavar="N",
                   help="the curves: at each update, each seed's mean training return over its last N updates "
                        "(the first N-1 updates: over those so far; updates with no finished episode add nothing); "
                        "1 draws the raw curves (default 10)")
    return p


def check(args, printing=("--table",), windowed=("--table",)):
    """The flags' checks before any work; `printing`: the flags that draw nothing, `windowed`: --window's."""
    for path in args.paths:
        if not os.path.exists(path):
            fail(f"{path} does not exist")
        if not os.path.isdir(path):
            fail(f"{path} is a file; give a run folder or a folder holding run folders")
    given = [flag for flag in printing if getattr(args, flag[2:])]
    if len(given) > 1:
        fail(f"{given[1]}: {given[0]} prints other tables; give one of them")
    if given and args.out is not None:
        fail(f"--out: {given[0]} prints tables and draws nothing; leave out --out")
    args.out = "figures" if args.out is None else args.out
    promises.check_folder("--out", args.out)
    if "/" in args.prefix:
        fail(f"--prefix: {args.prefix!r} holds a '/'; it starts the file names inside --out")
    if args.window is not None and not (0 <= args.window[0] < args.window[1]):
        fail(f"--window: {args.window[0]:g} {args.window[1]:g}; it needs 0 <= FROM < TO")
    if args.window is not None and not any(getattr(args, flag[2:]) for flag in windowed):
        fail(f"--window sets the tables' return only: add {' or '.join(windowed)}")


def load(args):
    """(groups, score, what): the runs the flags select, a line for each kind left out, and the tables' score."""
    counts = {}
    groups = load_groups(args.paths, args.partial, args.max_steps, args.only, args.variants, counts)
    if args.learner:
        groups = by_learner(groups).get(args.learner, {})
    if not groups:
        hints = {"Unfinished": "found unfinished: add --partial",
                 "Variant": "of a variant of a method: add --variants"}
        hint = "".join(f"; {counts[k]} run(s) {text} to include them" for k, text in hints.items() if counts.get(k))
        fail(f"no {'' if args.partial else 'finished '}run found in {' '.join(args.paths)}"
             f"{' (with --only)' if args.only else ''}{f' of {args.learner}' if args.learner else ''}{hint}")
    if counts.get("Variant"):  # never silently: a variant is left out of the paper's methods' panels
        print(f"note: {counts['Variant']} run(s) of a variant of a method (a method flag off its default) left "
              f"out; --variants includes them", file=sys.stderr)
    stand_ins = sorted(folder for runs in groups.values() for _, columns, folder in runs
                       if not final_window(columns).any() and not np.isnan(columns["return_mean"]).all())
    if stand_ins and args.window is None:  # never silently
        print(f"note: no training return in the last 10% of {', '.join(stand_ins)}: the tables and figures take "
              "each one's last one", file=sys.stderr)
    if args.window is None:
        return groups, final_return, "final return"
    for _, columns, folder in (run for runs in groups.values() for run in runs):
        if columns[args.x][-1] < args.window[1]:
            fail(f"--window: {folder} ends at {columns[args.x][-1]:g} {args.x}, before {args.window[1]:g}")
        if math.isnan(window_return(columns, args.x, *args.window)):
            fail(f"--window: {folder} logs no return between {args.window[0]:g} and {args.window[1]:g} {args.x}; "
                 "widen it")
    return (groups, lambda columns: window_return(columns, args.x, *args.window),
            f"return at {X_LABELS[args.x]} {args.window[0]:g}–{args.window[1]:g}")


def report(groups, score, what, args, kinds):
    """The tables (those of the kinds chosen after plot.py's two), then, unless --table, the figures."""
    print(table(groups, score, what) + "\n\n" + runs_table(groups, score, what))
    chosen = [kind for name, kind in kinds.items() if name in args.kinds and kind.tables]
    parts = [(kind, part) for part in by_learner(groups).values() for kind in chosen if kind.scope == "learner"]
    for kind, part in parts + [(kind, groups) for kind in chosen if kind.scope == "all"]:
        for text in kind.tables(part, args):
            print("\n" + text)
    if args.table:
        return 0
    with promises.locked("--out", args.out):  # two plot.py drawing into one folder would mix their figures
        before = [n for n in os.listdir(args.out) if n.startswith(args.prefix) and n.endswith((".png", ".pdf"))
                  and not n.startswith(".")]
        written = [os.path.basename(path) for path in draw(groups, args, kinds)]
    older = sorted(set(before) - set(written))
    if older:  # never deleted (--out may be the committed results/figures), but never passed off as this call's
        print(f"note: {args.out} also holds {len(older)} figure(s){f' named {args.prefix}*' if args.prefix else ''} "
              f"this call did not draw, left as an earlier call wrote them: {', '.join(older[:3])}"
              f"{f' and {len(older) - 3} more' if len(older) > 3 else ''}")
    return 0


def main(argv=None):
    args = arguments(__doc__, KINDS, list(KINDS)).parse_args(argv)
    check(args)
    return report(*load(args), args, KINDS)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `plot.py ... | head` ends quietly
    promises.run(main)
