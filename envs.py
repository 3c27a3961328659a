"""Environments shared by the training scripts (sar_*.py, figar_*.py, arp_ppo.py, dau.py): δ-rescaled
tasks (the eight MuJoCo v5 tasks of Table 1, any other MuJoCo task at any δ, any other gymnasium task with
one-dimensional Box spaces at its own step), the paper's stochastic and partially observable variants, and
the toy AlertThenOff of Sec. 4.3. Nothing here knows about learning."""
import dataclasses
import functools
import math
from typing import NamedTuple, Optional

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium.envs.mujoco import MujocoEnv

# Table 1 (App. J.2): (δ_lowest, δ_low, δ_middle, δ_original = δ0), in seconds.
DT_LEVELS = ("lowest", "low", "middle", "original")
DT_TABLE = {
    "Ant-v5": (2e-3, 5e-3, 1e-2, 5e-2),
    "HalfCheetah-v5": (2e-3, 5e-3, 1e-2, 5e-2),
    "InvertedDoublePendulum-v5": (2e-3, 5e-3, 1e-2, 5e-2),
    "InvertedPendulum-v5": (2e-3, 5e-3, 1e-2, 4e-2),
    "Swimmer-v5": (2e-3, 5e-3, 1e-2, 4e-2),
    "Reacher-v5": (1e-3, 2e-3, 5e-3, 2e-2),
    "Hopper-v5": (5e-4, 1e-3, 2e-3, 8e-3),
    "Walker2d-v5": (5e-4, 1e-3, 2e-3, 8e-3),
}

# App. J.2: (σ_act, σ_ext, σ_ext2) per env, and the body the external force acts on.
NOISE_STD = {
    "Ant": (1, 100, 300), "HalfCheetah": (1, 30, 300), "InvertedDoublePendulum": (1, 100, 1000),
    "InvertedPendulum": (3, 300, 1000), "Swimmer": (1, 100, 1000), "Reacher": (1, 300, 1000),
    "Hopper": (1, 30, 300), "Walker2d": (1, 100, 1000),
}
NOISE_KINDS = ("action", "ext-force", "ext-force-perceptible")
NOISE_PROB = 0.05  # p_act = p_ext
FORCE_BODY = {"InvertedPendulum": "cart", "InvertedDoublePendulum": "cart", "Reacher": "body1"}
# App. H: (t_thres in seconds, r_penalty) of the partially observable setting.
HOLD_PENALTY = {"InvertedPendulum": (0.04, -1.0), "InvertedDoublePendulum": (0.04, -10.0),
                "Hopper": (0.025, -20.0), "Walker2d": (0.025, -20.0)}


class Task(NamedTuple):
    """What envs.py knows of a registered task: δ0 in seconds, whether it is MuJoCo (so δ can change),
    and its episode limit at δ0 (None: none)."""
    dt0: float
    mujoco: bool
    max_episode_steps: Optional[int]


@functools.lru_cache(maxsize=None)
def task(env_id):
    """The Task of `env_id`: a paper task from Table 1, any other registered gymnasium env with a
    one-dimensional Box observation and action, created once to read them. δ0 is a MuJoCo env's own
    `dt` (timestep × frame_skip); for another env its `dt` attribute if it has one (Pendulum-v1: 0.05),
    else None: `resolve_dt` then asks for the seconds one of its steps stands for."""
    if env_id in DT_TABLE:
        return Task(DT_TABLE[env_id][-1], True, gym.spec(env_id).max_episode_steps)
    try:
        spec = gym.spec(env_id)
    except (gym.error.Error, TypeError, AttributeError) as e:
        raise ValueError(f"env_id: unknown environment {env_id!r} ({e})") from None
    try:
        env = gym.make(_bare(spec))
    except Exception as e:  # noqa: BLE001 - a missing dependency (Box2D) or a broken entry point: one line
        raise ValueError(f"env_id: cannot create {env_id!r} ({type(e).__name__}: {e})") from None
    try:
        spaces = env.observation_space, env.action_space
        if not all(isinstance(s, gym.spaces.Box) and len(s.shape) == 1 for s in spaces):
            shown = [f"Box of shape {s.shape}" if isinstance(s, gym.spaces.Box) else str(s) for s in spaces]
            raise ValueError(f"env_id: {env_id} has a {shown[0]} observation and a {shown[1]} action; "
                             f"this needs one-dimensional Box spaces for both")
        raw = env.unwrapped
        mujoco = isinstance(raw, MujocoEnv)
        dt0 = raw.dt if mujoco or hasattr(raw, "dt") else None
        if dt0 is not None and not (isinstance(dt0, (int, float)) and 0 < dt0 < math.inf):
            raise ValueError(f"env_id: {env_id}'s own dt is {dt0!r}, not a number of seconds above 0")
        dt0 = None if dt0 is None else float(dt0)
    finally:
        env.close()
    return Task(dt0, mujoco, spec.max_episode_steps)


