"""FiGAR-C-PPO: PPO with durative actions (Sec. 4.2 of Park, Kim & Kim, NeurIPS 2021), in one file.

The policy picks an action a and a duration t ∈ [0, max_t]; a is repeated for ⌈t/δ⌉ δ-steps (at
least one), blind to what the state does meanwhile. The paper's main baseline for SAR-PPO: run
`diff sar_ppo.py figar_ppo.py` to see everything in which the two methods differ.

    python figar_ppo.py --env-id InvertedPendulum-v5 --dt lowest --seed 1
"""
import argparse
import fcntl
import io
import json
import math
import os
import shutil
import subprocess
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import torch
import torch.nn as nn
from gymnasium.envs.mujoco import mujoco_env
from gymnasium.wrappers.utils import RunningMeanStd
from torch.distributions.normal import Normal

import envs

MAX_T = 0.05  # t_max (s): the longest duration t = u·t_max (App. J.3)
MAX_T_CAP = 1000  # (s) the largest finite t_max taken, by the flag and the wrapper alike


class DurativeRepetition(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """FiGAR-C's durative actions (Sec. 4.2) around a gymnasium env with 1-D Box spaces; a `step` is one decision.

    The action is [a, u_raw], u = (u_raw + 1)/2 ∈ [0, 1]; `a` is repeated for ⌈t/δ⌉ δ-steps with t = u·max_t
    (at least one), or until the episode ends, blind to the state meanwhile. With limit_t=False u is not clipped
    above, so t can exceed max_t (App. I). `step` returns R = Σ_k γ_δ^k r_k over its k δ-steps and info["w"] = k.
    """

    def __init__(self, env, max_t=MAX_T, limit_t=True, dt=None, gamma_dt=None):
        gym.utils.RecordConstructorArgs.__init__(self, max_t=max_t, limit_t=limit_t, dt=dt, gamma_dt=gamma_dt)
        gym.Wrapper.__init__(self, env)
        self.dt, self.gamma_dt, _ = check_wrapped(env, dt, gamma_dt, max_t)
        if max_t == math.inf:
            raise ValueError("max_t: a duration t = u·max_t needs a finite max_t, got inf")
        self.max_t = max_t
        if limit_t and max_t <= self.dt * (1 + 1e-9):
            warnings.warn(f"max_t = {max_t} s is not above δ = {self.dt} s: no action can be repeated")
        low, high = env.action_space.low, env.action_space.high
        u_high = np.float32(1) if limit_t else np.float32(np.inf)  # --no-limit-t: u is not clipped above
        self.action_space = gym.spaces.Box(np.append(low, np.float32(-1)), np.append(high, u_high))

    def step(self, action):
        action = np.asarray(action)
        if action.shape != self.action_space.shape or not np.isfinite(action).all():
            raise ValueError(f"action: needs {self.action_space.shape[0]} finite numbers, got {action!r}")
        u = (min(max(action[-1], -1.0), self.action_space.high[-1]) + 1) / 2  # u ∈ [0, 1], unless limit_t is off
        a = action[:-1]
        steps = max(1, math.ceil(u * self.max_t / self.dt - 1e-9))  # ⌈t/δ⌉, at least one
        R, discount, k, undiscounted = 0.0, 1.0, 0, 0.0
        while True:
            obs, r, terminated, truncated, info = self.env.step(a)
            R += discount * r
            discount *= self.gamma_dt
            undiscounted += r
            k += 1
            if terminated or truncated or k >= steps:
                break
        if not np.isfinite(obs).all():
            raise ValueError(f"observation: not finite, got {obs}")
        if not math.isfinite(R):
            raise ValueError(f"reward: not finite, got {undiscounted}")
        info.update(w=k, undiscounted_reward=undiscounted)
        return obs, R, terminated, truncated, info


def check_wrapped(env, dt, gamma_dt, max_t):
    """(δ, γ_δ, observation size) for a repetition around `env`, checked: `dt` (seconds per step of `env`) and
    `gamma_dt` (discount per step) if given, else the env's own (envs.DtEnv has both), else γ_δ = 0.99."""
    own = lambda name, default: env.get_wrapper_attr(name) if env.has_wrapper_attr(name) else default  # noqa: E731
    dt, gamma_dt = own("dt", None) if dt is None else dt, own("gamma_dt", 0.99) if gamma_dt is None else gamma_dt
    space, box = env.observation_space, gym.spaces.Box
    if not (isinstance(space, box) and len(space.shape) == 1 and isinstance(env.action_space, box)
            and len(env.action_space.shape) == 1):
        raise ValueError(f"env: needs 1-D Box observations and actions (flatten them first), got {space} and "
                         f"{env.action_space}")
    for name, value, ok in [("dt", dt, dt is not None and 0 < dt < math.inf), ("gamma_dt", gamma_dt, 0 < gamma_dt <= 1),
                            ("max_t", max_t, 0 < max_t <= MAX_T_CAP or max_t == math.inf)]:
        if not ok:
            hint = " (pass dt= for an env without one)" if dt is None else ""
            raise ValueError(f"{name}: out of range, got {value}{hint}")
    return dt, gamma_dt, space.shape[0]


# ---------------------------------------------------------------- the agent
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate actor and critic MLPs, 2×256 ReLU (App. J.3). Gaussian policy: a state-independent
    log-std for the K task dims, a state-dependent one for the repetition dim. `authors_head`, to measure the
    authors' code: "sb2" (their TRPO) gives the last dim a head of gain 1 and bias 0, a task dim's too without
    a repetition dim; "sb3" (their A2C) leaves the repetition head at PyTorch's default init."""

    def __init__(self, obs_dim, num_actions, repeat, init_logstd=0.0, authors_head=None):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 1), std=1.0))
        self.actor_body = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU())
        self.actor_mean = layer_init(nn.Linear(256, num_actions + int(repeat)), std=0.01)
        own = num_actions - int(authors_head == "sb2" and not repeat)  # the dims of a state-independent log-std
        self.actor_logstd = nn.Parameter(torch.full((own,), init_logstd))
        self.repeat_logstd = None  # the last dim's state-dependent log-std: the repetition dim's
        if authors_head == "sb2":
            self.repeat_logstd = layer_init(nn.Linear(256, 1), std=1.0)
        elif authors_head == "sb3" and repeat:
            self.repeat_logstd = nn.Linear(256, 1)
        elif repeat:
            self.repeat_logstd = layer_init(nn.Linear(256, 1), std=0.01, bias_const=init_logstd)

    def dist(self, x):
        hidden = self.actor_body(x)
        logstd = self.actor_logstd.expand(x.shape[0], -1)
        if self.repeat_logstd is not None:
            logstd = torch.cat([logstd, self.repeat_logstd(hidden)], dim=1)
        # validate_args=False: checking the arguments costs more than the Gaussian itself at these sizes
        return Normal(self.actor_mean(hidden), logstd.clamp(-20, 2).exp(), validate_args=False)


