"""The repetition wrappers, the method itself: SAR's stop rule (eq. 6), λ-SAR's (eq. 8), FiGAR-C's
durations, a decision's discounted reward and GAE with γ_δ^w (eq. 5); and their reuse as drop-in gymnasium
wrappers: on any Box task, copied with README's imports, and in Stable-Baselines3 (examples/sb3_sar.py)."""
import inspect
import math
import os
import re
import signal
import subprocess
import sys
import tempfile

import gymnasium as gym
import numpy as np
import pytest
import torch

import envs
import figar_ppo
import figar_trpo
import sar_ppo
import sar_trpo
from tests.helpers import ROOT, check


class Scripted(gym.Env):
    """A δ-env that plays back given observations and rewards; terminates after `end` steps
    (default: when the observations run out)."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, observations, rewards=None, end=None, dt=0.01, gamma=0.9):
        self.observations = [np.array(o, dtype=np.float64) for o in observations]
        self.rewards = rewards or [float(i + 1) for i in range(len(observations))]
        self.end, self.dt, self.gamma_dt = end or len(observations), dt, gamma

    def reset(self, *, seed=None, options=None):
        self.k = 0
        return np.zeros(2), {}

    def step(self, action):
        obs, reward = self.observations[self.k], self.rewards[self.k]
        self.k += 1
        return obs.copy(), reward, self.k == self.end, False, {}


def one_decision(observations, u, end=None, repetition=sar_ppo.SafeActionRepetition, **kwargs):
    """Reset, then one decision with u ∈ [0, 1]; Δ's statistics are pinned to mean 0, var 1."""
    env = repetition(Scripted(observations, end=end), **kwargs)
    env.reset()
    if hasattr(env, "obs_stats"):
        env.obs_stats.mean, env.obs_stats.var = np.zeros(2), np.ones(2)
    _, R, terminated, _, info = env.step(np.array([0.3, 2 * u - 1]))
    return info["w"], R, terminated


def discounted(k, gamma=0.9):  # rewards are 1, 2, 3, ...
    return sum(gamma ** i * (i + 1) for i in range(k))


STILL = [[0.0, 0.0]] * 10


def test_sar_stops_on_the_first_step_where_distance_reaches_the_radius():
    # Δ = |s - s_i|_1 / (1.001 · dim): 0.05, 0.1, then 0.9 ≥ d = 0.5 · 0.5
    path = [[0.1, 0.0], [0.2, 0.0], [0.9, 0.9]] + STILL
    w, R, _ = one_decision(path, u=0.5, max_d=0.5, max_t=1.0)
    assert w == 3 and R == pytest.approx(discounted(3))
    w, _, _ = one_decision(path, u=0.05, max_d=0.5, max_t=1.0)  # d = 0.025 < 0.05: the first step
    assert w == 1


def test_delta_dims_measure_the_distance_over_the_listed_dims_only():
    # dim 1 moves far, dim 0 creeps: over dim 0 alone, Δ = |s_0| / 1.001 reaches d = 0.25 at the third step
    path = [[0.1, 5.0], [0.2, -5.0], [0.3, 5.0]] + STILL
    assert one_decision(path, u=0.5, max_d=0.5, max_t=1.0, delta_dims=[0])[0] == 3
    assert one_decision(path, u=0.5, max_d=0.5, max_t=1.0)[0] == 1  # every dim: the first step
    assert one_decision(path, u=0.5, max_d=0.5, max_t=1.0, delta_dims=[1])[0] == 1


def test_sar_stops_at_max_t_and_at_episode_end():
    w, R, terminated = one_decision(STILL, u=1.0, max_d=0.5, max_t=0.05)  # 0.05 s = 5 δ-steps
    assert (w, terminated) == (5, False) and R == pytest.approx(discounted(5))
    w, R, terminated = one_decision(STILL, u=1.0, max_d=0.5, max_t=0.05, end=2)
    assert (w, terminated) == (2, True) and R == pytest.approx(discounted(2))
    w, _, terminated = one_decision(STILL, u=1.0, max_d=0.5, max_t=math.inf)  # no cap: to the end
    assert (w, terminated) == (len(STILL), True)