def is_paper_task(env_id):
    """One of the eight MuJoCo tasks of Table 1, which have δ levels, noise scales and hold penalties."""
    return env_id in DT_TABLE


def dt0_of(env_id):
    """δ0 of `env_id` in seconds: Table 1's δ_original for a paper task, else the env's own step."""
    return task(env_id).dt0


def resolve_dt(env_id, dt=None):
    """δ in seconds from None (δ0), a level of Table 1 (paper tasks only), or a number (or its string)
    in [δ0/1000, δ0]. A task that is not MuJoCo runs at its own δ0 only; one without a `dt` of its own
    (MountainCarContinuous-v0) needs `dt`, the seconds one of its steps stands for."""
    dt0, mujoco, _ = task(env_id)
    if dt0 is None:
        try:
            if 0 < float(dt) < math.inf:
                return float(dt)
        except (TypeError, ValueError):
            pass
        raise ValueError(f"dt: {env_id} has no dt of its own; give the seconds one of its steps stands for, "
                         "e.g. 0.01"
                         + ("" if dt is None else f", got {dt!r}"))
    if dt is None:
        return dt0
    if isinstance(dt, str) and dt in DT_LEVELS:
        if env_id in DT_TABLE:
            return DT_TABLE[env_id][DT_LEVELS.index(dt)]
        if mujoco:
            raise ValueError(f"dt: levels of Table 1 exist for the eight paper tasks only; give δ in seconds "
                             f"(at most {env_id}'s own δ0 = {dt0:g})")
    try:
        value = float(dt)
    except (TypeError, ValueError):
        value = None
    if not mujoco:
        if value is not None and math.isclose(value, dt0, rel_tol=1e-9):
            return dt0
        raise ValueError(f"dt: {env_id} is not a MuJoCo task, so it runs at its own step only "
                         f"(δ0 = {dt0:g}); got {dt!r}")
    if value is None:
        if env_id in DT_TABLE:
            raise ValueError(f"dt: {dt!r} is neither a number nor one of {', '.join(DT_LEVELS)}")
        raise ValueError(f"dt: {dt!r} is not a number of seconds")
    if not value > 0:  # also rejects nan
        raise ValueError(f"dt: must be > 0, got {dt}")
    if math.isclose(value, dt0, rel_tol=1e-9):  # δ0 to float error: its physics untouched
        return dt0
    if value > dt0:
        raise ValueError(f"dt: {value:g} is above {env_id}'s own δ0 = {dt0:g}")
    if value < dt0 / 1000 * (1 - 1e-9):  # a floor on cost: below it a run (and a repetition) never ends
        raise ValueError(f"dt: {value:g} is below {env_id}'s δ0/1000 = {dt0 / 1000:g}, where an episode "
                         f"already takes 1000 times its δ0-steps")
    return value


def _has_time_limit(env):
    while isinstance(env, gym.Wrapper):
        if isinstance(env, gym.wrappers.TimeLimit):
            return True
        env = env.env
    return False