def normalize(x, stats, on, update=False, clip=10.0):
    """Running mean/std normalization, clipped to ±10 (SB3's VecNormalize); `update`: x joins the statistics first."""
    if on and update:
        stats.update_from_moments(x, 0.0, 1)  # one sample: mean x, var 0, count 1 (cheaper than update()'s np.var)
    if not on:
        return np.asarray(x, dtype=np.float32)
    return np.clip((x - stats.mean) / np.sqrt(stats.var + 1e-8), -clip, clip).astype(np.float32)


def stats_state(stats):  # a RunningMeanStd as tensors, for torch.save
    return {"mean": torch.as_tensor(stats.mean), "var": torch.as_tensor(stats.var), "count": float(stats.count)}


def load_stats(stats, state):
    stats.mean, stats.var, stats.count = state["mean"].numpy(), state["var"].numpy(), state["count"]


def compute_gae(rewards, values, next_values, discounts, dones, gae_lambda):
    """GAE where a transition's next state is w δ-steps away: its discount is γ_δ^w (eq. 5). `next_values` is V(s')
    (0 after a termination, V(final obs) after a time-limit truncation); `dones` cuts the λ-chain at either."""
    deltas = rewards + discounts * next_values - values
    advantages, last = np.zeros_like(rewards), 0.0
    for t in reversed(range(len(rewards))):
        last = deltas[t] + discounts[t] * gae_lambda * (1.0 - dones[t]) * last
        advantages[t] = last
    return advantages


