"""Environments shared by sar_ppo.py and figar_ppo.py (SPEC "Time discretization", "Stochastic
settings", "AlertThenOff"): δ-rescaled MuJoCo v5 tasks, the paper's stochastic and partially
observable variants, and the toy AlertThenOff of Sec. 4.3. Nothing here knows about learning."""
import dataclasses
import math

import gymnasium as gym
import numpy as np

# Table 1 (App. I.2): (δ_lowest, δ_low, δ_middle, δ_original = δ0), in seconds.
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

# App. I.2: (σ_act, σ_ext, σ_ext2) per env, and the body the external force acts on.
NOISE_STD = {
    "Ant": (1, 100, 300), "HalfCheetah": (1, 30, 300), "InvertedDoublePendulum": (1, 100, 1000),
    "InvertedPendulum": (3, 300, 1000), "Swimmer": (1, 100, 1000), "Reacher": (1, 300, 1000),
    "Hopper": (1, 30, 300), "Walker2d": (1, 100, 1000),
}
NOISE_KINDS = ("action", "ext-force", "ext-force-perceptible")
NOISE_PROB = 0.05  # p_act = p_ext
FORCE_BODY = {"InvertedPendulum": "cart", "InvertedDoublePendulum": "cart", "Reacher": "body1"}
# App. D: (t_thres in seconds, r_penalty) of the partially observable setting.
HOLD_PENALTY = {"InvertedPendulum": (0.04, -1.0), "InvertedDoublePendulum": (0.04, -10.0),
                "Hopper": (0.025, -20.0), "Walker2d": (0.025, -20.0)}


def resolve_dt(env_id, dt=None):
    """δ in seconds from None (δ0), a level of Table 1, or a number (or its string) in [δ0/1000, δ0]."""
    if env_id not in DT_TABLE:
        raise ValueError(f"env_id: unknown environment {env_id!r}; choose from {', '.join(DT_TABLE)}")
    dt0 = DT_TABLE[env_id][-1]
    if dt is None:
        return dt0
    if isinstance(dt, str) and dt in DT_LEVELS:
        return DT_TABLE[env_id][DT_LEVELS.index(dt)]
    try:
        value = float(dt)
    except ValueError:
        raise ValueError(f"dt: {dt!r} is neither a number nor one of {', '.join(DT_LEVELS)}") from None
    if not value > 0:  # also rejects nan
        raise ValueError(f"dt: must be > 0, got {dt}")
    if value > dt0 * (1 + 1e-9):
        raise ValueError(f"dt: {value:g} is above {env_id}'s own δ0 = {dt0:g}")
    if value < dt0 / 1000 * (1 - 1e-9):  # a floor on cost: below it a run (and a repetition) never ends
        raise ValueError(f"dt: {value:g} is below {env_id}'s δ0/1000 = {dt0 / 1000:g}, where an episode "
                         f"already takes 1000 times its δ0-steps")
    return value


class DtEnv(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A MuJoCo task stepped every δ seconds (frame_skip 1, MuJoCo timestep δ; untouched at its own δ0)
    with the physical time limit and return scale of δ0. `max_episode_steps` is the task's limit at δ0."""

    def __init__(self, env, dt, max_episode_steps, gamma=0.99):
        gym.utils.RecordConstructorArgs.__init__(self, dt=dt, max_episode_steps=max_episode_steps, gamma=gamma)
        gym.Wrapper.__init__(self, env)
        raw, dt0 = env.unwrapped, env.unwrapped.dt
        self.dt, self.dt0 = dt, dt0
        if dt != dt0:
            raw.frame_skip = 1
            raw.model.opt.timestep = dt
            raw.metadata = {**raw.metadata, "render_fps": int(round(1 / dt))}
        self.gamma_dt = gamma ** (dt / dt0)  # γ_δ = γ^(δ/δ0), same effective horizon (App. I.2)
        self.reward_scale = dt / dt0  # r_δ = r·δ (eq. 2), in units of δ0-steps
        # Same physical limit; the 1e-9 guards int() against 19999.999... from float division.
        self.max_steps = int(max_episode_steps * dt0 / dt + 1e-9)
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


def make_env(env_id, dt=None, gamma=0.99):
    """`env_id` stepped every δ = `dt` seconds (frame_skip 1, MuJoCo timestep δ); untouched at δ0.

    No PassiveEnvChecker, OrderEnforcing or TimeLimit under it: the repetition loops call `step`
    millions of times, so the only layer is DtEnv. Its `env.spec` re-creates it. Read off `env.dt`,
    `env.dt0`, `env.gamma_dt` (γ_δ), `env.max_steps`, and the running `env.episode_return` / `env.episode_length`.
    """
    dt = resolve_dt(env_id, dt)
    spec = gym.spec(env_id)
    bare = dataclasses.replace(spec, max_episode_steps=None, order_enforce=False, disable_env_checker=True)
    return DtEnv(gym.make(bare), dt, spec.max_episode_steps, gamma)  # 1000 steps at δ0, or 50 for Reacher


def _base_name(env):
    spec = env.unwrapped.spec
    return spec.name if spec is not None else type(env.unwrapped).__name__


class Perturb(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Sec. 5.2's stochastic settings, drawn once per call of `step`: wrap it *outside* the action
    repetition so a draw holds for a whole decision, and a force is cleared at the next one."""

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
            self.data = raw.data
            self.body = raw.model.body(FORCE_BODY.get(name, "torso")).id
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

    def _observe(self, obs):
        if self.kind != "ext-force-perceptible":
            return obs
        return np.concatenate([obs, np.clip(self.force, -1.0, 1.0)])


class HoldPenalty(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """App. D's partial observability: pays `penalty` once each time one action has been held for
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
        self.dt = env.unwrapped.dt
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
