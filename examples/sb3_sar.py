"""SAR with Stable-Baselines3's PPO: what to add so that PPO with the wrapper stays SAR-PPO.

`SafeActionRepetition` makes one decision last w δ-steps and returns R = Σ_k γ_δ^k r_k (Sec. 4.3).
What follows the decision must then be discounted by γ_δ^w (eq. 5). SB3 discounts every decision by
one γ, in GAE and in its time-limit bootstrap, so a long repetition counts as one step: with rewards
PPO favours long repetitions for that alone, with costs (Pendulum-v1) short ones, until w = 1 and SAR
is plain PPO without a word. Three pieces keep it SAR:
  1. `DurationRolloutBuffer`: GAE with γ_δ^(w_t) per decision (the learner's γ is γ_δ, per δ-step);
  2. `DurationCallback`: hands each decision's w to the buffer, and bootstraps a time-limit
     truncation with γ_δ^w·V(final obs) where SB3 would add γ·V(final obs);
  3. γ_δ is set once, on the wrapper, and the learner takes it; Δ's running statistics, which live in
     the wrapper and which `model.save` does not know, are saved beside the model and frozen to evaluate.

    python examples/sb3_sar.py                    # SAR-PPO on Pendulum-v1 (δ = its own 0.05 s)
    python examples/sb3_sar.py --plain            # SB3 as is, one γ per decision, to compare
    python examples/sb3_sar.py --env-id InvertedPendulum-v5 --dt lowest   # δ = 2 ms, via envs.make_env
"""
import argparse
import os
import sys

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import Logger

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import envs
from sar_ppo import SafeActionRepetition, compute_gae
from tools import promises  # the project's commands' promises: one-line errors, whole files

# Pendulum-v1: RL Baselines3 Zoo's PPO settings (one env, so twice its n_steps). Others: SB3's defaults.
PPO_SETTINGS = {"Pendulum-v1": dict(n_steps=2048, gae_lambda=0.95, ent_coef=0.0, learning_rate=1e-3,
                                    clip_range=0.2, use_sde=True, sde_sample_freq=4)}
GAMMA = {"Pendulum-v1": 0.9}  # per δ0-step; 0.99 elsewhere


class DurationRolloutBuffer(RolloutBuffer):
    """GAE where decision t is followed by a state w_t δ-steps away: its discount is γ^(w_t) (eq. 5),
    with γ = the learner's γ, per δ-step (γ_δ). DurationCallback sets `next_w` before each `add`."""

    def reset(self):
        super().reset()
        self.durations = np.ones((self.buffer_size, self.n_envs), np.float32)  # w of each decision
        self.next_w = None

    def add(self, *args, **kwargs):
        if self.next_w is None:
            raise RuntimeError("DurationRolloutBuffer: pass callback=DurationCallback() to learn()")
        self.durations[self.pos], self.next_w = self.next_w, None
        super().add(*args, **kwargs)

    def compute_returns_and_advantage(self, last_values, dones):
        # SB3 keeps episode_starts[t]: the episode ended after decision t-1. compute_gae takes dones[t].
        ended = np.vstack([self.episode_starts[1:], np.asarray(dones, np.float32)[None]])
        next_values = np.vstack([self.values[1:], last_values.cpu().numpy().reshape(1, -1)]) * (1 - ended)
        # At a time limit γ_δ^w·V(final obs) is in the reward already (DurationCallback).
        self.advantages = compute_gae(self.rewards, self.values, next_values, self.gamma ** self.durations,
                                      ended, self.gae_lambda)
        self.returns = self.advantages + self.values


