"""The paper's figures and verdict tables from run folders, drawn with plot.py's loading and drawing.

Takes plot.py's flags (its kinds curves, durations and bars too) and these kinds and tables, each figure written
as <prefix><what it shows>.<format>, the task(s) in the name (--kinds, below). A variant of a paper's method
("SAR-PPO (d_max=0.2)") is read only with --variants: it never enters a main-method panel by accident.
Text tables give mean [min, max] (seeds), the figures' interval, and the verdicts of the report's rules
(results/README.md, "How to read the numbers"): `verdict` (SAR against another method) and `invariance_verdict`
(δ_lowest against δ0), the one function each that every page's table uses.

    python benchmark/paper_figures.py results/runs --out results/figures          # default kinds + tables
    python benchmark/paper_figures.py results/runs --kinds fig5 --table            # Fig. 5's verdict table
    python benchmark/paper_figures.py results/runs --summary    # a row per task and δ (Fig. 3 at a glance)
    python benchmark/paper_figures.py results/runs --ratios     # δ_lowest ÷ δ0 per task and method; SAR vs FiGAR-C
"""
import csv
import math
import os
import signal
import sys
import textwrap

import matplotlib.lines
import matplotlib.patches
import matplotlib.ticker
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import plot
from plot import (DT_LINES, INTERVAL, METHODS, TASKS, X_LABELS, Kind, budget, draw_bars, dt_legend, dt_shade,
                  final_return, finals, learners_of, mean_ci, mean_range, method_color, ordered, plt,
                  seed_curves, style_axis)
from tools import ROOT, promises
from tools.promises import fail

RANDOM_RETURNS = os.path.join(ROOT, "results", "random_returns.csv")
SCALED_LINE = "--"  # a "(scaled)" method (lr × δ/δ0, App. F.2) beside its base: dashed
STOCHASTIC = ["action", "ext-force", "ext-force-perceptible"]  # Fig. 5's rows
PER_FIGURE = 4  # tasks per grid or Fig. 5 figure: readable at a page's width


def range_cell(values):
    """A table cell, "mean [min, max] (seeds)": the figures' interval, the one `verdict` compares; – for none."""
    return "–" if not values else "{:.1f} [{:.1f}, {:.1f}] ({})".format(*mean_range(values), len(values))


def evaluated_return(columns, fraction=0.1):
    """Fig. 4's DAU: the mean deterministic evaluation return over the last `fraction` of its physical time
    (the last evaluation if none lies there)."""
    x, returns = columns["physical_time_s"], columns.get("eval_return_mean", np.full(len(columns["physical_time_s"]),
                                                                                     math.nan))
    known = ~np.isnan(returns)
    window = known & (x >= x[-1] * (1 - fraction))
    return float(returns[window].mean()) if window.any() else float(returns[known][-1]) if known.any() else math.nan


def suptitle(fig, text, fontsize=9):
    """The figure's title, each line wrapped to the figure's width."""
    width = max(40, int(fig.get_figwidth() * 72 / (0.55 * fontsize)))  # characters of ~0.55 em
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")), fontsize=fontsize)


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


def small_axis(ax):
    """A panel among many: the grid, small ticks, at most three on x (100k, not 100000)."""
    style_axis(ax)
    ax.tick_params(labelsize=7)
    ax.xaxis.set_major_formatter(matplotlib.ticker.EngFormatter(sep=""))
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3))