def ppo_update(agent, optimizer, batch, args, rng):
    """PPO's update (Schulman et al., 2017, eq. 7): `update_epochs` passes over the rollout in minibatches, each
    step on the clipped surrogate plus the value MSE. Returns the update's logged means. With --a2c it is A2C's
    step (Huang et al., 2022): one pass, one minibatch, raw advantages; the ratio is 1, so the gradient is −A·∇log π."""
    b_obs, b_actions, b_logprobs, b_advantages, b_returns = map(torch.as_tensor, batch)
    n = len(b_obs)
    logs = {name: [] for name in ("policy_loss", "value_loss", "approx_kl", "clip_fraction", "entropy")}
    for epoch in range(args.update_epochs):
        order = rng.permutation(n)
        for begin in range(0, n, args.minibatch_size):
            mb = torch.as_tensor(order[begin:begin + args.minibatch_size])
            dist = agent.dist(b_obs[mb])
            newlogprob = dist.log_prob(b_actions[mb]).sum(1)
            entropy = dist.entropy().sum(1)
            newvalue = agent.critic(b_obs[mb]).squeeze(1)
            logratio = newlogprob - b_logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                logs["approx_kl"].append(((ratio - 1) - logratio).mean())
                logs["clip_fraction"].append(((ratio - 1.0).abs() > args.clip_coef).float().mean())
            mb_advantages = b_advantages[mb]
            if not args.a2c:
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
            pg_loss = torch.max(-mb_advantages * ratio,
                                -mb_advantages * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            v_loss = ((newvalue - b_returns[mb]) ** 2).mean()
            loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
            for name, value in [("policy_loss", pg_loss), ("value_loss", v_loss), ("entropy", entropy.mean())]:
                logs[name].append(value.detach())
    # approx_kl and clip_fraction are measured before each step: A2C's single step has nothing to measure
    return {name: "" if args.a2c and name in ("approx_kl", "clip_fraction") else torch.stack(logged).mean().item()
            for name, logged in logs.items()}


# ---------------------------------------------------------------- flags
PPO_DEFAULTS = {"num_steps": 2048, "update_epochs": 10, "minibatch_size": 64, "gae_lambda": 0.95,  # Table 2
                "init_logstd": 0.0}
A2C_DEFAULTS = {"num_steps": 256, "update_epochs": 1, "minibatch_size": None,  # Table 4; one minibatch: the rollout
                "gae_lambda": 1.0, "init_logstd": -1.5}
CLIP_COEF = 0.2  # PPO's ratio clip ε (Table 2)


def fail(message):  # bad input: one line naming the flag on stderr, exit status 2, nothing written
    print(f"{os.path.basename(sys.argv[0])}: error: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(2)


def checked(kind, ok, rule):  # an argparse type: `kind(text)` if `ok` holds for it, else the one-line error `rule`
    def parse(text):
        try:
            if ok(value := kind(text)):
                return value
        except ValueError:
            pass
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    parse.rule = rule  # shown by --help
    return parse


def within(kind, low, high, open_low=False):  # [low, high], or (low, high]; nan is in neither
    return checked(kind, lambda v: low < v <= high if open_low else low <= v <= high,
                   f"must lie in {'(' if open_low else '['}{low}, {high}]")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):  # --help: each flag's range, and its default if it has one
    def _get_help_string(self, action):
        notes = [getattr(action.type, "rule", "")]
        if action.default not in (None, False, argparse.SUPPRESS):
            notes.append(f"default: {action.default}")
        notes = [note for note in notes if note]
        return f"{action.help} ({'; '.join(notes)})" if notes else action.help


def parse_args(argv=None):
    """The flags, each checked on its own; then the rules between flags and the defaults that hang on other flags;
    then the names of the method and the run."""
    args = make_parser().parse_args(argv)
    check_args(args)
    name_run(args)
    return args


def make_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    p.error = fail  # argparse's own errors (unknown flag, bad value) as one line too
    p.add_argument("--env-id", default="InvertedPendulum-v5", help="a gymnasium task with Box spaces (Table 1's eight)")
    p.add_argument("--dt", help="δ in seconds, or lowest|low|middle|original (Table 1); default lowest, or the task's")
    p.add_argument("--seed", type=within(int, 0, 2 ** 32 - 1), default=1, help="seeds torch, numpy and the env")
    p.add_argument("--total-steps", type=within(int, 1, 10 ** 10), default=1_000_000, help="decisions to train for")
    # The method (Sec. 4.2)
    p.add_argument("--max-t", type=within(float, 0, MAX_T_CAP, open_low=True), default=MAX_T,
                   help="t_max (s): t = u·t_max")
    p.add_argument("--no-limit-t", action="store_true", help="ablation (App. I): u unclipped above, t may pass t_max")
    p.add_argument("--scale-lr", action="store_true", help="lr·δ/δ0, as PPO (scaled) in App. F.2")
    # Stochastic and partially observable settings (Sec. 5.2, App. H)
    p.add_argument("--noise", choices=envs.NOISE_KINDS, default=None, help="stochastic setting (Sec. 5.2)")
    p.add_argument("--noise-prob", type=within(float, 0, 1), help=f"p_act / p_ext (default {envs.NOISE_PROB})")
    p.add_argument("--noise-std", type=within(float, 0, 1e6), help="σ_act / σ_ext / σ_ext2 (default: App. J.2's)")
    p.add_argument("--hold-penalty", action="store_true", help="App. H: a penalty once an action is held for t_thres")
    # PPO (App. J.3, Table 2)
    p.add_argument("--learning-rate", type=within(float, 0, 1, open_low=True), default=1e-4, help="Adam's step size")
    p.add_argument("--adam-eps", type=within(float, 1e-12, 1), default=1e-5, help="Adam's (A2C: RMSprop's) epsilon")
    p.add_argument("--a2c", action="store_true", help="A2C as PPO's special case (Table 4): one step on the whole "
                   f"rollout, RMSprop, raw advantages, GAE λ {A2C_DEFAULTS['gae_lambda']:g}, "
                   f"{A2C_DEFAULTS['num_steps']} decisions per update, initial log-std {A2C_DEFAULTS['init_logstd']}")
    p.add_argument("--num-steps", type=within(int, 2, 2 ** 20),
                   help=f"decision steps per update ({PPO_DEFAULTS['num_steps']}; A2C: {A2C_DEFAULTS['num_steps']})")
    p.add_argument("--update-epochs", type=within(int, 1, 1000),
                   help=f"passes over a rollout per update ({PPO_DEFAULTS['update_epochs']})")
    p.add_argument("--minibatch-size", type=within(int, 2, 2 ** 20),
                   help=f"decisions per gradient step ({PPO_DEFAULTS['minibatch_size']})")
    p.add_argument("--gamma", type=within(float, 0, 1, open_low=True), default=0.99, help="discount per δ0 (App. J.2)")
    p.add_argument("--gae-lambda", type=within(float, 0, 1),
                   help=f"GAE λ, per decision step ({PPO_DEFAULTS['gae_lambda']}; A2C: {A2C_DEFAULTS['gae_lambda']:g})")
    p.add_argument("--init-logstd", type=within(float, -20, 2), help=f"the policy's initial log-std "
                   f"({PPO_DEFAULTS['init_logstd']:g}; A2C: {A2C_DEFAULTS['init_logstd']})")
    p.add_argument("--sb3-u-init", action="store_true", help="with --a2c, the authors' init of the repetition "
                   "head (PyTorch's default: σ ≈ 1 at the start, not --init-logstd's), to measure it")
    p.add_argument("--clip-coef", type=within(float, 0, 10, open_low=True), default=CLIP_COEF,
                   help="PPO's ratio clip ε")
    p.add_argument("--vf-coef", type=within(float, 0, 1000, open_low=True), default=0.5, help="value loss weight")
    p.add_argument("--ent-coef", type=within(float, 0, 1000), default=0.0, help="entropy bonus weight")
    p.add_argument("--max-grad-norm", type=within(float, 0, 1e6, open_low=True), default=0.5, help="gradient clipping")
    p.add_argument("--norm-obs", action=argparse.BooleanOptionalAction, help="normalise inputs (default: not on Ant)")
    p.add_argument("--norm-reward", action=argparse.BooleanOptionalAction, help="scale rewards (default: not on Ant)")
    # Evaluation, logs, checkpoints
    p.add_argument("--eval-every", type=within(int, 0, 10 ** 9), default=0, help="updates between evaluations")
    p.add_argument("--eval-episodes", type=within(int, 1, 1000), default=5, help="episodes per evaluation")
    p.add_argument("--log-dir", type=checked(str, bool, "must name a folder"), default="runs",
                   help="runs are written to <log-dir>/<run-name>/")
    p.add_argument("--run-name", type=checked(str, lambda v: v.strip(".") and "/" not in v and len(v) < 200, "must be "
                   "a folder name under 200 characters"), help="default: <env>__<method>__dt<δ>[__<noise>]__s<seed>")
    p.add_argument("--checkpoint-every", type=within(int, 1, 10 ** 9), default=1, help="updates between checkpoints")
    p.add_argument("--save-model", action="store_true", help="also save model.pt, the agent and its input statistics")
    p.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    p.add_argument("--threads", type=within(int, 1, os.cpu_count()), default=1, help="torch threads")
    return p


def check_args(args):
    """What no single flag sees, in one table; then the defaults that hang on other flags."""
    try:
        default_dt = "lowest" if args.env_id in envs.DT_TABLE else None  # given empty, --dt is bad input
        args.dt = envs.resolve_dt(args.env_id, default_dt if args.dt is None else args.dt)
    except ValueError as e:
        name, _, message = str(e).partition(": ")
        fail(f"--{name.replace('_', '-')}: {message}")
    task = args.env_id.split("-")[0]
    for flag, given in [("--update-epochs", args.update_epochs), ("--minibatch-size", args.minibatch_size)]:
        if args.a2c and given is not None:
            fail(f"{flag}: A2C takes one step on the whole rollout; leave {flag} out with --a2c")
    for name, default in (A2C_DEFAULTS if args.a2c else PPO_DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    args.minibatch_size = args.minibatch_size or args.num_steps
    for flag, ok, rule in [  # what no single flag sees
            ("--max-t", args.no_limit_t or args.max_t > args.dt * (1 + 1e-9) or args.max_t == args.dt == MAX_T
             and envs.is_paper_task(args.env_id), f"{args.max_t:g} s is not above δ = {args.dt:g} s, so no action "
             f"could be repeated; pass --max-t {4 * args.dt:g} (up to 4 δ-steps a decision)"),
            ("--clip-coef", not args.a2c or args.clip_coef == CLIP_COEF,
             "A2C's ratio is 1, nothing to clip; leave it out"),
            ("--num-steps/--minibatch-size", args.minibatch_size <= args.num_steps,
             f"--minibatch-size {args.minibatch_size} must not exceed --num-steps {args.num_steps}"),
            ("--num-steps/--minibatch-size", args.num_steps % args.minibatch_size != 1,
             f"{args.num_steps} decisions in minibatches of {args.minibatch_size} leave a last one of one decision, "
             "whose advantages have no std"),
            ("--sb3-u-init", not args.sb3_u_init or args.a2c,
             "is SAR-A2C's and FiGAR-C-A2C's: it needs --a2c"),
            ("--noise-prob/--noise-std", args.noise or {args.noise_prob, args.noise_std} == {None}, "need --noise"),
            ("--noise", not args.noise or task in envs.NOISE_STD, f"App. J.2 defines it for {', '.join(envs.NOISE_STD)}"
             f" only, not {args.env_id}"),
            ("--hold-penalty", not args.hold_penalty or task in envs.HOLD_PENALTY,
             f"App. H defines it for {', '.join(envs.HOLD_PENALTY)} only, not {args.env_id}")]:
        if not ok:
            fail(f"{flag}: {rule}")
    args.norm_obs, args.norm_reward = (task != "Ant" if on is None else on for on in (args.norm_obs, args.norm_reward))


def name_run(args):
    """The method's name, its base then each method flag off its default (the paper's variants, App. I), and the
    run's: <env>__<slug>__dt<δ>[__<setting>]__s<seed>."""
    args.method, slug = "FiGAR-C-PPO", "figar"
    if args.a2c:  # the same method on A2C
        args.method = args.method.replace("PPO", "A2C")
        slug = slug.replace("ppo", "a2c") if "ppo" in slug else slug + "-a2c"
    variants = [(name, part) for off_default, name, part in [  # (name, run-name part)
        (args.no_limit_t, "no limit on t", "no-limit-t"),
        (args.max_t != MAX_T, f"t_max={args.max_t:g}", f"maxt{args.max_t:g}"),
        (args.scale_lr, "scaled lr", "scaled-lr"),
        (args.sb3_u_init, "SB3 u init", "sb3-u-init")] if off_default]
    args.method += f" ({', '.join(name for name, _ in variants)})" if variants else ""
    slug = "-".join([slug] + [part for _, part in variants])
    setting = ""  # the stochastic setting's part of the run name, if any
    if args.noise:
        setting += f"__{args.noise}"
    if args.noise_prob is not None:
        setting += f"-p{args.noise_prob:g}"
    if args.noise_std is not None:
        setting += f"-std{args.noise_std:g}"
    if args.hold_penalty:
        setting += "__hold-penalty"
    args.run_name = args.run_name or f"{args.env_id}__{slug}__dt{args.dt:g}{setting}__s{args.seed}"


COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes", "return_mean",  # progress.csv
           "eval_return_mean", "action_duration_mean_s", "safe_radius_mean", "policy_loss", "value_loss",
           "approx_kl", "clip_fraction", "entropy", "decisions_per_s", "env_steps_per_s"]


def make_decision_env(args):
    """The environment of one decision: the δ-env, then the repetition, then the perturbation outside it (one
    draw per decision, Sec. 5.2). Returns (env, the repetition wrapper)."""
    env = envs.make_env(args.env_id, args.dt, args.gamma)
    if args.hold_penalty:
        env = envs.HoldPenalty(env)  # App. H: counts holding time at δ-level, inside the repetition
    repetition = env = DurativeRepetition(env, args.max_t, limit_t=not args.no_limit_t)
    if args.noise:
        env = envs.Perturb(env, args.noise, args.noise_prob, args.noise_std)
    return env, repetition


def main(argv=None):
    args = parse_args(argv)
    if not args.no_limit_t and args.max_t <= args.dt * (1 + 1e-9):  # the paper's runs at δ0 = 50 ms, with t_max = δ0
        print(f"note: t_max = δ = {args.dt:g} s: no action can be repeated, one δ-step a decision, as in the paper")
        warnings.filterwarnings("ignore", "max_t")  # the wrapper's warning of the same
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the policy's samples and the network init
    rng = np.random.default_rng(args.seed)  # minibatch order; the env has its own, seeded by reset

    env, repetition = make_decision_env(args)
    dt, dt0, gamma_dt = repetition.dt, repetition.get_wrapper_attr("dt0"), repetition.gamma_dt
    obs_dim = env.observation_space.shape[0]
    action_low, action_high = env.action_space.low, env.action_space.high
    learning_rate = args.learning_rate * (dt / dt0 if args.scale_lr else 1.0)

    agent = Agent(obs_dim, env.unwrapped.action_space.shape[0], repeat=True,
                  init_logstd=args.init_logstd, authors_head="sb3" if args.sb3_u_init else None)
    # A2C: RMSprop (Table 4). Adam fused: one kernel for all parameters instead of ~10 small ops per tensor
    optimizer = torch.optim.RMSprop(agent.parameters(), lr=learning_rate, alpha=0.99, eps=args.adam_eps) if args.a2c \
        else torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=args.adam_eps, fused=True)
    obs_rms = RunningMeanStd(shape=(obs_dim,))  # network inputs
    ret_rms = RunningMeanStd(shape=())  # discounted return, for reward scaling
    learner = {"agent": agent, "optimizer": optimizer, "obs_rms": obs_rms, "ret_rms": ret_rms}
    config = {**vars(args), "dt": dt, "dt0": dt0, "gamma_dt": gamma_dt, "learning_rate_used": learning_rate}
    run = open_run(args, learner, rng, config)  # a finished run ends here; a resumed one is loaded

    # Rollout storage (decision level)
    n = args.num_steps
    obs_buf, final_obs_buf = np.zeros((2, n, obs_dim), np.float32)  # final obs: to bootstrap a truncation
    actions_buf = np.zeros((n, env.action_space.shape[0]), np.float32)
    logprobs_buf, rewards_buf, terminated_buf, truncated_buf, discounts_buf = np.zeros((5, n), np.float32)
    durations_buf = np.zeros(n, np.int64)  # w, in δ-steps (discounts_buf: γ_δ^w)
    eval_env = make_decision_env(args) if args.eval_every else None

    counters = run["counters"]
    num_updates = math.ceil(args.total_steps / n)
    print(f"{run['dir']}: {args.method}, {num_updates} updates of {n:,} decisions" + (f" (--total-steps "
          f"{args.total_steps:,} rounded up to {num_updates * n:,})" if args.total_steps % n else ""), flush=True)
    raw_obs, _ = env.reset(seed=args.seed + 1_000 * counters["update"])  # an older checkpoint: a fresh episode
    obs = normalize(raw_obs, obs_rms, args.norm_obs, update=True)
    episode_return, discounted_return = 0.0, 0.0
    if "episode" in (run["state"] or {}):  # resume exactly where the checkpoint left the episode
        raw_obs, obs, episode_return, discounted_return = restore_episode(env, run)
    start = time.time() - counters["wall_time_s"]
    while counters["update"] < num_updates:
        update_start, finished_returns = time.time(), []
        # ---------------- rollout: n decision steps
        for step in range(n):
            obs_buf[step] = obs
            with torch.inference_mode():  # no_grad without autograd's bookkeeping: cheaper per decision
                dist = agent.dist(torch.as_tensor(obs)[None])
                action = dist.sample()
                logprobs_buf[step] = dist.log_prob(action).sum()
            actions_buf[step] = action = action[0].numpy()  # the log-probability is of the unclipped sample
            try:
                raw_obs, R, terminated, truncated, info = env.step(np.clip(action, action_low, action_high))
            except ValueError as e:  # the wrappers' checks: a non-finite observation or reward
                sys.exit(f"{os.path.basename(sys.argv[0])}: the environment failed in update {counters['update'] + 1} "
                         f"({' '.join(str(e).split())}); the run is kept up to its last checkpoint")
            w = info["w"]  # δ-steps this decision lasted
            discounts_buf[step], durations_buf[step] = gamma_dt ** w, w
            if args.norm_reward:  # R / std of the discounted return, clipped to ±10
                discounted_return = discounted_return * gamma_dt ** w + R
                ret_rms.update_from_moments(discounted_return, 0.0, 1)
                R = np.clip(R / np.sqrt(ret_rms.var + 1e-8), -10.0, 10.0)
            rewards_buf[step], terminated_buf[step], truncated_buf[step] = R, terminated, truncated
            episode_return += info["undiscounted_reward"]
            if terminated or truncated:
                if truncated and not terminated:
                    final_obs_buf[step] = normalize(raw_obs, obs_rms, args.norm_obs)
                finished_returns.append(episode_return)
                episode_return, discounted_return = 0.0, 0.0
                raw_obs, _ = env.reset()
            obs = normalize(raw_obs, obs_rms, args.norm_obs, update=True)
        counters["decision_steps"] += n
        counters["env_steps"] += int(durations_buf.sum())
        counters["episodes"] += len(finished_returns)
        rollout_time = time.time() - update_start

        # ---------------- GAE over decision steps (eq. 5)
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
        batch = (obs_buf, actions_buf, logprobs_buf, advantages, returns)
        logs = ppo_update(agent, optimizer, batch, args, rng)
        counters["update"] += 1

        # ---------------- logs
        update_time = time.time() - update_start
        eval_return = evaluate(args, eval_env, agent, obs_rms) \
            if args.eval_every and counters["update"] % args.eval_every == 0 else None
        counters["wall_time_s"] = time.time() - start
        row = {"decision_steps": counters["decision_steps"], "env_steps": counters["env_steps"],
               "physical_time_s": round(counters["env_steps"] * dt, 6),
               "wall_time_s": round(counters["wall_time_s"], 3), "episodes": counters["episodes"],
               "return_mean": float(np.mean(finished_returns)) if finished_returns else "",
               "eval_return_mean": "" if eval_return is None else eval_return,
               "action_duration_mean_s": float(durations_buf.mean() * dt),
               "safe_radius_mean": "",
               **logs,
               "decisions_per_s": round(n / update_time, 1),
               "env_steps_per_s": round(int(durations_buf.sum()) / rollout_time, 1)}
        episode = (env, raw_obs, obs, episode_return, discounted_return)  # where the next decision starts
        log_row(run, row, counters["update"] % args.checkpoint_every == 0 or counters["update"] == num_updates, episode)
        returns = f"return {row['return_mean']:.1f}" if finished_returns else "no episode ended"
        radius = "" if row["safe_radius_mean"] == "" else f" | radius {row['safe_radius_mean']:.3f}"  # SAR's d
        print(f"update {counters['update']}/{num_updates} | decisions {row['decision_steps']} | physical "
              f"{row['physical_time_s']:.0f}s | {returns} | duration {1e3 * row['action_duration_mean_s']:.1f}ms"
              f"{radius} | {row['decisions_per_s']:.0f} decisions/s | {row['env_steps_per_s']:.0f} δ-steps/s | "
              f"left {(num_updates - counters['update']) * update_time / 60:.1f} min", flush=True)
    if args.save_model:
        save_model(run["dir"], run["state"])
    env.close()


