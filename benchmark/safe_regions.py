"""Fig. 6: the safe regions a trained SAR-PPO policy picks, drawn in the plane of two observation dims,
and the chosen radius d against speed over a long rollout, so that the paper's reading ("large regions
at low speed, small at high speed; a push ends a repetition at once") is a measured relation.

    python benchmark/safe_regions.py results/runs/InvertedPendulum-v5__sar-delta2-3__dt0.002__s1 --out results/figures

The run must be an SAR-PPO run (L1 distance, not λ-SAR) trained with --delta-dims including the two
dims drawn (default: its first two) and --save-model: model.pt holds the agent, its input statistics
and Δ's statistics. The
policy acts with its mean action and every statistic frozen. The picture: each δ-state a small dot,
each repetition's start (where the previous one broke off) a circle, its safe region the rhombus
{s : Δ(s, s_i) < d} = the L1 ball of radius d in Δ's normalised units, cut through the drawn plane and
drawn in raw units: half-diagonals n·d·(σ_k + 1e-3), n the number of --delta-dims; a decision under
an external force in red.
"""
import argparse
import json
import os
import sys

import gymnasium as gym
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import bookkeeping
import envs
import plot
import sar_ppo
from plot import plt
from tools import promises
from tools.promises import brief, check_folder, fail, save_figure, within

# Gymnasium's names of the observation dims, for the axes; other tasks: "observation dim k"
OBS_NAMES = {"InvertedPendulum-v5": ["cart position (m)", "pole angle (rad)", "cart velocity (m/s)",
                                     "pole angular velocity (rad/s)"]}


class Record(gym.Wrapper):
    """Beneath the repetition: keeps every δ-step's observation, which the repetition does not return."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.states = [obs]
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.states.append(obs)
        return obs, reward, terminated, truncated, info


def load(run):
    """The run's decision env (δ-env, Record, SAR with frozen Δ statistics, the perturbation outside)
    and a policy (mean action) from its model.pt."""
    try:
        with open(os.path.join(run, "config.json")) as f:
            config = json.load(f)
        state = torch.load(os.path.join(run, "model.pt"), weights_only=True)
    except FileNotFoundError as e:
        fail(f"run: {run} has no config.json and model.pt (train it with --save-model): {e}")
    except Exception as e:  # noqa: BLE001 - a torn or foreign file: json, zip and unpickling errors alike
        fail(f"run: {run}'s config.json or model.pt is damaged ({brief(e)})")
    try:
        if (not config.get("delta_dims") or config.get("no_repeat") or config["method"].startswith("FiGAR")
                or config["norm"] != "l1" or config["lambda_dt"] is not None):
            fail(f"run: {run} is not an SAR-PPO run with --delta-dims and the L1 distance")
        record = Record(envs.make_env(config["env_id"], config["dt"], config["gamma"]))
        repetition = env = sar_ppo.SafeActionRepetition(record, config["max_d"], config["max_t"], config["lambda_dt"],
                                                        config["norm"], delta_dims=config["delta_dims"])
        bookkeeping.load_stats(repetition.obs_stats, state["repetition_stats"])
        repetition.update_stats = False
        if config["noise"]:
            env = envs.Perturb(env, config["noise"], config["noise_prob"], config["noise_std"])
        agent = sar_ppo.Agent(env.observation_space.shape[0], record.action_space.shape[0], repeat=True)
        agent.load_state_dict(state["agent"])
        obs_rms = gym.wrappers.utils.RunningMeanStd(shape=env.observation_space.shape)
        bookkeeping.load_stats(obs_rms, state["obs_rms"])
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as e:  # keys or shapes off
        fail(f"run: {run}'s config.json or model.pt is damaged ({brief(e)})")

    def policy(obs):
        with torch.no_grad():
            mean = agent.dist(torch.as_tensor(sar_ppo.normalize(obs, obs_rms, config["norm_obs"]))[None]).mean[0]
        return np.clip(mean.numpy(), env.action_space.low, env.action_space.high)
    return config, env, record, repetition, policy


def rollout(env, record, policy, decisions, seed):
    """Per decision: its start state s_i, the δ-states it went through, d, w and whether a force acted."""
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(decisions):
        start = len(record.states) - 1
        obs, _, terminated, truncated, info = env.step(policy(obs))
        force = bool(np.any(env.force)) if isinstance(env, envs.Perturb) and env.kind != "action" else False
        out.append({"s_i": record.states[start], "states": record.states[start + 1:], "d": info["safe_radius"],
                    "w": info["w"], "force": force, "delta_dims": np.flatnonzero(env.get_wrapper_attr("delta_mask"))})
        if terminated or truncated:
            obs, _ = env.reset()
    return out


def draw_regions(decisions, dims, scale, title, path, max_d, env_id):
    fig, ax = plt.subplots(figsize=(7.5, 6.2))
    for n, dec in enumerate(decisions):
        color = "tab:red" if dec["force"] else plt.cm.viridis(dec["d"] / max_d)
        x, y = dec["s_i"][dims[0]], dec["s_i"][dims[1]]
        a, b = len(dec["delta_dims"]) * dec["d"] * scale  # half-diagonals of {(|Δx|/w_x + |Δy|/w_y)/n < d}
        ax.plot([x + a, x, x - a, x, x + a], [y, y + b, y, y - b, y], color=color, lw=0.8, alpha=0.6)
        ax.scatter([x], [y], s=30, facecolors="none", edgecolors=color, linewidths=1.0, zorder=3)
        states = np.asarray(dec["states"])
        ax.scatter(states[:, dims[0]], states[:, dims[1]], s=2, color="black", zorder=2)
    names = OBS_NAMES.get(env_id, [])
    name = lambda k: names[k] if k < len(names) else f"observation dim {k}"  # noqa: E731
    ax.set_xlabel(name(dims[0]))
    ax.set_ylabel(name(dims[1]))
    ax.grid(alpha=0.3)
    colours = plt.cm.ScalarMappable(plt.Normalize(0, max_d), plt.cm.viridis)
    fig.colorbar(colours, ax=ax, label="chosen radius d of the safe region (red: an external force acts)")
    save_figure(fig, title, path)


def radius_against_speed(decisions, dims, scale):
    """Speed = the L1 norm of the drawn dims at s_i in Δ's normalised units; (speed, d, w, force) arrays."""
    speed = np.array([np.abs(dec["s_i"][dims] / scale).sum() for dec in decisions])
    return speed, np.array([dec["d"] for dec in decisions]), np.array([dec["w"] for dec in decisions]), \
        np.array([dec["force"] for dec in decisions])


