"""Aggregate the logs of many runs (runs/<name>/config.json + progress.csv) into the paper's figures.

Runs are grouped by (env, setting, method, δ), where the setting is `deterministic`, a --noise kind,
and/or `hold-penalty`. Only the paper's methods (SAR, λ-SAR, FiGAR-C and the plain learner, on PPO, TRPO
or A2C, PPO (scaled), and DAU) are read unless --variants is given: a variant ("SAR-PPO (d_max=0.2)", "SAR-PPO
(Δ on dims 2,3)") never enters a main-method panel by accident. Runs of one cell (env, setting, method, δ)
with different budgets are never averaged: the budget most of them share is kept, the others are named
and left out. Each learner gets figures of its own (with several learners, each file name starts with
it; --learner picks one), and the learner is in every title and legend.

Figures. Each method family has one colour in every figure (FAMILY_COLORS: SAR-PPO, SAR-TRPO and SAR-A2C
share SAR's); δ is a shade of it and a line
style (hatch on bars): full colour and solid the smallest δ, lighter the larger. A variant is a line
style and shade of its base method's colour. Lines and bars are the mean over seeds; bands and
whiskers the seeds' min–max, which cannot leave the range the returns and durations can reach; dots
are the seeds. Text tables give the mean ± the 95% Student t interval of the mean over seeds (the
numbers of the report), with the seeds' count.

--kinds chooses the figures, each written as <prefix><what it shows>.<format>, the task(s) in the name:
  curves      <task>_<setting>_return_vs_<x>: every method and δ of a task, one panel
  durations   <task>_<setting>_action_duration_vs_<x>: the mean action duration the same way
  bars        <task>_<setting>_final_return: final return per method (ticks) and δ (bars)
  grid        <setting>_grid_return_vs_<x>_<tasks>: the paper's grid, a row per method, a column per task
              (at most 4 a figure), a shade per δ, each seed's curve smoothed by --smooth
  normalised  deterministic_final_return_normalised_<tasks>: (R − R_random) / (R* − R_random) per task,
              R* the best method's mean final return at the task's largest δ (δ0), R_random a uniform
              random policy's mean return at δ0 (benchmark/random_returns.py, --random-returns); 1 is "as
              good as the best at δ0", 0 "as good as acting at random"; deterministic setting only
  fig5        fig5_return_vs_<x>_<tasks>: the paper's Fig. 5, a row per stochastic setting (action,
              ext-force, ext-force-perceptible), a column per task (at most 4 a figure), at each task's
              smallest δ; prints a table of final returns with a verdict per task and setting
  lowest      <setting>_lowest_dt_return_vs_<x>_<tasks>: App. F.2's and G's figures, a panel per task (four
              a row) at its smallest δ, every method overlaid; with --x physical_time_s or wall_time_s
  fig4        fig4_final_return_at_equal_physical_time_<tasks>: the paper's Fig. 4, SAR-PPO against DAU per
              task and δ at DAU's physical time T (dau.py --physical-time): DAU's deterministic evaluations
              (dau.py --eval-every N; a run without any is left out, named in a warning, and a cell
              without any says "no evaluation" and has no verdict) and SAR-PPO's training return over
              the last 10% of T (hatched where a SAR-PPO run ends before T: read at its end); prints the
              table with the decisions each used and each method's δ-invariance at T (as --ratios); and
              fig4_equal_terms_<tasks>: Fig. 4 on equal terms, SAR-PPO trained to T (--physical-time T)
              against DAU with normalisation, both read by their deterministic evaluations (bars) and by
              their training returns (diamonds) over the last 10% of T; prints its table, both readings
  tacos       tacos_return_vs_decisions: SAR against TaCoS-PPO (benchmark/tacos.sh; with --variants), each
              seed's final return against its decisions per episode, a panel per task and setting; prints
              the table of final returns, decisions per episode and return − c·decisions, with verdicts

    python plot.py results/runs --out results/figures               # figures + tables
    python plot.py results/runs --x physical_time_s --format pdf     # App. F.2's axis
    python plot.py results/runs --table                              # the tables only, as Markdown
    python plot.py results/runs --summary                            # a row per task and δ (Fig. 3 at a glance)
    python plot.py results/runs --ratios                             # δ_lowest ÷ δ0 per task and method, verdicts
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

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.lines  # noqa: E402
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from tools import promises
from tools.promises import fail, within  # bad input: one line, exit 2

ROOT = os.path.dirname(os.path.abspath(__file__))
RANDOM_RETURNS = os.path.join(ROOT, "results", "random_returns.csv")
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
# One colour per method family in every figure, the theory plots of benchmark/ included (Okabe & Ito's
# colour-blind-safe palette; DAU Tol's olive, as Okabe & Ito's sky blue is too near SAR's blue), keyed by the
# family's PPO name; anything else is grey.
FAMILY_COLORS = {"SAR-PPO": "#0072B2", "λ-SAR-PPO": "#009E73", "FiGAR-C-PPO": "#D55E00", "PPO": "#3A3A3A",
                 "PPO (scaled)": "#CC79A7", "ARP-PPO": "#E69F00", "ARP-PPO (scaled)": "#E69F00", "DAU": "#999933",
                 "TaCoS-PPO": "#882255"}  # TaCoS (beyond the paper): Tol's wine
SCALED_LINE = "--"  # a "(scaled)" method (lr × δ/δ0, App. F.2) beside its base: dashed
OTHER_COLOR = "#8C8C8C"
DT_LINES = ["-", "--", ":", "-."]  # smallest δ first
DT_HATCHES = ["", "//", "..", "xx"]
VARIANT_LINES = ["--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3))]
STOCHASTIC = ["action", "ext-force", "ext-force-perceptible"]  # Fig. 5's rows
KINDS = ["curves", "durations", "bars", "grid", "normalised", "fig5", "lowest", "fig4", "tacos"]
INTERVAL = "bands: the seeds' min–max"
PER_FIGURE = 4  # tasks per grid or Fig. 5 figure: readable at a page's width


def mean_ci(values):
    """Mean and half-width of the 95% Student t interval over seeds (0 for one seed): the tables' numbers."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n < 2:
        return float(values.mean()), 0.0
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return float(values.mean()), float(t * values.std(ddof=1) / math.sqrt(n))


def mean_range(values):
    """(mean, min, max) over seeds: the figures' interval, inside what the data can reach."""
    values = np.asarray(values, dtype=float)
    low, high = float(values.min()), float(values.max())
    return min(max(float(values.mean()), low), high), low, high  # a float mean of equal seeds can round past them


def range_cell(values):
    """A table cell, "mean [min, max] (seeds)": the figures' interval, the one `verdict` compares; – for none."""
    return "–" if not values else "{:.1f} [{:.1f}, {:.1f}] ({})".format(*mean_range(values), len(values))


def ordered(names, first):
    """`names` in the order of `first`, a variant ("SAR-PPO (d_max=0.2)") right after its base; others last."""
    def rank(name):
        return min([i for i, f in enumerate(first) if name == f or name.startswith(f + " ")], default=len(first))

    return sorted(names, key=lambda name: (rank(name), name))


def base_method(method):
    """The paper's method a name is or is a variant of ("SAR-PPO (d_max=0.2)" → "SAR-PPO"); None if none."""
    return max((m for m in METHODS if method == m or method.startswith(m + " (")), key=len, default=None)


def learner_of(method):
    """The policy-gradient learner in a method's name: "SAR-TRPO" → "TRPO"; PPO's methods → "PPO"."""
    return next((learner for learner in LEARNERS[1:] if learner in method), "PPO")


def learners_of(keys):
    """"PPO", or "PPO and TRPO": the learners of some (env, setting, method, δ) keys, for a title."""
    return " and ".join(ordered({learner_of(k[2]) for k in keys}, LEARNERS))


def method_color(method, shade=0.0):
    """The method's family colour (a variant: its base's), mixed with white by `shade` ∈ [0, 1)."""
    base = base_method(method)
    family = base if base in FAMILY_COLORS else base and base.replace(learner_of(base), "PPO")
    rgb = np.array(matplotlib.colors.to_rgb(FAMILY_COLORS.get(family, OTHER_COLOR)))
    return tuple(rgb + (1 - rgb) * shade)


def dt_shade(rank, count):
    """Full colour for the smallest δ (rank 0), lighter for the larger: at most 0.6 towards white."""
    return 0.6 * rank / max(1, count - 1)


def line_styles(keys):
    """{(method, δ): (colour, line style)} for one panel's (method, δ) pairs: colour = the method's, a
    shade per δ; the line style per δ, or, where variants share the panel, per variant of a base."""
    methods, dts = ordered({m for m, _ in keys}, METHODS), sorted({dt for _, dt in keys})
    variants = any(m not in METHODS for m in methods)
    styles = {}
    for method, dt in keys:
        rank = dts.index(dt)
        if variants:
            siblings = [m for m in methods if base_method(m) == base_method(method)]
            k = siblings.index(method)
            line = "-" if k == 0 else VARIANT_LINES[(k - 1) % len(VARIANT_LINES)]
            shade = min(0.6, dt_shade(rank, len(dts)) + 0.12 * k)
        else:
            line, shade = DT_LINES[rank % len(DT_LINES)], dt_shade(rank, len(dts))
        styles[(method, dt)] = (method_color(method, shade), line)
    return styles


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