def evaluate(args, decision_env, agent, obs_rms):
    """Mean return of deterministic (mean-action) episodes, with every running statistic frozen."""
    env, repetition = decision_env
    low, high = env.action_space.low, env.action_space.high
    returns = np.zeros(args.eval_episodes)
    for episode in range(args.eval_episodes):
        (raw_obs, _), done = env.reset(seed=args.seed + 10_000 + episode), False
        while not done:
            with torch.no_grad():
                mean = agent.dist(torch.as_tensor(normalize(raw_obs, obs_rms, args.norm_obs))[None]).mean[0].numpy()
            raw_obs, _, terminated, truncated, info = env.step(np.clip(mean, low, high))
            returns[episode] += info["undiscounted_reward"]
            done = terminated or truncated
    return float(np.mean(returns))


# ================================================================ Appendix: run bookkeeping, not the method
# The checkpoint is the run (learner, RNGs, logged rows, config); --resume rewrites progress.csv and config.json from it
RESUMABLE_CHANGES = {"total_steps", "eval_every", "eval_episodes", "log_dir", "run_name", "checkpoint_every",
                     "save_model", "resume", "threads", "method"}  # what may differ on --resume
FLAGS_ADDED_LATER = {"a2c": False, "init_logstd": 0.0, "sb3_u_init": False}


