"""A trained policy at work: one deterministic episode of a run rendered headless as a GIF, each new decision
marked and the length of the repetition in force shown where the method repeats actions (the picture at the top
of README).

    python tools/animate.py      # Hopper at δ = 0.5 ms, 1M decisions → results/figures/hopper_sar_0.5ms.gif
    python tools/animate.py --run runs/Hopper-v5__figar__dt0.008__s1 --out figures/figar.gif

Any training script's run on a MuJoCo task: SAR-PPO and λ-SAR-PPO, FiGAR-C-PPO, PPO and PPO (scaled)
(--no-repeat), their TRPO and A2C (--a2c) versions, ARP-PPO and DAU. The run folder needs config.json and
model.pt (from --save-model) or else checkpoint.pt, which holds the same and more. dau.py has no --save-model: a
DAU run is rendered from its checkpoint.pt's "agent" (the three networks and their input statistics; its replay
memory is not read). A folder with neither file, as most committed runs in a clone, or a task MuJoCo does not
draw, is refused in one line. The env is built as the run's own script builds it (its make_decision_env: δ, the
stochastic setting, the hold penalty, the repetition), and the policy acts as in the scripts' evaluation: its
mean action (ARP-PPO: μ(s), without the AR noise; DAU: π(s), without the OU noise), every statistic frozen.
The GIF's directory is made if need be. A frame is rendered every --frame-s seconds of physical time (a multiple
of δ; by default 0.05 s, or the multiple of δ nearest it) beneath the repetition, so frames fall inside repetitions
as well as at their ends.
Drawn on each frame: the physical time, the decisions made so far and since the previous frame and, for SAR and
FiGAR-C (whose decisions repeat an action over several δ-steps), the repetition in force (its length in ms and
in δ-steps, known once the episode is over) and a strip of the last 0.5 s in which each decision is a block as
long as its repetition, its start a black tick: new decisions enter the strip at its right end. The other
methods decide every δ-step, which the frame says instead. A task that moves away (Hopper, Walker2d, Ant,
HalfCheetah, Swimmer) is followed by the camera. The floor is drawn 100 m long (the task's 20 m plane ends
before the episode does); a plane collides as infinite, so the episode is the same.
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
import arp_ppo  # noqa: E402
import bookkeeping  # noqa: E402
import dau  # noqa: E402
import figar_ppo  # noqa: E402
import figar_trpo  # noqa: E402
import sar_ppo  # noqa: E402
import sar_trpo  # noqa: E402
from tools import check_reproducible, evaluate, status  # noqa: E402 - a run's flags, its script, its saved file

DEFAULTS = {"run": os.path.join("results", "runs_1m", "Hopper-v5__sar__dt0.0005__s3"), "frame_s": None,
            "slow_motion": 1.0, "max_frames": 300, "width": 480, "height": 360, "seed": 0, "colors": 64}
COMMITTED = os.path.join("results", "figures", "hopper_sar_0.5ms.gif")
FRAME_S = 0.05  # without --frame-s, a frame every multiple of δ nearest FRAME_S seconds
STRIP_S = 0.5  # the decision strip shows the last STRIP_S seconds
BLOCK_COLOURS = ((230, 97, 1), (253, 184, 99))  # alternate, so that neighbouring decisions part
# The cart-poles' own cameras put the pole under the frame's text: (height looked at, distance), from 10° above
CART_POLE_CAMERA = {"InvertedPendulum": (0.25, 2.4), "InvertedDoublePendulum": (0.65, 3.6)}


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
        # follow the task's body (Hopper, Walker2d), which MujocoRenderer.render's free camera does not
        if (config or {}).get("trackbodyid", 0) > 0:
            self.viewer.cam.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self.viewer.cam.distance, self.viewer.cam.elevation = 4.0, -10.0  # the whole body, above the strip
        elif (body := roaming_body(raw.model)) is not None:  # a task whose camera does not follow it (Ant, HalfCheetah)
            self.viewer.cam.type, self.viewer.cam.trackbodyid = mujoco.mjtCamera.mjCAMERA_TRACKING, body
            self.viewer.cam.distance, self.viewer.cam.elevation = 4.0, -20.0
        elif type(raw).__name__.removesuffix("Env") in CART_POLE_CAMERA:
            height, distance = CART_POLE_CAMERA[type(raw).__name__.removesuffix("Env")]
            self.viewer.cam.lookat[:] = (0.0, 0.0, height)
            self.viewer.cam.distance, self.viewer.cam.elevation = distance, -10.0
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


def roaming_body(model):
    """The first body that can leave the picture, on a free joint or an unlimited slide (Ant's torso, HalfCheetah's
    and Swimmer's root; not a cart on its rail), else None."""
    import mujoco
    for j in range(model.njnt):
        free = model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
        if free or model.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE and not model.jnt_limited[j]:
            return int(model.jnt_bodyid[j])
    return None


def load(run):
    """(the run's training script, its flags as that script parses them from config.json, the saved state), or one
    line and exit 2. The state is model.pt's, else checkpoint.pt's (the same keys and more, read lazily: a DAU
    checkpoint's replay memory stays on the disk)."""
    if not os.path.isdir(run):
        fail(f"--run: {run} is not a run folder")
    try:
        with open(os.path.join(run, "config.json")) as f:
            config = json.load(f)
        command = check_reproducible.command(config, 1, "LOG_DIR")  # [python, <its script>, <the run's flags>...]
        module = status.SCRIPTS[os.path.basename(command[1])]
    except Exception as e:  # noqa: BLE001 - a missing, torn or foreign file: OS, JSON, key and type errors alike
        fail(f"--run: {run} has no readable config.json of a training script's run ({brief(e)})")
    saved = next((os.path.join(run, n) for n in ("model.pt", "checkpoint.pt") if os.path.isfile(os.path.join(run, n))),
                 None)
    if saved is None:  # a committed run in a clone keeps neither, except where a result needs it
        again = "run its dau.py command again (it keeps checkpoint.pt)" if module is dau \
            else "train it again with --save-model"
        fail(f"--run: {run} has neither model.pt nor checkpoint.pt (a clone keeps them only where a result needs "
             f"them); {again}")
    try:
        args = status.parsed(module, command[2:])  # as its script checks them: a value it refuses is one line
    except ValueError as e:
        fail(f"--run: {run}'s config.json holds flags {module.__name__}.py refuses: {e}")
    # the run's own budget and names too; its method named as the script names it now (a DAU run made before
    # --no-input-norm existed says "DAU" in its config.json, and is "DAU (no normalisation)")
    vars(args).update({k: v for k, v in config.items() if k in vars(args) and k != "method"})
    try:
        state = torch.load(saved, weights_only=True, mmap=True)
        state["agent"]  # noqa: B018 - raises KeyError if missing
        if module is not dau:
            state["obs_rms"]  # noqa: B018
        why = evaluate.other_run(state, config) if module is not dau or "config" in state else None
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file: zip, unpickling and key errors alike
        fail(f"--run: {saved} is not a readable model of a run ({brief(e)})")
    if why:  # a file dropped in from another run folder: rendered under this one's method, it would mislead
        fail(f"--run: {saved} is not of the run its config.json describes ({why})")
    if not envs.task(args.env_id).mujoco:
        fail(f"--run: {args.env_id} is not a MuJoCo task; animate.py renders MuJoCo tasks only")
    return module, args, state


def policy_and_env(module, args, state):
    """The run's env as its script builds it, the layer beneath which δ-steps happen (the repetition's, or the
    δ-env itself for DAU), and the deterministic policy obs → action with the saved weights and statistics."""
    if module is dau:  # as dau.py's evaluation: one δ-env, π(s) scaled to the action bounds, no OU noise
        env = envs.make_env(args.env_id, args.dt, args.gamma)
        agent = dau.Agent(env.observation_space.shape[0], env.action_space.shape[0], normalize=not args.no_input_norm)
        agent.load_state_dict(state["agent"])
        agent.eval()  # the input statistics frozen
        low, high = env.action_space.low, env.action_space.high

        def act(obs):
            action = agent.act(torch.as_tensor(obs, dtype=torch.float32)[None])[0].numpy()
            return action * (high - low) / 2 + (high + low) / 2
        return env, None, act
    env, repetition = module.make_decision_env(args)
    # the authors' log-std heads (--sb2-logstd of the TRPO scripts, --sb3-u-init of the PPO ones), where a run has one
    heads = {flag: True for flag in ("sb2_logstd", "sb3_u_init") if getattr(args, flag, False)}
    repeat = module is not arp_ppo and not getattr(args, "no_repeat", False)
    agent = module.Agent(env.observation_space.shape[0], env.unwrapped.action_space.shape[0], repeat=repeat,
                         **heads)
    agent.load_state_dict(state["agent"])
    obs_rms = gym.wrappers.utils.RunningMeanStd(shape=env.observation_space.shape)
    bookkeeping.load_stats(obs_rms, state["obs_rms"])
    if hasattr(repetition, "obs_stats"):  # SAR's Δ and its statistics (FiGAR-C's repetition has none)
        if "repetition_stats" in state:
            bookkeeping.load_stats(repetition.obs_stats, state["repetition_stats"])
        repetition.update_stats = False  # frozen, as in evaluation
    low, high = env.action_space.low, env.action_space.high

    def act(obs):  # the mean action (ARP-PPO's μ(s)), clipped to the bounds
        mean = agent.dist(torch.as_tensor(module.normalize(obs, obs_rms, args.norm_obs))[None]).mean[0]
        return np.clip(mean.numpy(), low, high)
    return env, repetition, act


def rollout(module, args, state, flags):
    """One deterministic episode: the rendered frames (δ-step, image) and each decision's (start δ-step, w)."""
    env, repetition, act = policy_and_env(module, args, state)
    below = env if repetition is None else repetition.env  # the δ-steps: the renderer goes beneath the repetition
    try:
        record = RenderEvery(below, round(flags.frame_s / args.dt), flags.width, flags.height, flags.max_frames)
    except Exception as e:  # noqa: BLE001 - no OpenGL context: the backends fail in many ways
        fail(f"rendering failed with MUJOCO_GL={os.environ['MUJOCO_GL']} ({brief(e)}); "
             "try MUJOCO_GL=osmesa, or install libegl1 / libosmesa6")
    if repetition is None:
        env = record
    else:
        repetition.env = record  # the stack as its script built it, with the renderer put beneath the repetition
    obs, _ = env.reset(seed=flags.seed)
    decisions, episode_return, done = [], 0.0, False
    # to the last frame, and the decision made in its state if it is one (else a frame would show one too few)
    while not done and (len(record.frames) < flags.max_frames or record.steps == record.frames[-1][0]):
        start = record.steps
        with torch.no_grad():
            action = act(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        decisions.append((start, info.get("w", 1)))  # DAU's env takes one δ-step a decision
        episode_return += info.get("undiscounted_reward", reward)  # the δ-scaled rewards of the decision's δ-steps
        done = terminated or truncated
    frames = record.frames
    record.close()
    return frames, decisions, episode_return, done


def draw(frames, decisions, dt, args, title, repeats):
    """Pillow images with the overlay: time, decision count and, where decisions repeat, the repetition in force and
    the strip."""
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
        lines = title + [f"t = {step * dt:5.2f} s   decisions: {made} (+{new} since the last frame)"]
        if repeats:
            lines.append(f"action held {w * dt * 1e3:5.1f} ms = {w} δ-steps")
        else:
            lines.append(f"a decision every δ-step ({dt * 1e3:g} ms): nothing repeated")
        lines = [part for line in lines for part in wrapped(line, font, args.width - 16)]
        ink.rectangle((0, 0, args.width, len(lines) * (font.size + 4) + 6), fill=(255, 255, 255))
        for i, line in enumerate(lines):
            ink.text((8, 4 + i * (font.size + 4)), line, fill=(0, 0, 0), font=font)
        if repeats:
            draw_strip(ink, decisions, now, step * dt, dt, args, font)
        images.append(image)
    return images


def wrapped(line, font, width):
    """`line` in parts no wider than `width` pixels, broken after a comma where one is (a long method name)."""
    parts = [line]
    while font.getlength(parts[-1]) > width and ", " in parts[-1]:
        words = parts[-1].split(", ")
        cut = max([k for k in range(1, len(words)) if font.getlength(", ".join(words[:k]) + ",") <= width] or [1])
        parts[-1:] = [", ".join(words[:cut]) + ",", ", ".join(words[cut:])]
    return parts


def draw_strip(ink, decisions, now, t_now, dt, args, font):
    """The last STRIP_S seconds, one block per decision, as wide as its repetition, a tick where it starts."""
    top, bottom, scale = args.height - 22, args.height - 6, (args.width - 16) / STRIP_S
    ink.rectangle((0, top - 16 - font.size, args.width, args.height), fill=(255, 255, 255))
    ink.text((8, top - 14 - font.size), f"decisions of the last {STRIP_S:g} s (one block each)", fill=(0, 0, 0),
             font=font)
    for i in range(now, -1, -1):
        start, width = decisions[i]
        a, b = start * dt, min((start + width) * dt, t_now)
        if b <= t_now - STRIP_S:
            break
        x0 = 8 + (max(a, t_now - STRIP_S) - (t_now - STRIP_S)) * scale
        x1 = 8 + (b - (t_now - STRIP_S)) * scale
        ink.rectangle((x0, top, max(x1, x0 + 1), bottom), fill=BLOCK_COLOURS[i % 2])
        ink.line((x0, top - 3, x0, bottom), fill=(0, 0, 0))  # a decision starts here


def title_of(args, state):
    """The run in a line: its budget, or how far it got where a checkpoint of an unfinished run is read; and its
    setting in a second line if it has one."""
    rows = state.get("rows") or [{}]  # a checkpoint's logged rows; model.pt is written at the end of a run
    if args.method.startswith("DAU") or getattr(args, "total_steps", None) is None:  # a budget of physical time
        seconds = min(args.physical_time, float(rows[-1].get("physical_time_s", args.physical_time)))
        budget = f"{seconds:g} s of experience"
    else:
        decisions = min(args.total_steps, int(rows[-1].get("decision_steps", args.total_steps)))
        budget = f"{decisions / 1e6:g}M decisions" if decisions >= 100_000 else f"{decisions:,} decisions"
    lines = [f"{args.method}, {args.env_id}, δ = {args.dt * 1e3:g} ms, {budget}, seed {args.seed}"]
    setting = [getattr(args, "noise", None) or ""] + ["hold penalty"] * bool(getattr(args, "hold_penalty", False))
    if any(setting):
        lines.append("trained and shown under: " + ", ".join(s for s in setting if s))
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--run", default=DEFAULTS["run"],
                   help=f"a run folder with config.json and model.pt or checkpoint.pt (default {DEFAULTS['run']})")
    p.add_argument("--out", default=None,
                   help=f"the GIF file to write, its directory made if need be (default {COMMITTED}; required with any "
                        "non-default flag)")
    p.add_argument("--frame-s", type=within(float, 0, 10, open_low=True), default=DEFAULTS["frame_s"],
                   help="physical seconds between frames, a multiple of the run's δ (default: the multiple "
                        f"nearest {FRAME_S:g})")
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
    if not args.out.endswith(".gif"):
        fail(f"--out: must end in .gif, got {args.out}")
    promises.check_writable("--out", args.out)  # its folder is made when the GIF is written
    run = args.run if os.path.isabs(args.run) or os.path.isdir(args.run) else os.path.join(ROOT, args.run)
    torch.set_num_threads(1)  # one small policy: a thread is enough, and leaves the other cores to training runs
    module, trained, state = load(run)
    dt = trained.dt
    if args.frame_s is None:  # the default: the multiple of δ nearest FRAME_S
        args.frame_s = max(round(FRAME_S / dt), 1) * dt
    if abs(args.frame_s / dt - round(args.frame_s / dt)) > 1e-6 or round(args.frame_s / dt) < 1:
        fail(f"--frame-s: {args.frame_s:g} is not a multiple of the run's δ = {dt:g} s; "
             f"say --frame-s {max(round(args.frame_s / dt), 1) * dt:g}")
    if round(args.frame_s * args.slow_motion * 1000) < 10:  # a GIF's frame time is in hundredths of a second
        fail(f"--slow-motion: {args.slow_motion:g} × --frame-s {args.frame_s:g} s gives frames under 10 ms, "
             "shorter than a GIF can show")
    title = title_of(trained, state)
    try:
        frames, decisions, episode_return, done = rollout(module, trained, state, args)
    except Exception as e:  # noqa: BLE001 - not OpenGL (that is RenderEvery's): say what did fail
        fail(f"--run: the episode of {run} failed ({brief(e)}); does its model.pt fit its config.json?")
    total_steps = frames[-1][0]
    # SAR and FiGAR-C repeat an action over several δ-steps (their policies have the repetition dim u); the others
    # decide every δ-step: no repetition to draw
    repeats = module in (sar_ppo, sar_trpo, figar_ppo, figar_trpo) and not getattr(trained, "no_repeat", False)
    images = draw(frames, decisions, dt, args, title, repeats)
    duration = round(args.frame_s * args.slow_motion * 1000)
    palette = [im.quantize(args.colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE) for im in images]
    with promises.locked("--out", os.path.dirname(os.path.abspath(args.out))), \
            promises.replacing(args.out, binary=True) as f:
        palette[0].save(f, format="GIF", save_all=True, append_images=palette[1:], duration=duration, loop=0)
    shown = [w for s, w in decisions if s < total_steps]
    print(f"{args.out}: {len(images)} frames, {duration} ms each ({args.slow_motion:g}× physical time), "
          f"{os.path.getsize(args.out) / 1e6:.2f} MB; {total_steps * dt:.2f} s of the episode shown, "
          f"{len(shown)} decisions" + (f", mean repetition {np.mean(shown) * dt * 1e3:.1f} ms; " if repeats else "; ")
          + (f"episode return {episode_return:.1f}" if done else "episode cut at --max-frames"))


if __name__ == "__main__":
    promises.run(main)
