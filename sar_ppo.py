"""SAR-PPO: PPO with Safe Action Repetition (Park, Kim & Kim, NeurIPS 2021), in one file.

The policy picks an action a and a safe-region radius d; a is repeated every δ seconds until the
state leaves the safe region, Δ(s, s_i) ≥ d (eq. 7). The same script runs the paper's baselines
that share its code path: plain PPO at δ (--no-repeat), PPO (scaled) (--no-repeat --scale-lr) and
λ-SAR (--lambda-dt 0.5, eq. 8).

    python sar_ppo.py --env-id InvertedPendulum-v5 --dt lowest --seed 1
"""
import argparse
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from gymnasium.wrappers.utils import RunningMeanStd
from torch.distributions.normal import Normal

import envs


COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes",
           "return_mean", "eval_return_mean", "action_duration_mean_s", "safe_radius_mean",
           "policy_loss", "value_loss", "approx_kl", "clip_fraction", "entropy",
           "decisions_per_s", "env_steps_per_s"]


def fail(message):
    """SPEC "Bad input": one line naming the flag on stderr, exit status 2, nothing written."""
    print(f"{os.path.basename(sys.argv[0])}: error: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(2)


def dims(text):
    """--delta-dims "2,3" → [2, 3]."""
    return [int(part) for part in text.split(",")]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(
        prog, max_help_position=32))
    p.error = fail  # argparse's own errors (unknown flag, bad choice) as one line too
    p._negative_number_matcher = re.compile(r"^-(\d|\.\d|inf$|nan$)", re.I)  # so `--max-t -inf` is a value
    p.add_argument("--env-id", default="InvertedPendulum-v5", help="a MuJoCo v5 task of Table 1 (default InvertedPendulum-v5)")
    p.add_argument("--dt", default="lowest",
                   help="δ in seconds, or one of lowest|low|middle|original (Table 1; default lowest); at least "
                        "δ0/1000, where an episode already takes 1000 times its δ0-steps")
    p.add_argument("--seed", type=int, default=1, help="seeds torch, numpy and the environment (default 1)")
    p.add_argument("--total-steps", type=int, default=1_000_000, help="decision steps to train for, rounded up to whole updates (default 1,000,000)")
    # The method (Sec. 4.3-4.4)
    p.add_argument("--max-d", type=float, default=None,
                   help="max safe-region radius d_max: d = u·d_max (default 0.5 for l1, 1.0 for l2)")
    p.add_argument("--max-t", type=float, default=0.05,
                   help="cap on a repetition's duration in seconds, 'inf' removes it (default 0.05)")
    p.add_argument("--lambda-dt", type=float, default=None,
                   help="λ of λ-SAR (eq. 8): weight of the state distance against elapsed time")
    p.add_argument("--norm", choices=["l1", "l2"], default="l1",
                   help="distance Δ: ||ñ(s)-ñ(s_i)||_1/dim (paper) or ||·||_2/sqrt(dim) (App. H)")
    p.add_argument("--delta-dims", type=dims, default=None,
                   help="Δ over these observation dims only, divided by their count, e.g. 2,3: "
                        "InvertedPendulum's velocities (Fig. 6; default: every dim)")
    p.add_argument("--no-repeat", action="store_true", help="plain PPO: one δ-step per decision")
    p.add_argument("--scale-lr", action="store_true", help="PPO (scaled): lr·δ/δ0 (App. F.2)")
    # Stochastic and partially observable settings (Sec. 5.2, App. D)
    p.add_argument("--noise", choices=envs.NOISE_KINDS, default=None,
                   help="stochastic setting, drawn once per decision")
    p.add_argument("--noise-prob", type=float, default=None, help="p_act / p_ext (default 0.05)")
    p.add_argument("--noise-std", type=float, default=None,
                   help="σ_act / σ_ext / σ_ext2 (default: the paper's per-env value)")
    p.add_argument("--hold-penalty", action="store_true",
                   help="App. D: a penalty once an action is held for t_thres (per-env defaults)")
    # PPO (App. I.3, Table 3)
    p.add_argument("--learning-rate", type=float, default=1e-4, help="Adam's constant step size (default 1e-4)")
    p.add_argument("--adam-eps", type=float, default=1e-5, help="Adam's epsilon (default 1e-5)")
    p.add_argument("--num-steps", type=int, default=2048, help="decision steps per update (default 2048)")
    p.add_argument("--update-epochs", type=int, default=10, help="passes over a rollout per update (default 10)")
    p.add_argument("--minibatch-size", type=int, default=64, help="decisions per gradient step (default 64)")
    p.add_argument("--gamma", type=float, default=0.99, help="discount per δ0; γ_δ = γ^(δ/δ0) (default 0.99)")
    p.add_argument("--gae-lambda", type=float, default=0.95, help="GAE λ, per decision step (default 0.95)")
    p.add_argument("--clip-coef", type=float, default=0.2, help="PPO's ratio clipping ε (default 0.2)")
    p.add_argument("--vf-coef", type=float, default=0.5, help="weight of the value loss (default 0.5)")
    p.add_argument("--ent-coef", type=float, default=0.0, help="weight of the entropy bonus (default 0)")
    p.add_argument("--max-grad-norm", type=float, default=0.5, help="gradient-norm clipping (default 0.5)")
    p.add_argument("--norm-obs", action=argparse.BooleanOptionalAction, default=None,
                   help="running mean/std of network inputs (default: on, off for Ant)")
    p.add_argument("--norm-reward", action=argparse.BooleanOptionalAction, default=None,
                   help="divide rewards by the running std of the return (default: on, off for Ant)")
    # Evaluation, logs, checkpoints
    p.add_argument("--eval-every", type=int, default=0, help="updates between deterministic evaluations (default 0: none)")
    p.add_argument("--eval-episodes", type=int, default=5, help="episodes per evaluation (default 5)")
    p.add_argument("--log-dir", default="runs", help="runs are written to <log-dir>/<run-name>/ (default runs)")
    p.add_argument("--run-name", default=None, help="default: <env>__<method>__dt<δ>[__<noise>]__s<seed>")
    p.add_argument("--checkpoint-every", type=int, default=1, help="updates between checkpoints (default 1)")
    p.add_argument("--save-model", action="store_true", help="also save model.pt: the final agent and its input statistics")
    p.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = p.parse_args(argv)

    try:
        args.dt = envs.resolve_dt(args.env_id, args.dt)
    except ValueError as e:
        name, _, message = str(e).partition(": ")
        fail(f"--{name.replace('_', '-')}: {message}")
    if args.max_d is None:
        args.max_d = 1.0 if args.norm == "l2" else 0.5
    infinite = [k for k, v in vars(args).items() if isinstance(v, float) and not math.isfinite(v) and k != "max_t"]
    obs_dim = envs.make_env(args.env_id).observation_space.shape[0] if args.delta_dims else 0  # for --delta-dims
    log_dir = os.path.abspath(args.log_dir)
    while not os.path.exists(log_dir):  # the folder it will be made in
        log_dir = os.path.dirname(log_dir)
    # (flag, ok, message[, what to show instead of the flag's value]); every `ok` is computed before the first
    # check fails, so each must be safe on any input (hence `minibatch_size < 2 or` before a `%`)
    checks = [
        *[(f"--{k.replace('_', '-')}", False, "must be finite") for k in infinite],
        ("--max-d", args.max_d > 0, "must be > 0"),
        ("--max-t", 0 < args.max_t <= 1000 or args.max_t == math.inf, "must lie in (0, 1000] seconds, or be inf"),
        ("--lambda-dt", args.lambda_dt is None or 0 <= args.lambda_dt <= 1, "must lie in [0, 1]"),
        ("--lambda-dt", not (args.no_repeat and args.lambda_dt is not None), "has no meaning with --no-repeat"),
        ("--delta-dims", args.delta_dims is None or len(set(args.delta_dims)) == len(args.delta_dims) and
         all(0 <= i < obs_dim for i in args.delta_dims), f"must be distinct observation dims, 0 to {obs_dim - 1}"),
        ("--delta-dims", not (args.no_repeat and args.delta_dims), "has no meaning with --no-repeat"),
        ("--noise-prob", args.noise_prob is None or 0 <= args.noise_prob <= 1, "must lie in [0, 1]"),
        ("--noise-std", args.noise_std is None or 0 <= args.noise_std <= 1e6, "must lie in [0, 1e6]"),
        *[(flag, value is None or args.noise, "needs --noise") for flag, value in
          [("--noise-prob", args.noise_prob), ("--noise-std", args.noise_std)]],
        ("--hold-penalty", not args.hold_penalty or args.env_id.split("-")[0] in envs.HOLD_PENALTY,
         f"App. D defines it for {', '.join(envs.HOLD_PENALTY)} only", args.env_id),
        ("--seed", 0 <= args.seed < 2 ** 32, "must lie in [0, 2^32)"),
        ("--total-steps", 0 < args.total_steps <= 10 ** 10, "must lie in [1, 10^10]"),
        ("--num-steps", 0 < args.num_steps <= 2 ** 20, "must lie in [1, 2^20]: a rollout is held in memory"),
        ("--minibatch-size", 1 < args.minibatch_size <= args.num_steps, "must lie in [2, --num-steps]"),
        ("--minibatch-size", args.minibatch_size < 2 or args.num_steps % args.minibatch_size != 1,
         "leaves a last minibatch of one decision, whose advantages have no std"),
        ("--update-epochs", args.update_epochs > 0, "must be > 0"),
        ("--learning-rate", args.learning_rate > 0, "must be > 0"),
        ("--adam-eps", args.adam_eps > 0, "must be > 0"),
        ("--gamma", 0 < args.gamma <= 1, "must lie in (0, 1]"),
        ("--gae-lambda", 0 <= args.gae_lambda <= 1, "must lie in [0, 1]"),
        ("--clip-coef", args.clip_coef > 0, "must be > 0"),
        ("--vf-coef", args.vf_coef > 0, "must be > 0"),
        ("--ent-coef", args.ent_coef >= 0, "must be >= 0"),
        ("--max-grad-norm", args.max_grad_norm > 0, "must be > 0"),
        ("--eval-every", args.eval_every >= 0, "must be >= 0"),
        ("--eval-episodes", args.eval_episodes > 0, "must be > 0"),
        ("--checkpoint-every", args.checkpoint_every > 0, "must be > 0"),
        ("--threads", 0 < args.threads <= os.cpu_count(), f"must lie in [1, {os.cpu_count()}], this machine's cores"),
        ("--run-name", args.run_name is None or (args.run_name not in ("", ".", "..") and "/" not in args.run_name),
         "must be a folder name, without / or .."),
        ("--log-dir", os.path.isdir(log_dir) and os.access(log_dir, os.W_OK), "must be (or be made in) a writable folder"),
    ]
    for flag, ok, message, *shown in checks:
        if not ok:
            value = shown[0] if shown else getattr(args, flag[2:].replace("-", "_"))
            fail(f"{flag}: {message}, got {value!r}" if isinstance(value, str) else f"{flag}: {message}, got {value}")
    is_ant = args.env_id.startswith("Ant")  # the paper normalizes everywhere but Ant (App. I.3)
    args.norm_obs = not is_ant if args.norm_obs is None else args.norm_obs
    args.norm_reward = not is_ant if args.norm_reward is None else args.norm_reward
    if args.no_repeat:
        args.method, slug = ("PPO (scaled)", "ppo-scaled") if args.scale_lr else ("PPO", "ppo")
        variants = []
    else:
        args.method, slug = ("SAR-PPO", "sar") if args.lambda_dt is None else ("λ-SAR-PPO", "lambda-sar")
        # (name, run-name part) of the paper's variants (App. H), so that runs and plots keep them apart
        variants = [v for v, on in [
            (("l2", "l2"), args.norm == "l2"),
            ((f"Δ on dims {','.join(map(str, args.delta_dims or []))}", f"delta{'-'.join(map(str, args.delta_dims or []))}"),
             args.delta_dims is not None),
            ((f"d_max={args.max_d:g}", f"maxd{args.max_d:g}"), args.max_d != (1.0 if args.norm == "l2" else 0.5)),
            (("no limit on t", "no-limit-t") if args.max_t == math.inf else (f"t_max={args.max_t:g}", f"maxt{args.max_t:g}"),
             args.max_t != 0.05),
            ((f"λ={args.lambda_dt}", f"lambda{args.lambda_dt}"), args.lambda_dt not in (None, 0.5)),
            (("scaled lr", "scaled-lr"), args.scale_lr)] if on]
    args.method += f" ({', '.join(name for name, _ in variants)})" if variants else ""
    args.run_name = args.run_name or run_name(args, "-".join([slug] + [part for _, part in variants]))
    return args


