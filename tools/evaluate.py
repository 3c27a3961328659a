"""A saved policy in its run's own setting: the mean return of deterministic (mean-action) episodes, every
statistic frozen, the env built exactly as the run's training script builds it (δ, the stochastic setting,
the hold penalty, the repetition and its flags), by that script's own `make_decision_env` and `evaluate`.

    python sar_ppo.py --total-steps 100000                          # any training script
    python tools/evaluate.py runs/InvertedPendulum-v5__sar__dt0.002__s1 --episodes 10

The run folder needs config.json and checkpoint.pt (every run has one) or model.pt (the smaller file
--save-model writes, which a clone's committed runs keep). A file of another run than config.json describes
(another method, env, δ, seed or flag) is refused, never evaluated under this run's method. Episode i
starts from the env's seed --seed + 10,000 + i, as the scripts' --eval-every episodes do. Printed: each
episode's return, then their mean. For the picture of a SAR-PPO episode,
tools/animate.py renders one as a GIF.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
from gymnasium.wrappers.utils import RunningMeanStd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import arp_ppo  # noqa: E402
import bookkeeping  # noqa: E402
import dau  # noqa: E402
import envs  # noqa: E402
from tools import promises  # noqa: E402
from tools.promises import fail, within  # noqa: E402
from tools import check_reproducible  # noqa: E402 - a run's flags from its config.json
from tools import status  # noqa: E402 - a training script's own parsing of its flags


def script_of(config):
    """The training script (its module) that made a run: status.script_of's."""
    return status.module(status.script_of(config))


# What may differ between a run's saved config and its config.json (what --resume may change, and bookkeeping);
# every other value names the run: its method, env, δ, seed and method flags (--physical-time is in its name).
NOT_THE_RUN = (bookkeeping.RESUMABLE - {"physical_time", "method"}) | {"code", "versions", "resumed_at_decision_steps",
                                                                      "script"}
MISSING = "(none)"


def other_run(state, config):
    """Why the saved state is of another run than config.json says (None if it is of this one). A checkpoint
    holds its run's config: method, env and flags are compared with config.json's. A model.pt holds the agent and
    its statistics only: what they show is compared (a repetition head, Δ's statistics, which the SAR scripts
    keep and FiGAR-C's do not)."""
    if isinstance(state.get("config"), dict):
        made = state["config"]
        names = ["method", "env_id", "dt", "seed"] + sorted((set(made) | set(config)) - NOT_THE_RUN)
        for name in dict.fromkeys(names):
            if made.get(name, MISSING) != config.get(name, MISSING):
                return (f"its {name} is {made.get(name, MISSING)!r}, config.json's "
                        f"{config.get(name, MISSING)!r}")
        return None
    method = config.get("method", "")
    repeat = not config.get("no_repeat") and not method.startswith("ARP")  # ARP-PPO has no repetition
    if repeat != ("repeat_logstd.weight" in state["agent"]):
        return (f"its policy has {'no' if repeat else 'a'} repetition head, which a {config.get('method')} run "
                f"{'has' if repeat else 'has not'}")
    if method.startswith("FiGAR") and "repetition_stats" in state:
        return f"it holds Δ statistics, which a {method} run has none of"
    if not method.startswith("FiGAR") and "repetition_stats" not in state:
        return f"it holds no Δ statistics, which every {method} run has: it is of a FiGAR-C run"
    return None


