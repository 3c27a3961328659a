"""Variance of the policy-gradient estimator at a freshly initialised policy (App. F.1, Theorem 1).

    python benchmark/pg_variance.py                        # the full default table, resumable
    python benchmark/pg_variance.py --envs Hopper-v5 --dts original lowest --policies 1 --trajectories 20 --out /tmp/pg.csv
    python benchmark/pg_variance.py --plot-only            # the figure from the CSV
    python benchmark/pg_variance.py --table                # δ0 → δ_lowest per task and method, from the CSV

For each task × δ × method × policy seed: sar_ppo.py's Agent, initialised with torch seed = policy
seed; `--burn-in` trajectories warm up every running statistic (observation normalisation, reward
scaling, SAR's Δ statistics), which are then frozen, so that the next `--trajectories` are i.i.d.;
each of those gives one gradient vector G over the policy's parameters (actor_body, actor_mean,
actor_logstd, repeat_logstd; the critic only gives GAE its values), and
total_variance = tr V̂[G] = Σ over parameters of the sample variance (ddof 1) of G. Trajectories
run to the episode's end, as in training (see --max-time). Normalisations as in the scripts: on,
off for Ant.

  VPG      G = (Σ_i ∇ log π(a_i|s_i)) · R(τ) over δ-steps, no baseline, no reward-to-go (eq. 3);
           R(τ) = Σ_k γ_δ^k r_k of the δ-scaled rewards, without reward scaling.
  SAR-VPG  the same over SAR's decisions, (a_i, u_i) the whole sampled action, R(τ) the same return.
  PPO      G = −∇ Σ_i L_i, L_i the scripts' clipped policy loss of decision i at ratio 1
           (= Â_i ∇ log π(a_i|s_i)); Â = compute_gae (λ = 0.95, discount γ_δ^w per transition) on the
           scaled rewards, normalised over the trajectory (a one-decision trajectory gives G = 0). No
           value loss, no entropy, no grad-norm clipping. Summed over the trajectory like eq. 3: the
           scripts' mean over a minibatch of n decisions would divide G by n and its variance by n².
  SAR-PPO  the same over SAR's decisions (SAR with the scripts' defaults d_max = 0.5, t_max = 0.05 s).

VPG and PPO use the same trajectories of the same plain policy, SAR-VPG and SAR-PPO those of the same
SAR policy, and their rows share one wall_time_s (the seconds to measure that policy). Ten
trajectories run side by side, with one batched policy call per decision step.

Cost: the full default table (8 tasks × 4 δ × 4 methods × 3 policies) takes about 3.1 hours of CPU on the
2-core development machine: the five cheap tasks 4 minutes all told; HalfCheetah 58 minutes, Ant 74 and
Swimmer about 50 (estimated from its wall time), whose initial policies mostly run to the time limit
(20,000–25,000 δ-steps per trajectory at δ_lowest). Nothing is capped: the policies are measured in
`--workers` processes (default 2; the rows do not depend on it), smallest δ first, so the table takes about
1.6 hours of wall time there (estimated from the CPU times, not timed in one run). --max-time caps a
trajectory's physical time for quicker runs. `--policies 8` (the paper's count) takes about 8 hours of CPU.

Output: one CSV row per (env_id, dt, method, policy_seed), appended and flushed as it is computed;
rows already in the CSV are skipped, and a torn last line (a kill mid-write) is cut off before appending.
A CSV holds one set of --trajectories, --burn-in and --max-time (its columns), so that rows measured
otherwise are never averaged with new ones: other values need another --out. The committed
results/theory/pg_variance.csv is the default table: any other parameters need another --out too.
The figure (per task: bars over δ, one colour per method, log y, whiskers the policy seeds' min–max)
is redrawn at the end.
"""  # noqa: E501 - the examples above: each is one command line, as their test runs them
import argparse
import csv
import errno
import io
import math
import multiprocessing
import os
import signal
import sys
import time

import matplotlib
import numpy as np
import torch
from gymnasium.wrappers.utils import RunningMeanStd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import envs
import plot
import sar_ppo
from tools import ROOT, promises
from tools.promises import fail, save_figure, within

matplotlib.use("Agg")
import matplotlib.pyplot as plt

METHODS = ("VPG", "SAR-VPG", "PPO", "SAR-PPO")
COLUMNS = ["env_id", "dt", "method", "policy_seed", "total_variance", "trajectories", "decisions_mean",
           "delta_steps_mean", "wall_time_s", "burn_in", "max_time"]
