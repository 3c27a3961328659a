"""A trained SAR-PPO policy at work: one deterministic episode rendered headless as a GIF, each new
decision marked and the length of the repetition in force shown (the picture at the top of README).

    python tools/animate.py      # Hopper at δ = 0.5 ms, 1M decisions → results/figures/hopper_sar_0.5ms.gif

The run must be a plain SAR-PPO run: its model.pt (from --save-model), or else its checkpoint.pt, holds
the agent, its input statistics and Δ's statistics, its config.json the env and flags (a run folder with
neither, as most committed runs in a clone, is refused in one line: train it again with --save-model).
The GIF's directory is made if need be. The policy acts with its mean action, every statistic frozen. A
frame is rendered every --frame-s seconds of physical time (a multiple of δ) beneath the repetition, so
frames fall inside repetitions as well as at their ends.
Drawn on each frame: the physical time, the decisions made so far and since the previous frame, the
repetition in force (its length in ms and in δ-steps, known once the episode is over), and a strip of
the last 0.5 s in which each decision is a block as long as its repetition, its start a black tick:
new decisions enter the strip at its right end. The floor is drawn 100 m long (the task's 20 m
plane ends before the episode does); a plane collides as infinite, so the episode is the same.
The default run is seed 3, whose mean action returned the most at 0.5 ms of the three seeds
(`benchmark/same_policy_across_dt.py --model <run>/model.pt --dts lowest --episodes 3 --deterministic`:
3338, against 2944 for seed 2 and 1658 for seed 1).

Rendering needs an OpenGL backend without a display: MUJOCO_GL=egl (the default here) or
MUJOCO_GL=osmesa (Debian: libegl1 or libosmesa6). With any flag other than its default the GIF is
written only to an explicit --out, never over the committed one.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("MUJOCO_GL", "egl")  # headless; before mujoco is imported

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tools import promises  # noqa: E402
from tools.promises import brief, fail, within  # noqa: E402
try:
    import envs  # noqa: E402 - imports mujoco, which reads MUJOCO_GL
except RuntimeError as e:  # "invalid value for environment variable MUJOCO_GL"
    fail(f"MUJOCO_GL: {e}; use egl or osmesa")
import sar_ppo  # noqa: E402

DEFAULTS = {"run": os.path.join("results", "runs_1m", "Hopper-v5__sar__dt0.0005__s3"), "frame_s": 0.05,
            "slow_motion": 1.0, "max_frames": 300, "width": 480, "height": 360, "seed": 0, "colors": 64}
COMMITTED = os.path.join("results", "figures", "hopper_sar_0.5ms.gif")
STRIP_S = 0.5  # the decision strip shows the last STRIP_S seconds
BLOCK_COLOURS = ((230, 97, 1), (253, 184, 99))  # alternate, so that neighbouring decisions part


class RenderEvery(gym.Wrapper):
    """Beneath the repetition: renders every `every`-th δ-step (and the reset state), which the
    repetition, one `step` per decision, would skip."""

    def __init__(self, env, every, width, height, max_frames):
        super().__init__(env)
        from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer
        raw = env.unwrapped
        config = raw.mujoco_renderer.default_cam_config
        import mujoco
        floor = mujoco.mj_name2id(raw.model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        if floor >= 0 and raw.model.geom_type[floor] == mujoco.mjtGeom.mjGEOM_PLANE:
            # drawn 100 m long instead of 20 (Hopper runs off it), its squares kept their size: a plane
            # collides as infinite, so this changes the picture only (geom_rbound is 0 whatever the size)
            scale = np.maximum(100.0 / raw.model.geom_size[floor, :2], 1.0)
            raw.model.geom_size[floor, :2] *= scale
            if raw.model.geom_matid[floor] >= 0:
                raw.model.mat_texrepeat[raw.model.geom_matid[floor]] *= scale
        self.renderer = MujocoRenderer(raw.model, raw.data, config, width, height)
        self.renderer.render("rgb_array")  # creates the viewer and its camera, set to the task's config
        self.viewer = self.renderer.viewer
        if config and "trackbodyid" in config:  # follow the body, which MujocoRenderer.render's free camera does not
            self.viewer.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self.viewer.cam.distance, self.viewer.cam.elevation = 4.0, -10.0  # the whole body, above the strip
        self.every, self.max_frames = every, max_frames

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.steps, self.frames = 0, [(0, self.viewer.render("rgb_array").copy())]
        return obs, info

    def step(self, action):
        out = self.env.step(action)
        self.steps += 1
        if self.steps % self.every == 0 and len(self.frames) < self.max_frames:
            self.frames.append((self.steps, self.viewer.render("rgb_array").copy()))
        return out

    def close(self):
        self.renderer.close()
        super().close()


def load(run):
    """The run's config, its agent and the two sets of statistics from model.pt, or from checkpoint.pt (which holds
    them too) when the run was trained without --save-model."""
    saved = [os.path.join(run, n) for n in ("model.pt", "checkpoint.pt") if os.path.exists(os.path.join(run, n))]
    if os.path.isdir(run) and not saved:  # a committed run in a clone keeps neither, except where a result needs it
        fail(f"--run: {run} has neither model.pt nor checkpoint.pt (a clone keeps them only where a result needs "
             "them); train it again with --save-model")
    try:
        with open(os.path.join(run, "config.json")) as f:
            config = json.load(f)
        state = torch.load(saved[0], weights_only=True)
        plain = not config.get("no_repeat") and config.get("method") == "SAR-PPO" and "repetition_stats" in state
        for key in ("env_id", "dt", "gamma", "max_d", "max_t", "norm", "delta_dims", "norm_obs", "total_steps", "seed"):
            config[key]  # noqa: B018 - raises KeyError if missing
    except Exception as e:  # noqa: BLE001 - a missing, torn or foreign file: OS, JSON, zip, unpickling errors alike
        fail(f"--run: {run} has no readable config.json and model.pt (train it with --save-model): {brief(e)}")
    if not plain:
        fail(f"--run: {run} is not a plain SAR-PPO run saved with its statistics")
    if config.get("noise") or config.get("hold_penalty"):
        fail(f"--run: {run} was trained under --noise or --hold-penalty; animate.py renders the plain task")
    if not isinstance(config["dt"], (int, float)) or not config["dt"] > 0:
        fail(f"--run: {run}'s config.json has no δ > 0 (dt: {config['dt']!r})")
    return config, state


def rollout(config, state, args):
    """One deterministic episode: the rendered frames (δ-step, image) and each decision's (start δ-step, w)."""
    every = round(args.frame_s / config["dt"])
    env = envs.make_env(config["env_id"], config["dt"], config["gamma"])
    try:
        record = RenderEvery(env, every, args.width, args.height, args.max_frames)
    except Exception as e:  # noqa: BLE001 - no OpenGL context: the backends fail in many ways
        fail(f"rendering failed with MUJOCO_GL={os.environ['MUJOCO_GL']} ({brief(e)}); "
             "try MUJOCO_GL=osmesa, or install libegl1 / libosmesa6")
    repetition = sar_ppo.SafeActionRepetition(record, config["max_d"], config["max_t"], norm=config["norm"],
                                              delta_dims=config["delta_dims"])
    sar_ppo.load_stats(repetition.obs_stats, state["repetition_stats"])
    repetition.update_stats = False  # frozen, as in evaluation
    obs_rms = gym.wrappers.utils.RunningMeanStd(shape=repetition.observation_space.shape)
    sar_ppo.load_stats(obs_rms, state["obs_rms"])
    agent = sar_ppo.Agent(repetition.observation_space.shape[0], record.action_space.shape[0], repeat=True)
    agent.load_state_dict(state["agent"])
    low, high = repetition.action_space.low, repetition.action_space.high
    obs, _ = repetition.reset(seed=args.seed)
    decisions, episode_return, done = [], 0.0, False
    while not done and len(record.frames) < args.max_frames:
        with torch.no_grad():
            mean = agent.dist(torch.as_tensor(sar_ppo.normalize(obs, obs_rms, config["norm_obs"]))[None]).mean[0]
        start = record.steps
        obs, _, terminated, truncated, info = repetition.step(np.clip(mean.numpy(), low, high))
        decisions.append((start, info["w"]))
        episode_return += info["undiscounted_reward"]
        done = terminated or truncated
    frames = record.frames
    record.close()
    return frames, decisions, episode_return, done