def test_lambda_sar_stops_when_weighted_distance_and_time_reach_u():
    # eq. (8), λ = 0.5, max_d = 0.5, max_t = 0.05, u = 0.3: still state → 0.5·k·0.2 ≥ 0.3 at k = 3
    w, R, _ = one_decision(STILL, u=0.3, max_d=0.5, max_t=0.05, lambda_dt=0.5)
    assert w == 3 and R == pytest.approx(discounted(3))
    # a jump with Δ = 0.2/1.001 at k = 1: 0.5·0.4 + 0.5·0.2 = 0.2998 < 0.3, then 0.5·0.4 + 0.2 ≥ 0.3
    w, _, _ = one_decision([[0.2, 0.2]] * 10, u=0.3, max_d=0.5, max_t=0.05, lambda_dt=0.5)
    assert w == 2


def test_l2_distance_is_the_euclidean_norm_over_sqrt_dim():
    # s - s_i = [0.5, 0]: l1 Δ = 0.25, l2 Δ = 0.353; with d = 0.3 only l2 stops at once
    path = [[0.5, 0.0]] * 10
    assert one_decision(path, u=0.3, max_d=1.0, max_t=1.0, norm="l2")[0] == 1
    assert one_decision(path, u=0.6, max_d=0.5, max_t=1.0, norm="l1")[0] == 10


def test_no_repeat_takes_exactly_one_delta_step():
    env = sar_ppo.SafeActionRepetition(Scripted(STILL), 0.5, 0.05, repeat=False)
    env.reset()
    _, R, _, _, info = env.step(np.array([0.3]))
    assert info["w"] == 1 and R == 1.0 and env.action_space.shape == (1,)


def test_gae_discounts_each_transition_by_gamma_to_the_w():
    rewards, values = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 1.5])
    discounts = np.array([0.9, 0.81, 0.9])  # γ^w with γ = 0.9 and w = 1, 2, 1
    # the last transition terminates: V(s') = 0
    adv = sar_ppo.compute_gae(rewards, values, np.array([1.0, 1.5, 0.0]), discounts, np.array([0, 0, 1.0]), 0.5)
    # δ = 1 + 0.9·1 - 0.5 = 1.4, 2 + 0.81·1.5 - 1 = 2.215, 3 - 1.5 = 1.5
    assert adv == pytest.approx([1.4 + 0.9 * 0.5 * (2.215 + 0.81 * 0.5 * 1.5), 2.215 + 0.81 * 0.5 * 1.5, 1.5])
    # the middle transition is truncated: bootstrapped with V(final obs) = 2 and the λ-chain is cut
    adv = sar_ppo.compute_gae(rewards, values, np.array([1.0, 2.0, 0.7]), discounts, np.array([0, 1.0, 0]), 0.5)
    assert adv == pytest.approx([1.4 + 0.45 * 2.62, 2.62, 3 + 0.9 * 0.7 - 1.5])


@pytest.mark.parametrize("u,expected", [(0.5, 3), (1.0, 5), (0.0, 1), (0.01, 1), (0.61, 4)])
def test_figar_repeats_for_ceil_t_over_dt_steps_at_least_one(u, expected):
    # t = u · 0.05 s at δ = 0.01 s: ⌈2.5⌉ = 3, ⌈5⌉ = 5, 0 → 1, ⌈0.05⌉ = 1, ⌈3.05⌉ = 4
    w, R, terminated = one_decision(STILL, u=u, repetition=figar_ppo.DurativeRepetition, max_t=0.05)
    assert (w, terminated) == (expected, False) and R == pytest.approx(discounted(expected))


def test_figar_repetition_stops_at_episode_end_and_ignores_the_state():
    w, R, terminated = one_decision(STILL, u=1.0, end=2, repetition=figar_ppo.DurativeRepetition, max_t=0.05)
    assert (w, terminated) == (2, True) and R == pytest.approx(discounted(2))
    jumps = [[9.0, 9.0]] * 10  # far outside any safe region: FiGAR-C does not look
    assert one_decision(jumps, u=1.0, repetition=figar_ppo.DurativeRepetition, max_t=0.05)[0] == 5