PARAMETERS = ("trajectories", "burn_in", "max_time")  # the flags besides the key that change a row's numbers
COMMITTED = os.path.join(ROOT, "results", "theory", "pg_variance.csv")
MAX_D, MAX_T = 0.5, 0.05  # the scripts' defaults (App. J.3)
GAE_LAMBDA, CLIP_COEF, GAMMA = 0.95, 0.2, 0.99
SIDE_BY_SIDE = 10  # trajectories stepped together, one batched policy call per decision step


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--envs", nargs="+", default=list(envs.DT_TABLE), choices=list(envs.DT_TABLE), metavar="ENV",
                   help="tasks of Table 1 (default: all 8)")
    p.add_argument("--dts", nargs="+", default=list(envs.DT_LEVELS),
                   help="δ levels lowest|low|middle|original or seconds (default: the 4 of Table 1)")
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS), help="default: all four")
    p.add_argument("--policies", type=within(int, 1, 1000), default=3,
                   help="policy seeds 1..N (default 3; the paper: 8)")
    p.add_argument("--burn-in", type=within(int, 0, 10 ** 6), default=10,
                   help="trajectories that warm up the statistics (default 10)")
    p.add_argument("--trajectories", type=within(int, 2, 10 ** 6), default=100,
                   help="trajectories per estimate (default 100; a variance needs two)")
    p.add_argument("--max-time", type=within(float, 0, math.inf, open_low=True), default=math.inf,
                   help="cap on a trajectory's physical seconds, the same at every δ "
                        "(default inf: to the episode's end)")
    p.add_argument("--workers", type=within(int, 1, 256), default=min(2, os.cpu_count() or 1),
                   help="policies measured in parallel processes (default: 2, or 1 on a 1-core machine)")
    p.add_argument("--out", default=None, help="the CSV (default results/theory/pg_variance.csv, the committed "
                                               "table: only with the default parameters)")
    p.add_argument("--figure", default=None, help="default: the CSV's path with .png")
    p.add_argument("--plot-only", action="store_true", help="redraw the figure from the CSV, measure nothing")
    p.add_argument("--table", action="store_true", help="print δ0 → δ_lowest per task and method from the CSV (mean, "
                                                        "median, the policies' min–max), measure and draw nothing")
    args = p.parse_args(argv)
    args.cells = []
    for env_id in args.envs:
        for level in args.dts:
            try:
                args.cells.append((env_id, envs.resolve_dt(env_id, level)))
            except ValueError as e:
                name, _, message = str(e).partition(": ")
                fail(f"--{'envs' if name == 'env_id' else 'dts'}: {message}")
    args.plot_only = args.plot_only or args.table  # both read the CSV only
    measured = () if args.plot_only else ("envs", "dts", "methods", "policies") + PARAMETERS
    args.out, args.figure = promises.output_paths(p, args, COMMITTED, measured, COLUMNS)
    if args.plot_only and not os.path.isfile(args.out):
        fail(f"--out: no CSV at {args.out} to read (--plot-only and --table measure nothing)")
    args.parameters = parameters(vars(args))
    table = read_table(args.out)  # a damaged CSV is refused before any work
    made = {parameters(row) for row in table}
    if len(made) > 1 or made and not args.plot_only and made != {args.parameters}:
        fail(f"--out: {args.out} holds rows measured with {' and '.join(map(describe, sorted(made)))}; "
             f"name another --out for {describe(args.parameters)}")
    return args


def parameters(row):
    """The values of PARAMETERS, as the CSV writes them, of a row or of the flags."""
    return str(int(row["trajectories"])), str(int(row["burn_in"])), f"{float(row['max_time']):g}"


def describe(values):
    return " ".join(f"--{name.replace('_', '-')} {value}" for name, value in zip(PARAMETERS, values))


def total_variance(samples):
    """tr V̂[G]: the sum over coordinates of the sample variance (ddof 1) of the rows of `samples`."""
    samples = np.asarray(samples, dtype=np.float64)
    return float(samples.reshape(len(samples), -1).var(axis=0, ddof=1).sum())