def run_name(args, method_slug):
    noise = f"__{args.noise}" if args.noise else ""
    noise += f"-p{args.noise_prob:g}" if args.noise_prob is not None else ""
    noise += f"-std{args.noise_std:g}" if args.noise_std is not None else ""
    noise += "__hold-penalty" if args.hold_penalty else ""
    return f"{args.env_id}__{method_slug}__dt{args.dt:g}{noise}__s{args.seed}"


RUN_FILES = ("config.json", "progress.csv", "checkpoint.pt")
CODE = ("sar_ppo.py", "figar_ppo.py", "envs.py", "requirements.txt")  # what makes a run's numbers
# Flags that may differ when a run is resumed; every other one must be the same.
RESUMABLE_CHANGES = {"total_steps", "eval_every", "eval_episodes", "log_dir", "run_name", "checkpoint_every",
                     "save_model", "resume", "threads"}


# ---------------------------------------------------------------- the action repetition
def env_attr(env, name, default=None):
    """`name` of the outermost layer of `env` that has it (a wrapper or the env itself), else `default`."""
    try:
        return env.get_wrapper_attr(name)
    except AttributeError:
        return default


class SafeActionRepetition(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Safe action repetition (Sec. 4.4) around any gymnasium env; one `step` is one decision.

    The action is [a, u_raw], u = (u_raw + 1)/2 ∈ [0, 1]; `a` is repeated every δ and the repetition
    stops after the first δ-step where the episode ends, k·δ ≥ max_t, or the state has left the safe
    region: Δ(s, s_i) ≥ d = u·max_d (eq. 7), or for λ-SAR λ·Δ/max_d + (1-λ)·k·δ/max_t ≥ u (eq. 8).
    Δ normalises states by running statistics kept here (`update_stats = False` freezes them, e.g. to
    evaluate); `delta_dims` restricts it to some observation dims, divided by their count. With
    repeat=False (plain PPO) the action has no u and a decision is one δ-step.
    `step` returns R = Σ_k γ_δ^k r_k over the k δ-steps it took and info["w"] = k. A learner must
    discount what follows a decision by γ_δ^w (eq. 6), e.g. in GAE: R_t + γ_δ^(w_t)·V(s_t+1) − V(s_t).
    One that ignores w and discounts every decision by the same γ counts a long repetition as one
    step: its horizon in seconds then depends on the durations it picks and on δ, it favours long
    repetitions for that alone, and the δ-invariance the method is for is lost.
    δ (`dt`, seconds per step of `env`) and γ_δ (`gamma_dt`, discount per step of `env`) are the
    arguments if given, else the env's own (envs.DtEnv has both, many gymnasium envs a `dt`), else
    γ_δ = 0.99. Needs Box observations and actions; nothing else of this project.
    """

    def __init__(self, env, max_d=0.5, max_t=0.05, lambda_dt=None, norm="l1", repeat=True, dt=None, gamma_dt=None,
                 delta_dims=None):
        gym.utils.RecordConstructorArgs.__init__(self, max_d=max_d, max_t=max_t, lambda_dt=lambda_dt, norm=norm,
                                                 repeat=repeat, dt=dt, gamma_dt=gamma_dt, delta_dims=delta_dims)
        gym.Wrapper.__init__(self, env)
        self.dt = dt if dt is not None else env_attr(env, "dt")
        self.gamma_dt = gamma_dt if gamma_dt is not None else env_attr(env, "gamma_dt", 0.99)
        if self.dt is None or not all(isinstance(space, gym.spaces.Box) for space in (env.observation_space, env.action_space)):
            raise ValueError("env: needs Box observation and action spaces, and a `dt` (or pass dt=)")
        dim = env.observation_space.shape[0]
        if delta_dims is not None and not (delta_dims and len(set(delta_dims)) == len(delta_dims) and
                                           all(0 <= i < dim for i in delta_dims)):
            raise ValueError(f"delta_dims: must be distinct observation dims, 0 to {dim - 1}, got {delta_dims}")
        self.max_d, self.max_t, self.lambda_dt, self.norm, self.repeat = max_d, max_t, lambda_dt, norm, repeat
        self.delta_dims = delta_dims  # None: Δ over every observation dim
        self.delta_mask = np.isin(np.arange(dim), delta_dims or [])
        # k·δ ≥ max_t as an integer test on k (no float drift); plain PPO takes one δ-step
        if not repeat:
            self.max_repeats = 1
        else:
            self.max_repeats = math.ceil(max_t / self.dt - 1e-9) if max_t < math.inf else math.inf
        if repeat:
            low, high = env.action_space.low, env.action_space.high
            self.action_space = gym.spaces.Box(np.append(low, np.float32(-1)), np.append(high, np.float32(1)))
        # Running mean/var of raw δ-level observations for ñ(s), updated in training, frozen in
        # evaluation; plain PPO has no Δ and keeps none.
        self.obs_stats = RunningMeanStd(shape=env.observation_space.shape)
        self.update_stats = repeat

    def reset(self, **kwargs):
        self.obs, info = self.env.reset(**kwargs)
        if self.update_stats:
            self.obs_stats.update_from_moments(self.obs, 0.0, 1)  # one sample: mean x, var 0, count 1
        return self.obs, info

    def step(self, action):
        a, u = (action[:-1], (action[-1] + 1) / 2) if self.repeat else (action, 0.0)
        d = u * self.max_d
        # ñ(s) = (s - mean)/(sqrt(var) + 1e-3): the mean cancels in ñ(s) - ñ(s_i), so Δ is a
        # weighted norm of s - s_i with weights fixed for the whole repetition.
        dim = self.obs.shape[0] if self.delta_dims is None else len(self.delta_dims)
        weight = 1.0 / ((np.sqrt(self.obs_stats.var) + 1e-3) * (dim if self.norm == "l1" else math.sqrt(dim)))
        if self.delta_dims is not None:
            weight = weight * self.delta_mask  # Δ over the listed dims only (Fig. 6)
        s_i, seen = self.obs, []
        R, discount, k, undiscounted = 0.0, 1.0, 0, 0.0
        while True:
            obs, r, terminated, truncated, info = self.env.step(a)
            R += discount * r
            discount *= self.gamma_dt
            undiscounted += r
            k += 1
            seen.append(obs)  # a fresh array from MuJoCo: appending costs no copy
            if terminated or truncated or k >= self.max_repeats:
                break
            if self.norm == "l1":
                distance = np.abs(obs - s_i) @ weight
            else:
                distance = math.sqrt(np.square((obs - s_i) * weight).sum())
            if self.lambda_dt is None:
                if distance >= d:  # eq. (7)
                    break
            elif self.lambda_dt * distance / self.max_d + (1 - self.lambda_dt) * k * self.dt / self.max_t >= u:  # eq. (8)
                break
        if self.update_stats:  # fold the repetition's observations in once, when it ends
            # np.mean and np.var written out: the same numbers at half the cost of obs_stats.update()
            batch = np.asarray(seen)
            mean = batch.sum(0) / k
            self.obs_stats.update_from_moments(mean, np.square(batch - mean).sum(0) / k, k)
        self.obs = obs
        # logged as safe_radius_mean: d for SAR; for λ-SAR the threshold u of eq. (8)
        info["w"], info["safe_radius"], info["undiscounted_reward"] = k, d if self.lambda_dt is None else u, undiscounted
        return obs, R, terminated, truncated, info


# ---------------------------------------------------------------- the agent
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate actor and critic MLPs, 2×256 ReLU (App. I.3). Gaussian policy: a state-independent
    log-std for the K task dims, a state-dependent one for the repetition dim."""

    def __init__(self, obs_dim, num_actions, repeat):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 1), std=1.0))
        self.actor_body = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU())
        self.actor_mean = layer_init(nn.Linear(256, num_actions + int(repeat)), std=0.01)
        self.actor_logstd = nn.Parameter(torch.zeros(num_actions))
        self.repeat_logstd = layer_init(nn.Linear(256, 1), std=0.01) if repeat else None

    def dist(self, x):
        hidden = self.actor_body(x)
        logstd = self.actor_logstd.expand(x.shape[0], -1)
        if self.repeat_logstd is not None:
            logstd = torch.cat([logstd, self.repeat_logstd(hidden)], dim=1)
        # validate_args=False: checking the arguments costs more than the Gaussian itself at these sizes
        return Normal(self.actor_mean(hidden), logstd.clamp(-20, 2).exp(), validate_args=False)