def test_figar_no_limit_t_lets_durations_exceed_max_t():
    env = figar_ppo.DurativeRepetition(Scripted(STILL), 0.02, limit_t=False)
    assert env.action_space.high[-1] == np.inf
    env.reset()
    assert env.step(np.array([0.3, 2.0]))[4]["w"] == 3  # u = 1.5: t = 0.03 s


class Still(gym.Env):
    """A registered non-MuJoCo env whose state never moves (Δ stays 0); reward 1 per step of 0.01 s."""

    metadata = {"render_modes": []}
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    dt = 0.01

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 1.0, False, False, {}


gym.register("test/Still-v0", entry_point=Still)


@pytest.mark.parametrize("wrap", [lambda env: sar_ppo.SafeActionRepetition(env, max_t=0.05),
                                  lambda env: figar_ppo.DurativeRepetition(env, max_t=0.05)])
def test_repetition_wraps_a_plain_gymnasium_env_by_its_own_dt(wrap):
    env = wrap(gym.make("test/Still-v0"))
    assert (env.dt, env.gamma_dt) == (0.01, 0.99)  # no δ0 of its own: γ = 0.99 per δ-step
    env.reset(seed=0)
    _, R, _, _, info = env.step(np.array([0.0, -1.0], np.float32))  # u = 0: d = 0 or t = 0, one δ-step
    assert info["w"] == 1 and R == 1.0
    _, R, _, _, info = env.step(np.array([0.0, 1.0], np.float32))  # u = 1, the state never moves: max_t
    assert info["w"] == 5 and R == pytest.approx(sum(0.99 ** k for k in range(5)))
    check(wrap(gym.make("test/Still-v0")))


class InPlace(Scripted):
    """Scripted, but the observation is one array updated in place, as simulators with preallocated buffers do."""

    def reset(self, *, seed=None, options=None):
        self.k, self.buffer = 0, np.zeros(2)
        return self.buffer, {}

    def step(self, action):
        self.buffer[:] = self.observations[self.k]
        self.k += 1
        return self.buffer, self.rewards[self.k - 1], self.k == self.end, False, {}


def test_sar_measures_the_distance_from_a_copy_of_an_observation_updated_in_place():
    moving = [[0.1 * i, 0.0] for i in range(1, 11)]  # Δ grows by 0.05 a step: reaches d = 0.25 at the 5th
    copies = sar_ppo.SafeActionRepetition(Scripted(moving), max_t=1.0)
    in_place = sar_ppo.SafeActionRepetition(InPlace(moving), max_t=1.0)
    for env in (copies, in_place):
        env.reset()
        env.obs_stats.mean, env.obs_stats.var = np.zeros(2), np.ones(2)
    action = np.array([0.3, 0.0])  # u = 0.5: d = 0.25
    assert copies.step(action)[4]["w"] == in_place.step(action)[4]["w"] < 10


class Image(Scripted):
    observation_space = gym.spaces.Box(0.0, 1.0, (2, 2), np.float64)  # not 1-D: to be flattened first


@pytest.mark.parametrize("make,name", [
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), max_d=0), "max_d"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), max_d=math.nan), "max_d"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), max_t=-1), "max_t"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), max_t=math.nan), "max_t"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), lambda_dt=1.5), "lambda_dt"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), norm="L1"), "norm"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), delta_dims=[0.5]), "delta_dims"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), delta_dims=[2]), "delta_dims"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), dt=-0.01), "dt"),
    (lambda: sar_ppo.SafeActionRepetition(Scripted(STILL), gamma_dt=1.5), "gamma_dt"),
    (lambda: figar_ppo.DurativeRepetition(Scripted(STILL), max_t=math.inf), "max_t"),
    (lambda: figar_ppo.DurativeRepetition(Scripted(STILL), max_t=math.nan), "max_t"),
    (lambda: figar_ppo.DurativeRepetition(Scripted(STILL), dt=0), "dt"),
    (lambda: sar_ppo.SafeActionRepetition(Image(STILL)), "env"),
    (lambda: figar_ppo.DurativeRepetition(Image(STILL)), "env")])