class DtEnv(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A task stepped every δ seconds with the physical time limit and return scale of δ0.
    A MuJoCo task gets frame_skip 1 and MuJoCo timestep δ (untouched at its own δ0); any other env
    runs at δ = δ0 only. `max_episode_steps` is the task's limit at δ0 (None: no limit), kept in
    seconds: `env` has no TimeLimit of its own. `dt0` is δ0, by default the env's own `dt`."""

    def __init__(self, env, dt, max_episode_steps, gamma=0.99, dt0=None):
        gym.utils.RecordConstructorArgs.__init__(self, dt=dt, max_episode_steps=max_episode_steps, gamma=gamma,
                                                 dt0=dt0)
        gym.Wrapper.__init__(self, env)
        if not 0 < gamma <= 1:  # also refuses nan
            raise ValueError(f"gamma: the discount per δ0-step lies in (0, 1], got {gamma!r}")
        if _has_time_limit(env):  # it counts δ-steps: at δ < δ0 it would end episodes early
            raise ValueError("env: has gymnasium's TimeLimit inside, which counts δ-steps; give DtEnv "
                             "gym.make(...).unwrapped and the task's max_episode_steps, as make_env does")
        raw = env.unwrapped
        dt0 = raw.dt if dt0 is None else dt0
        self.dt, self.dt0 = dt, dt0
        if dt != dt0:
            if not isinstance(raw, MujocoEnv):
                raise ValueError(f"dt: {type(raw).__name__} is not a MuJoCo task, so it runs at its own step "
                                 f"only (δ0 = {dt0:g}); got {dt}")
            raw.frame_skip = 1
            raw.model.opt.timestep = dt
            raw.metadata = {**raw.metadata, "render_fps": int(round(1 / dt))}
        self.gamma_dt = gamma ** (dt / dt0)  # γ_δ = γ^(δ/δ0), same effective horizon (App. J.2)
        self.reward_scale = dt / dt0  # r_δ = r·δ (eq. 2), in units of δ0-steps
        # Same physical limit; the 1e-9 guards int() against 19999.999... from float division.
        self.max_steps = math.inf if max_episode_steps is None else int(max_episode_steps * dt0 / dt + 1e-9)
        self.episode_return, self.episode_length = 0.0, 0

    def reset(self, **kwargs):
        self.episode_return, self.episode_length = 0.0, 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        reward *= self.reward_scale
        self.episode_return += reward
        self.episode_length += 1
        if self.episode_length >= self.max_steps:
            truncated = True
        if terminated or truncated:
            info["episode"] = {"r": self.episode_return, "l": self.episode_length,
                               "t": self.episode_length * self.dt}
        return obs, reward, terminated, truncated, info

    def state(self):  # where the episode is: for a checkpoint (env_state)
        return {"episode_return": self.episode_return, "episode_length": self.episode_length}

    def restore(self, state):
        self.episode_return, self.episode_length = state["episode_return"], state["episode_length"]


# ---------------------------------------------------------------- the flags of the env, in every training script
def add_flags(p, stochastic=True):
    """--env-id and --dt; with `stochastic`, the stochastic and partially observable settings (Sec. 5.2, App. H)."""
    from flags import within  # here: flags.py needs no torch
    p.add_argument("--env-id", default="InvertedPendulum-v5", help="a gymnasium task with Box spaces (Table 1's eight)")
    p.add_argument("--dt", help="δ in seconds, or lowest|low|middle|original (Table 1); default lowest, or the task's")
    if stochastic:
        p.add_argument("--noise", choices=NOISE_KINDS, default=None, help="stochastic setting (Sec. 5.2)")
        p.add_argument("--noise-prob", type=within(float, 0, 1), help=f"p_act / p_ext (default {NOISE_PROB})")
        p.add_argument("--noise-std", type=within(float, 0, 1e6), help="σ_act / σ_ext / σ_ext2 (default: App. J.2's)")
        p.add_argument("--hold-penalty", action="store_true",
                       help="App. H: a penalty once an action is held for t_thres")


def check_flags(args):
    """--dt in seconds (by default δ_lowest of Table 1's tasks, another task's own); the stochastic settings on
    the tasks App. J.2 and App. H define them for."""
    from flags import fail  # as add_flags
    try:
        default_dt = "lowest" if args.env_id in DT_TABLE else None  # given empty, --dt is bad input
        args.dt = resolve_dt(args.env_id, default_dt if args.dt is None else args.dt)
    except ValueError as e:
        name, _, message = str(e).partition(": ")
        fail(f"--{name.replace('_', '-')}: {message}")
    if "noise" not in args:
        return
    name = args.env_id.split("-")[0]
    for flag, ok, rule in [
            ("--noise-prob/--noise-std", args.noise or {args.noise_prob, args.noise_std} == {None}, "need --noise"),
            ("--noise", not args.noise or name in NOISE_STD, f"App. J.2 defines it for {', '.join(NOISE_STD)}"
             f" only, not {args.env_id}"),
            ("--time-feature", not getattr(args, "time_feature", False) or task(args.env_id).max_episode_steps,
             f"{args.env_id} has no time limit, so the time feature would be 0 throughout"),
            ("--hold-penalty", not args.hold_penalty or name in HOLD_PENALTY,
             f"App. H defines it for {', '.join(HOLD_PENALTY)} only, not {args.env_id}")]:
        if not ok:
            fail(f"{flag}: {rule}")


def setting(args):
    """The run name's part for the stochastic setting: __<noise>[-p<p>][-std<σ>][__hold-penalty], or ""."""
    part = ""
    if args.noise:
        part += f"__{args.noise}"
    if args.noise_prob is not None:
        part += f"-p{args.noise_prob:g}"
    if args.noise_std is not None:
        part += f"-std{args.noise_std:g}"
    if args.hold_penalty:
        part += "__hold-penalty"
    return part


def _bare(spec):
    """`spec` without TimeLimit, OrderEnforcing or PassiveEnvChecker."""
    return dataclasses.replace(spec, max_episode_steps=None, order_enforce=False, disable_env_checker=True)


def make_env(env_id, dt=None, gamma=0.99):
    """`env_id` stepped every δ = `dt` seconds (see `resolve_dt`): for a MuJoCo task frame_skip 1 and
    MuJoCo timestep δ, untouched at δ0; any other task at its own step.

    No PassiveEnvChecker, OrderEnforcing or TimeLimit under it: the repetition loops call `step`
    millions of times, so the only layer is DtEnv. Its `env.spec` re-creates it. Read off `env.dt`,
    `env.dt0`, `env.gamma_dt` (γ_δ), `env.max_steps`, and the running `env.episode_return` / `env.episode_length`.
    """
    dt = resolve_dt(env_id, dt)
    spec = gym.spec(env_id)
    if env_id in DT_TABLE:  # δ0 from the env itself, as the committed runs had it
        return DtEnv(gym.make(_bare(spec)), dt, spec.max_episode_steps, gamma)  # 1000 steps at δ0, or 50 for Reacher
    return DtEnv(gym.make(_bare(spec)), dt, spec.max_episode_steps, gamma, dt0=task(env_id).dt0 or dt)


def _base_name(env):
    spec = env.unwrapped.spec
    return spec.name if spec is not None else type(env.unwrapped).__name__


class Perturb(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Sec. 5.2's stochastic settings, drawn once per call of `step`: wrap it *outside* the action
    repetition so a draw holds for a whole decision, and a force is cleared at the next one (the
    authors' wrappers_ex.py sets xfrc_applied once a decision, before its repetition)."""

    def __init__(self, env, kind, prob=None, std=None):
        gym.utils.RecordConstructorArgs.__init__(self, kind=kind, prob=prob, std=std)
        gym.Wrapper.__init__(self, env)
        if kind not in NOISE_KINDS:
            raise ValueError(f"kind: unknown noise kind {kind!r}; choose from {', '.join(NOISE_KINDS)}")
        name = _base_name(env)
        if (prob is None or std is None) and name not in NOISE_STD:
            raise ValueError(f"std: no default for {name}; pass prob and std")
        self.kind = kind
        self.prob = NOISE_PROB if prob is None else float(prob)
        self.std = NOISE_STD[name][NOISE_KINDS.index(kind)] if std is None else float(std)
        if not 0 <= self.prob <= 1:
            raise ValueError(f"prob: must lie in [0, 1], got {prob}")
        if not self.std >= 0:
            raise ValueError(f"std: must be >= 0, got {std}")
        raw = env.unwrapped
        self.num_actions = raw.action_space.shape[0]  # K: the task's own action dims
        self.action_low, self.action_high = raw.action_space.low, raw.action_space.high
        if kind != "action":
            body = FORCE_BODY.get(name, "torso")
            if not isinstance(raw, MujocoEnv):
                raise ValueError(f"kind: {kind} pushes a MuJoCo body; {name} is not a MuJoCo task")
            try:
                self.body = raw.model.body(body).id
            except KeyError:
                raise ValueError(f"kind: {kind} pushes the body {body!r}, which {name} has not") from None
            self.data = raw.data
            self.columns = slice(3, 6) if name == "Reacher" else slice(0, 3)  # torque for Reacher
            self.force = np.zeros(3)
        if kind == "ext-force-perceptible":
            space = env.observation_space
            self.observation_space = gym.spaces.Box(
                np.concatenate([space.low, -np.ones(3)]), np.concatenate([space.high, np.ones(3)]),
                dtype=space.dtype)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        if self.kind != "action":
            self.force[:] = 0.0
            self.data.xfrc_applied[self.body, self.columns] = 0.0
        return self._observe(obs), info

    def step(self, action):
        rng = self.env.unwrapped.np_random
        hit = rng.random() < self.prob
        if self.kind == "action":
            if hit:  # noise on the K task dims only; a repetition dim, if any, is left alone
                action = np.array(action, dtype=np.float64)
                k = self.num_actions
                noisy = action[:k] + rng.normal(0.0, self.std, size=k)
                action[:k] = np.clip(noisy, self.action_low, self.action_high)
        else:
            self.force[:] = rng.normal(0.0, self.std, size=3) if hit else 0.0
            self.data.xfrc_applied[self.body, self.columns] = self.force
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._observe(obs), reward, terminated, truncated, info

    def state(self):  # the force of this decision (a kind that pushes a body): for a checkpoint (env_state)
        return {"force": self.force} if self.kind != "action" else {}

    def restore(self, state):
        self.force = state["force"]

    def _observe(self, obs):
        if self.kind != "ext-force-perceptible":
            return obs
        return np.concatenate([obs, np.clip(self.force, -1.0, 1.0)])


class TimeFeature(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """TaCoS's time feature (Treven et al., 2024): the episode's elapsed time over its limit, appended to the
    observation. Under a repetition it counts δ-steps (DtEnv's episode_length), so physical time; 0 where an
    episode has no limit."""

    def __init__(self, env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        low = np.append(space.low, np.float32(0)).astype(space.dtype)
        high = np.append(space.high, np.float32(1)).astype(space.dtype)
        self.observation_space = gym.spaces.Box(low, high, dtype=space.dtype)

    def observation(self, obs):
        elapsed = self.env.get_wrapper_attr("episode_length") / self.env.get_wrapper_attr("max_steps")
        return np.append(obs, np.float32(elapsed)).astype(self.observation_space.dtype)


class HoldPenalty(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """App. H's partial observability: pays `penalty` once each time one action has been held for
    `t_thres` seconds; the holding time is not observed. Wrap the δ-env, inside the repetition."""

    def __init__(self, env, t_thres=None, penalty=None):
        gym.utils.RecordConstructorArgs.__init__(self, t_thres=t_thres, penalty=penalty)
        gym.Wrapper.__init__(self, env)
        name = _base_name(env)
        if (t_thres is None or penalty is None) and name not in HOLD_PENALTY:
            raise ValueError(f"t_thres: no default for {name}; pass t_thres and penalty")
        default_t, default_penalty = HOLD_PENALTY.get(name, (None, None))
        self.t_thres = default_t if t_thres is None else float(t_thres)
        self.penalty = default_penalty if penalty is None else float(penalty)
        if not self.t_thres > 0:
            raise ValueError(f"t_thres: must be > 0, got {t_thres}")
        self.dt = env.unwrapped.dt if hasattr(env.unwrapped, "dt") else env.get_wrapper_attr("dt")
        self.held_steps = int(math.ceil(self.t_thres / self.dt - 1e-9))  # δ-steps to reach t_thres
        self.last_action, self.held = None, 0

    def reset(self, **kwargs):
        self.last_action, self.held = None, 0
        return self.env.reset(**kwargs)

    def step(self, action):
        if self.last_action is not None and np.array_equal(action, self.last_action):
            self.held += 1
        else:
            self.last_action, self.held = np.array(action, copy=True), 1
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self.held == self.held_steps:  # reached t_thres: paid once per hold
            reward += self.penalty
        return obs, reward, terminated, truncated, info

    def state(self):  # the action held and for how long: for a checkpoint (env_state)
        return {"last_action": self.last_action, "held": self.held}

    def restore(self, state):
        self.last_action, self.held = state["last_action"], state["held"]


class AlertThenOff(gym.Env):
    """Sec. 4.3 / App. C. Physical time limit T = 1, stepped every δ. State s ∈ {0 normal,
    1 alerted}; s turns 1 once, at a uniform time in [0, 1]. Action [off, num], off = 1 when its raw
    value is > 0. While alerted, off = 1 within x seconds resets s to 0, otherwise reward −ν and the
    episode ends; off = 1 while normal also gives −ν and ends it. Reward f(num)·δ each step, plus
    ξ ~ N(0, 1) at t = 1."""

    metadata = {"render_modes": []}

    def __init__(self, dt=0.01, x=0.05, nu=100.0, f=None):
        if not dt > 0:
            raise ValueError(f"dt: must be > 0, got {dt}")
        if not x > dt:
            raise ValueError(f"x: must be > dt = {dt}, got {x}")
        if not nu >= 0:
            raise ValueError(f"nu: must be >= 0, got {nu}")
        self.dt, self.x, self.nu, self.f = dt, x, nu, f
        self.num_steps = int(round(1.0 / dt))  # T = 1
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def _obs(self):
        return np.array([self.s], dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.k, self.s, self.alerted_once = 0, 0, False
        self.alert_time = self.np_random.uniform(0.0, 1.0)
        return self._obs(), {}

    def step(self, action):
        off, num = float(action[0]) > 0, float(action[1])
        reward = (self.f(num) if self.f is not None else 0.0) * self.dt
        if off:
            if self.s == 0:  # switched off while normal
                return self._obs(), reward - self.nu, True, False, {}
            self.s = 0
        self.k += 1
        t = self.k * self.dt
        if not self.alerted_once and t >= self.alert_time:
            self.s, self.alerted_once = 1, True
        if self.s == 1 and t - self.alert_time > self.x:  # alert not answered within x
            return self._obs(), reward - self.nu, True, False, {}
        if self.k >= self.num_steps:  # t = 1: the noisy final reward ξ
            return self._obs(), reward + self.np_random.normal(), True, False, {}
        return self._obs(), reward, False, False, {}


# ---------------------------------------------------------------- exact resume: an env where its next step starts
SIMULATOR = mujoco.mjtState.mjSTATE_INTEGRATION  # everything mj_step reads: time, qpos, qvel, act, warm start, forces
READ_BEFORE_STEP = ("xpos", "xipos")  # derived, not state, but read before mj_step (Ant: xpos; Humanoid: xipos)


def env_state(env):
    """A MuJoCo env where its next step starts: each wrapper's state within the episode (its `state()`; {} for a
    wrapper without one), the simulator, the positions read before a step, and the env's RNG (resets, Perturb's
    draws). Arrays as numpy arrays: bookkeeping.py saves them as tensors."""
    layers, layer, raw = [], env, env.unwrapped
    while layer is not raw:
        layers.append(layer.state() if hasattr(type(layer), "state") else {})
        layer = layer.env
    simulator = np.empty(mujoco.mj_stateSize(raw.model, SIMULATOR))
    mujoco.mj_getState(raw.model, raw.data, simulator, SIMULATOR)
    derived = {name: getattr(raw.data, name).copy() for name in READ_BEFORE_STEP}
    return {"layers": layers, "simulator": simulator, "derived": derived,
            "env_rng": raw.np_random.bit_generator.state}


def restore_env(env, saved):
    """The env as `env_state` saw it: each wrapper's `restore()` takes what its `state()` gave."""
    layers = saved["layers"] if "layers" in saved else [saved["layer"]]  # "layer": DAU's checkpoints before this
    layer, raw = env, env.unwrapped
    for own in layers:
        if own:
            layer.restore(own)
        layer = layer.env
    mujoco.mj_setState(raw.model, raw.data, saved["simulator"], SIMULATOR)
    for name, value in saved.get("derived", {}).items():  # checkpoints before it had none: Ant was then not exact
        getattr(raw.data, name)[:] = value
    raw.np_random.bit_generator.state = saved["env_rng"]