def normalize(x, stats, on, clip=10.0):
    """Running mean/std normalization, clipped to ±10 (SB3's VecNormalize)."""
    if not on:
        return np.asarray(x, dtype=np.float32)
    return np.clip((x - stats.mean) / np.sqrt(stats.var + 1e-8), -clip, clip).astype(np.float32)


def compute_gae(rewards, values, next_values, discounts, dones, gae_lambda):
    """GAE where a transition's next state is w δ-steps away: its discount is γ_δ^w (eq. 6).
    `next_values` is V(s') (0 after a termination, V(final obs) after a time-limit truncation);
    `dones` cuts the λ-chain at either."""
    deltas = rewards + discounts * next_values - values
    advantages = np.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        last = deltas[t] + discounts[t] * gae_lambda * (1.0 - dones[t]) * last
        advantages[t] = last
    return advantages


# ---------------------------------------------------------------- logs and checkpoints
def stats_state(stats):
    return {"mean": torch.as_tensor(stats.mean), "var": torch.as_tensor(stats.var), "count": float(stats.count)}


def load_stats(stats, state):
    stats.mean, stats.var, stats.count = state["mean"].numpy(), state["var"].numpy(), state["count"]


def save_atomic(path, data):
    """Write `data` (str or bytes) to a temporary file, then rename it: a kill mid-write leaves the
    previous file whole, and a failed write (a full disk) is an OSError."""
    Path(path + ".tmp").write_bytes(data if isinstance(data, bytes) else data.encode())
    os.replace(path + ".tmp", path)