class Unfinished(ValueError):
    pass


def check_order(steps, n=None):
    """Rows are one per update: decision_steps must be n, 2n, 3n, … (n: the run's --num-steps, else the first
    row's). A value equal to the one before is a repeated row, a smaller one a row out of order; in a rising
    sequence a gap is a missing row."""
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
    """(config, columns as float arrays) of a run folder, or None with a one-line warning when it is
    malformed (torn, missing, repeated or misplaced rows) or (unless `partial`) has not reached its
    --total-steps yet. With `max_steps`, rows past that many decisions are dropped and a run that
    reached it counts as finished (a `max_steps` before the run's first update is bad input: exit 2).
    `counts`, a dict, counts the skipped runs by reason."""
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
        if max_steps is not None:
            rows = [r for r in rows if int(r["decision_steps"]) <= max_steps]
        columns = {k: np.array([number(r[k]) for r in rows]) for k in
                   ("decision_steps", "env_steps", "physical_time_s", "wall_time_s", "return_mean",
                    "action_duration_mean_s", "safe_radius_mean")}
        if "eval_return_mean" in rows[0]:  # DAU's deterministic evaluations (Fig. 4)
            columns["eval_return_mean"] = np.array([number(r["eval_return_mean"]) for r in rows])
        if "episodes" in rows[0]:  # finished training episodes so far (decisions per episode, TaCoS)
            columns["episodes"] = np.array([number(r["episodes"]) for r in rows])
        for key in ("env_id", "method", "dt", "seed", "total_steps"):
            config[key]  # noqa: B018 - raises KeyError if missing
        if config["total_steps"] is None:  # a budget of physical time (--physical-time)
            if not partial and columns["physical_time_s"][-1] < config["physical_time"] - 1e-9:
                raise Unfinished(f"unfinished: {columns['physical_time_s'][-1]:g} of {config['physical_time']:g} "
                                 "physical seconds (--partial plots it)")
        goal = config["total_steps"] or 0  # a physical-time run is checked above
        if max_steps is not None:
            goal = min(max_steps, goal)
        if not partial and columns["decision_steps"][-1] < goal:
            raise Unfinished(f"unfinished: {int(columns['decision_steps'][-1])} of {goal} decisions "
                             "(--partial plots it)")
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
        kind = "" if isinstance(e, Unfinished) else f"{type(e).__name__}: "
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
    """The updates in the last `fraction` of the run's decision steps that logged a training return (an update
    with no finished episode has none)."""
    steps, known = columns["decision_steps"], ~np.isnan(columns["return_mean"])
    return known & (steps >= steps.max() * (1 - fraction))


def final_return(columns, fraction=0.1):
    """Mean training return over `final_window`; the last known return if that window is empty (main says so)."""
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


def decisions_per_physical_second(columns):
    return float(columns["decision_steps"][-1] / columns["physical_time_s"][-1])


def run_folders(path):
    """The run folders at or anywhere under `path`: those holding a progress.csv or config.json. Symlinked
    folders are followed (a run linked in from elsewhere counts), each real folder once."""
    found, seen = [], set()
    for folder, subfolders, files in os.walk(path, followlinks=True):
        if os.path.realpath(folder) in seen:  # reached again through a link: a loop, or the same runs twice
            subfolders.clear()
            continue
        seen.add(os.path.realpath(folder))
        if "progress.csv" in files or "config.json" in files:
            found.append(folder)
            subfolders.clear()  # a run folder holds no other run
        subfolders.sort()
    return found


def load_groups(paths, partial=False, max_steps=None, only=None, variants=True, counts=None):
    """{(env, setting, method, δ): [(config, columns, folder), ...]} over every run folder found
    (only those whose name contains one of the texts in `only`, if given; without `variants` only the
    paper's methods). Two folders of the same (env, setting, method, δ, seed) are one seed: the one
    with more decisions is kept (of two alike, the first found), with a note. `counts`, a dict, counts the
    skipped runs by reason."""
    folders = []
    for path in paths:
        folders += run_folders(path)
    if only:
        folders = [f for f in folders if any(text in os.path.basename(os.path.normpath(f)) for text in only)]
    seeds = {}
    for folder in folders:
        run = load_run(folder, partial, max_steps, counts)
        if run is None:
            continue
        config, columns = run
        if not variants and config["method"] not in METHODS:
            if counts is not None:
                counts["Variant"] = counts.get("Variant", 0) + 1
            continue
        key = (config["env_id"], setting_of(config), config["method"], config["dt"], config["seed"])
        if key in seeds:  # the one with more decisions; of two alike, the one found first (folders in name order)
            kept, dropped = sorted([seeds[key], (config, columns, folder)], key=lambda r: -r[1]["decision_steps"][-1])
            steps = [int(r[1]["decision_steps"][-1]) for r in (kept, dropped)]
            why = (f"it has more decisions ({steps[0]:,} to {steps[1]:,})" if steps[0] > steps[1] else
                   f"both have {steps[0]:,} decisions and it comes first")
            print(f"note: {dropped[2]} and {kept[2]} are the same seed of one method, task and δ; keeping {kept[2]}: "
                  f"{why}", file=sys.stderr)
            seeds[key] = kept
        else:
            seeds[key] = (config, columns, folder)
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
    """Each seed's y (its moving average over `smooth` updates) interpolated on a common x grid up to
    the shortest run; (grid, mean, min, max) over seeds."""
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
    return grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0)


def budget(runs):
    """'200,704 decisions' (or '100,352–200,704 decisions'): how far the runs go, as plotted."""
    steps = sorted({int(c["decision_steps"][-1]) for _, c, _ in runs})
    return "–".join(dict.fromkeys([f"{steps[0]:,}", f"{steps[-1]:,}"])) + " decisions"


def tasks_name(tasks):
    """A file name's part for several tasks: the one task, the paper's eight, or the names joined by +."""
    if len(tasks) == 1:
        return tasks[0]
    return "eight_tasks" if sorted(tasks) == sorted(TASKS) else "+".join(t.removesuffix("-v5") for t in tasks)


def chunks(items, size=PER_FIGURE):
    """`items` in near-equal runs of at most `size` (8 → 4 + 4, 7 → 4 + 3, 5 → 3 + 2)."""
    count = math.ceil(len(items) / size) if items else 0
    per = math.ceil(len(items) / count) if count else 0
    return [items[i:i + per] for i in range(0, len(items), per)] if per else []


def style_axis(ax, x_key=None):
    if x_key is not None:
        ax.set_xlabel(X_LABELS.get(x_key, x_key))
        ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))  # 100k, not 100000
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))  # tick labels that never meet
    ax.grid(alpha=0.3)


def suptitle(fig, text, fontsize=9):
    """The figure's title, each line wrapped to the figure's width."""
    width = max(40, int(fig.get_figwidth() * 72 / (0.55 * fontsize)))  # characters of ~0.55 em
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")), fontsize=fontsize)


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


def tick_label(method):
    return method.replace(" (", "\n(").replace(", ", ",\n")  # a variant's name on lines of its own


def draw_bars(ax, values, methods, dts):
    """Per method (ticks) a bar per δ (shade and hatch): mean over seeds, whiskers the seeds' min–max,
    each seed a dot. `values`: {(method, δ): the seeds' values}."""
    width = 0.8 / max(1, len(dts))
    for j, dt in enumerate(dts):
        for i, method in enumerate(methods):
            seeds = values.get((method, dt))
            if seeds is None or not len(seeds):
                continue
            mean, low, high = mean_range(seeds)
            x = i + (j - (len(dts) - 1) / 2) * width
            ax.bar(x, mean, width, yerr=[[mean - low], [high - mean]], capsize=2, error_kw={"lw": 1},
                   color=method_color(method, dt_shade(j, len(dts)) + (0.25 if method not in METHODS else 0)),
                   hatch=DT_HATCHES[j % len(DT_HATCHES)], edgecolor="white", linewidth=0)
            ax.scatter([x] * len(seeds), seeds, s=7, color="black", zorder=3)
    ax.set_xticks(range(len(methods)), [tick_label(m) for m in methods], fontsize=8)
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
                 "final return\n"
                 "bars: mean over seeds; whiskers: the seeds' min–max; dots: seeds", fontsize=10)
    return fig