def draw_radius(speed, d, bins, title, path):
    fig, ax = plt.subplots(figsize=(7, 4.8))
    ax.scatter(speed, d, s=1, alpha=0.2, color=plot.method_color("SAR-PPO"), label="decisions")
    ax.plot([speed[bins == b].mean() for b in range(10)], [d[bins == b].mean() for b in range(10)], "o-",
            color="black", label="mean per speed decile")
    ax.set_xlabel("speed at the decision's start (L1 of the drawn dims, Δ's units)")
    ax.set_ylabel("chosen radius d")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    save_figure(fig, title, path)


def spearman(x, y):
    rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731 - ties are rare for continuous values
    return float(np.corrcoef(rank(x), rank(y))[0, 1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("run", help="a SAR-PPO run folder trained with --delta-dims, with its checkpoint.pt")
    p.add_argument("--dims", type=lambda text: [int(i) for i in text.split(",")], default=None,
                   help="the two dims to draw, e.g. 2,3 (default: the run's --delta-dims)")
    p.add_argument("--draw", type=within(int, 1, 10_000), default=40,
                   help="decisions drawn in the picture (default 40)")
    p.add_argument("--decisions", type=within(int, 10, 10 ** 7), default=20_000,
                   help="decisions of the long rollout (default 20,000)")
    p.add_argument("--seed", type=within(int, 0, 2 ** 31 - 2), default=1,
                   help="seed of the rollouts' episodes (default 1)")
    p.add_argument("--out", default="figures", help="folder of the figures"
                   " (default figures/, git-ignored; the committed results/figures only if named)")
    args = p.parse_args(argv)
    check_folder("--out", args.out)
    config, env, record, repetition, policy = load(args.run)
    dims = args.dims or config["delta_dims"][:2]
    if len(dims) != 2 or not set(dims) <= set(config["delta_dims"]):
        fail(f"--dims: two of the run's --delta-dims {config['delta_dims']}, got {dims}")
    scale = np.sqrt(repetition.obs_stats.var[dims]) + 1e-3  # Δ's unit along each drawn dim
    name = os.path.basename(os.path.normpath(args.run))
    setting = config["noise"] or "deterministic"
    shown = rollout(env, record, policy, args.draw, args.seed)
    speed, d, w, force = radius_against_speed(rollout(env, record, policy, args.decisions, args.seed + 1), dims, scale)
    edges = np.quantile(speed, np.linspace(0, 1, 11))
    bins = np.clip(np.searchsorted(edges, speed, side="right") - 1, 0, 9)
    rho = spearman(speed, d)
    with promises.locked("--out", args.out):  # both figures of one process
        draw_regions(shown, dims, scale, f"{config['method']} on {config['env_id']}, δ = {config['dt']:g} s, "
                     f"{setting}\n"
                     f"trained {config['total_steps']:,} decisions; the safe regions of {args.draw} decisions:\n"
                     f"circle = a repetition's start, rhombus = its safe region (colour: d), red = an external force "
                     f"acts", os.path.join(args.out, f"{name}_safe_regions.png"), config["max_d"], config["env_id"])
        draw_radius(speed, d, bins, f"{config['method']} on {config['env_id']},\nδ = {config['dt']:g} s, {setting}, "
                    f"trained {config['total_steps']:,} decisions:\nd against speed over {args.decisions:,} decisions "
                    f"(Spearman ρ = {rho:.2f})", os.path.join(args.out, f"{name}_radius_vs_speed.png"))
    pushed = f"with a force {w[force].mean():.2f} δ-steps ({force.sum()} decisions), without " if force.any() else ""
    print(f"{name}: Spearman ρ(speed, d) = {rho:.3f} over {args.decisions:,} decisions; mean d in the slowest "
          f"decile {d[bins == 0].mean():.3f}, in the fastest {d[bins == 9].mean():.3f}; "
          f"mean w {pushed}{w[~force].mean():.2f}")


if __name__ == "__main__":
    promises.run(main)