def test_wrapper_refuses_an_argument_the_method_cannot_take_naming_it(make, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        make()


def test_sar_warns_when_no_repetition_is_possible():
    with pytest.warns(UserWarning, match="no action can be repeated"):
        sar_ppo.SafeActionRepetition(Scripted(STILL, dt=0.05), max_t=0.05)


def test_figar_wrapper_warns_when_no_repetition_is_possible():
    with pytest.warns(UserWarning, match="no action can be repeated"):
        figar_ppo.DurativeRepetition(envs.make_env("InvertedDoublePendulum-v5", "original"), max_t=0.05)


class _TwoDimActions(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2, 2), np.float32)


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo, sar_trpo, figar_trpo])
def test_wrappers_check_actions_and_keep_u_in_its_range(module):
    wrapper = getattr(module, "SafeActionRepetition", None) or module.DurativeRepetition
    env = wrapper(gym.make("Pendulum-v1"), max_t=0.5)  # δ = 0.05 s: at most 10 δ-steps
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([0.0, 5.0], np.float32))  # u_raw far above 1
    assert info["w"] <= 10 and info.get("safe_radius", 0.0) <= 0.5
    for bad in ([0.0, np.nan], [np.inf, 0.0], [0.0, 0.5, 0.5], [[0.0, 0.5]]):
        with pytest.raises(ValueError, match="^action: needs 2 finite numbers"):
            env.step(np.array(bad, np.float32))
    with pytest.raises(ValueError, match="^env: needs 1-D Box observations and actions"):
        wrapper(_TwoDimActions(), dt=0.01)
    with pytest.raises(ValueError, match="^max_t:"):
        wrapper(gym.make("Pendulum-v1"), max_t=1e308)


class _NanAfter(gym.Wrapper):
    """Pendulum whose observation turns nan at step `at`."""

    def __init__(self, at):
        super().__init__(gym.make("Pendulum-v1"))
        self.at, self.steps = at, 0

    def step(self, action):
        obs, r, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        return (obs * np.nan if self.steps >= self.at else obs), r, terminated, truncated, info


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo])
def test_a_non_finite_observation_is_refused_instead_of_learned_from(module):
    wrapper = getattr(module, "SafeActionRepetition", None) or module.DurativeRepetition
    env = wrapper(_NanAfter(at=3), max_t=0.5, dt=0.05)
    env.reset(seed=0)
    with pytest.raises(FloatingPointError, match="^observation: not finite"):
        for _ in range(10):
            env.step(np.array([0.0, 1.0], np.float32))  # u = 1: long repetitions
    if module is sar_ppo:
        assert np.isfinite(env.obs_stats.mean).all() and np.isfinite(env.obs_stats.var).all()


def test_repetition_needs_a_dt_that_agrees_with_the_envs_and_box_spaces():
    with pytest.raises(ValueError, match="^dt:.*pass dt="):  # MountainCarContinuous has no dt of its own
        sar_ppo.SafeActionRepetition(gym.make("MountainCarContinuous-v0"))
    with pytest.raises(ValueError, match="^env:"):  # Discrete actions
        sar_ppo.SafeActionRepetition(gym.make("CartPole-v1"))
    env = sar_ppo.SafeActionRepetition(gym.make("MountainCarContinuous-v0"), dt=1.0, max_t=3.0)
    with pytest.raises(ValueError, match=r"^dt: the env's is 0.01, got 0.002"):  # t_max would be off by 5×
        sar_ppo.SafeActionRepetition(gym.make("test/Still-v0"), dt=0.002)
    env = sar_ppo.SafeActionRepetition(gym.make("test/Still-v0"), dt=0.01, gamma_dt=0.5)  # γ_δ: the argument wins
    assert (env.dt, env.gamma_dt, env.max_repeats) == (0.01, 0.5, 5)