def draw(frames, decisions, dt, args, title):
    """Pillow images with the overlay: time, decision count, the repetition in force, the strip."""
    from matplotlib import font_manager  # its DejaVu Sans has δ
    font = ImageFont.truetype(font_manager.findfont("DejaVu Sans"), size=max(11, args.width // 36))
    starts = np.array([s for s, _ in decisions])
    images, previous = [], 0
    for step, pixels in frames:
        image = Image.fromarray(pixels)
        ink = ImageDraw.Draw(image)
        now = max(int(np.searchsorted(starts, step, side="right")) - 1, 0)  # the decision acting after this δ-step
        made = now + 1  # decisions made up to this frame's state, the one made in it included
        new, previous = made - previous, made
        w = decisions[now][1]
        lines = [title, f"t = {step * dt:5.2f} s   decisions: {made} (+{new} since the last frame)",
                 f"action held {w * dt * 1e3:5.1f} ms = {w} δ-steps"]
        ink.rectangle((0, 0, args.width, 3 * (font.size + 4) + 6), fill=(255, 255, 255))
        for i, line in enumerate(lines):
            ink.text((8, 4 + i * (font.size + 4)), line, fill=(0, 0, 0), font=font)
        # the strip: the last STRIP_S seconds, one block per decision, as wide as its repetition
        top, bottom, scale = args.height - 22, args.height - 6, (args.width - 16) / STRIP_S
        ink.rectangle((0, top - 16 - font.size, args.width, args.height), fill=(255, 255, 255))
        ink.text((8, top - 14 - font.size), f"decisions of the last {STRIP_S:g} s (one block each)", fill=(0, 0, 0),
                 font=font)
        t_now = step * dt
        for i in range(now, -1, -1):
            start, width = decisions[i]
            a, b = start * dt, min((start + width) * dt, t_now)
            if b <= t_now - STRIP_S:
                break
            x0 = 8 + (max(a, t_now - STRIP_S) - (t_now - STRIP_S)) * scale
            x1 = 8 + (b - (t_now - STRIP_S)) * scale
            ink.rectangle((x0, top, max(x1, x0 + 1), bottom), fill=BLOCK_COLOURS[i % 2])
            ink.line((x0, top - 3, x0, bottom), fill=(0, 0, 0))  # a decision starts here
        images.append(image)
    return images


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--run", default=DEFAULTS["run"],
                   help=f"an SAR-PPO run with model.pt or checkpoint.pt (default {DEFAULTS['run']})")
    p.add_argument("--out", default=None,
                   help=f"the GIF file to write, its directory made if need be (default {COMMITTED}; required with any "
                        "non-default flag)")
    p.add_argument("--frame-s", type=within(float, 0, 10, open_low=True), default=DEFAULTS["frame_s"],
                   help="physical seconds between frames, a multiple of the run's δ (default 0.05)")
    p.add_argument("--slow-motion", type=within(float, 0, 1000, open_low=True), default=DEFAULTS["slow_motion"],
                   help="playback time per physical time (default 1: real time)")
    p.add_argument("--max-frames", type=within(int, 2, 10_000), default=DEFAULTS["max_frames"],
                   help="at most this many frames (default 300)")
    p.add_argument("--width", type=within(int, 64, 4096), default=DEFAULTS["width"], help="pixels (default 480)")
    p.add_argument("--height", type=within(int, 64, 4096), default=DEFAULTS["height"], help="pixels (default 360)")
    p.add_argument("--seed", type=promises.SEED, default=DEFAULTS["seed"],
                   help="seed of the episode's initial state (default 0)")
    p.add_argument("--colors", type=within(int, 2, 256), default=DEFAULTS["colors"],
                   help="palette size per frame, 2-256 (default 64)")
    args = p.parse_args(argv)
    changed = [k for k, v in DEFAULTS.items() if getattr(args, k) != v]
    if args.out is None:
        if changed:
            fail(f"--out: required with non-default --{changed[0].replace('_', '-')}; "
                 f"{COMMITTED} is made with the defaults only")
        args.out = os.path.join(ROOT, COMMITTED)
    elif changed and promises.same_file(args.out, os.path.join(ROOT, COMMITTED)):
        fail(f"--out: {COMMITTED} is made with the defaults only; write elsewhere")
    if round(args.frame_s * args.slow_motion * 1000) < 10:  # a GIF's frame time is in hundredths of a second
        fail(f"--slow-motion: {args.slow_motion:g} × --frame-s {args.frame_s:g} s gives frames under 10 ms, "
             "shorter than a GIF can show")
    if not args.out.endswith(".gif"):
        fail(f"--out: must end in .gif, got {args.out}")
    promises.check_writable("--out", args.out)  # its folder is made when the GIF is written
    run = args.run if os.path.isabs(args.run) or os.path.isdir(args.run) else os.path.join(ROOT, args.run)
    config, state = load(run)
    dt = config["dt"]
    if abs(args.frame_s / dt - round(args.frame_s / dt)) > 1e-6 or round(args.frame_s / dt) < 1:
        fail(f"--frame-s: {args.frame_s:g} is not a multiple of the run's δ = {dt:g} s")
    try:
        frames, decisions, episode_return, done = rollout(config, state, args)
    except Exception as e:  # noqa: BLE001 - not OpenGL (that is RenderEvery's): say what did fail
        fail(f"--run: the episode of {run} failed ({brief(e)}); does its model.pt fit its config.json?")
    total_steps = frames[-1][0]
    title = (f"{config['method']}, {config['env_id']}, δ = {dt * 1e3:g} ms, "
             f"{config['total_steps'] / 1e6:g}M decisions, seed {config['seed']}")
    images = draw(frames, decisions, dt, args, title)
    duration = round(args.frame_s * args.slow_motion * 1000)
    palette = [im.quantize(args.colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) for im in images]
    with promises.locked("--out", os.path.dirname(os.path.abspath(args.out))), \
            promises.replacing(args.out, binary=True) as f:
        palette[0].save(f, format="GIF", save_all=True, append_images=palette[1:], duration=duration, loop=0)
    shown = [w for s, w in decisions if s < total_steps]
    print(f"{args.out}: {len(images)} frames, {duration} ms each ({args.slow_motion:g}× physical time), "
          f"{os.path.getsize(args.out) / 1e6:.2f} MB; {total_steps * dt:.2f} s of the episode shown, "
          f"{len(shown)} decisions, mean repetition {np.mean(shown) * dt * 1e3:.1f} ms; "
          + (f"episode return {episode_return:.1f}" if done else "episode cut at --max-frames"))


if __name__ == "__main__":
    promises.run(main)