def open_run(args, learner, rng, config):
    """Lock the run folder; continue the run from its checkpoint or start it (a finished run exits 0, a bad one 2)."""
    run_dir = os.path.join(args.log_dir, args.run_name)
    progress, checkpoint = os.path.join(run_dir, "progress.csv"), os.path.join(run_dir, "checkpoint.pt")
    if os.path.isfile(run_dir) or (os.path.exists(progress) or os.path.exists(checkpoint)) and not args.resume:
        fail(f"--run-name: {run_dir} exists; pass --resume to continue it or choose another --run-name")
    try:
        os.makedirs(run_dir, exist_ok=True)
        fcntl.flock(os.open(run_dir, os.O_RDONLY), fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until the process ends
    except BlockingIOError:
        fail(f"--run-name: {run_dir} is being trained by another process")
    except OSError as e:
        fail(f"--log-dir: cannot make {run_dir} ({e.strerror})")
    if (os.path.exists(progress) or os.path.exists(checkpoint)) and not args.resume:  # made meanwhile by another
        fail(f"--run-name: {run_dir} exists; pass --resume to continue it or choose another --run-name")
    run = {"dir": run_dir, "learner": learner, "rng": rng, "rows": [], "config": None, "state": None, "counters": {
        "update": 0, "decision_steps": 0, "env_steps": 0, "episodes": 0, "wall_time_s": 0.0}}
    state, done, made = None, 0, {}
    if args.resume and os.path.exists(checkpoint):
        try:
            state = torch.load(checkpoint, weights_only=True)
            refuse_changed_flags(args, state["config"], run_dir)
            for name, part in learner.items():
                if isinstance(part, RunningMeanStd):
                    load_stats(part, state[name])
                else:
                    part.load_state_dict(state[name])
            torch.set_rng_state(state["torch_rng"])
            rng.bit_generator.state = state["numpy_rng"]
            run.update(counters=state["counters"], rows=state["rows"], config=state["config"], state=state)
            done, made = len(run["rows"]) * args.num_steps, state["config"]
        except Exception as e:  # noqa: BLE001 - a damaged or foreign file fails in many ways, each one line here
            fail(f"--resume: {checkpoint} is not a checkpoint of this run ({type(e).__name__}: {e})")
    elif args.resume and os.path.exists(progress):  # a clone has no checkpoint: read progress.csv's last whole row
        try:
            done = int(([""] + Path(progress).read_text().split("\n")[1:-1])[-1].split(",")[0] or 0)
        except (OSError, ValueError) as e:
            fail(f"--resume: cannot read {progress} ({type(e).__name__}), and there is no checkpoint.pt")
        if done:  # rows logged: refuse other flags as a checkpoint would; config.json holds them
            try:
                made = json.loads(Path(run_dir, "config.json").read_text())
                refuse_changed_flags(args, made, run_dir)
            except (OSError, ValueError) as e:
                fail(f"--resume: cannot read {run_dir}/config.json ({type(e).__name__}), and there is no checkpoint.pt")
        if 0 < done < args.total_steps:
            fail(f"--resume: {run_dir} has {done:,} decisions but no checkpoint.pt to continue from")
    if made.get("total_steps", args.total_steps) != args.total_steps:  # a budget may change on --resume: say so
        print(f"note: {run_dir} was made with --total-steps {made['total_steps']:,}; it now ends at "
              f"{args.total_steps:,}")
    if done >= args.total_steps:
        did = "nothing to do"
        if args.save_model and not os.path.exists(os.path.join(run_dir, "model.pt")):
            if not state:
                fail(f"--save-model: {run_dir} has no checkpoint.pt to take it from")
            save_model(run_dir, state)
            did = "wrote model.pt from its checkpoint"
        print(f"{run_dir} is finished: {done:,} decisions reach --total-steps {args.total_steps:,}; {did}")
        sys.exit(0)
    code = (run["config"] or {"code": []})["code"] + [{"decision_steps": done, **code_version()}]  # every (re)start
    run["config"] = {**config, "resumed_at_decision_steps": done or None, "code": code,  # flags of the latest (re)start
                     "versions": {p: version(p) for p in ("torch", "gymnasium", "mujoco", "numpy")}}
    save_atomic(os.path.join(run_dir, "progress.csv"), csv_text(run["rows"], header=True))
    save_atomic(os.path.join(run_dir, "config.json"), json.dumps(run["config"], indent=2))
    if state is None:
        save_checkpoint(run)  # update 0: a run killed before its first update's checkpoint resumes from the start
    return run


def refuse_changed_flags(args, made, run_dir):
    made = {**FLAGS_ADDED_LATER, **made}  # a run made before a flag existed had its default
    changed = ["--" + k.replace("_", "-") for k, v in vars(args).items()
               if k not in RESUMABLE_CHANGES and made.get(k) != v]
    if changed:
        fail(f"--resume: {run_dir} was made with other {', '.join(changed)}")


def log_row(run, row, checkpoint, episode=None):  # the row reaches the disk before the checkpoint that holds it
    if not math.isfinite(row["policy_loss"] + row["value_loss"]):  # before it reaches a row or a checkpoint
        sys.exit(f"{os.path.basename(sys.argv[0])}: the loss diverged in update {run['counters']['update']} (not "
                 f"logged); train anew under another --run-name with smaller steps (--learning-rate, --vf-coef)")
    run["rows"].append(row)
    with open(os.path.join(run["dir"], "progress.csv"), "a", newline="") as f:
        f.write(csv_text([row]))
        f.flush()
        os.fsync(f.fileno())  # on disk before its checkpoint, even through a power loss
    if checkpoint:
        run["state"] = save_checkpoint(run, episode)


def save_checkpoint(run, episode=None):
    state = {name: stats_state(part) if isinstance(part, RunningMeanStd) else part.state_dict()
             for name, part in run["learner"].items()}
    state.update(counters=run["counters"], rows=run["rows"], config=run["config"],
                 torch_rng=torch.get_rng_state(), numpy_rng=run["rng"].bit_generator.state)
    if episode is not None and isinstance(episode[0].unwrapped, mujoco_env.MujocoEnv):  # another env: a fresh episode
        state["episode"] = episode_state(*episode)
    save_atomic(os.path.join(run["dir"], "checkpoint.pt"), state)
    return state


EPISODE_ATTRIBUTES = ("obs", "force", "last_action", "held", "episode_return", "episode_length")  # of the wrappers
SIMULATOR = mujoco.mjtState.mjSTATE_INTEGRATION  # everything mj_step reads: time, qpos, qvel, act, warm start, forces


def episode_state(env, raw_obs, obs, episode_return, discounted_return):
    """Where the next decision starts: the simulator, the env's RNG (resets, Perturb's draws), each wrapper's state
    within the episode, and the rollout's own; as tensors and numbers, for torch.load(weights_only=True)."""
    def as_saved(v):  # numbers as Python numbers (a numpy scalar too), arrays as tensors: what weights_only loads
        if isinstance(v, np.generic):
            return v.item()
        return v if v is None or isinstance(v, (bool, int, float)) else torch.as_tensor(np.array(v))

    layers, layer, raw = [], env, env.unwrapped
    while layer is not raw:
        layers.append({k: as_saved(v) for k, v in vars(layer).items() if k in EPISODE_ATTRIBUTES})
        layer = layer.env
    simulator = np.empty(mujoco.mj_stateSize(raw.model, SIMULATOR))
    mujoco.mj_getState(raw.model, raw.data, simulator, SIMULATOR)
    return {"layers": layers, "simulator": torch.as_tensor(simulator), "env_rng": raw.np_random.bit_generator.state,
            "raw_obs": as_saved(raw_obs), "obs": as_saved(obs),
            "returns": [float(episode_return), float(discounted_return)]}


def restore_episode(env, run):
    """The episode as the checkpoint left it; and the running statistics as saved, since env.reset() just fed them."""
    saved, layer, raw = run["state"]["episode"], env, env.unwrapped
    for attributes in saved["layers"]:
        for name, value in attributes.items():
            setattr(layer, name, value.numpy() if isinstance(value, torch.Tensor) else value)
        layer = layer.env
    mujoco.mj_setState(raw.model, raw.data, saved["simulator"].numpy(), SIMULATOR)
    raw.np_random.bit_generator.state = saved["env_rng"]
    for name, part in run["learner"].items():
        if isinstance(part, RunningMeanStd):
            load_stats(part, run["state"][name])
    return saved["raw_obs"].numpy(), saved["obs"].numpy(), *saved["returns"]


def save_model(run_dir, state):  # what a rollout needs: the agent and the statistics of its inputs; and its run
    model = {k: state[k] for k in ("agent", "obs_rms", "repetition_stats", "config") if k in state}
    save_atomic(os.path.join(run_dir, "model.pt"), model)


def csv_text(rows, header=False):  # what csv.DictWriter writes for these numbers, \r\n included
    lines = ([COLUMNS] if header else []) + [[row[c] for c in COLUMNS] for row in rows]
    return "".join(",".join(map(str, line)) + "\r\n" for line in lines)


def save_atomic(path, data):
    """Write `data` (str, or a dict to torch.save) to a temporary file, on the disk before it is renamed over `path`:
    a kill, a full disk or a power loss leaves the old file or the new one, whole."""
    if isinstance(data, dict):
        torch.save(data, buffer := io.BytesIO())  # in memory first: a failed write is then an OSError
    with open(path + ".tmp", "wb") as f:
        f.write(buffer.getvalue() if isinstance(data, dict) else data.encode())
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def code_version(code=(os.path.basename(__file__), "envs.py", "requirements.txt")):
    """The git commit, and whether the code that makes a run's numbers differs from it (None outside git)."""
    git = lambda *a: subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), *a],  # noqa: E731
                                    capture_output=True, text=True).stdout.strip() if shutil.which("git") else ""
    commit = git("rev-parse", "HEAD") or None
    return {"git_commit": commit, "git_dirty": commit and git("status", "--porcelain", "--", *code) != ""}


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, OSError) as e:  # Ctrl-C, or a failed write (a full disk): one line; the run resumes
        again = "the same command" if "--resume" in sys.argv else "the same command plus --resume"
        if isinstance(e, KeyboardInterrupt):  # exit status 130, as a shell's for Ctrl-C
            print(f"{os.path.basename(sys.argv[0])}: interrupted; continue the run with {again}", file=sys.stderr)
            sys.exit(130)
        sys.exit(f"{os.path.basename(sys.argv[0])}: {e}; once that is mended, continue the run with {again}")