def grid_figure(groups, setting, x_key, smooth, tasks=None):
    """The paper's grid of training curves: a row per method, a column per task, a shade per δ of the
    method's colour; y shared within a column."""
    keys = [k for k in groups if k[1] == setting]
    tasks = tasks or ordered({k[0] for k in keys}, TASKS)
    keys = [k for k in keys if k[0] in tasks]
    methods = ordered({k[2] for k in keys}, METHODS)
    fig, axes = plt.subplots(len(methods), len(tasks),
                             figsize=(max(5.0, 2.6 * len(tasks) + 0.6), 2.3 * len(methods) + 1.0),
                             sharex="col", sharey="col", squeeze=False)
    for col, env_id in enumerate(tasks):
        dts = sorted({k[3] for k in keys if k[0] == env_id})
        for row, method in enumerate(methods):
            ax, seeds = axes[row, col], set()
            for rank, dt in enumerate(dts):
                runs = groups.get((env_id, setting, method, dt), [])
                curve = seed_curves(runs, x_key, "return_mean", smooth=smooth)
                if curve is None:
                    continue
                grid, mean, low, high = curve
                color = method_color(method, dt_shade(rank, len(dts)))
                ax.plot(grid, mean, color=color, ls=DT_LINES[rank % len(DT_LINES)], lw=1.3)
                ax.fill_between(grid, low, high, color=color, alpha=0.18, linewidth=0)
                seeds.add(len(runs))
            n = "–".join(str(s) for s in sorted({min(seeds), max(seeds)})) if seeds else "0"
            ax.set_title(f"{method} on {env_id} (n = {n})" if len(method) + len(env_id) < 26 else
                         f"{method} on\n{env_id} (n = {n})", fontsize=8, color=method_color(method))
            style_axis(ax)
            ax.tick_params(labelsize=7)
            ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3))
        bottom = axes[-1, col]
        bottom.set_xlabel(X_LABELS.get(x_key, x_key), fontsize=8)
        handles = [plt.Line2D([], [], color=str(0.2 + 0.6 * dt_shade(r, len(dts))), ls=DT_LINES[r % len(DT_LINES)],
                              lw=1.5)
                   for r in range(len(dts))]
        bottom.legend(handles, [f"δ = {dt * 1000:g} ms" for dt in dts], fontsize=7, ncol=1,
                      loc="upper center", bbox_to_anchor=(0.5, -0.32), frameon=False)
    for row in axes:
        row[0].set_ylabel("training return", fontsize=8)
    runs = [r for k in keys for r in groups[k]]
    layout = "a row per method" + (", a column per task" if len(tasks) > 1 else f", {tasks[0]}")
    suptitle(fig, f"{learners_of(keys)}: {setting}, {budget(runs)}: training return, {layout}\n"
             f"each seed smoothed over {smooth} updates; lines: mean over seeds; {INTERVAL}; "
             "lighter and dashed: larger δ")
    fig.tight_layout()
    return fig


def read_random_returns(path):
    """{env_id: R_random} from benchmark/random_returns.py's CSV; ValueError if it cannot be read or has no row."""
    try:
        with open(path, newline="") as f:
            returns = {r["env_id"]: float(r["return_mean"]) for r in csv.DictReader(f)}
    except (OSError, KeyError, ValueError, TypeError, UnicodeDecodeError, csv.Error) as e:
        raise ValueError(f"{path} is not benchmark/random_returns.py's CSV ({promises.brief(e)})") from None
    if not returns:
        raise ValueError(f"{path} has no row; benchmark/random_returns.py writes one per task")
    return returns


def normalised_finals(groups, setting, random_returns):
    """({env: (R*, method, δ, R_random, whether δ is the task's δ0)}, {(env, method, δ): seeds' (R − R_random) /
    (R* − R_random)}), R* the best method's mean final return at the task's largest δ run (its δ0 where the
    runs reach it), R_random the uniform policy's mean return at δ0. A task without R_random, or whose R* is
    not above it, is left out with a warning."""
    refs, scores = {}, {}
    for env_id in sorted({k[0] for k in groups if k[1] == setting}):
        keys = [k for k in groups if k[0] == env_id and k[1] == setting]
        top = max(k[3] for k in keys)
        means = {m: float(np.mean(finals(groups[(env_id, setting, m, top)])))
                 for m in ordered({k[2] for k in keys if k[3] == top}, METHODS)}  # ties: the paper's order
        method = max(means, key=lambda m: np.nan_to_num(means[m], nan=-math.inf))
        best = means[method]
        if env_id not in random_returns:
            print(f"warning: {env_id} ({setting}) left out of the normalised figure: no R_random for it",
                  file=sys.stderr)
            continue
        chance = random_returns[env_id]
        if not best > chance:  # nan, or no method above chance: no scale
            print(f"warning: {env_id} ({setting}) left out of the normalised figure: best final return "
                  f"at δ = {top:g} s is {best:g}, not above R_random = {chance:g}", file=sys.stderr)
            continue
        dt0 = groups[(env_id, setting, method, top)][0][0].get("dt0")  # the task's own δ0, as the run recorded it
        refs[env_id] = (best, method, top, chance, dt0 is not None and math.isclose(top, dt0))
        for k in keys:
            scores[k] = (np.array(finals(groups[k])) - chance) / (best - chance)
    return refs, scores


def normalised_figure(groups, setting, random_returns, path_note):
    """Per task a panel of the normalised final returns, a bar per method and δ, seeds as dots; two
    tasks a row. Each panel has its own y."""
    refs, scores = normalised_finals(groups, setting, random_returns)
    tasks = ordered(refs, TASKS)
    if not tasks:
        return None, tasks
    methods = ordered({k[2] for k in scores}, METHODS)
    columns = min(2, len(tasks))
    rows = math.ceil(len(tasks) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(max(5.0, 4.6 * columns), 3.4 * rows + 0.9), squeeze=False)
    for ax in axes.flat[len(tasks):]:
        ax.axis("off")
    all_dts = set()
    for ax, env_id in zip(axes.flat, tasks):
        values = {k[2:]: v for k, v in scores.items() if k[0] == env_id}
        dts = sorted({dt for _, dt in values})
        all_dts |= set(dts)
        draw_bars(ax, values, methods, dts)
        ax.axhline(1.0, color="gray", lw=0.8, ls="--")
        ax.axhline(0.0, color="black", lw=0.6)
        best, method, top, chance, is_dt0 = refs[env_id]
        ax.set_title(f"{env_id}\nR* = {best:.0f} ({method}, {'δ0' if is_dt0 else 'largest δ'} = {top * 1000:g} ms), "
                     f"R_random = {chance:.3g}", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        dt_legend(ax, dts, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=len(dts), frameon=False)
    for row in axes:
        row[0].set_ylabel("(R − R_random) / (R* − R_random)", fontsize=8)
    runs = [r for k in groups if k[1] == setting and k[0] in refs for r in groups[k]]
    suptitle(fig, f"{learners_of(scores)}: {setting}, {budget(runs)}: final return normalised per task, "
             "(R − R_random) / (R* − R_random): "
             f"1 = the best method's mean at the largest δ run (δ0), 0 = a uniform random policy's mean ({path_note})\n"
             "bars: mean over seeds; whiskers: the seeds' min–max; dots: seeds; shade and hatch: δ")
    fig.tight_layout()
    return fig, tasks


def fig5_groups(groups):
    """{(env, setting, method): runs} at each task's smallest δ over Fig. 5's settings, and those δ."""
    keys = [k for k in groups if k[1] in STOCHASTIC]
    lowest = {env_id: min(k[3] for k in keys if k[0] == env_id) for env_id in {k[0] for k in keys}}
    return {(k[0], k[1], k[2]): groups[k] for k in keys if k[3] == lowest[k[0]]}, lowest


def fig5_figure(groups, x_key, smooth, tasks):
    """The paper's Fig. 5: a row per stochastic setting, a column per task, a colour per method, at δ_lowest."""
    cells, lowest = fig5_groups(groups)
    settings = [s for s in STOCHASTIC if any(k[1] == s for k in cells)]
    methods = ordered({k[2] for k in cells}, METHODS)
    fig, axes = plt.subplots(len(settings), len(tasks),
                             figsize=(max(5.0, 2.6 * len(tasks) + 0.6), 2.3 * len(settings) + 1.2),
                             sharex="col", sharey="col", squeeze=False)
    for col, env_id in enumerate(tasks):
        for row, setting in enumerate(settings):
            ax = axes[row, col]
            for method in methods:
                runs = cells.get((env_id, setting, method), [])
                curve = seed_curves(runs, x_key, "return_mean", smooth=smooth)
                if curve is None:
                    continue
                grid, mean, low, high = curve
                ax.plot(grid, mean, color=method_color(method), lw=1.3, label=f"{method} (n = {len(runs)})")
                ax.fill_between(grid, low, high, color=method_color(method), alpha=0.18, linewidth=0)
            ax.set_title(f"{env_id}\n{setting}, δ = {lowest[env_id] * 1000:g} ms", fontsize=8)
            style_axis(ax)
            ax.tick_params(labelsize=7)
            ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3))
        axes[-1, col].set_xlabel(X_LABELS.get(x_key, x_key), fontsize=8)
    for row in axes:
        row[0].set_ylabel("training return", fontsize=8)
    handles = [plt.Line2D([], [], color=method_color(m), lw=2) for m in methods]
    fig.legend(handles, methods, loc="lower center", ncol=len(methods), fontsize=8, frameon=False)
    runs = [r for k in cells if k[0] in tasks for r in cells[k]]
    suptitle(fig, f"{learners_of(cells)}: Fig. 5 at δ_lowest, {budget(runs)}: training return, a row per "
             f"stochastic setting, a column per task\neach seed smoothed over {smooth} updates; "
             f"lines: mean over seeds; {INTERVAL}")
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))
    return fig