class DurationCallback(BaseCallback):
    """After each env step of SB3's rollout: w to the buffer, and the time-limit bootstrap with γ_δ^w."""

    def _on_step(self):
        infos, rewards, policy = self.locals["infos"], self.locals["rewards"], self.model.policy
        self.model.rollout_buffer.next_w = [info["w"] for info in infos]
        for i, info in enumerate(infos):
            # Taking the flag away stops SB3 adding γ·V(final obs) to this reward after the callback.
            if info.pop("TimeLimit.truncated", False) and info.get("terminal_observation") is not None:
                with torch.no_grad():
                    value = policy.predict_values(policy.obs_to_tensor(info["terminal_observation"])[0]).item()
                rewards[i] += self.model.gamma ** info["w"] * value  # the same array SB3 stores next
        return True


class ProgressLine(BaseCallback):
    """One line per SB3 update: decisions so far, the mean return of the episodes that ended in its rollout, mean w."""

    def _on_rollout_start(self):
        self.returns, self.w, self.episode_return = [], [], getattr(self, "episode_return", 0.0)

    def _on_step(self):
        info, done = self.locals["infos"][0], self.locals["dones"][0]
        self.w.append(info["w"])
        self.episode_return += info["undiscounted_reward"]  # in δ0-step units of reward (envs.DtEnv)
        if done:
            self.returns, self.episode_return = self.returns + [self.episode_return], 0.0
        return True

    def _on_rollout_end(self):
        shown = f"{np.mean(self.returns):.1f}" if self.returns else "nan (no episode ended)"
        print(f"decisions {self.num_timesteps:,} | return {shown} | mean w {np.mean(self.w):.2f}", flush=True)


def make_sar_env(env_id, dt, max_t):
    """The δ-env of envs.py (γ_δ = γ^(δ/δ0) for the task's γ per δ0) inside the repetition."""
    env = envs.make_env(env_id, dt, GAMMA.get(env_id, 0.99))
    if max_t is None:  # the paper's 0.05 s, but at least 4 δ-steps so that a decision can repeat at all
        max_t = max(0.05, 4 * env.dt)
    return SafeActionRepetition(env, max_d=0.5, max_t=max_t)


def train(env_id="Pendulum-v1", dt=None, total_steps=65_536, seed=1, plain=False, out="runs/sb3_sar",
          max_t=None, **ppo_kwargs):
    """Trains SAR-PPO (or with plain=True SB3 as is) and saves model.zip and delta_stats.npz in `out`."""
    sar = make_sar_env(env_id, dt, max_t)
    settings = {**PPO_SETTINGS.get(env_id, {}), **ppo_kwargs}
    # One γ: the wrapper's γ_δ. SAR-PPO discounts decision t by γ_δ^(w_t); --plain by γ_δ per decision.
    model = PPO("MlpPolicy", sar, gamma=sar.gamma_dt, seed=seed, verbose=0,
                rollout_buffer_class=RolloutBuffer if plain else DurationRolloutBuffer, **settings)
    model.set_logger(Logger(None, []))  # SB3's own would make an empty SB3-<date> folder in the temporary directory
    model.learn(total_steps, callback=CallbackList([ProgressLine()] + ([] if plain else [DurationCallback()])))
    with promises.replacing(os.path.join(out, "model.zip"), binary=True) as f:  # each file whole or not at all
        model.save(f)
    stats = sar.obs_stats  # Δ's statistics (a gymnasium RunningMeanStd), not part of model.zip
    with promises.replacing(os.path.join(out, "delta_stats.npz"), binary=True) as f:
        np.savez(f, mean=stats.mean, var=stats.var, count=stats.count)
    return model, sar