def make_decision_envs(make_delta_env, sar, count):
    """`count` decision envs of the scripts (the δ-env, then the repetition; sar=False: one δ-step per
    decision) sharing one set of Δ statistics, and a switch for updating them. The one place that
    knows SafeActionRepetition's constructor and its `obs_stats` / `update_stats`."""
    decision_envs = [sar_ppo.SafeActionRepetition(make_delta_env(), MAX_D, MAX_T, repeat=sar) for _ in range(count)]
    for env in decision_envs[1:]:
        env.obs_stats = decision_envs[0].obs_stats

    def learn(on):
        for env in decision_envs:
            env.update_stats = on and sar
    return decision_envs, learn


class Statistics:
    """The scripts' running statistics of network inputs and of the discounted return (reward scaling)."""

    def __init__(self, obs_dim, norm_obs, norm_reward):
        self.obs_rms, self.ret_rms = RunningMeanStd(shape=(obs_dim,)), RunningMeanStd(shape=())
        self.norm_obs, self.norm_reward, self.learn = norm_obs, norm_reward, True

    def observe(self, raw_obs):
        return sar_ppo.normalize(raw_obs, self.obs_rms, self.norm_obs, update=self.learn)

    def scale(self, rewards):  # R / std of the discounted return, clipped to ±10
        if not self.norm_reward:
            return rewards
        return np.clip(rewards / np.sqrt(self.ret_rms.var + 1e-8), -10.0, 10.0)


def rollout(decision_envs, agent, stats, seeds, gamma_dt, max_steps):
    """One episode per seed, len(seeds) <= len(decision_envs) side by side. Per episode: the decisions'
    network inputs, sampled actions (unclipped), rewards R and lengths w in δ-steps, whether it ended by
    termination, and the network input of its final observation."""
    runs = [{"obs": [], "actions": [], "R": [], "w": [], "steps": 0, "ret": 0.0, "done": False} for _ in seeds]
    raw = [env.reset(seed=seed)[0] for env, seed in zip(decision_envs, seeds)]
    low, high = decision_envs[0].action_space.low, decision_envs[0].action_space.high
    active = list(range(len(seeds)))
    while active:
        x = np.stack([stats.observe(raw[j]) for j in active])
        with torch.inference_mode():
            actions = agent.dist(torch.as_tensor(x)).sample().numpy()
        for row, j in enumerate(active):
            run = runs[j]
            raw[j], R, terminated, truncated, info = decision_envs[j].step(np.clip(actions[row], low, high))
            run["obs"].append(x[row]), run["actions"].append(actions[row]), run["R"].append(R)
            run["w"].append(info["w"])
            run["steps"] += info["w"]
            if stats.learn and stats.norm_reward:
                run["ret"] = run["ret"] * gamma_dt ** info["w"] + R
                stats.ret_rms.update_from_moments(run["ret"], 0.0, 1)
            if terminated or truncated or run["steps"] >= max_steps:  # --max-time: a time limit
                run["done"], run["terminated"] = True, terminated
                run["final_obs"] = sar_ppo.normalize(raw[j], stats.obs_rms, stats.norm_obs)
        active = [j for j in active if not runs[j]["done"]]
    return [{k: np.asarray(v, dtype=np.float32) if isinstance(v, list) else v for k, v in run.items()} for run in runs]


def gradients(agent, run, stats, gamma_dt, kinds):
    """{kind: the gradient vector G on one trajectory} for kinds ⊆ {VPG, PPO} (see the docstring)."""
    params = [p for name, p in agent.named_parameters() if not name.startswith("critic")]
    obs, w = torch.as_tensor(run["obs"]), run["w"].astype(np.float64)
    logprob = agent.dist(obs).log_prob(torch.as_tensor(run["actions"])).sum(1)
    losses = {}
    if "VPG" in kinds:  # eq. (3): R(τ) = Σ_i γ_δ^{y_i} R_i, y_i the δ-steps before decision i
        R_tau = float(np.sum(gamma_dt ** (np.cumsum(w) - w) * run["R"]))
        losses["VPG"] = -logprob.sum() * R_tau
    if "PPO" in kinds:
        with torch.no_grad():
            values = agent.critic(obs).squeeze(1).numpy()
            final_value = 0.0 if run["terminated"] else agent.critic(torch.as_tensor(run["final_obs"])[None]).item()
        dones = np.zeros(len(w), np.float32)
        dones[-1] = 1.0
        advantages = sar_ppo.compute_gae(stats.scale(run["R"]), values, np.append(values[1:], final_value),
                                         gamma_dt ** w, dones, GAE_LAMBDA)
        advantages = torch.as_tensor(advantages - advantages.mean())
        if len(advantages) > 1:
            advantages = advantages / (advantages.std() + 1e-8)
        ratio = (logprob - logprob.detach()).exp()  # 1, with the gradient of log π
        losses["PPO"] = torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - CLIP_COEF, 1 + CLIP_COEF)).sum()
    out = {}
    for i, (kind, loss) in enumerate(losses.items()):
        grads = torch.autograd.grad(loss, params, retain_graph=i + 1 < len(losses))
        out[kind] = torch.cat([g.flatten() for g in grads]).double().numpy()
    return out


