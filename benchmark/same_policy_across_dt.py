"""One SAR-PPO policy rolled out at several δ: how much of a difference between δ comes from the time
grid alone, not from learning (the report's question on Hopper). At δ0 a repetition can only stop on a
multiple of δ0, so the same safe radius gives longer repetitions there than at a small δ.

    python benchmark/same_policy_across_dt.py --env-id Hopper-v5                       # an untrained policy
    python benchmark/same_policy_across_dt.py --model results/runs/<run>/model.pt       # a trained one (--save-model)

The policy is sar_ppo.py's Agent: freshly initialised with torch seed --seed, or loaded from a run's
model.pt (or checkpoint.pt, which holds the same and more) with its input and Δ statistics (the run's
env and flags from the config.json beside it).
Per δ: an untrained policy first warms its statistics up over --burn-in episodes at that δ (as a run's
first update does), then every statistic is frozen; --episodes episodes are measured, actions sampled
(--deterministic: the mean action). Printed per δ: mean duration of a decision, the share of decisions
stopped by t_max, decisions per physical second, mean episode return and length in physical seconds.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
from gymnasium.wrappers.utils import RunningMeanStd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import bookkeeping
import envs
import sar_ppo
from tools import check_reproducible  # a run's flags from its config.json
from tools import promises
from tools import status  # a training script's own parsing of its flags
from tools.promises import brief, within


def measure(env_id, dt, agent, state, args):
    repetition = sar_ppo.SafeActionRepetition(envs.make_env(env_id, dt), args.max_d, args.max_t)
    obs_rms = RunningMeanStd(shape=repetition.observation_space.shape)
    if state is not None:
        bookkeeping.load_stats(obs_rms, state["obs_rms"])
        bookkeeping.load_stats(repetition.obs_stats, state["repetition_stats"])
    norm_obs = not env_id.startswith("Ant")  # the scripts' default (App. J.3)
    low, high = repetition.action_space.low, repetition.action_space.high
    rows = []
    for episode in range((0 if state is not None else args.burn_in) + args.episodes):
        learn = state is None and episode < args.burn_in
        repetition.update_stats = learn
        raw, _ = repetition.reset(seed=args.seed * 100_000 + episode)
        steps, total, capped, decisions, done = 0, 0.0, 0, 0, False
        while not done:
            if learn and norm_obs:
                obs_rms.update_from_moments(raw, 0.0, 1)
            with torch.no_grad():
                dist = agent.dist(torch.as_tensor(sar_ppo.normalize(raw, obs_rms, norm_obs))[None])
                action = (dist.mean if args.deterministic else dist.sample())[0].numpy()
            raw, _, terminated, truncated, info = repetition.step(np.clip(action, low, high))
            steps, total, decisions = steps + info["w"], total + info["undiscounted_reward"], decisions + 1
            capped += info["w"] >= repetition.max_repeats and not (terminated or truncated)
            done = terminated or truncated
        if not learn:
            rows.append((steps * dt, total, decisions, capped))
    seconds, returns, decisions, capped = (np.array(c, dtype=float) for c in zip(*rows))
    return {"dt": dt, "duration_ms": 1e3 * seconds.sum() / decisions.sum(), "capped": capped.sum() / decisions.sum(),
            "decisions_per_s": decisions.sum() / seconds.sum(), "return": returns.mean(), "episode_s": seconds.mean()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = sar_ppo.fail
    p.add_argument("--env-id", default="Hopper-v5", choices=list(envs.DT_TABLE), metavar="ENV_ID",
                   help="task of Table 1 (default Hopper-v5; with --model: the run's)")
    p.add_argument("--dts", nargs="+", default=["lowest", "original"],
                   help="δ levels or seconds (default lowest original)")
    p.add_argument("--model", default=None,
                   help="a run's model.pt, or its checkpoint.pt while it runs (default: an untrained policy)")
    p.add_argument("--seed", type=within(int, 0, 2 ** 31 - 1), default=1,
                   help="torch seed of the untrained policy and of the episodes (default 1)")
    p.add_argument("--burn-in", type=within(int, 0, 10 ** 5), default=10,
                   help="episodes that warm an untrained policy's statistics up (default 10)")
    p.add_argument("--episodes", type=within(int, 1, 10 ** 5), default=50, help="episodes measured per δ (default 50)")
    p.add_argument("--deterministic", action="store_true", help="act with the mean action")
    args = p.parse_args(argv)
    state, config = None, {"max_d": 0.5, "max_t": 0.05}
    if args.model == "":  # given empty, it is bad input, not the untrained policy
        sar_ppo.fail("--model: empty; give a run's model.pt, or leave --model out for an untrained policy")
    if args.model is not None:
        try:
            state = torch.load(args.model, weights_only=True)
            with open(os.path.join(os.path.dirname(args.model), "config.json")) as f:
                config = json.load(f)
            script = check_reproducible.command(config, 1, "LOG_DIR")
            status.parsed(status.SCRIPTS[os.path.basename(script[1])], script[2:])  # checked as its script checks them
            args.env_id = config["env_id"]
            plain_sar = not (config.get("no_repeat") or config["method"].startswith(("FiGAR", "λ"))
                             or config.get("delta_dims") or config.get("norm") != "l1")
            if config.get("noise") or config.get("hold_penalty"):  # this tool rolls out the plain task only
                sar_ppo.fail(f"--model: {args.model} was trained under --noise or --hold-penalty; this tool rolls "
                             f"out the plain task only (tools/evaluate.py rolls out a run in its own setting)")
        except Exception as e:  # noqa: BLE001 - a missing, torn or foreign file: OS, zip, unpickling, JSON errors alike
            sar_ppo.fail(f"--model: {args.model} with its config.json is unreadable ({brief(e)})")
        if not plain_sar or not isinstance(state, dict) or "repetition_stats" not in state:
            sar_ppo.fail(f"--model: {args.model} is not a plain SAR-PPO model saved with its statistics")
    flag = "--model" if args.model else "--env-id"
    try:
        envs.resolve_dt(args.env_id)
    except ValueError as e:
        sar_ppo.fail(f"{flag}: {str(e).partition(': ')[2]}")
    try:
        dts = [envs.resolve_dt(args.env_id, dt) for dt in args.dts]
    except ValueError as e:
        sar_ppo.fail(f"--dts: {str(e).partition(': ')[2]}")
    torch.manual_seed(args.seed)
    probe = envs.make_env(args.env_id)
    agent = sar_ppo.Agent(probe.observation_space.shape[0], probe.action_space.shape[0], repeat=True)
    try:
        args.max_d, args.max_t = float(config["max_d"]), float(config["max_t"])
        if state is not None:
            agent.load_state_dict(state["agent"])
            for name, shape in (("obs_rms", probe.observation_space.shape),
                                ("repetition_stats", probe.observation_space.shape)):
                stats = RunningMeanStd(shape=shape)
                bookkeeping.load_stats(stats, state[name])
                if stats.mean.shape != shape or stats.var.shape != shape:
                    raise ValueError(f"{name} has shape {stats.mean.shape}, the task's observations {shape}")
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as e:  # keys or shapes off
        sar_ppo.fail(f"--model: {args.model} with its config.json is damaged ({brief(e)})")
    print(f"{args.env_id}, "
          f"{'the policy of ' + args.model if args.model else f'an untrained policy (seed {args.seed})'}, "
          f"{'mean' if args.deterministic else 'sampled'} actions, {args.episodes} episodes per δ\n")
    print("| δ (s) | mean duration (ms) | stopped by t_max | decisions / physical s | return | episode (s) |")
    print("|---|---|---|---|---|---|")
    for dt in dts:
        torch.manual_seed(args.seed)  # the same action noise at every δ
        r = measure(args.env_id, dt, agent, state, args)
        print(f"| {dt:g} | {r['duration_ms']:.2f} | {r['capped']:.1%} | {r['decisions_per_s']:.1f} | "
              f"{r['return']:.1f} | {r['episode_s']:.3f} |")


if __name__ == "__main__":
    promises.run(main)
