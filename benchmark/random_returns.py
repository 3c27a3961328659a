"""R_random: the return of a uniformly random policy on each task at its own δ0, the lower anchor of
plot.py's normalised final return (R − R_random) / (R* − R_random).

    python benchmark/random_returns.py          # results/random_returns.csv, about a minute

Each decision draws a fresh action uniformly from the task's action box; episodes run to the task's
own end (termination or its time limit at δ0), through envs.make_env, so a return is in the units of
the training logs' return_mean. Episode k is reset with seed --seed·1,000,000 + k and the actions come
from numpy's generator seeded with --seed: the defaults re-make the committed CSV row for row.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import envs
from tools import ROOT, promises
from tools.promises import fail, within

COLUMNS = ["env_id", "dt", "episodes", "seed", "return_mean", "return_std", "return_min", "return_max"]
DEFAULT_OUT = os.path.join(ROOT, "results", "random_returns.csv")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--envs", nargs="+", default=list(envs.DT_TABLE), help="tasks (default: all 8 of Table 1)")
    p.add_argument("--episodes", type=within(int, 1, 10 ** 6), default=100, help="episodes per task (default 100)")
    p.add_argument("--seed", type=within(int, 0, 2 ** 31 - 1), default=1,
                   help="seeds the episodes and the actions (default 1)")
    p.add_argument("--out", default=DEFAULT_OUT, help="the CSV (default results/random_returns.csv)")
    args = p.parse_args(argv)
    for env_id in args.envs:
        if env_id not in envs.DT_TABLE:
            fail(f"--envs: unknown environment {env_id!r}; choose from {', '.join(envs.DT_TABLE)}")
    defaults = p.parse_args([])
    changed = [f"--{k}" for k in ("envs", "episodes", "seed") if getattr(args, k) != getattr(defaults, k)]
    if changed and promises.same_file(args.out, DEFAULT_OUT):  # a symlinked folder too
        fail(f"--out: {', '.join(changed)} differ from the defaults; give another --out than the committed "
             f"{os.path.relpath(DEFAULT_OUT)}")
    folder = os.path.dirname(os.path.abspath(args.out))
    if os.path.isdir(args.out) or not os.path.isdir(folder):
        fail(f"--out: {args.out} must be a file in an existing folder")
    promises.check_writable("--out", args.out)
    return args


def random_returns(env_id, episodes, seed):
    """The returns of `episodes` episodes of the uniform policy at δ0."""
    env, rng = envs.make_env(env_id), np.random.default_rng(seed)
    low, high = env.action_space.low, env.action_space.high
    returns = []
    for episode in range(episodes):
        env.reset(seed=seed * 1_000_000 + episode)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(rng.uniform(low, high).astype(env.action_space.dtype))
            done = terminated or truncated
        returns.append(info["episode"]["r"])
    env.close()
    return np.array(returns)


def main(argv=None):
    args = parse_args(argv)
    rows = []
    for env_id in args.envs:
        r = random_returns(env_id, args.episodes, args.seed)
        rows.append({"env_id": env_id, "dt": f"{envs.DT_TABLE[env_id][-1]:g}", "episodes": args.episodes,
                     "seed": args.seed, "return_mean": f"{r.mean():.6g}",
                     "return_std": f"{r.std(ddof=1) if len(r) > 1 else 0:.6g}",
                     "return_min": f"{r.min():.6g}", "return_max": f"{r.max():.6g}"})
        print(", ".join(f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    with promises.locked("--out", os.path.dirname(os.path.abspath(args.out))):
        promises.write_rows(args.out, COLUMNS, rows)  # whole or not at all: an interrupted run leaves the old CSV
    print(f"wrote {args.out}")


if __name__ == "__main__":
    promises.run(main)