def measure(decision_envs, learn, agent, stats, seed, kinds, burn_in, trajectories, max_steps):
    """{kind: total variance} for kinds ⊆ {VPG, PPO}, and the mean decisions and δ-steps per trajectory,
    from `burn_in` + `trajectories` episodes with seeds 10,000·seed + j, run side by side in chunks."""
    gamma_dt = decision_envs[0].get_wrapper_attr("gamma_dt")
    seeds = [10_000 * seed + j for j in range(burn_in + trajectories)]
    chunks = lambda s: [s[i:i + len(decision_envs)] for i in range(0, len(s), len(decision_envs))]  # noqa: E731
    learn(True)  # burn-in: every running statistic is updated...
    stats.learn = True
    for chunk in chunks(seeds[:burn_in]):
        rollout(decision_envs, agent, stats, chunk, gamma_dt, max_steps)
    learn(False)  # ...then frozen, so that the measured trajectories are i.i.d.
    stats.learn = False
    samples, decisions, steps = {k: [] for k in kinds}, [], []
    for chunk in chunks(seeds[burn_in:]):
        for run in rollout(decision_envs, agent, stats, chunk, gamma_dt, max_steps):
            decisions.append(len(run["w"])), steps.append(run["steps"])
            for k, g in gradients(agent, run, stats, gamma_dt, kinds).items():
                samples[k].append(g)
    return {k: total_variance(v) for k, v in samples.items()}, float(np.mean(decisions)), float(np.mean(steps))