def evaluate(out, env_id="Pendulum-v1", dt=None, max_t=None, episodes=10, seed=10_000):
    """(mean return, mean w) of the saved model's mean action, with Δ's statistics restored and frozen."""
    model, sar = PPO.load(os.path.join(out, "model.zip"), device="cpu"), make_sar_env(env_id, dt, max_t)
    with np.load(os.path.join(out, "delta_stats.npz")) as saved:
        sar.obs_stats.mean, sar.obs_stats.var, sar.obs_stats.count = saved["mean"], saved["var"], float(saved["count"])
    if not (np.isfinite(sar.obs_stats.mean).all() and np.isfinite(sar.obs_stats.var).all()
            and (sar.obs_stats.var >= 0).all() and sar.obs_stats.count > 0):
        raise ValueError(f"{out}/delta_stats.npz: Δ's statistics are not finite, non-negative variances")
    sar.update_stats = False  # the same Δ for every episode
    returns, durations = [], []
    for episode in range(episodes):
        obs, _ = sar.reset(seed=seed + episode)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = sar.step(action)
            total += info["undiscounted_reward"]  # in δ0-step units of reward (envs.DtEnv)
            durations.append(info["w"])
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns)), float(np.mean(durations))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env-id", default="Pendulum-v1", help="a gymnasium task with Box spaces (default Pendulum-v1)")
    p.add_argument("--dt", default=None, help="δ in seconds, or a level of Table 1 for the paper's tasks "
                                              "(default: the task's own δ0)")
    p.add_argument("--total-steps", type=promises.within(int, 1, 10 ** 10), default=65_536,
                   help="decisions to train for")
    p.add_argument("--seed", type=promises.within(int, 0, 2 ** 32 - 1), default=1, help="0 to 2**32 - 1")
    p.add_argument("--max-t", type=promises.within(float, 0, 1000, open_low=True), default=None,
                   help="cap on a decision's duration in seconds (default: 0.05, at least 4 δ-steps)")
    p.add_argument("--plain", action="store_true", help="SB3 as is: one γ per decision, for comparison")
    p.add_argument("--eval-episodes", type=promises.within(int, 1, 10 ** 4), default=10)
    p.add_argument("--out", default=None, help="folder for model.zip and delta_stats.npz (default: "
                                               "runs/sb3_sar/<env>__<sar|plain>__dt<δ>[__maxt<max_t>]__s<seed>)")

    p.error = error
    args = p.parse_args(argv)
    try:
        args.dt = envs.resolve_dt(args.env_id, args.dt)
    except ValueError as e:  # "env_id: ..." or "dt: ..."
        name, message = str(e).split(": ", 1)
        error(f"--{name.replace('_', '-')}: {message}")
    # the default folder names the task, δ, --max-t, --plain and the seed (as the training scripts' run names do), so
    # that runs of other settings never meet in one folder
    max_t = "" if args.max_t is None else f"__maxt{args.max_t:g}"
    args.out = args.out or os.path.join("runs", "sb3_sar", f"{args.env_id}__{'plain' if args.plain else 'sar'}__"
                                                           f"dt{args.dt:g}{max_t}__s{args.seed}")
    return args


def error(message):  # bad input: one line, exit 2, nothing written
    print(f"sb3_sar.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def open_out(out):
    """--out made and locked before any training, as the training scripts treat a run folder: a folder that holds
    a model already is never written over, and one process at a time writes a folder."""
    if os.path.exists(os.path.join(out, "model.zip")):
        error(f"--out: {out} holds a model.zip already; choose another --out (or remove it)")
    promises.check_folder("--out", out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        error(f"--out: cannot make the folder {out} ({e.strerror})")
    return promises.locked("--out", out)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(1)
    with open_out(args.out):  # held until the model is saved and evaluated
        train(args.env_id, args.dt, args.total_steps, args.seed, args.plain, args.out, args.max_t)
        try:
            ret, w = evaluate(args.out, args.env_id, args.dt, args.max_t, args.eval_episodes)
        except ValueError as e:  # the statistics saved are not finite
            error(str(e))
    print(f"{args.env_id} δ={args.dt:g} {'plain SB3' if args.plain else 'SAR-PPO'} seed {args.seed}: "
          f"final return {ret:.1f}, mean w {w:.2f} ({args.eval_episodes} episode(s), mean action); saved in {args.out}")


if __name__ == "__main__":
    promises.run(main)  # Ctrl-C, a full disk: one line