def lowest_figure(groups, setting, x_key, smooth, tasks):
    """App. F.2's and G's figures: a panel per task (four a row) at its smallest δ, every method overlaid."""
    lowest = {env_id: min(k[3] for k in groups if k[0] == env_id and k[1] == setting) for env_id in tasks}
    cells = {(k[0], k[2]): groups[k] for k in groups if k[1] == setting and k[0] in tasks and k[3] == lowest[k[0]]}
    methods = ordered({k[1] for k in cells}, METHODS)
    lines = {m: SCALED_LINE if m.endswith("(scaled)") else "-" for m in methods}
    rows, cols = math.ceil(len(tasks) / PER_FIGURE), min(len(tasks), PER_FIGURE)
    fig, axes = plt.subplots(rows, cols, figsize=(max(5.0, 2.7 * cols + 0.6), 2.5 * rows + 1.3), squeeze=False)
    for ax, env_id in zip(axes.flat, tasks):
        for method in methods:
            runs = cells.get((env_id, method), [])
            curve = seed_curves(runs, x_key, "return_mean", smooth=smooth)
            if curve is None:
                continue
            grid, mean, low, high = curve
            ax.plot(grid, mean, color=method_color(method), ls=lines[method], lw=1.3)
            ax.fill_between(grid, low, high, color=method_color(method), alpha=0.15, linewidth=0)
        ax.set_title(f"{env_id}, δ = {lowest[env_id] * 1000:g} ms", fontsize=8)
        style_axis(ax)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3))
        ax.set_xlabel(X_LABELS.get(x_key, x_key), fontsize=7)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("training return", fontsize=8)
    seeds = {m: sorted({len(cells.get((env_id, m), [])) for env_id in tasks} - {0}) for m in methods}
    labels = [f"{m} (n = {'–'.join(map(str, dict.fromkeys([n[0], n[-1]])))})" for m, n in seeds.items()]
    handles = [plt.Line2D([], [], color=method_color(m), ls=lines[m], lw=2) for m in methods]
    fig.legend(handles, labels, loc="lower center", ncol=len(methods), fontsize=8, frameon=False)
    runs = [r for k in cells for r in cells[k]]
    suptitle(fig, f"{learners_of({(k[0], setting, k[1]) for k in cells})}: {setting}, each task at its smallest δ, "
             f"{budget(runs)}: training return against {X_LABELS.get(x_key, x_key)}\neach seed smoothed over "
             f"{smooth} updates; lines: mean over seeds; {INTERVAL}")
    fig.tight_layout(rect=(0, 0.45 / fig.get_figheight(), 1, 1))
    return fig


def return_at_physical_time(columns, seconds, fraction=0.1):
    """Fig. 4's SAR-PPO: the mean training return of the updates in the last `fraction` of [0, T] physical
    seconds, and whether the run reached T (one that did not is read over its own last 10%, final_return)."""
    x, returns = columns["physical_time_s"], columns["return_mean"]
    if x[-1] < seconds:
        return final_return(columns, fraction), False
    window = ~np.isnan(returns) & (x >= seconds * (1 - fraction)) & (x <= seconds)
    return (float(returns[window].mean()) if window.any() else math.nan), True


def evaluated_return(columns, fraction=0.1):
    """Fig. 4's DAU: the mean deterministic evaluation return over the last `fraction` of its physical time
    (the last evaluation if none lies there)."""
    x, returns = columns["physical_time_s"], columns.get("eval_return_mean", np.full(len(columns["physical_time_s"]),
                                                                                     math.nan))
    known = ~np.isnan(returns)
    window = known & (x >= x[-1] * (1 - fraction))
    return float(returns[window].mean()) if window.any() else float(returns[known][-1]) if known.any() else math.nan


FIG4_DAU = "DAU (no normalisation)"  # the committed Fig. 4's DAU runs (fig4_dau.sh)


def fig4_cells(groups):
    """{(env, δ): (T, SAR-PPO's runs, DAU's runs)} for each task and δ with DAU runs (deterministic setting);
    T = DAU's physical time (--physical-time, rounded to whole rows)."""
    cells = {}
    for (env_id, setting, method, dt), runs in groups.items():
        if method == FIG4_DAU and setting == "deterministic":
            seconds = max(float(columns["physical_time_s"][-1]) for _, columns, _ in runs)
            cells[(env_id, dt)] = (seconds, groups.get((env_id, setting, "SAR-PPO", dt), []), runs)
    return dict(sorted(cells.items(), key=lambda item: (TASKS.index(item[0][0]) if item[0][0] in TASKS else len(TASKS),
                                                        item[0])))


def fig4_values(cell):
    """(SAR-PPO's values at T, how many of its runs reached T, its decisions up to T, DAU's values, DAU's
    transitions, how many DAU runs have no evaluation) of one Fig. 4 cell. A run with nothing to read (nan: DAU
    made without --eval-every, or SAR-PPO without a training return in its window) gives no value."""
    seconds, sar, dau = cell
    read = [return_at_physical_time(columns, seconds) for _, columns, _ in sar]
    read = [(value, reached) for value, reached in read if not math.isnan(value)]
    decisions = [float(np.interp(min(seconds, columns["physical_time_s"][-1]), columns["physical_time_s"],
                                 columns["decision_steps"])) for _, columns, _ in sar]
    evaluated = [evaluated_return(columns) for _, columns, _ in dau]
    return ([v for v, _ in read], sum(reached for _, reached in read), decisions,
            [v for v in evaluated if not math.isnan(v)], [float(c["decision_steps"][-1]) for _, c, _ in dau],
            sum(math.isnan(v) for v in evaluated))


def fig4_unevaluated(groups):
    """One line for stderr naming the Fig. 4 cells whose DAU runs have no evaluation to read, and the flag that
    makes them; None if every DAU run has one."""
    missing = {}
    for (env_id, dt), cell in fig4_cells(groups).items():
        count = fig4_values(cell)[5]
        if count:
            missing.setdefault(env_id, []).append(f"{dt * 1000:g} ms ({count} of {len(cell[2])} runs)")
    if not missing:
        return None
    where = "; ".join(f"{env_id} at {', '.join(cells)}" for env_id, cells in missing.items())
    return (f"warning: Fig. 4: no DAU evaluation to read in {where}: dau.py evaluates only with --eval-every N "
            "(its default 0 makes none); those runs are left out, a cell without any says \"no evaluation\" and "
            "has no verdict")