@pytest.mark.parametrize("wrapper", [sar_ppo.SafeActionRepetition, figar_ppo.DurativeRepetition])
def test_repetition_refuses_a_gamma_dt_other_than_the_envs_own(wrapper):
    env = envs.make_env("Pusher-v5", 0.01)  # γ_δ = 0.99^(1/5) per δ-step
    with pytest.raises(ValueError, match=r"^gamma_dt: the env's is 0.99799"):  # 0.99 would be 5× the horizon's cut
        wrapper(env, gamma_dt=0.99)
    assert wrapper(env, gamma_dt=env.gamma_dt).gamma_dt == wrapper(env).gamma_dt == 0.99 ** (1 / 5)


def test_dt_env_refuses_an_env_whose_time_limit_counts_steps():
    with pytest.raises(ValueError, match="^env: has gymnasium's TimeLimit inside"):
        envs.DtEnv(gym.make("Pusher-v5"), 0.01, 100)  # its 100 steps would be 1 s at δ = 0.01, not 5 s
    assert envs.DtEnv(gym.make("Pusher-v5").unwrapped, 0.01, 100).max_steps == 500


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_repetition_wrappers_of_the_scripts_pass_check_env(script):
    module = sar_ppo if script == "sar_ppo.py" else figar_ppo
    wrapper = module.SafeActionRepetition if script == "sar_ppo.py" else module.DurativeRepetition
    check(wrapper(envs.make_env("InvertedPendulum-v5", "lowest")))


@pytest.mark.parametrize("module", [sar_trpo, figar_trpo])
def test_trpo_wrappers_pass_check_env(module):
    wrapper = getattr(module, "SafeActionRepetition", None) or module.DurativeRepetition
    check(wrapper(envs.make_env("InvertedPendulum-v5", "lowest")))


def readme_section(title):
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    return text[text.index(title):].split("\n## ")[0]


SHARED = ("check_safe_region", "dt_and_gamma_dt", "check_action", "check_finite")  # the functions the wrapper calls


def wrapper_source():
    """What README says to copy from sar_ppo.py: the three constants after its imports, the class and the
    functions it calls."""
    with open(os.path.join(ROOT, "sar_ppo.py")) as f:
        constants = "".join(line for line in f if line.startswith(("MAX_T = ", "MAX_T_CAP = ", "MAX_D = ")))
    assert constants.count("\n") == 3
    functions = [sar_ppo.SafeActionRepetition] + [getattr(sar_ppo, name) for name in SHARED]
    return constants + "\n\n" + "\n\n\n".join(inspect.getsource(f) for f in functions)


def test_the_wrapper_copied_with_the_readme_imports_runs_without_torch_or_envs(tmp_path):
    imports = readme_section("## Use SAR in your own project").split("```python\n")[1].split("\n\n")[0]
    source = wrapper_source()
    (tmp_path / "sar.py").write_text(imports + "\n\n\n" + source)
    script = ("import sys; sys.modules['torch'] = sys.modules['envs'] = None\n"  # neither can be imported
              "import gymnasium as gym, numpy as np, sar\n"
              "env = sar.SafeActionRepetition(gym.make('Pendulum-v1'), max_t=0.2)\n"
              "env.reset(seed=0); print(env.step(np.array([0.0, 1.0], np.float32))[4]['w'])")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and 1 <= int(result.stdout) <= 4, result.stderr[-500:]


def test_readme_snippet_to_use_sar_in_your_own_project_runs_as_written():
    # the section's first block is the user's file: the imports, then (where its comment says) the class and
    # the functions it calls copied from sar_ppo.py, then the example
    block = readme_section("## Use SAR in your own project").split("```python\n")[1].split("```")[0]
    imports, example = block.split("\n\n", 1)
    assert "SafeActionRepetition" in example and "import" not in example
    assert "MAX_T, MAX_T_CAP, MAX_D, class SafeActionRepetition" in example  # what its comment says to copy
    assert all(name in example for name in SHARED)
    source = wrapper_source()
    scope = {"__name__": "readme"}
    exec(compile(imports + "\n\n\n" + source + "\n\n\n" + example, "README.md", "exec"), scope)  # noqa: S102
    assert 1 <= scope["info"]["w"] <= 4  # Pendulum-v1: δ = 0.05 s, max_t = 0.2 s