def csv_text(rows, header=False):
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS)
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def code_version():
    """(git commit, whether the training code — sar_ppo.py, figar_ppo.py, envs.py, requirements.txt — has
    uncommitted changes), or (None, None) outside a git checkout."""
    git = lambda *a: subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), *a],  # noqa: E731
                                    capture_output=True, text=True, check=True).stdout.strip()
    try:
        return git("rev-parse", "HEAD"), git("status", "--porcelain", "--", *CODE) != ""
    except (OSError, subprocess.CalledProcessError):
        return None, None


def resume_point(args, run_dir):
    """(checkpoint, the rows of progress.csv up to it, its config) that the run continues from;
    (None, [], {}) for a new run. Refuses with one line, before any file is touched, whatever would erase rows or continue a
    run wrongly; a run whose rows already reach --total-steps is finished: it says so and exits 0."""
    config_path, progress_path, checkpoint_path = (os.path.join(run_dir, f) for f in RUN_FILES)
    if os.path.exists(run_dir) and not os.path.isdir(run_dir):
        fail(f"--run-name: {run_dir} is a file, not a run folder")
    if os.path.exists(progress_path) and not args.resume:
        fail(f"--run-name: {run_dir} exists; pass --resume to continue it or choose another --run-name")
    if not args.resume:
        return None, [], {}
    has_checkpoint, saved = os.path.exists(checkpoint_path), {}
    if has_checkpoint or os.path.exists(config_path):
        try:
            with open(config_path) as f:
                saved = json.load(f)
            changed = [k for k in vars(args) if k not in RESUMABLE_CHANGES and saved.get(k) != getattr(args, k)]
        except (OSError, ValueError, AttributeError) as e:
            fail(f"--resume: cannot read {config_path} ({e}), so the run's flags are unknown; restore it or move the run away")
        if changed:
            fail(f"--resume: {run_dir} was made with other {', '.join('--' + k.replace('_', '-') for k in changed)}; "
                 f"pass the same flags or choose another --run-name")
    rows, whole, n = [], 0, args.num_steps
    if os.path.exists(progress_path):
        try:
            with open(progress_path, newline="") as f:
                text = f.read()
            reader = csv.DictReader(io.StringIO(text))
            rows = list(reader)
        except (OSError, ValueError, csv.Error) as e:
            fail(f"--resume: cannot read {progress_path} ({e})")
        if reader.fieldnames != COLUMNS:
            fail(f"--resume: {progress_path} is not a progress.csv of this script (its header differs)")
        for r in rows:  # whole rows at n, 2n, 3n, ... decisions
            if None in r or None in r.values() or r["decision_steps"] != str(n * (whole + 1)):
                break
            whole += 1
        if rows and whole == len(rows) and not text.endswith("\n"):
            whole -= 1  # the last row was cut short
        if len(rows) - whole > 1:
            fail(f"--resume: {progress_path} is damaged after update {whole}: rows are torn, missing or out of order")
    done = whole * n
    if done >= args.total_steps:
        print(f"{run_dir} is finished: {done:,} decisions reach --total-steps {args.total_steps:,}; nothing to do")
        sys.exit(0)
    if not has_checkpoint:
        if rows:
            fail(f"--resume: {run_dir} has {whole} updates but no checkpoint.pt to continue from (a clone has "
                 f"none: they are not in git); leave it as it is, or move it away to train it anew")
        return None, [], {}
    try:
        state = torch.load(checkpoint_path, weights_only=True)
        saved_steps = int(state["counters"]["decision_steps"])
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file fails in many ways, each one line here
        fail(f"--resume: {checkpoint_path} is not a checkpoint of this script ({type(e).__name__}: {e})")
    if saved_steps > done:  # a torn last row may only lie after the checkpoint, where rows are replaced
        fail(f"--resume: {progress_path} has whole rows up to {done:,} decisions only, its checkpoint is at "
             f"{saved_steps:,}; move the run away to train it anew")
    return state, rows[:saved_steps // n], saved


if __name__ == "__main__":
    args = parse_args()
    run_dir = os.path.join(args.log_dir, args.run_name)
    config_path, progress_path, checkpoint_path = (os.path.join(run_dir, f) for f in RUN_FILES)
    counters = {"update": 0, "decision_steps": 0, "env_steps": 0, "episodes": 0, "wall_time_s": 0.0}

    def report(kind, error, traceback):  # Ctrl-C or a failed write (a full disk): one line, and the run resumes
        if not issubclass(kind, (KeyboardInterrupt, OSError)):
            return sys.__excepthook__(kind, error, traceback)
        print(f"{os.path.basename(sys.argv[0])}: {'interrupted' if kind is KeyboardInterrupt else error} after update "
              f"{counters['update']}; continue it with the same command plus --resume", file=sys.stderr)
    sys.excepthook = report
    state, rows, saved_config = resume_point(args, run_dir)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the policy's samples and the network init
    rng = np.random.default_rng(args.seed)  # minibatch order; the env has its own, seeded by reset

    # Environment: δ-env, then the repetition, then the perturbation outside it (one draw per decision).
    def make_decision_env():
        env = envs.make_env(args.env_id, args.dt, args.gamma)
        if args.hold_penalty:
            env = envs.HoldPenalty(env)  # App. D: counts holding time at δ-level, inside the repetition
        repetition = env = SafeActionRepetition(env, args.max_d, args.max_t, args.lambda_dt, args.norm,
                                                repeat=not args.no_repeat, delta_dims=args.delta_dims)
        if args.noise:
            env = envs.Perturb(env, args.noise, args.noise_prob, args.noise_std)
        return env, repetition

    env, repetition = make_decision_env()
    dt, dt0, gamma_dt = repetition.dt, envs.DT_TABLE[args.env_id][-1], repetition.gamma_dt
    obs_dim = env.observation_space.shape[0]
    action_low, action_high = env.action_space.low, env.action_space.high
    num_actions = env.unwrapped.action_space.shape[0]
    learning_rate = args.learning_rate * (dt / dt0 if args.scale_lr else 1.0)

    agent = Agent(obs_dim, num_actions, repeat=not args.no_repeat)
    # fused: one kernel for all parameters instead of ~10 small ops per tensor (same update rule)
    optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=args.adam_eps, fused=True)
    obs_rms = RunningMeanStd(shape=(obs_dim,))  # network inputs
    ret_rms = RunningMeanStd(shape=())  # discounted return, for reward scaling
    if state is not None:
        try:
            agent.load_state_dict(state["agent"])
            optimizer.load_state_dict(state["optimizer"])
            load_stats(obs_rms, state["obs_rms"])
            load_stats(ret_rms, state["ret_rms"])
            load_stats(repetition.obs_stats, state["repetition_stats"])
            torch.set_rng_state(state["torch_rng"])
            rng.bit_generator.state = state["numpy_rng"]
        except (KeyError, RuntimeError, ValueError, TypeError) as e:
            fail(f"--resume: {checkpoint_path} does not fit this run ({type(e).__name__}: {e})")
        counters = state["counters"]
        print(f"resumed {run_dir} at update {counters['update']}, {counters['decision_steps']} decisions")

    def save_checkpoint():
        checkpoint = io.BytesIO()  # in memory first: torch.save turns a failed write into a RuntimeError
        torch.save({
            "agent": agent.state_dict(), "optimizer": optimizer.state_dict(),
            "obs_rms": stats_state(obs_rms), "ret_rms": stats_state(ret_rms),
            "repetition_stats": stats_state(repetition.obs_stats), "counters": counters,
            "torch_rng": torch.get_rng_state(), "numpy_rng": rng.bit_generator.state}, checkpoint)
        save_atomic(checkpoint_path, checkpoint.getvalue())

    os.makedirs(run_dir, exist_ok=True)
    # Rows written after the checkpoint are replaced, not repeated.
    save_atomic(progress_path, csv_text(rows, header=True))
    commit, dirty = code_version()
    config = {**vars(args), "env_id": args.env_id, "method": args.method, "dt": dt, "dt0": dt0,
              "gamma_dt": gamma_dt, "seed": args.seed, "learning_rate_used": learning_rate,
              "resumed_at_decision_steps": counters["decision_steps"] or None,  # flags of the latest (re)start
              "code": saved_config.get("code", []) + [{"decision_steps": counters["decision_steps"], "git_commit": commit,
                                                "git_dirty": dirty}],  # provenance of every (re)start
              "versions": {p: version(p) for p in ("torch", "gymnasium", "mujoco", "numpy")}}
    save_atomic(config_path, json.dumps(config, indent=2))
    if state is None:
        save_checkpoint()  # update 0: a run killed before its first update's checkpoint resumes from the start

    # Rollout storage (decision level)
    n = args.num_steps
    obs_buf = np.zeros((n, obs_dim), np.float32)
    actions_buf = np.zeros((n, env.action_space.shape[0]), np.float32)
    logprobs_buf = np.zeros(n, np.float32)
    rewards_buf = np.zeros(n, np.float32)
    discounts_buf = np.zeros(n, np.float32)  # γ_δ^w
    terminated_buf = np.zeros(n, np.float32)
    truncated_buf = np.zeros(n, np.float32)
    final_obs_buf = np.zeros((n, obs_dim), np.float32)  # for bootstrapping truncations
    durations_buf = np.zeros(n, np.int64)  # w, in δ-steps
    radius_buf = np.zeros(n, np.float32)

    def observe(raw_obs):  # the network input of a training step: updates obs_rms, then normalizes
        if args.norm_obs:
            obs_rms.update_from_moments(raw_obs, 0.0, 1)  # one sample; cheaper than update()'s np.var
        return normalize(raw_obs, obs_rms, args.norm_obs)

    eval_env, eval_repetition = make_decision_env() if args.eval_every else (None, None)

    def evaluate():
        """Deterministic (mean-action) episodes with every running statistic frozen."""
        eval_repetition.obs_stats, eval_repetition.update_stats = repetition.obs_stats, False
        returns = []
        for episode in range(args.eval_episodes):
            raw_obs, _ = eval_env.reset(seed=args.seed + 10_000 + episode)
            total, done = 0.0, False
            while not done:
                x = torch.as_tensor(normalize(raw_obs, obs_rms, args.norm_obs))[None]
                with torch.no_grad():
                    mean = agent.dist(x).mean[0].numpy()
                raw_obs, _, terminated, truncated, info = eval_env.step(np.clip(mean, action_low, action_high))
                total += info["undiscounted_reward"]
                done = terminated or truncated
            returns.append(total)
        return float(np.mean(returns))

    num_updates = math.ceil(args.total_steps / n)
    raw_obs, _ = env.reset(seed=args.seed + 1_000 * counters["update"])  # a resumed run starts a fresh episode
    obs = observe(raw_obs)
    episode_return, discounted_return = 0.0, 0.0
    start = time.time() - counters["wall_time_s"]
    while counters["update"] < num_updates:
        update_start = time.time()
        finished_returns = []
        # ---------------- rollout: n decision steps
        for step in range(n):
            obs_buf[step] = obs
            with torch.inference_mode():  # no_grad without autograd's bookkeeping: cheaper per decision
                dist = agent.dist(torch.as_tensor(obs)[None])
                action = dist.sample()
                logprobs_buf[step] = dist.log_prob(action).sum()
            action = action[0].numpy()
            actions_buf[step] = action  # the log-probability is of the unclipped sample
            raw_obs, R, terminated, truncated, info = env.step(np.clip(action, action_low, action_high))
            w = info["w"]
            discounts_buf[step] = gamma_dt ** w
            durations_buf[step] = w
            radius_buf[step] = info["safe_radius"]
            if args.norm_reward:  # R / std of the discounted return, clipped to ±10
                discounted_return = discounted_return * gamma_dt ** w + R
                ret_rms.update_from_moments(discounted_return, 0.0, 1)
                R = np.clip(R / np.sqrt(ret_rms.var + 1e-8), -10.0, 10.0)
            rewards_buf[step] = R
            terminated_buf[step], truncated_buf[step] = terminated, truncated
            episode_return += info["undiscounted_reward"]
            if terminated or truncated:
                if truncated and not terminated:
                    final_obs_buf[step] = normalize(raw_obs, obs_rms, args.norm_obs)
                finished_returns.append(episode_return)
                episode_return, discounted_return = 0.0, 0.0
                raw_obs, _ = env.reset()
            obs = observe(raw_obs)
        counters["decision_steps"] += n
        counters["env_steps"] += int(durations_buf.sum())
        counters["episodes"] += len(finished_returns)
        rollout_time = time.time() - update_start

        # ---------------- GAE over decision steps (eq. 6)
        with torch.no_grad():
            values = agent.critic(torch.as_tensor(obs_buf)).squeeze(1).numpy()
            last_value = agent.critic(torch.as_tensor(obs)[None]).item()
            final_values = agent.critic(torch.as_tensor(final_obs_buf)).squeeze(1).numpy()
        next_values = np.append(values[1:], last_value)
        next_values = np.where(truncated_buf > 0, final_values, next_values)  # a time limit is not a termination
        next_values = np.where(terminated_buf > 0, 0.0, next_values)
        dones = np.maximum(terminated_buf, truncated_buf)
        advantages = compute_gae(rewards_buf, values, next_values, discounts_buf, dones, args.gae_lambda)
        returns = advantages + values

        # ---------------- PPO update
        b_obs, b_actions = torch.as_tensor(obs_buf), torch.as_tensor(actions_buf)
        b_logprobs, b_advantages = torch.as_tensor(logprobs_buf), torch.as_tensor(advantages)
        b_returns = torch.as_tensor(returns)
        clip_fractions, approx_kls, pg_losses, v_losses, entropies = [], [], [], [], []
        for epoch in range(args.update_epochs):
            order = rng.permutation(n)
            for begin in range(0, n, args.minibatch_size):
                mb = torch.as_tensor(order[begin:begin + args.minibatch_size])
                mb_obs = b_obs[mb]
                dist = agent.dist(mb_obs)
                newlogprob = dist.log_prob(b_actions[mb]).sum(1)
                entropy = dist.entropy().sum(1)
                newvalue = agent.critic(mb_obs).squeeze(1)
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kls.append(((ratio - 1) - logratio).mean())
                    clip_fractions.append(((ratio - 1.0).abs() > args.clip_coef).float().mean())
                mb_advantages = b_advantages[mb]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss = torch.max(-mb_advantages * ratio,
                                    -mb_advantages * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                pg_losses.append(pg_loss.detach()), v_losses.append(v_loss.detach())
                entropies.append(entropy.detach().mean())
        counters["update"] += 1

        # ---------------- logs
        update_time = time.time() - update_start
        eval_return = evaluate() if args.eval_every and counters["update"] % args.eval_every == 0 else None
        counters["wall_time_s"] = time.time() - start
        row = {
            "decision_steps": counters["decision_steps"], "env_steps": counters["env_steps"],
            "physical_time_s": round(counters["env_steps"] * dt, 6),
            "wall_time_s": round(counters["wall_time_s"], 3), "episodes": counters["episodes"],
            "return_mean": float(np.mean(finished_returns)) if finished_returns else "",
            "eval_return_mean": "" if eval_return is None else eval_return,
            "action_duration_mean_s": float(durations_buf.mean() * dt),
            "safe_radius_mean": "" if args.no_repeat else float(radius_buf.mean()),
            "policy_loss": torch.stack(pg_losses).mean().item(), "value_loss": torch.stack(v_losses).mean().item(),
            "approx_kl": torch.stack(approx_kls).mean().item(),
            "clip_fraction": torch.stack(clip_fractions).mean().item(),
            "entropy": torch.stack(entropies).mean().item(),
            "decisions_per_s": round(n / update_time, 1),
            "env_steps_per_s": round(durations_buf.sum() / rollout_time, 1),
        }
        if not math.isfinite(row["policy_loss"] + row["value_loss"]):  # before it reaches a row or a checkpoint
            sys.exit(f"{os.path.basename(sys.argv[0])}: the loss became {row['policy_loss'] + row['value_loss']} in "
                     f"update {counters['update']} (not logged): the run diverged; train it anew with a smaller "
                     f"--learning-rate under another --run-name")
        with open(progress_path, "a", newline="") as f:
            f.write(csv_text([row]))
            os.fsync(f.fileno())  # on disk before its checkpoint, even through a power loss
        left = (num_updates - counters["update"]) * update_time
        print(f"update {counters['update']}/{num_updates} | decisions {row['decision_steps']} | "
              f"physical {row['physical_time_s']:.0f}s | return {row['return_mean'] or float('nan'):.1f} | "
              f"duration {row['action_duration_mean_s'] * 1e3:.1f}ms | radius {row['safe_radius_mean'] or float('nan'):.3f} | "
              f"{row['decisions_per_s']:.0f} decisions/s | {row['env_steps_per_s']:.0f} δ-steps/s | "
              f"left {left / 60:.1f} min", flush=True)
        if counters["update"] % args.checkpoint_every == 0 or counters["update"] == num_updates:
            save_checkpoint()
    if eval_env is not None:
        eval_env.close()
    if args.save_model:  # what a rollout needs: the agent and the statistics of its inputs
        model = io.BytesIO()
        torch.save({"agent": agent.state_dict(), "obs_rms": stats_state(obs_rms),
                    "repetition_stats": stats_state(repetition.obs_stats)}, model)
        save_atomic(os.path.join(run_dir, "model.pt"), model.getvalue())
    env.close()