def load(run):
    """(script module, the run's flags as the script parsed them, the saved state), or one line and exit 2."""
    if not os.path.isdir(run):
        fail(f"run: {run} is not a run folder")
    try:
        with open(os.path.join(run, "config.json")) as f:
            config = json.load(f)
        module = script_of(config)
        path = next((os.path.join(run, n) for n in ("model.pt", "checkpoint.pt")
                     if os.path.exists(os.path.join(run, n))), None)
        if path is None:
            raise FileNotFoundError("no model.pt or checkpoint.pt (train with --save-model)")
        state = torch.load(path, weights_only=True, mmap=True)  # mmap: a DAU checkpoint holds its replay memory
        args = status.parsed(module, check_reproducible.command(config, 1, "LOG_DIR")[2:])  # as its script checks them
        vars(args).update({k: v for k, v in config.items() if k in vars(args)})  # the run's own budget and names too
        if module is dau:  # its agent holds its input statistics; its checkpoint holds its config
            state["agent"]  # noqa: B018 - raises KeyError if missing
        else:
            state["agent"], state["obs_rms"]  # noqa: B018 - raises KeyError if missing
        why = other_run(state, config)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - missing, damaged or foreign files fail in many ways, each one line here
        fail(f"run: {run}: its config.json and model.pt (or checkpoint.pt) cannot be read together "
             f"({type(e).__name__}: {e})")
    if why:  # a file of another run dropped into this folder: evaluated under this one's method, it would mislead
        fail(f"run: {path} is not of the run its config.json describes ({why}); evaluate the folder it came from")
    return module, args, state


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("run", help="a run folder with config.json and model.pt (or checkpoint.pt)")
    p.add_argument("--episodes", type=within(int, 1, 10_000), default=10, help="episodes (default 10)")
    p.add_argument("--seed", type=promises.SEED, default=None, help="default: the run's seed")
    flags = p.parse_args(argv)
    module, args, state = load(flags.run)
    args.seed = args.seed if flags.seed is None else flags.seed
    args.eval_episodes = 1
    if module is dau:
        return evaluate_dau(flags, args, state)
    env, repetition = module.make_decision_env(args)
    # the authors' log-std heads (--sb2-logstd of the TRPO scripts, --sb3-u-init of the PPO ones), where a run has one
    heads = {flag: True for flag in ("sb2_logstd", "sb3_u_init") if getattr(args, flag, False)}
    agent = module.Agent(env.observation_space.shape[0], env.unwrapped.action_space.shape[0],
                         repeat=module is not arp_ppo and not getattr(args, "no_repeat", False), **heads)
    obs_rms = RunningMeanStd(shape=env.observation_space.shape)
    try:
        agent.load_state_dict(state["agent"])
        bookkeeping.load_stats(obs_rms, state["obs_rms"])
        extra = [state["repetition_stats"]] if "repetition_stats" in state else []
        if extra:
            bookkeeping.load_stats(repetition.obs_stats, extra[0])
            extra = [repetition.obs_stats]
    except (KeyError, RuntimeError) as e:
        fail(f"run: {flags.run}'s model does not fit its config.json ({type(e).__name__})")
    returns, seed = [], args.seed
    for episode in range(flags.episodes):
        args.seed = seed + episode  # evaluate() starts its episode i from seed + 10,000 + i
        result = module.evaluate(args, (env, repetition), agent, obs_rms, *extra)
        decisions = ""
        if isinstance(result, tuple):  # figar_ppo's: (return, decisions)
            result, decisions = result[0], f", {result[1]:.0f} decisions"
        returns.append(result)
        print(f"episode {episode + 1}: return {returns[-1]:.1f}{decisions}", flush=True)
    setting = args.noise or "deterministic"
    without_cost = " (without the switch cost)" if getattr(args, "switch_cost", 0) else ""
    print(f"{args.method} on {args.env_id} at δ = {args.dt:g} s ({setting}{', hold penalty' * args.hold_penalty}): "
          f"mean return{without_cost} {np.mean(returns):.1f} over {flags.episodes} deterministic episodes")


def evaluate_dau(flags, args, state):
    """A DAU run: its deterministic policy π(s), its input statistics frozen, by dau.py's own evaluate."""
    env = envs.make_env(args.env_id, args.dt, args.gamma)
    agent = dau.Agent(env.observation_space.shape[0], env.action_space.shape[0], normalize=not args.no_input_norm)
    try:
        agent.load_state_dict(state["agent"])
    except (KeyError, RuntimeError) as e:
        fail(f"run: {flags.run}'s model does not fit its config.json ({type(e).__name__})")
    low, high = env.action_space.low, env.action_space.high
    returns, seed = [], args.seed
    for episode in range(flags.episodes):
        args.seed = seed + episode  # evaluate() starts its episode i from seed + 10,000 + i
        returns.append(dau.evaluate(args, env, agent, (high - low) / 2, (high + low) / 2))
        print(f"episode {episode + 1}: return {returns[-1]:.1f}", flush=True)
    print(f"{args.method} on {args.env_id} at δ = {args.dt:g} s (deterministic): mean return "
          f"{np.mean(returns):.1f} over {flags.episodes} deterministic episodes")


if __name__ == "__main__":
    promises.run(main)