def fig4_table(groups):
    """Markdown: per task and δ, SAR-PPO and DAU at DAU's physical time T (mean [min, max] over seeds, their
    count), the decisions each made, whether SAR-PPO is above; then DAU's transitions over SAR-PPO's
    decisions at each task's smallest δ (the paper's "17.6× fewer decision steps"), and each method's
    δ-invariance at T (the paper's "better δ-invariance")."""
    cells = fig4_cells(groups)
    lines = ["| task | δ (ms) | T (s) | SAR-PPO | DAU | SAR-PPO above DAU? | SAR-PPO decisions | DAU transitions |",
             "|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for (env_id, dt), cell in cells.items():
        sar, reached, decisions, dau, transitions, unevaluated = fig4_values(cell)
        short = "" if reached == len(sar) else f" †{len(sar) - reached}"
        answer = verdict(sar, dau) if sar and dau else "–"  # never from a run without a value
        dau_cell = range_cell(dau) + (f", {unevaluated} without evaluation" if unevaluated else "")
        if not dau:
            dau_cell = "no evaluation"
        lines.append(f"| {env_id} | {dt * 1000:g} | {cell[0]:,.0f} | {range_cell(sar)}{short} | {dau_cell} | "
                     f"{answer} | {np.mean(decisions):,.0f} | {np.mean(transitions):,.0f} |" if decisions else
                     f"| {env_id} | {dt * 1000:g} | {cell[0]:,.0f} | – | {dau_cell} | – | – | "
                     f"{np.mean(transitions):,.0f} |")
        if decisions and dt == min(d for e, d in cells if e == env_id):
            ratios[env_id] = np.mean(transitions) / np.mean(decisions)
    lines.append("")
    lines.append("† that many SAR-PPO runs end before T: read over their own last 10% of decisions.")
    if ratios:
        lines.append("At each task's smallest δ, DAU's transitions / SAR-PPO's decisions up to T: "
                     + ", ".join(f"{e.removesuffix('-v5')} {r:.1f}×" for e, r in ratios.items())
                     + f"; mean {np.mean(list(ratios.values())):.1f}× over {len(ratios)} task(s).")
    invariance = []
    for env_id in ordered({e for e, _ in cells}, TASKS):
        dts = sorted(dt for e, dt in cells if e == env_id)
        if len(dts) < 2:
            continue
        low, high = fig4_values(cells[(env_id, dts[0])]), fig4_values(cells[(env_id, dts[-1])])
        answers = [invariance_cell(low[i], high[i]) if low[i] and high[i] else "–" for i in (0, 3)]  # SAR-PPO, DAU
        invariance.append(f"| {env_id} | {dts[0] * 1000:g} / {dts[-1] * 1000:g} | {answers[0]} | {answers[1]} |")
    if invariance:
        lines += ["", "δ-invariance at T: each method's value at the smallest δ over that at δ0, and the verdict of "
                  "the report's one rule (as --ratios)", "",
                  "| task | δ_lowest / δ0 (ms) | SAR-PPO | DAU |", "|---|---|---|---|"] + invariance
    return "\n".join(lines)


def fig4_panels(tasks):
    """Fig. 4's frame: a panel per task, four a row."""
    rows, cols = math.ceil(len(tasks) / PER_FIGURE), min(len(tasks), PER_FIGURE)
    return plt.subplots(rows, cols, figsize=(max(5.0, 2.7 * cols + 0.6), 2.6 * rows + 1.3), squeeze=False)


def fig4_axis(ax, env_id, dts, cells):
    """A Fig. 4 panel's δ ticks (each with its T), title and grid."""
    ax.set_xticks(range(len(dts)), [f"{dt * 1000:g} ms\nT = {cells[(env_id, dt)][0]:,.0f} s" for dt in dts],
                  fontsize=7)
    ax.set_xlim(-0.6, len(dts) - 0.4)
    ax.set_title(env_id, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(alpha=0.3, axis="y")


def fig4_figure(groups, tasks):
    """The paper's Fig. 4: a panel per task (four a row), a pair of bars per δ: SAR-PPO and DAU at equal
    physical time T; whiskers the seeds' min–max, dots the seeds."""
    cells = fig4_cells(groups)
    fig, axes = fig4_panels(tasks)
    for ax, env_id in zip(axes.flat, tasks):
        dts = sorted(dt for e, dt in cells if e == env_id)
        for i, dt in enumerate(dts):
            sar, reached, _, dau, _, unevaluated = fig4_values(cells[(env_id, dt)])
            for j, (method, values) in enumerate((("SAR-PPO", sar), ("DAU", dau))):
                x = i + (j - 0.5) * 0.38
                if method == "DAU" and not values and unevaluated:  # dau.py without --eval-every: nothing to draw
                    ax.text(x, 0, "no\nevaluation", ha="center", va="bottom", fontsize=6)
                if not values:
                    continue
                mean, low, high = mean_range(values)
                ax.bar(x, mean, 0.38, yerr=[[mean - low], [high - mean]], capsize=2, error_kw={"lw": 1},
                       color=method_color(method), edgecolor="white", linewidth=0,
                       hatch="//" if method == "SAR-PPO" and reached < len(values) else "")
                ax.scatter([x] * len(values), values, s=7, color="black", zorder=3)
        fig4_axis(ax, env_id, dts, cells)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("return at physical time T", fontsize=8)
    handles = [matplotlib.patches.Patch(color=method_color("SAR-PPO"), label="SAR-PPO (training return)"),
               matplotlib.patches.Patch(facecolor=method_color("SAR-PPO"), hatch="//", edgecolor="white",
                                        label="SAR-PPO, some of its runs ended before T (†)"),
               matplotlib.patches.Patch(color=method_color("DAU"),
                                        label="DAU (no normalisation; deterministic evaluation)")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    suptitle(fig, "PPO and DAU: Fig. 4, SAR-PPO against DAU at equal physical time T per task and δ\n"
             "the return over the last 10% of T; bars: mean over seeds; whiskers: the seeds' min–max; dots: seeds")
    fig.tight_layout(rect=(0, 0.45 / fig.get_figheight(), 1, 1))
    return fig


FIG4_EQUAL_DAU = "DAU"  # fig4_dau_norm.sh's: DAU with the recipe's input normalisation
READINGS = ("evaluation", "training")  # Fig. 4 on equal terms reads both methods both ways


def fig4_equal_cells(groups):
    """{(env, δ): (T, SAR-PPO's runs trained to T, DAU's runs)}: Fig. 4 on equal terms (fig4_equal_terms.sh), a
    cell for each task and δ with DAU runs with normalisation; T is their --physical-time, SAR-PPO's runs those
    of `--physical-time T`."""
    cells = {}
    for (env_id, setting, method, dt), runs in groups.items():
        if method == FIG4_EQUAL_DAU and setting == "deterministic":
            seconds = runs[0][0]["physical_time"]
            cells[(env_id, dt)] = (seconds, groups.get((env_id, f"T={seconds:g}s", "SAR-PPO", dt), []), runs)
    return dict(sorted(cells.items(), key=lambda item: (TASKS.index(item[0][0]) if item[0][0] in TASKS else len(TASKS),
                                                        item[0])))


def fig4_equal_values(cell, reading):
    """(SAR-PPO's values, DAU's values) of one cell: by their deterministic evaluations over the last 10% of
    their physical time, or by their training returns over the last 10% of T. A run with nothing to read in
    its window (no evaluation, no episode ended) gives no value."""
    seconds, sar, dau = cell
    if reading == "evaluation":
        values = [[evaluated_return(columns) for _, columns, _ in runs] for runs in (sar, dau)]
    else:
        values = [[return_at_physical_time(columns, seconds)[0] for _, columns, _ in runs] for runs in (sar, dau)]
    return tuple([v for v in side if not math.isnan(v)] for side in values)


def fig4_equal_table(groups):
    """Markdown: Fig. 4 on equal terms: per task and δ, SAR-PPO trained to T and DAU with normalisation (mean
    [min, max] (seeds)), read by their evaluations, then by their training returns, each reading with the one
    rule's verdict."""
    cells = fig4_equal_cells(groups)
    lines = ["| task | δ (ms) | T (s) | SAR-PPO, evaluation | DAU, evaluation | SAR-PPO above? | "
             "SAR-PPO, training | DAU, training | SAR-PPO above? |", "|---|---|---|---|---|---|---|---|---|"]
    for (env_id, dt), cell in cells.items():
        parts = []
        for reading in READINGS:
            sar, dau = fig4_equal_values(cell, reading)
            answer = "–"  # never from a side without a value
            if sar and dau:
                answer = verdict(sar, dau)
            parts += [range_cell(sar), range_cell(dau), answer]
        lines.append(f"| {env_id} | {dt * 1000:g} | {cell[0]:,.0f} | " + " | ".join(parts) + " |")
    ratios = {}  # the paper's "17.6× fewer decision steps": at each task's smallest δ
    invariance = []  # the paper's "better δ-invariance": by evaluation, the smallest δ against δ0
    for env_id in ordered({e for e, _ in cells}, TASKS):
        dts = sorted(dt for e, dt in cells if e == env_id)
        _, sar, dau = cells[(env_id, dts[0])]
        if sar and dau:
            transitions = np.mean([columns["decision_steps"][-1] for _, columns, _ in dau])
            ratios[env_id] = transitions / np.mean([columns["decision_steps"][-1] for _, columns, _ in sar])
        if len(dts) > 1:
            low, high = [fig4_equal_values(cells[(env_id, dt)], "evaluation") for dt in (dts[0], dts[-1])]
            answers = [invariance_cell(low[i], high[i]) if low[i] and high[i] else "–" for i in (0, 1)]
            invariance.append(f"| {env_id} | {dts[0] * 1000:g} / {dts[-1] * 1000:g} | {answers[0]} | {answers[1]} |")
    if ratios:
        lines += ["", "At each task's smallest δ, DAU's transitions / SAR-PPO's decisions up to T: "
                  + ", ".join(f"{e.removesuffix('-v5')} {r:.1f}×" for e, r in ratios.items())
                  + f"; mean {np.mean(list(ratios.values())):.1f}× over {len(ratios)} task(s)."]
    if invariance:
        lines += ["", "δ-invariance by evaluation: each method's mean at the smallest δ over that at δ0, and the "
                  "verdict of the report's one rule", "", "| task | δ_lowest / δ0 (ms) | SAR-PPO | DAU |",
                  "|---|---|---|---|"] + invariance
    return "\n".join(lines)


def fig4_equal_figure(groups, tasks):
    """Fig. 4 on equal terms: a panel per task (four a row), per δ a pair of bars read by the deterministic
    evaluations (SAR-PPO, DAU) and beside each its training return as an open diamond; whiskers the seeds'
    min–max, dots the seeds."""
    cells = fig4_equal_cells(groups)
    fig, axes = fig4_panels(tasks)
    for ax, env_id in zip(axes.flat, tasks):
        dts = sorted(dt for e, dt in cells if e == env_id)
        for i, dt in enumerate(dts):
            evaluated = fig4_equal_values(cells[(env_id, dt)], "evaluation")
            trained = fig4_equal_values(cells[(env_id, dt)], "training")
            for j, method in enumerate(("SAR-PPO", "DAU")):
                x = i + (j - 0.5) * 0.38
                if evaluated[j]:
                    mean, low, high = mean_range(evaluated[j])
                    ax.bar(x, mean, 0.38, yerr=[[mean - low], [high - mean]], capsize=2, error_kw={"lw": 1},
                           color=method_color(method), edgecolor="white", linewidth=0)
                    ax.scatter([x] * len(evaluated[j]), evaluated[j], s=7, color="black", zorder=3)
                if trained[j]:
                    ax.scatter([x], [np.mean(trained[j])], s=22, marker="D", facecolor="white",
                               edgecolor="black", linewidth=1.0, zorder=4)
        fig4_axis(ax, env_id, dts, cells)
    for ax in axes.flat[len(tasks):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("return over the last 10% of T", fontsize=8)
    handles = [matplotlib.patches.Patch(color=method_color("SAR-PPO"), label="SAR-PPO trained to T"),
               matplotlib.patches.Patch(color=method_color("DAU"), label="DAU with normalisation"),
               matplotlib.lines.Line2D([], [], marker="D", linestyle="", markerfacecolor="white",
                                       markeredgecolor="black", label="training return (mean)")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    suptitle(fig, "PPO and DAU: Fig. 4 on equal terms, both trained to T\n"
             "bars: evaluations (mean; whiskers: min–max; dots: seeds); diamonds: training returns")
    fig.tight_layout(rect=(0, 0.45 / fig.get_figheight(), 1, 1))
    return fig


def tacos_cells(groups):
    """{(env, setting, δ): {method: runs}} for each task, setting and δ with TaCoS-PPO runs: TaCoS-PPO at each
    switch cost, and SAR-PPO and FiGAR-C-PPO beside it (benchmark/tacos.sh)."""
    cells = {(env_id, setting, dt): {} for env_id, setting, method, dt in groups if method.startswith("TaCoS-PPO")}
    for (env_id, setting, method, dt), runs in groups.items():
        peers = method.startswith("TaCoS-PPO") or method in ("SAR-PPO", "FiGAR-C-PPO")
        if peers and (env_id, setting, dt) in cells:
            cells[(env_id, setting, dt)][method] = runs
    return dict(sorted(cells.items(), key=lambda item: (TASKS.index(item[0][0]) if item[0][0] in TASKS else len(TASKS),
                                                        STOCHASTIC.index(item[0][1]) + 1 if item[0][1] in STOCHASTIC
                                                        else 0, item[0][2])))


def decisions_per_episode(columns, fraction=0.1, episodes_at_least=20):
    """Decisions per finished training episode over the last `fraction` of the run's decisions, or over its
    last `episodes_at_least` episodes if fewer ended there: the decisions made over the episodes that ended
    (nan if none did). The episodes in progress at the window's two ends are counted in part, so the count
    is off by up to an episode at each end: 20 keep that within 5% (8 of HalfCheetah's 50 s episodes fit in
    a last 10%)."""
    steps, episodes = columns["decision_steps"], columns.get("episodes")
    if episodes is None:
        return math.nan
    before = int(np.searchsorted(steps, steps[-1] * (1 - fraction))) - 1  # the row the window counts from
    while before >= 0 and episodes[-1] - episodes[before] < episodes_at_least:
        before -= 1  # -1: from the run's start
    done_steps = steps[-1] - (steps[before] if before >= 0 else 0)
    ended = episodes[-1] - (episodes[before] if before >= 0 else 0)
    return float(done_steps / ended) if ended > 0 else math.nan


def final_hold(columns, fraction=0.1):
    """Mean hold per decision (s) over the last `fraction` of the run's decisions: the physical time over the
    decisions made since the last row before that window (the run's start if there is none)."""
    steps, time = columns["decision_steps"], columns["physical_time_s"]
    before = int(np.searchsorted(steps, steps[-1] * (1 - fraction))) - 1
    if before < 0:  # from the run's start
        return float(time[-1] / steps[-1])
    return float((time[-1] - time[before]) / (steps[-1] - steps[before]))


def tacos_cost(cell):
    """The cell's switch cost c: the largest of its TaCoS-PPO runs' --switch-cost."""
    return max(config.get("switch_cost", 0.0) for method, runs in cell.items() for config, _, _ in runs
               if method.startswith("TaCoS-PPO"))


def tacos_table(groups):
    """Markdown: per task, setting and δ, each method's final return (the last 10% of its decisions), mean hold,
    decisions per episode, and return − c·decisions with the cell's TaCoS cost c (what TaCoS optimises, charged
    to every method); mean [min, max] (seeds). Then SAR-PPO against each TaCoS-PPO by the one rule, on the return
    and on return − c·decisions."""
    lines = ["| task | setting | δ (ms) | method | final return | mean hold (ms) | decisions per episode "
             "| return − c·decisions |", "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for (env_id, setting, dt), cell in tacos_cells(groups).items():
        cost = tacos_cost(cell)
        net = {}
        for method in ordered(cell, ["SAR-PPO", "FiGAR-C-PPO", "TaCoS-PPO"]):
            returns = finals(cell[method])
            decisions = finals(cell[method], decisions_per_episode)
            net[method] = [r - cost * d for r, d in zip(returns, decisions) if not math.isnan(r + d)]
            holds = [1000 * hold for hold in finals(cell[method], final_hold)]
            lines.append(f"| {env_id} | {setting} | {dt * 1000:g} | {method} | {range_cell(returns)} | "
                         f"{range_cell(holds)} | {range_cell([d for d in decisions if not math.isnan(d)])} | "
                         f"{range_cell(net[method])} (c = {cost:g}) |")
            if method.startswith("TaCoS-PPO") and "SAR-PPO" in cell:
                by_return = verdict(finals(cell["SAR-PPO"]), returns)
                by_net = verdict(net["SAR-PPO"], net[method]) if net["SAR-PPO"] and net[method] else "–"
                verdicts.append(f"- {env_id}, {setting}, {dt * 1000:g} ms: SAR-PPO against {method}: by the return "
                                f"{by_return}; by return − {cost:g}·decisions {by_net}")
    return "\n".join(lines + ([""] + verdicts if verdicts else []))


def tacos_figure(groups):
    """SAR against TaCoS-PPO: a panel per task and setting, each seed's final return against its decisions per
    episode (the trade-off TaCoS optimises), a colour per method family, TaCoS-PPO's costs as shades."""
    cells = tacos_cells(groups)
    cols = min(len(cells), 2)  # a task a row: deterministic, then under the force
    rows = math.ceil(len(cells) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(max(5.0, 3.2 * cols + 0.6), 2.7 * rows + 1.3), squeeze=False)
    methods = set()
    for ax, ((env_id, setting, dt), cell) in zip(axes.flat, cells.items()):
        tacos = sorted((m for m in cell if m.startswith("TaCoS-PPO")), reverse=True)
        for method in ordered(cell, ["SAR-PPO", "FiGAR-C-PPO", "TaCoS-PPO"]):
            shade = 0.5 * tacos.index(method) if method in tacos else 0.0  # c = 0 lighter
            ax.scatter(finals(cell[method], decisions_per_episode), finals(cell[method]), s=18,
                       color=method_color(method, shade), label=method, zorder=3)
            methods.add((method, shade))
        ax.set_xscale("log")
        # plain numbers at 1, 2 and 5 of each decade: 2,000 rather than 2×10³
        plain = matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:,.0f}" if f"{x:.0e}"[0] in "125" else "")
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(plain)
        ax.set_title(f"{env_id}, {setting}, δ = {dt * 1000:g} ms", fontsize=8)
        ax.set_xlabel("decisions per episode", fontsize=8)
        ax.tick_params(which="both", labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(cells):]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel("final return", fontsize=8)
    handles = [matplotlib.lines.Line2D([], [], marker="o", linestyle="", color=method_color(m, shade), label=m)
               for m, shade in sorted(methods)]
    fig.legend(handles=handles, loc="lower center", ncol=min(3, len(handles)), fontsize=7, frameon=False)
    suptitle(fig, "PPO: SAR against TaCoS-PPO, the return against the decisions taken\n"
             "each dot a seed, over its last 10% of decisions")
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))
    return fig


def verdict(sar, other):
    """SAR against another method over seeds' final returns, by the figures' intervals (min–max), compared at
    the tables' precision (0.1): float noise is no lead."""
    (sar_mean, sar_low, _), (mean, _, high) = [np.round(mean_range(v), 1) for v in (sar, other)]
    if sar_low > high and min(len(sar), len(other)) >= 2:  # one seed has no interval to compare
        return "SAR above by the intervals"
    answer = "equal" if sar_mean == mean else "by the mean only" if sar_mean > mean else "not"
    return answer + (" (one seed)" if min(len(sar), len(other)) < 2 else "")


def fig5_table(groups):
    """Markdown: per task and stochastic setting, each method's final return at δ_lowest (mean [min, max]
    over seeds, the seeds' count) and whether SAR is above FiGAR-C (on the groups' one learner)."""
    cells, lowest = fig5_groups(groups)
    methods = ordered({k[2] for k in cells}, METHODS)
    learner = learners_of(cells)
    sar, figar = f"SAR-{learner}", f"FiGAR-C-{learner}"
    lines = ["| task | setting | δ (ms) | decisions | " + " | ".join(methods) + f" | {sar} above {figar}? |",
             "|---|---|---|---|" + "---|" * len(methods) + "---|"]
    for env_id in ordered(lowest, TASKS):
        for setting in STOCHASTIC:
            runs = {m: cells.get((env_id, setting, m), []) for m in methods}
            if not any(runs.values()):
                continue
            row = []
            for m in methods:
                values = finals(runs[m])
                row.append(range_cell(values))
            both = runs.get(sar) and runs.get(figar)
            answer = verdict(finals(runs[sar]), finals(runs[figar])) if both else "–"
            every = [r for v in runs.values() for r in v]
            lines.append(f"| {env_id} | {setting} | {lowest[env_id] * 1000:g} | {budget(every).split()[0]} | "
                         + " | ".join(row) + f" | {answer} |")
    return "\n".join(lines)


def table(groups, score=final_return, what="final return"):
    """Markdown: the score (mean ± 95% t interval over seeds; the final return unless told), decisions
    per physical second, wall time."""
    lines = [f"| env | setting | method | δ (s) | seeds | decisions | {what} (mean ± 95% t interval) | "
             "decisions / physical s | wall time (min) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (env_id, setting, method, dt), runs in sorted(groups.items()):
        mean, ci = mean_ci(finals(runs, score))
        rate = np.mean([decisions_per_physical_second(c) for _, c, _ in runs])
        steps = min(int(c["decision_steps"][-1]) for _, c, _ in runs)
        wall = np.mean([c["wall_time_s"][-1] / 60 for _, c, _ in runs])
        final = f"{mean:.1f} ± {ci:.1f}" if len(runs) > 1 else f"{mean:.1f} (one seed)"
        if np.isnan(mean):  # no episode ended in the window (a short DAU run)
            final = "– (no episode ended)"
        lines.append(f"| {env_id} | {setting} | {method} | {dt:g} | {len(runs)} | {steps:,} | "
                     f"{final} | {rate:.1f} | {wall:.1f} |")
    return "\n".join(lines)


def summary(groups, score=final_return, what="final return"):
    """Markdown, the paper's Fig. 3 at a glance: per setting a row per task and δ (largest first) and per
    method the final return, mean ± 95% t interval over seeds (the seeds' count); – where no run finished."""
    tables = []
    for setting in sorted({k[1] for k in groups}, key=lambda s: (s != "deterministic", s)):
        keys = [k for k in groups if k[1] == setting]
        methods = ordered({k[2] for k in keys}, METHODS)
        lines = [f"{setting}: {what}, mean ± 95% t interval over seeds (seeds)", "",
                 "| task | δ (s) | decisions | " + " | ".join(methods) + " |", "|---|---|---|" + "---|" * len(methods)]
        for env_id in ordered({k[0] for k in keys}, TASKS):
            for dt in sorted({k[3] for k in keys if k[0] == env_id}, reverse=True):
                cells, every = [], []
                for method in methods:
                    runs = groups.get((env_id, setting, method, dt), [])
                    every += runs
                    if not runs:
                        cells.append("–")
                        continue
                    mean, ci = mean_ci(finals(runs, score))
                    cells.append(f"{mean:.1f} ± {ci:.1f} ({len(runs)})" if len(runs) > 1 else f"{mean:.1f} (1)")
                decisions = sorted({int(c["decision_steps"][-1]) for _, c, _ in every})
                steps = f"{decisions[0]:,}" + (f"–{decisions[-1]:,}" if len(decisions) > 1 else "")
                lines.append(f"| {env_id} | {dt:g} | {steps} | " + " | ".join(cells) + " |")
        tables.append("\n".join(lines))
    return "\n\n".join(tables)


def invariance_verdict(lowest, largest):
    """The report's one rule for δ-invariance, over seeds' final returns, in this order: "not" where every δ_lowest
    seed is below every δ0 seed (at the tables' precision, 0.1: float noise is no drop); "invariant" where
    δ_lowest's mean is at or above δ0's or inside its 95% t interval; else "unclear"."""
    mean, ci = mean_ci(largest)
    if round(max(lowest), 1) < round(min(largest), 1):
        return "not"
    return "invariant" if np.mean(lowest) >= mean - ci - 1e-9 * abs(mean) else "unclear"  # 1e-9: float sums


def invariance_cell(lowest, largest):
    """The mean at the smallest δ over that at the largest (none where the latter is not above 0: Reacher's and
    Ant's negative returns), and the one rule's verdict."""
    ratio = f"{np.mean(lowest) / np.mean(largest):.2f}, " if np.mean(largest) > 0 else ""
    return f"{ratio}{invariance_verdict(lowest, largest)}"


def ratios(groups, score=final_return):
    """Markdown, SAR on three learners: per task (deterministic setting), each method's mean final return at the
    task's smallest δ over that at its largest, and the one rule's verdict; – where a δ is missing, and no ratio
    where the largest δ's mean is not above 0 (Reacher's and Ant's negative returns). DAU is read by its
    evaluations, as Fig. 4 reads it, unless a --window score is given."""
    keys = [k for k in groups if k[1] == "deterministic"]
    methods = ordered({k[2] for k in keys}, METHODS)
    lines = ["| task | δ_lowest / δ0 (ms) | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for env_id in ordered({k[0] for k in keys}, TASKS):
        dts = sorted({k[3] for k in keys if k[0] == env_id})
        cells = []
        for method in methods:
            low, high = (groups.get((env_id, "deterministic", method, dt)) for dt in (dts[0], dts[-1]))
            if len(dts) < 2 or not low or not high:
                cells.append("–")
                continue
            read = score
            if method.startswith("DAU") and score is final_return:
                read = evaluated_return
            cells.append(invariance_cell(finals(low, read), finals(high, read)))
        lines.append(f"| {env_id} | {dts[0] * 1000:g} / {dts[-1] * 1000:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def runs_table(groups, score=final_return, what="final return"):
    """Markdown: one line per run."""
    lines = [f"| run | decisions | physical s | {what} | wall time (min) |", "|---|---|---|---|---|"]
    for key, runs in sorted(groups.items()):
        for _, columns, folder in sorted(runs, key=lambda r: r[0]["seed"]):
            value = score(columns)
            shown = "– (no episode ended)" if np.isnan(value) else f"{value:.1f}"
            lines.append(f"| {os.path.basename(folder)} | {int(columns['decision_steps'][-1]):,} | "
                         f"{columns['physical_time_s'][-1]:.0f} | {shown} | "
                         f"{columns['wall_time_s'][-1] / 60:.1f} |")
    return "\n".join(lines)


def by_learner(groups):
    """{learner: its groups}, in the order PPO, TRPO, A2C, DAU."""
    split = defaultdict(dict)
    for key, runs in groups.items():
        split[learner_of(key[2])][key] = runs
    return {learner: split[learner] for learner in ordered(split, LEARNERS)}


def draw(groups, args, learner=""):
    """Every figure of --kinds, the learner's name (if given) first in each file name; the paths written."""
    written, ext = [], args.format
    out = lambda name: os.path.join(args.out, f"{args.prefix}{learner}{name}.{ext}")  # noqa: E731
    for setting in sorted({key[1] for key in groups}):
        tasks = ordered({k[0] for k in groups if k[1] == setting}, TASKS)
        for env_id in tasks:
            if "curves" in args.kinds:
                written.append(save(task_curves(groups, env_id, setting, args.x, "return_mean", "training return",
                                                "training return", args.smooth),
                                    out(f"{env_id}_{setting}_return_vs_{args.x}")))
            if "durations" in args.kinds:
                written.append(save(task_curves(groups, env_id, setting, args.x, "action_duration_mean_s",
                                                "mean action duration (s)", "mean action duration", args.smooth),
                                    out(f"{env_id}_{setting}_action_duration_vs_{args.x}")))
            if "bars" in args.kinds:
                written.append(save(task_bars(groups, env_id, setting), out(f"{env_id}_{setting}_final_return")))
        if "grid" in args.kinds:
            for part in chunks(tasks):
                written.append(save(grid_figure(groups, setting, args.x, args.smooth, part),
                                    out(f"{setting}_grid_return_vs_{args.x}_{tasks_name(part)}")))
        if "lowest" in args.kinds:
            written.append(save(lowest_figure(groups, setting, args.x, args.smooth, tasks),
                                out(f"{setting}_lowest_dt_return_vs_{args.x}_{tasks_name(tasks)}")))
        if "normalised" in args.kinds and setting == "deterministic":
            fig, shown = normalised_figure(groups, setting, read_random_returns(args.random_returns),
                                           f"R_random: {os.path.basename(args.random_returns)}")
            if fig is not None:
                written.append(save(fig, out(f"{setting}_final_return_normalised_{tasks_name(shown)}")))
    if "fig5" in args.kinds:
        cells, lowest = fig5_groups(groups)
        if not cells:
            print("warning: no run of Fig. 5's settings (action, ext-force, ext-force-perceptible) found",
                  file=sys.stderr)
        for part in chunks(ordered(lowest, TASKS)):
            written.append(save(fig5_figure(groups, args.x, args.smooth, part),
                                out(f"fig5_return_vs_{args.x}_{tasks_name(part)}")))
    return written


def figures_in(folder, prefix=""):
    """The figures (png, pdf) in `folder` whose names start with `prefix`."""
    return [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith((".png", ".pdf"))
            and not n.startswith(".")]


def nonempty(text):  # --only: an empty text is in every run's name
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty text matches every run; leave it out")
    return text


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail  # argparse's own errors as one line too
    p.add_argument("paths", nargs="+", help="run folders, or folders holding run folders")
    p.add_argument("--out", help="folder for the figures"
                   " (default figures/, git-ignored; the committed results/figures only if named)")
    p.add_argument("--x", choices=list(X_LABELS), default="decision_steps", help="x-axis of the curves")
    p.add_argument("--format", choices=["png", "pdf"], default="png")
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS[:5],
                   help="which figures (default: all but fig5; see above)")
    p.add_argument("--table", action="store_true", help="print the Markdown tables only, draw nothing")
    p.add_argument("--summary", action="store_true",
                   help="print only a row per task and δ: each method's final return")
    p.add_argument("--ratios", action="store_true", help="print only, per task and method, the final return at "
                   "the smallest δ over that at the largest, with the δ-invariance verdict")
    p.add_argument("--variants", action="store_true",
                   help="also read the variants (ablations, --delta-dims, …), each its own method")
    p.add_argument("--prefix", default="", help="prefix of the figure file names")
    p.add_argument("--partial", action="store_true", help="include runs that have not finished yet")
    p.add_argument("--max-steps", type=within(int, 1, 10 ** 12), default=None, metavar="N",
                   help="use each run's first N decisions only (e.g. the 100k mark of a longer run)")
    p.add_argument("--window", nargs=2, type=within(float, 0, math.inf), default=None, metavar=("FROM", "TO"),
                   help="the tables' return: each run's mean training return over the updates whose --x lies "
                        "in [FROM, TO] (e.g. --x physical_time_s --window 8600 9200), not over its last 10%% "
                        "of decisions; every run must reach TO")
    p.add_argument("--only", nargs="+", type=nonempty, default=None,
                   help="only run folders whose name contains one of these texts")
    p.add_argument("--learner", choices=LEARNERS, help="only this learner's methods (default: each its own figures)")
    p.add_argument("--random-returns", default=RANDOM_RETURNS, metavar="CSV",
                   help="R_random per task, from benchmark/random_returns.py (default results/random_returns.csv)")
    p.add_argument("--smooth", type=within(int, 1, 10 ** 6), default=10, metavar="N",
                   help="the curves: at each update, each seed's mean training return over "
                        "its last N updates (the first N-1 updates: over those so far; updates with no "
                        "finished episode add nothing); 1 draws the raw curves (default 10)")
    args = p.parse_args(argv)
    for path in args.paths:
        if not os.path.exists(path):
            fail(f"{path} does not exist")
        if not os.path.isdir(path):
            fail(f"{path} is a file; give a run folder or a folder holding run folders")
    printing = [flag for flag in ("--table", "--summary", "--ratios") if getattr(args, flag[2:])]
    if len(printing) > 1:
        fail(f"{printing[1]}: {printing[0]} prints other tables; give one of them")
    if printing and args.out is not None:
        fail(f"--out: {printing[0]} prints tables and draws nothing; leave out --out")
    if args.out is None:
        args.out = "figures"
    promises.check_folder("--out", args.out)
    if "/" in args.prefix:
        fail(f"--prefix: {args.prefix!r} holds a '/'; it starts the file names inside --out")
    if "normalised" in args.kinds and not os.path.isfile(args.random_returns):
        fail(f"--random-returns: no file {args.random_returns}; benchmark/random_returns.py writes one")
    if "normalised" in args.kinds:  # read now too, so that a damaged CSV stops it before any figure
        try:
            read_random_returns(args.random_returns)
        except ValueError as e:
            fail(f"--random-returns: {e}")
    if args.window is not None and not (0 <= args.window[0] < args.window[1]):
        fail(f"--window: {args.window[0]:g} {args.window[1]:g}; it needs 0 <= FROM < TO")
    if args.window is not None and not (args.table or args.summary):
        fail("--window sets the tables' return only: add --table or --summary")
    counts = {}
    groups = load_groups(args.paths, args.partial, args.max_steps, args.only, args.variants, counts)
    if args.learner:
        groups = by_learner(groups).get(args.learner, {})
    if not groups:
        hint = (f"; {counts['Unfinished']} run(s) found unfinished: add --partial to include them"
                if counts.get("Unfinished") else "")
        hint += (f"; {counts['Variant']} run(s) of a variant of a method: add --variants to include them"
                 if counts.get("Variant") else "")
        fail(f"no {'' if args.partial else 'finished '}run found in {' '.join(args.paths)}"
             f"{' (with --only)' if args.only else ''}{f' of {args.learner}' if args.learner else ''}{hint}")
    if counts.get("Variant"):  # never silently: a variant is left out of the paper's methods' panels
        print(f"note: {counts['Variant']} run(s) of a variant of a method (a method flag off its default) left "
              f"out; --variants includes them", file=sys.stderr)
    score, what = final_return, "final return"
    stand_ins = sorted(folder for runs in groups.values() for _, columns, folder in runs
                       if not final_window(columns).any() and not np.isnan(columns["return_mean"]).all())
    if stand_ins and args.window is None:  # never silently
        print(f"note: no training return in the last 10% of {', '.join(stand_ins)}: the tables and figures take "
              "each one's last one", file=sys.stderr)
    if args.window is not None:
        for runs in groups.values():
            for _, columns, folder in runs:
                if columns[args.x][-1] < args.window[1]:
                    fail(f"--window: {folder} ends at {columns[args.x][-1]:g} {args.x}, before {args.window[1]:g}")
                if math.isnan(window_return(columns, args.x, *args.window)):
                    fail(f"--window: {folder} logs no return between {args.window[0]:g} and {args.window[1]:g} "
                         f"{args.x}; widen it")
        score = lambda columns: window_return(columns, args.x, *args.window)  # noqa: E731
        what = f"return at {X_LABELS[args.x]} {args.window[0]:g}–{args.window[1]:g}"
    if args.summary:
        print(summary(groups, score, what))
        return 0
    if args.ratios:
        print(ratios(groups, score))
        return 0
    print(table(groups, score, what))
    print()
    print(runs_table(groups, score, what))
    learners = by_learner(groups)
    for part in learners.values():
        if "fig5" in args.kinds and fig5_groups(part)[0]:
            print()
            print(fig5_table(part))
    if "fig4" in args.kinds and fig4_cells(groups):  # two learners in one figure: before the split
        if fig4_unevaluated(groups):
            print(fig4_unevaluated(groups), file=sys.stderr)
        print()
        print(fig4_table(groups))
    if "fig4" in args.kinds and fig4_equal_cells(groups):
        print()
        print(fig4_equal_table(groups))
    if "tacos" in args.kinds and tacos_cells(groups):
        print()
        print(tacos_table(groups))
    elif "tacos" in args.kinds:  # not among the default kinds: asked for
        print("note: --kinds tacos: no TaCoS-PPO run among these (benchmark/tacos.sh makes them"
              f"{'' if args.variants else '; --variants reads them'})", file=sys.stderr)
    if args.table:
        return 0
    with promises.locked("--out", args.out):  # two plot.py drawing into one folder would mix their figures
        before = figures_in(args.out, args.prefix)
        written = []
        for learner, part in learners.items():
            for path in draw(part, args, f"{learner.lower()}_" if len(learners) > 1 else ""):
                print(f"wrote {path}")
                written.append(os.path.basename(path))
        if "fig4" in args.kinds:
            tasks = ordered({env_id for env_id, _ in fig4_cells(groups)}, TASKS)
            if not tasks and not fig4_equal_cells(groups):
                print("warning: no DAU run found for Fig. 4 (dau.py; benchmark/fig4_dau.sh)", file=sys.stderr)
            for part in chunks(tasks, 2 * PER_FIGURE):
                name = f"{args.prefix}fig4_final_return_at_equal_physical_time_{tasks_name(part)}.{args.format}"
                path = save(fig4_figure(groups, part), os.path.join(args.out, name))
                print(f"wrote {path}")
                written.append(os.path.basename(path))
            tasks = ordered({env_id for env_id, _ in fig4_equal_cells(groups)}, TASKS)
            for part in chunks(tasks, 2 * PER_FIGURE):
                name = f"{args.prefix}fig4_equal_terms_{tasks_name(part)}.{args.format}"
                path = save(fig4_equal_figure(groups, part), os.path.join(args.out, name))
                print(f"wrote {path}")
                written.append(os.path.basename(path))
        if "tacos" in args.kinds and tacos_cells(groups):
            name = f"{args.prefix}tacos_return_vs_decisions.{args.format}"
            path = save(tacos_figure(groups), os.path.join(args.out, name))
            print(f"wrote {path}")
            written.append(os.path.basename(path))
    older = sorted(set(before) - set(written))
    if older:  # never deleted (--out may be the committed results/figures), but never passed off as this call's
        print(f"note: {args.out} also holds {len(older)} figure(s){f' named {args.prefix}*' if args.prefix else ''} "
              f"this call did not draw, left as an earlier call wrote them: {', '.join(older[:3])}"
              f"{f' and {len(older) - 3} more' if len(older) > 3 else ''}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `plot.py ... | head` ends quietly
    promises.run(main)