def test_the_sb3_recipe_copied_as_readme_lists_it_trains_without_envs_or_the_project(sb3_sar, tmp_path):
    listed = readme_section("## Use SAR in your own project").split("**With Stable-Baselines3.**")[1].split("\n\n")[0]
    pieces = ["DurationRolloutBuffer", "DurationCallback", "ProgressLine"]
    assert all(f"`{piece}`" in listed for piece in pieces + ["compute_gae", "import torch"])
    assert "import RolloutBuffer`" in listed and "import\nBaseCallback`" in listed
    imports = readme_section("## Use SAR in your own project").split("```python\n")[1].split("\n\n")[0]
    sb3 = ("import torch\nfrom stable_baselines3 import PPO\n"
           "from stable_baselines3.common.buffers import RolloutBuffer\n"
           "from stable_baselines3.common.callbacks import BaseCallback")
    copied = [inspect.getsource(sar_ppo.compute_gae)] + [inspect.getsource(getattr(sb3_sar, p)) for p in pieces]
    (tmp_path / "mine.py").write_text("\n\n\n".join([imports + "\n" + sb3, wrapper_source(), *copied]))
    script = ("import sys; sys.modules['envs'] = sys.modules['sar_ppo'] = None\n"  # neither can be imported
              "import gymnasium as gym, mine\n"
              "sar = mine.SafeActionRepetition(gym.make('Pendulum-v1'), max_t=0.2, gamma_dt=0.9)\n"
              "model = mine.PPO('MlpPolicy', sar, gamma=sar.gamma_dt, n_steps=128, batch_size=64, n_epochs=1, seed=0,"
              " rollout_buffer_class=mine.DurationRolloutBuffer)\n"
              "model.learn(256, callback=[mine.DurationCallback(), mine.ProgressLine()])\n"
              "print(model.rollout_buffer.durations.max())")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-800:]
    *lines, longest = result.stdout.splitlines()
    assert lines[-1].startswith("decisions 256 | return ") and 1 < float(longest) <= 4  # decisions did repeat


def test_sb3_recipe_advantages_equal_compute_gae_with_gamma_dt_to_the_w(sb3_sar):
    from stable_baselines3 import PPO
    sar = sb3_sar.make_sar_env("Pendulum-v1", None, None)
    gamma, lam, n = 0.9, 0.95, 8
    model = PPO("MlpPolicy", sar, gamma=gamma, gae_lambda=lam, n_steps=n, batch_size=n, seed=0,
                rollout_buffer_class=sb3_sar.DurationRolloutBuffer)
    callback, buffer = sb3_sar.DurationCallback(), model.rollout_buffer
    callback.init_callback(model)
    buffer.reset()
    rng = np.random.default_rng(0)
    rewards, values = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
    w = np.array([1, 3, 2, 4, 1, 2, 3, 1])
    terminated, truncated = np.zeros(n), np.zeros(n)
    terminated[2], truncated[5] = 1, 1  # one end of each kind
    final_obs, last_value = np.array([0.5, -0.5, 1.0], np.float32), 0.7
    infos, episode_start = [], True
    for t in range(n):  # what SB3's collect_rollouts does around the callback, as DummyVecEnv reports it
        info, step_rewards = {"w": int(w[t])}, rewards[t:t + 1].copy()
        if terminated[t] or truncated[t]:
            info.update({"terminal_observation": final_obs, "TimeLimit.truncated": bool(truncated[t])})
        callback.update_locals({"infos": [info], "rewards": step_rewards})
        callback.on_step()
        infos.append(info)
        buffer.add(np.zeros((1, 3), np.float32), np.zeros((1, 2), np.float32), step_rewards, np.array([episode_start]),
                   torch.tensor([[values[t]]]), torch.zeros(1))
        episode_start = bool(terminated[t] or truncated[t])
    buffer.compute_returns_and_advantage(torch.tensor([[last_value]]), np.array([False]))
    with torch.no_grad():
        v_final = model.policy.predict_values(model.policy.obs_to_tensor(final_obs)[0]).item()
    next_values = np.append(values[1:], last_value)
    next_values[2], next_values[5] = 0.0, v_final  # a termination ends the return, a time limit does not
    expected = sar_ppo.compute_gae(rewards.astype(np.float64), values, next_values, gamma ** w,
                                   np.maximum(terminated, truncated), lam)
    assert buffer.advantages[:, 0] == pytest.approx(expected, rel=1e-5, abs=1e-5)
    assert buffer.returns[:, 0] == pytest.approx(expected + values, rel=1e-5, abs=1e-5)
    assert "TimeLimit.truncated" not in infos[5]  # SB3's own γ·V(final obs) is not added on top
    one_gamma = sar_ppo.compute_gae(rewards, values, next_values, np.full(n, gamma), np.maximum(terminated, truncated),
                                    lam)
    assert not np.allclose(expected, one_gamma, atol=1e-3)  # the durations matter on these transitions