def label_panels(axes, used, y_label):
    """Panels past the first `used` hidden; each row's first panel labelled."""
    for ax in axes.flat[used:]:
        ax.set_visible(False)
    for row in axes:
        row[0].set_ylabel(y_label, fontsize=8)


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
            small_axis(ax)
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
            small_axis(ax)
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
        small_axis(ax)
        ax.set_xlabel(X_LABELS.get(x_key, x_key), fontsize=7)
    label_panels(axes, len(tasks), "training return")
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
    label_panels(axes, len(tasks), "return at physical time T")
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
    label_panels(axes, len(tasks), "return over the last 10% of T")
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
    where the largest δ's mean is not above 0 (Reacher's and Ant's negative returns); no row for a task with one δ
    (a grid in flight); per learner with both, whether SAR is above FiGAR-C at the smallest δ (`verdict`). DAU is
    read by its evaluations, as Fig. 4 reads it, unless a --window score is given."""
    keys = [k for k in groups if k[1] == "deterministic"]
    methods = ordered({k[2] for k in keys}, METHODS)
    pairs = [(m, "FiGAR-C-" + m[4:]) for m in methods if m.startswith("SAR-") and "FiGAR-C-" + m[4:] in methods]
    heads = methods + [f"{sar} ≥ {figar} at δ_lowest" for sar, figar in pairs]
    lines = ["| task | δ_lowest / δ0 (ms) | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(heads)]
    for env_id in ordered({k[0] for k in keys}, TASKS):
        dts = sorted({k[3] for k in keys if k[0] == env_id})
        if len(dts) < 2:
            continue
        cells = []
        for method in methods:
            low, high = (groups.get((env_id, "deterministic", method, dt)) for dt in (dts[0], dts[-1]))
            if not low or not high:
                cells.append("–")
                continue
            read = score
            if method.startswith("DAU") and score is final_return:
                read = evaluated_return
            cells.append(invariance_cell(finals(low, read), finals(high, read)))
        for sar, figar in pairs:  # the paper's third claim, at δ_lowest only (FiGAR-C's 1M runs have no δ0)
            both = [groups.get((env_id, "deterministic", m, dts[0])) for m in (sar, figar)]
            cells.append(verdict(*(finals(runs, score) for runs in both)) if all(both) else "–")
        lines.append(f"| {env_id} | {dts[0] * 1000:g} / {dts[-1] * 1000:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)




def grid_kind(groups, args, setting, tasks):
    for part in chunks(tasks):
        yield (f"{setting}_grid_return_vs_{args.x}_{tasks_name(part)}",
               grid_figure(groups, setting, args.x, args.smooth, part))


def normalised_kind(groups, args, setting, tasks):
    if setting != "deterministic":  # R* and R_random are the deterministic task's
        return
    fig, shown = normalised_figure(groups, setting, read_random_returns(args.random_returns),
                                   f"R_random: {os.path.basename(args.random_returns)}")
    if fig is not None:
        yield f"{setting}_final_return_normalised_{tasks_name(shown)}", fig


def fig5_kind(groups, args):
    cells, lowest = fig5_groups(groups)
    if not cells:
        print("warning: no run of Fig. 5's settings (action, ext-force, ext-force-perceptible) found", file=sys.stderr)
    for part in chunks(ordered(lowest, TASKS)):
        yield f"fig5_return_vs_{args.x}_{tasks_name(part)}", fig5_figure(groups, args.x, args.smooth, part)


def fig4_kind(groups, args):
    tasks = ordered({env_id for env_id, _ in fig4_cells(groups)}, TASKS)
    if not tasks and not fig4_equal_cells(groups):
        print("warning: no DAU run found for Fig. 4 (dau.py; benchmark/fig4_dau.sh)", file=sys.stderr)
    for part in chunks(tasks, 2 * PER_FIGURE):
        yield f"fig4_final_return_at_equal_physical_time_{tasks_name(part)}", fig4_figure(groups, part)
    for part in chunks(ordered({env_id for env_id, _ in fig4_equal_cells(groups)}, TASKS), 2 * PER_FIGURE):
        yield f"fig4_equal_terms_{tasks_name(part)}", fig4_equal_figure(groups, part)


def fig4_tables(groups, args):
    texts = []
    if fig4_cells(groups):
        if fig4_unevaluated(groups):
            print(fig4_unevaluated(groups), file=sys.stderr)
        texts.append(fig4_table(groups))
    if fig4_equal_cells(groups):
        texts.append(fig4_equal_table(groups))
    return texts


def tacos_tables(groups, args):
    if not tacos_cells(groups):  # not among the default kinds: asked for
        print("note: --kinds tacos: no TaCoS-PPO run among these (benchmark/tacos.sh makes them"
              f"{'' if args.variants else '; --variants reads them'})", file=sys.stderr)
        return []
    return [tacos_table(groups)]


KINDS = {**plot.KINDS,  # plot.py's, then the paper's, each drawn and told here only
         "grid": Kind("<setting>_grid_return_vs_<x>_<tasks>: the paper's grid, a row per method, a column per task "
                      "(at most 4 a figure), a shade per δ, each seed's curve smoothed by --smooth", "setting",
                      grid_kind),
         "lowest": Kind("<setting>_lowest_dt_return_vs_<x>_<tasks>: App. F.2's and G's figures, a panel per task (four "
                        "a row) at its smallest δ, every method overlaid; with --x physical_time_s or wall_time_s",
                        "setting", lambda groups, args, setting, tasks: [(
                            f"{setting}_lowest_dt_return_vs_{args.x}_{tasks_name(tasks)}",
                            lowest_figure(groups, setting, args.x, args.smooth, tasks))]),
         "normalised": Kind("deterministic_final_return_normalised_<tasks>: (R − R_random) / (R* − R_random) per task, "
                            "R* the best method's mean final return at the task's largest δ (δ0), R_random a uniform "
                            "random policy's mean return at δ0 (benchmark/random_returns.py, --random-returns); 1 is "
                            "\"as good as the best at δ0\", 0 \"as good as acting at random\"; "
                            "deterministic setting only",
                            "setting", normalised_kind),
         "fig5": Kind("fig5_return_vs_<x>_<tasks>: the paper's Fig. 5, a row per stochastic setting (action, "
                      "ext-force, ext-force-perceptible), a column per task (at most 4 a figure), at each task's "
                      "smallest δ; prints a table of final returns with a verdict per task and setting", "learner",
                      fig5_kind, lambda groups, args: [fig5_table(groups)] if fig5_groups(groups)[0] else []),
         "fig4": Kind("fig4_final_return_at_equal_physical_time_<tasks>: the paper's Fig. 4, SAR-PPO against DAU per "
                      "task and δ at DAU's physical time T (dau.py --physical-time): DAU's deterministic evaluations "
                      "(dau.py --eval-every N; a run without any is left out, named in a warning, and a cell "
                      "without any says \"no evaluation\" and has no verdict) and SAR-PPO's training return over "
                      "the last 10% of T (hatched where a SAR-PPO run ends before T: read at its end); prints the "
                      "table with the decisions each used and each method's δ-invariance at T (as --ratios); and "
                      "fig4_equal_terms_<tasks>: Fig. 4 on equal terms, SAR-PPO trained to T (--physical-time T) "
                      "against DAU with normalisation, both read by their deterministic evaluations (bars) and by "
                      "their training returns (diamonds) over the last 10% of T; prints its table, both readings",
                      "all", fig4_kind, fig4_tables),
         "tacos": Kind("tacos_return_vs_decisions: SAR against TaCoS-PPO (benchmark/tacos.sh; with --variants), each "
                       "seed's final return against its decisions per episode, a panel per task and setting; prints "
                       "the table of final returns, decisions per episode and return − c·decisions, with verdicts",
                       "all", lambda groups, args: [("tacos_return_vs_decisions", tacos_figure(groups))]
                       if tacos_cells(groups) else [], tacos_tables)}
DEFAULT_KINDS = ["curves", "durations", "bars", "grid", "normalised"]
PRINTING = ("--table", "--summary", "--ratios")  # each prints its tables and draws nothing


def main(argv=None):
    p = plot.arguments(__doc__, KINDS, DEFAULT_KINDS)
    p.add_argument("--summary", action="store_true",
                   help="print only a row per task and δ: each method's final return")
    p.add_argument("--ratios", action="store_true", help="print only, per task and method, the final return at "
                   "the smallest δ over that at the largest, with the δ-invariance verdict")
    p.add_argument("--random-returns", default=RANDOM_RETURNS, metavar="CSV",
                   help="R_random per task, from benchmark/random_returns.py (default results/random_returns.csv)")
    args = p.parse_args(argv)
    plot.check(args, PRINTING, windowed=("--table", "--summary"))
    if "normalised" in args.kinds and not os.path.isfile(args.random_returns):
        fail(f"--random-returns: no file {args.random_returns}; benchmark/random_returns.py writes one")
    if "normalised" in args.kinds:  # read now too, so that a damaged CSV stops it before any figure
        try:
            read_random_returns(args.random_returns)
        except ValueError as e:
            fail(f"--random-returns: {e}")
    groups, score, what = plot.load(args)
    if args.summary:
        print(summary(groups, score, what))
        return 0
    if args.ratios:
        print(ratios(groups, score))
        return 0
    return plot.report(groups, score, what, args, KINDS)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `paper_figures.py ... | head` ends quietly
    promises.run(main)