def read_table(path, repair=False):
    """The CSV's whole rows, checked; a torn last line (a kill mid-write) is left out, and with `repair`
    cut off the file, so that the next row starts a line of its own. A damaged CSV: one line, exit 2."""
    if not os.path.exists(path):
        return []
    try:
        with open(path, newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail(f"--out: {path} is unreadable ({e})")
    whole = text[:text.rfind("\n") + 1]
    if repair and whole != text:
        with open(path, "r+b") as f:
            f.truncate(len(whole.encode()))
    lines = whole.splitlines()
    if lines and lines[0].split(",") != COLUMNS:
        fail(f"--out: {path} is not a CSV of pg_variance.py (its header is not {','.join(COLUMNS)})")
    rows, seen = list(csv.DictReader(io.StringIO(whole))), set()
    for number, row in enumerate(rows, start=2):
        try:
            if None in row or None in row.values():
                raise ValueError(f"{len(COLUMNS)} fields expected")
            row_key = key(row["env_id"], row["dt"], row["method"], row["policy_seed"])
            parameters(row), [float(row[c]) for c in ("total_variance", "decisions_mean", "delta_steps_mean",
                                                      "wall_time_s")]
            if row_key in seen:
                raise ValueError(f"{row_key} again")
            seen.add(row_key)
        except ValueError as e:
            fail(f"--out: {path} is damaged at line {number} ({e}); move it aside or name another --out")
    return rows


def key(env_id, dt, method, seed):
    return env_id, f"{float(dt):g}", method, int(seed)


def short(x):  # 3 significant digits, 7.21e5 rather than 7.21e+05
    return f"{x:.3g}".replace("e+0", "e").replace("e+", "e")


def growth_table(rows):
    """Markdown: per task and method, tr V̂[G] at δ0 → δ_lowest by the mean and by the median over the policy
    seeds, each with its growth factor, the seeds' min–max at both δ, and the mean decisions per trajectory N."""
    lines = ["| task | method | δ0 → δ_lowest (ms) | policies | mean | median | min–max over policies | N |",
             "|---|---|---|---|---|---|---|---|"]
    growth = lambda a, b: f"×{b / a:.2g}" if b / a < 10 else f"×{b / a:.0f}"  # noqa: E731
    for env_id in plot.ordered({r["env_id"] for r in rows}, plot.TASKS):
        for method in METHODS:
            mine = [r for r in rows if r["env_id"] == env_id and r["method"] == method]
            dts = sorted({float(r["dt"]) for r in mine})
            if len(dts) < 2:
                continue
            ends = [[r for r in mine if float(r["dt"]) == dt] for dt in (dts[-1], dts[0])]  # δ0, δ_lowest
            v = [np.array([float(r["total_variance"]) for r in end]) for end in ends]
            n = [np.mean([float(r["decisions_mean"]) for r in end]) for end in ends]
            seeds = "/".join(dict.fromkeys(str(len(end)) for end in ends))
            mean, median = [x.mean() for x in v], [np.median(x) for x in v]
            lines.append(
                f"| {env_id} | {method} | {1e3 * dts[-1]:g} → {1e3 * dts[0]:g} | {seeds} | "
                f"{short(mean[0])} → {short(mean[1])} (**{growth(*mean)}**) | "
                f"{short(median[0])} → {short(median[1])} (**{growth(*median)}**) | "
                f"[{short(v[0].min())}, {short(v[0].max())}] → [{short(v[1].min())}, {short(v[1].max())}] | "
                f"{n[0]:.0f} → {n[1]:.0f} |")
    return "\n".join(lines)


def plot_figure(rows, path):
    env_ids = plot.ordered({r["env_id"] for r in rows}, plot.TASKS)  # the paper's order of tasks
    if not env_ids:
        return
    panel_rows = math.ceil(len(env_ids) / 4)  # at most 4 tasks a row, the rows filled evenly
    columns = math.ceil(len(env_ids) / panel_rows)
    fig, axes = plt.subplots(panel_rows, columns, figsize=(4 * columns, 3.2 * panel_rows), squeeze=False)
    # plot.py's colour per method; each VPG a lighter shade of its PPO
    colors = {"VPG": plot.method_color("PPO", 0.5), "SAR-VPG": plot.method_color("SAR-PPO", 0.5),
              "PPO": plot.method_color("PPO"), "SAR-PPO": plot.method_color("SAR-PPO")}
    for ax, env_id in zip(axes.flat, env_ids):
        mine = [r for r in rows if r["env_id"] == env_id]
        dts = sorted({float(r["dt"]) for r in mine}, reverse=True)
        width = 0.8 / len(METHODS)
        for i, method in enumerate(METHODS):
            for j, dt in enumerate(dts):
                values = [float(r["total_variance"]) for r in mine if r["method"] == method and float(r["dt"]) == dt]
                if not values:
                    continue
                mean, low, high = plot.mean_range(values)  # whiskers: the policy seeds' min–max
                x = j + (i - 1.5) * width
                ax.bar(x, mean, width, yerr=[[mean - low], [high - mean]], capsize=2, color=colors[method],
                       label=method if j == 0 else None)
                ax.plot(x, np.median(values), "o", markersize=4, markerfacecolor="white", markeredgecolor="black",
                        markeredgewidth=0.8, label="median" if i == j == 0 else None)
        ax.set_xticks(range(len(dts)), [f"{dt:g}" for dt in dts], fontsize=7)
        ax.set_yscale("log")
        ax.set_title(env_id, fontsize=9)
        ax.set_xlabel("δ (s)", fontsize=8)
        ax.set_ylabel("tr V̂[G]", fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    for ax in list(axes.flat)[len(env_ids):]:
        ax.axis("off")
    fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="lower center", ncol=len(METHODS) + 1, fontsize=8)
    save_figure(fig, "Total variance of the policy gradient at initialisation (App. F.1): bars the mean over "
                     "policy seeds, white dots the median, whiskers the min–max", path,
                bottom=0.4 / fig.get_figheight())  # 0.4 inch for the legend


def measure_policy(unit):
    """The CSV rows of one policy: unit = (env_id, dt, sar, seed, methods, args). Seeded by itself alone, so it
    gives the same rows in any worker and in any order."""
    env_id, dt, sar, seed, todo, args = unit
    torch.set_num_threads(1)
    start, cpu_start = time.time(), time.process_time()
    is_ant = env_id.startswith("Ant")  # the scripts' default: no normalisation on Ant (App. J.3)
    max_steps = math.ceil(args.max_time / dt - 1e-9) if args.max_time < math.inf else math.inf
    decision_envs, learn = make_decision_envs(lambda: envs.make_env(env_id, dt, GAMMA), sar, SIDE_BY_SIDE)
    env = decision_envs[0]
    torch.manual_seed(seed)
    agent = sar_ppo.Agent(env.observation_space.shape[0], env.unwrapped.action_space.shape[0], repeat=sar)
    stats = Statistics(env.observation_space.shape[0], not is_ant, not is_ant)
    variances, decisions, steps = measure(decision_envs, learn, agent, stats, seed,
                                          [m.replace("SAR-", "") for m in todo], args.burn_in, args.trajectories,
                                          max_steps)
    seconds = time.time() - start
    return [{"env_id": env_id, "dt": f"{dt:g}", "method": method, "policy_seed": seed,
             "total_variance": f"{variances[method.replace('SAR-', '')]:.6g}", "trajectories": args.trajectories,
             "burn_in": args.burn_in, "max_time": f"{args.max_time:g}",
             "decisions_mean": f"{decisions:.2f}", "delta_steps_mean": f"{steps:.2f}", "wall_time_s": f"{seconds:.2f}",
             "cpu_s": time.process_time() - cpu_start} for method in todo]


def append_row(fd, path, row):
    """One CSV row appended whole or not at all: a failed write (a full disk) is cut off the file again, so
    that the CSV keeps only whole rows and the next run measures that one again."""
    line = io.StringIO()
    csv.DictWriter(line, COLUMNS, extrasaction="ignore").writerow(row)
    data, size = line.getvalue().encode(), os.fstat(fd).st_size
    try:
        if os.write(fd, data) != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
    except OSError:
        os.ftruncate(fd, size)
        raise


def measure_all(args):
    """Measures every row the CSV lacks, appending each as it comes."""
    done = {key(r["env_id"], r["dt"], r["method"], r["policy_seed"]) for r in read_table(args.out, repair=True)}
    units = []  # one per policy: VPG and PPO share the plain policy's trajectories, SAR-VPG and SAR-PPO the SAR one's
    for env_id, dt in args.cells:
        for sar, methods in ((False, ("VPG", "PPO")), (True, ("SAR-VPG", "SAR-PPO"))):
            for seed in range(1, args.policies + 1):
                todo = [m for m in methods if m in args.methods and key(env_id, dt, m, seed) not in done]
                if todo:
                    units.append((env_id, dt, sar, seed, todo, args))
    units.sort(key=lambda unit: unit[1])  # smallest δ first: the longest trajectories, for an even split over workers
    if not os.path.exists(args.out) or os.path.getsize(args.out) == 0:
        promises.write_rows(args.out, COLUMNS, [])  # the header, whole
    workers = min(args.workers, len(units))
    pool = multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else None
    if pool:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` stops the workers on a kill too
    cpu_total, fd = 0.0, os.open(args.out, os.O_WRONLY | os.O_APPEND)
    try:
        for rows in pool.imap_unordered(measure_policy, units) if pool else map(measure_policy, units):
            cpu_total += rows[0]["cpu_s"]
            for row in rows:  # in the order the policies finish, each row on disk at once
                append_row(fd, args.out, row)
                print(f"{row['env_id']} δ={row['dt']} {row['method']} seed {row['policy_seed']}: "
                      f"tr V = {float(row['total_variance']):.4g}, {row['decisions_mean']} decisions, "
                      f"{row['delta_steps_mean']} δ-steps, {row['wall_time_s']} s ({cpu_total:.0f} s CPU so far)",
                      flush=True)
    finally:  # an error, Ctrl-C or a kill stops the workers too; after a full pass they are idle
        os.close(fd)
        if pool:
            pool.terminate()


def main(argv=None):
    args = parse_args(argv)
    if args.table:
        print(growth_table(read_table(args.out)))
        return
    if args.plot_only:
        plot_figure(read_table(args.out), args.figure)
        return
    with promises.locked("--out", os.path.dirname(os.path.abspath(args.out))):  # one process appends to a CSV
        measure_all(args)
        plot_figure(read_table(args.out), args.figure)


if __name__ == "__main__":
    if "--table" in sys.argv[1:]:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--table | head` ends quietly; measuring keeps Python's default
    promises.run(main)