def test_sb3_recipe_trains_saves_delta_statistics_and_evaluates_with_them_frozen(sb3_sar, tmp_path):
    out = str(tmp_path / "run")
    model, sar = sb3_sar.train("Pendulum-v1", None, 384, seed=1, out=out, n_steps=128, batch_size=64, n_epochs=2)
    assert model.num_timesteps == 384 and isinstance(model.rollout_buffer, sb3_sar.DurationRolloutBuffer)
    assert model.gamma == sar.gamma_dt == 0.9 and sar.max_repeats == 4  # max_t = 4 δ-steps of 0.05 s
    assert model.rollout_buffer.durations.max() > 1  # decisions did repeat
    with np.load(tmp_path / "run" / "delta_stats.npz") as saved:
        assert saved["count"] == sar.obs_stats.count > 384 and np.array_equal(saved["var"], sar.obs_stats.var)
    ret, mean_w = sb3_sar.evaluate(out, "Pendulum-v1", episodes=1)
    assert -2000 < ret <= 0 and 1 <= mean_w <= 4  # one 10 s episode of costs; w within max_t
    with pytest.raises(SystemExit) as exit_info:  # another δ for a task that is not MuJoCo: before any work
        sb3_sar.main(["--dt", "0.01", "--out", str(tmp_path / "never")])
    assert exit_info.value.code == 2 and not (tmp_path / "never").exists()


def test_sb3_recipe_interrupted_while_training_says_one_line_and_leaves_no_file(tmp_path):
    pytest.importorskip("stable_baselines3")
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "examples", "sb3_sar.py"),
                             "--out", str(tmp_path / "run")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as from a terminal
    assert proc.stdout.readline().startswith("decisions ")  # training, one update done
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "sb3_sar.py: interrupted\n", err
    assert list((tmp_path / "run").iterdir()) == []


def test_sb3_recipe_never_writes_over_a_model_prints_a_line_per_update_and_leaves_no_temporary_folder(
        sb3_sar, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR anew
    out = tmp_path / "run"
    sb3_sar.main(["--total-steps", "256", "--eval-episodes", "1", "--out", str(out)])
    printed = capsys.readouterr().out
    assert re.search(r"^decisions [\d,]+ \| return .* \| mean w [\d.]+$", printed, re.M)  # a line per SB3 update
    assert not list((tmp_path / "tmp").glob("SB3-*"))  # no empty SB3-<date> folder (torch may keep its own cache)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(SystemExit) as exit_info:  # a second run into the same --out: refused before training
        sb3_sar.main(["--total-steps", "256", "--out", str(out)])
    assert exit_info.value.code == 2 and "--out" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_sb3_recipe_refuses_saved_statistics_that_are_not_finite_variances(sb3_sar, tmp_path):
    out = tmp_path / "run"
    sb3_sar.train("Pendulum-v1", None, 128, seed=1, out=str(out), n_steps=128, batch_size=64, n_epochs=1)
    with np.load(out / "delta_stats.npz") as saved:
        mean, var, count = saved["mean"], saved["var"], saved["count"]
    for bad_var in (var * np.nan, -np.abs(var) - 1):
        np.savez(out / "delta_stats.npz", mean=mean, var=bad_var, count=count)
        with pytest.raises(ValueError, match="not finite, non-negative variances"):
            sb3_sar.evaluate(str(out), "Pendulum-v1", episodes=1)
