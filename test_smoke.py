"""The test suite: seconds-long checks, each named for the behaviour it protects. Run: python -m pytest -q"""
import csv
import glob
import json
import os
import warnings

os.environ.setdefault("MUJOCO_GL", "egl")  # check_env renders; EGL needs no display

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs

warnings.filterwarnings("ignore", module="gymnasium")


def check(env):
    """gymnasium's check_env with its defaults: its render and close checks re-create the env from
    env.spec. Every render mode is checked but "human", which opens a window (CI has no display)."""
    env.metadata = {**env.metadata, "render_modes": [m for m in env.metadata.get("render_modes", []) if m != "human"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env)


# ---------------------------------------------------------------- envs.py
@pytest.mark.parametrize("env_id", list(envs.DT_TABLE))
def test_every_env_passes_check_env_at_its_lowest_dt(env_id):
    env = envs.make_env(env_id, "lowest")
    assert env.dt == envs.DT_TABLE[env_id][0] and env.unwrapped.dt == pytest.approx(env.dt)
    assert env.unwrapped.frame_skip == 1
    check(env)


@pytest.mark.parametrize("kind", envs.NOISE_KINDS)
def test_each_perturb_kind_passes_check_env(kind):
    check(envs.Perturb(envs.make_env("Hopper-v5", "lowest"), kind))


def test_hold_penalty_and_alert_then_off_pass_check_env():
    check(envs.HoldPenalty(envs.make_env("InvertedDoublePendulum-v5", "lowest")))
    check(envs.AlertThenOff(dt=0.01, x=0.05, nu=10.0))


def test_original_dt_leaves_the_env_untouched():
    env = envs.make_env("Hopper-v5")
    assert env.unwrapped.frame_skip == 4 and env.dt == env.dt0 == 0.008
    assert env.max_steps == 1000 and env.gamma_dt == 0.99 and env.reward_scale == 1.0


def test_dt_levels_and_gamma_follow_table_1():
    env = envs.make_env("Reacher-v5", "middle")
    assert (env.dt, env.dt0, env.max_steps) == (5e-3, 2e-2, 200)
    assert env.gamma_dt == pytest.approx(0.99 ** 0.25)
    assert envs.resolve_dt("Walker2d-v5", "0.001") == 1e-3


def run_constant_action(env_id, level, action, seed=3):
    env = envs.make_env(env_id, level)
    env.reset(seed=seed)
    action = np.array([action])
    while True:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["episode"]["t"], info["episode"]["r"], terminated


@pytest.mark.parametrize("env_id,max_reward", [("InvertedPendulum-v5", 1.0),
                                               ("InvertedDoublePendulum-v5", 10.0)])
@pytest.mark.parametrize("action", [0.0, 0.3])
def test_physical_time_and_return_are_preserved_across_dt(env_id, max_reward, action):
    t_low, r_low, term_low = run_constant_action(env_id, "lowest", action)
    t_0, r_0, term_0 = run_constant_action(env_id, "original", action)
    dt0 = envs.DT_TABLE[env_id][-1]
    assert term_low and term_0 and t_0 > 4 * dt0  # the pole really falls, after a while
    # The finer integrator sees the fall within one δ0-step of the coarse one...
    assert abs(t_low - t_0) <= dt0 + 1e-9
    # ...and the δ-scaled returns agree to two δ0-steps of reward: one for that time difference,
    # one because the terminating step pays no alive bonus (a whole δ0-step at δ0, δ/δ0 of it at δ).
    # Without the δ/δ0 scale the δ_lowest return would be 20-25x larger.
    assert abs(r_low - r_0) <= 2 * max_reward


def test_reacher_is_truncated_after_exactly_50_dt0_over_dt_steps():
    env = envs.make_env("Reacher-v5", "lowest")
    env.reset(seed=0)
    expected = round(50 * 0.02 / 1e-3)
    for step in range(1, expected + 1):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        assert not terminated and truncated == (step == expected)


def force_on(env, body):
    raw = env.unwrapped
    return raw.data.xfrc_applied[raw.model.body(body).id].copy()


@pytest.mark.parametrize("env_id,body,columns", [("InvertedPendulum-v5", "cart", slice(0, 3)),
                                                  ("Hopper-v5", "torso", slice(0, 3)),
                                                  ("Reacher-v5", "body1", slice(3, 6))])
def test_perturb_applies_force_to_named_body_then_clears_it(env_id, body, columns):
    env = envs.Perturb(envs.make_env(env_id, "lowest"), "ext-force-perceptible", prob=1.0)
    assert env.observation_space.shape[0] == env.env.observation_space.shape[0] + 3
    env.reset(seed=0)
    qvel_before = env.unwrapped.data.qvel.copy()
    obs, *_ = env.step(np.zeros(env.action_space.shape))
    applied = force_on(env, body)
    assert np.all(applied[columns] != 0) and np.all(np.delete(applied, columns) == 0)
    assert np.array_equal(obs[-3:], np.clip(applied[columns], -1, 1))
    assert not np.allclose(env.unwrapped.data.qvel, qvel_before)  # it acted during the step
    env.prob = 0.0
    obs, *_ = env.step(np.zeros(env.action_space.shape))
    assert np.all(force_on(env, body) == 0) and np.all(obs[-3:] == 0)


def test_action_noise_changes_only_the_task_action_dims():
    seen = []

    class Spy(envs.DtEnv):
        def step(self, action):
            seen.append(np.array(action))
            return super().step(action[:1])

    inner = envs.make_env("InvertedPendulum-v5", "lowest")
    spy = Spy(inner.env, inner.dt, 1000, 0.99)
    env = envs.Perturb(spy, "action", prob=1.0)
    env.reset(seed=0)
    action = np.array([0.5, -0.7])  # K = 1 task dim plus one repetition dim
    env.step(action)
    assert seen[0][0] != 0.5 and -3 <= seen[0][0] <= 3 and seen[0][1] == -0.7
    assert np.array_equal(action, [0.5, -0.7])  # the caller's array is not modified


def test_hold_penalty_is_paid_once_when_an_action_is_held_for_t_thres():
    env = envs.HoldPenalty(envs.make_env("InvertedPendulum-v5", "lowest"), t_thres=0.01, penalty=-5.0)
    env.reset(seed=0)
    rewards = [env.step(np.array([0.0]))[1] for _ in range(8)]  # 0.01 s = 5 δ-steps
    assert [r < 0 for r in rewards] == [False] * 4 + [True] + [False] * 3
    assert env.step(np.array([0.1]))[1] > 0  # a new action starts a new hold


def test_alert_then_off_policy_off_equals_s_survives_and_collects_only_xi():
    env = envs.AlertThenOff(dt=0.01, x=0.05, nu=100.0)
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        total, steps, done = 0.0, 0, False
        while not done:
            obs, reward, done, truncated, _ = env.step(np.array([1.0 if obs[0] else -1.0, 0.3]))
            total, steps = total + reward, steps + 1
        assert steps == 100 and abs(total) < 5  # reached t = 1; only ξ ~ N(0, 1) was paid


def test_alert_then_off_switching_off_while_normal_ends_with_minus_nu():
    env = envs.AlertThenOff(dt=0.01, x=0.05, nu=7.0)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(np.array([1.0, 0.0]))
    assert terminated and reward == -7.0


def test_alert_then_off_ignoring_the_alert_ends_with_minus_nu():
    env = envs.AlertThenOff(dt=0.01, x=0.05, nu=7.0)
    env.reset(seed=1)
    rewards, done = [], False
    while not done:
        _, reward, done, _, _ = env.step(np.array([-1.0, 0.0]))
        rewards.append(reward)
    assert rewards[-1] == -7.0 and len(rewards) < 100
    assert len(rewards) * 0.01 == pytest.approx(env.alert_time + 0.05, abs=0.011)


@pytest.mark.parametrize("call,name", [
    (lambda: envs.make_env("NoSuchTask-v0"), "env_id"),
    (lambda: envs.make_env("Hopper-v5", 0.0), "dt"),
    (lambda: envs.make_env("Hopper-v5", -1e-3), "dt"),
    (lambda: envs.make_env("Hopper-v5", 0.01), "dt"),
    (lambda: envs.make_env("Hopper-v5", "tiny"), "dt"),
    (lambda: envs.Perturb(envs.make_env("Hopper-v5"), "wind"), "kind"),
    (lambda: envs.Perturb(envs.make_env("Hopper-v5"), "action", prob=1.5), "prob"),
    (lambda: envs.Perturb(envs.make_env("Hopper-v5"), "action", prob=-0.1), "prob"),
    (lambda: envs.Perturb(envs.make_env("Hopper-v5"), "ext-force", std=-1.0), "std"),
    (lambda: envs.HoldPenalty(envs.make_env("Hopper-v5"), t_thres=-0.1), "t_thres"),
    (lambda: envs.AlertThenOff(dt=0.0), "dt"),
])
def test_bad_env_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        call()


# ---------------------------------------------------------------- sar_ppo.py
import math
import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
import torch

import sar_ppo

HERE = os.path.dirname(os.path.abspath(__file__))


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


FAST = ["--num-steps", "1024", "--update-epochs", "2", "--minibatch-size", "256"]


def train(script, tmp_path, *flags, name="run", check=True):
    cmd = [sys.executable, os.path.join(HERE, script), "--log-dir", str(tmp_path), "--run-name", name, *flags]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rows_of(tmp_path, name="run"):
    return read_csv(os.path.join(tmp_path, name, "progress.csv"))


def test_sar_run_writes_spec_logs_with_durations_between_dt_and_max_t(tmp_path):
    train("sar_ppo.py", tmp_path, "--total-steps", "4096", "--eval-every", "4", "--eval-episodes", "1", *FAST)
    with open(os.path.join(tmp_path, "run", "progress.csv")) as f:
        assert f.readline().strip().split(",") == sar_ppo.COLUMNS
    rows = rows_of(tmp_path)
    assert [int(r["decision_steps"]) for r in rows] == [1024, 2048, 3072, 4096]
    for r in rows:
        assert 2e-3 < float(r["action_duration_mean_s"]) <= 0.05
        assert int(r["env_steps"]) > int(r["decision_steps"])
        assert float(r["physical_time_s"]) == pytest.approx(int(r["env_steps"]) * 2e-3)
        assert 0 <= float(r["safe_radius_mean"]) <= 0.5
    assert rows[-1]["eval_return_mean"] != "" and rows[0]["eval_return_mean"] == ""
    with open(os.path.join(tmp_path, "run", "config.json")) as f:
        config = json.load(f)
    assert (config["method"], config["dt"], config["dt0"]) == ("SAR-PPO", 2e-3, 4e-2)
    assert config["gamma_dt"] == pytest.approx(0.99 ** 0.05) and config["versions"]["torch"].startswith("2.13.0")


def test_no_repeat_takes_one_delta_step_per_decision(tmp_path):
    train("sar_ppo.py", tmp_path, "--total-steps", "2048", "--no-repeat", *FAST)
    for r in rows_of(tmp_path):
        assert r["env_steps"] == r["decision_steps"] and float(r["action_duration_mean_s"]) == 2e-3
        assert r["safe_radius_mean"] == ""


VARYING = {"wall_time_s", "decisions_per_s", "env_steps_per_s"}


def test_same_seed_gives_identical_progress(tmp_path):
    for name in ("a", "b"):
        train("sar_ppo.py", tmp_path, "--total-steps", "2048", "--seed", "7", *FAST, name=name)
    strip = lambda rows: [{k: v for k, v in r.items() if k not in VARYING} for r in rows]
    assert strip(rows_of(tmp_path, "a")) == strip(rows_of(tmp_path, "b"))


@pytest.mark.parametrize("script,flags,n", [
    ("sar_ppo.py", ["--num-steps", "512", "--update-epochs", "1", "--minibatch-size", "256"], 512),
    ("sar_trpo.py", ["--num-steps", "256", "--vf-minibatch-size", "128"], 256),
    ("sar_ppo.py", ["--a2c"], 256)])
def test_killed_run_resumes_without_lost_or_repeated_rows(tmp_path, script, flags, n):
    flags = ["--total-steps", str(12 * n), "--checkpoint-every", "2", *flags]
    cmd = [sys.executable, os.path.join(HERE, script), "--log-dir", str(tmp_path), "--run-name", "run", *flags]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    progress, checkpoint = tmp_path / "run" / "progress.csv", tmp_path / "run" / "checkpoint.pt"
    deadline = time.time() + 120
    while time.time() < deadline and not (checkpoint.exists() and len(progress.read_text().splitlines()) >= 4):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = rows_of(tmp_path)
    saved = torch.load(checkpoint, weights_only=True)["counters"]["decision_steps"]
    assert 0 < saved and len(before) < 12  # killed mid-run, after a checkpoint
    train(script, tmp_path, *flags, "--resume")
    after = rows_of(tmp_path)
    kept = [r for r in before if int(r["decision_steps"]) <= saved]
    assert after[:len(kept)] == kept
    assert [int(r["decision_steps"]) for r in after] == list(range(n, 12 * n + 1, n))


BAD_FLAGS = [
    (["--env-id", "NoSuchTask-v0"], "--env-id"), (["--dt", "0"], "--dt"), (["--dt", "-0.001"], "--dt"),
    (["--dt", "0.1"], "--dt"), (["--dt", "tiny"], "--dt"), (["--max-d", "-0.5"], "--max-d"),
    (["--max-t", "-0.05"], "--max-t"), (["--noise", "wind"], "--noise"),
    (["--noise-prob", "1.5"], "--noise-prob"), (["--noise-prob", "-0.1"], "--noise-prob"),
    (["--noise-std", "-1"], "--noise-std"), (["--lambda-dt", "1.5"], "--lambda-dt"),
    (["--lambda-dt", "-0.5"], "--lambda-dt"), (["--total-steps", "0"], "--total-steps"),
    (["--no-such-flag"], "--no-such-flag"), (["--num-steps", "129", "--minibatch-size", "64"], "--minibatch-size"),
]


def assert_exits_2_naming(parse_args, flags, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(flags)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err


@pytest.mark.parametrize("flags,named", BAD_FLAGS)
def test_bad_flag_exits_2_with_one_line_naming_it(flags, named, capsys):
    assert_exits_2_naming(sar_ppo.parse_args, flags, named, capsys)


@pytest.mark.parametrize("script,flag,value", [("sar_ppo.py", "--dt", "0"), ("figar_ppo.py", "--noise-prob", "-1")])
def test_bad_flag_on_the_command_line_writes_nothing(tmp_path, script, flag, value):
    result = train(script, tmp_path / "logs", flag, value, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and flag in result.stderr
    assert not (tmp_path / "logs").exists()


# ---------------------------------------------------------------- figar_ppo.py
import figar_ppo


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


def test_figar_run_writes_spec_logs_with_durations_between_dt_and_max_t(tmp_path):
    train("figar_ppo.py", tmp_path, "--total-steps", "4096", *FAST)
    with open(os.path.join(tmp_path, "run", "progress.csv")) as f:
        assert f.readline().strip().split(",") == sar_ppo.COLUMNS
    rows = rows_of(tmp_path)
    assert [int(r["decision_steps"]) for r in rows] == [1024, 2048, 3072, 4096]
    for r in rows:
        assert 2e-3 <= float(r["action_duration_mean_s"]) <= 0.05 and r["safe_radius_mean"] == ""
        assert int(r["env_steps"]) > int(r["decision_steps"])
    with open(os.path.join(tmp_path, "run", "config.json")) as f:
        assert json.load(f)["method"] == "FiGAR-C-PPO"


FIGAR_BAD_FLAGS = [
    (["--env-id", "NoSuchTask-v0"], "--env-id"), (["--dt", "0"], "--dt"), (["--dt", "0.1"], "--dt"),
    (["--dt", "tiny"], "--dt"), (["--max-t", "-0.05"], "--max-t"), (["--noise", "wind"], "--noise"),
    (["--noise-prob", "2"], "--noise-prob"), (["--max-d", "0.5"], "--max-d"),
    (["--lambda-dt", "0.5"], "--lambda-dt"), (["--no-repeat"], "--no-repeat"),
]


@pytest.mark.parametrize("flags,named", FIGAR_BAD_FLAGS)
def test_figar_bad_flag_exits_2_with_one_line_naming_it(flags, named, capsys):
    assert_exits_2_naming(figar_ppo.parse_args, flags, named, capsys)


# ---------------------------------------------------------------- plot.py
import plot


def fake_run(root, name, final, method="SAR-PPO", dt=0.002, seed=1, rows=10, **config):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(
        {"env_id": "InvertedPendulum-v5", "method": method, "dt": dt, "seed": seed,
         "total_steps": rows * 100, "noise": None, "hold_penalty": False, **config}))
    lines = [",".join(sar_ppo.COLUMNS)]
    for i in range(1, rows + 1):
        row = {c: "" for c in sar_ppo.COLUMNS}
        row.update(decision_steps=i * 100, env_steps=i * 1000, physical_time_s=i * 2.0, wall_time_s=i,
                   return_mean=final if i > rows // 2 else 0.0, action_duration_mean_s=0.02)
        lines.append(",".join(str(row[c]) for c in sar_ppo.COLUMNS))
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")


def test_plot_groups_seeds_and_skips_bad_runs_tables_give_the_t_interval(tmp_path, capsys):
    for seed, final in zip((1, 2, 3), (10.0, 20.0, 30.0)):
        fake_run(tmp_path, f"sar{seed}", final, seed=seed)
    fake_run(tmp_path, "figar1", 5.0, method="FiGAR-C-PPO")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "progress.csv").write_text("decision_steps\n")
    (tmp_path / "broken" / "config.json").write_text("{not json")
    groups = plot.load_groups([str(tmp_path)])
    assert "broken" in capsys.readouterr().err
    sar = groups[("InvertedPendulum-v5", "deterministic", "SAR-PPO", 0.002)]
    mean, ci = plot.mean_ci([plot.final_return(c) for _, c, _ in sar])
    # the tables: mean 20, sample std 10, t(0.975, 2) = 4.303: 4.303 · 10 / sqrt(3)
    assert mean == pytest.approx(20.0) and ci == pytest.approx(4.303 * 10 / math.sqrt(3))
    assert plot.mean_ci([5.0]) == (5.0, 0.0)
    assert "| 20.0 ± 24.8 |" in plot.table(groups)
    assert "| 5.0 (one seed) |" in plot.table(groups)  # no interval from one seed
    assert plot.mean_range([10.0, 20.0, 30.0]) == (20.0, 10.0, 30.0)  # the figures: the seeds' min–max


def test_plot_intervals_stay_inside_the_seeds_min_and_max(tmp_path):
    # three seeds whose returns lie in [0, 1000]: a Student t band (n = 3) would reach far below 0 and above 1000
    for seed, final in zip((1, 2, 3), (0.0, 1000.0, 40.0)):
        fake_run(tmp_path, f"ppo{seed}", final, method="PPO", seed=seed)
    groups = plot.load_groups([str(tmp_path)])
    runs = groups[("InvertedPendulum-v5", "deterministic", "PPO", 0.002)]
    t_mean, t_ci = plot.mean_ci(plot.finals(runs))
    assert t_mean - t_ci < 0 and t_mean + t_ci > 1000  # what the old bands drew
    grid, mean, low, high = plot.seed_curves(runs, "decision_steps", "return_mean")
    assert (low >= 0).all() and (high <= 1000).all() and (low <= mean).all() and (mean <= high).all()
    fig = plot.task_bars(groups, "InvertedPendulum-v5", "deterministic")
    [bars] = [c for c in fig.axes[0].containers if hasattr(c, "errorbar") and c.errorbar]
    whisker = bars.errorbar.lines[2][0].get_segments()[0]
    assert whisker[:, 1].min() == pytest.approx(0.0) and whisker[:, 1].max() == pytest.approx(1000.0)
    fig_curves = plot.task_curves(groups, "InvertedPendulum-v5", "deterministic", "decision_steps", "return_mean",
                                  "training return", "training return", smooth=1)
    band = fig_curves.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() >= 0 and band.max() <= 1000
    plot.plt.close(fig)
    plot.plt.close(fig_curves)


def test_plot_refuses_runs_with_missing_repeated_or_misplaced_rows_one_line_each(tmp_path, capsys):
    fake_run(tmp_path, "good", 10.0, seed=1)
    for seed, name, change in [(2, "missing", lambda rows: rows[:4] + rows[5:]),
                               (3, "repeated", lambda rows: rows[:5] + [rows[4]] + rows[5:]),
                               (4, "swapped", lambda rows: rows[:3] + [rows[4], rows[3]] + rows[5:])]:
        fake_run(tmp_path, name, 10.0, seed=seed)
        progress = tmp_path / name / "progress.csv"
        header, *rows = progress.read_text().splitlines()
        progress.write_text("\n".join([header] + change(rows)) + "\n")
    groups = plot.load_groups([str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert [folder for _, _, folder in groups[("InvertedPendulum-v5", "deterministic", "SAR-PPO", 0.002)]] == [
        str(tmp_path / "good")]
    assert len(err) == 3
    assert "missing" in err[0] and "a missing row" in err[0] and "n, 2n, 3n" in err[0]
    assert "repeated" in err[1] and "a repeated row" in err[1]
    assert "swapped" in err[2] and "out of order" in err[2]


def test_plot_bad_paths_and_values_exit_2_with_one_line(tmp_path, capsys):
    fake_run(tmp_path, "sar1", 10.0)
    for argv, named in [([str(tmp_path / "nowhere")], "does not exist"),
                        ([str(tmp_path / "sar1" / "config.json")], "is a file"),
                        ([str(tmp_path), "--max-steps", "-5"], "--max-steps"),
                        ([str(tmp_path), "--max-steps", "0"], "--max-steps"),
                        ([str(tmp_path), "--table", "--max-steps", "1"], "is before the first update of"),
                        ([str(tmp_path), "--kinds", "pie"], "--kinds"),
                        ([str(tmp_path), "--table", "--window", "3", "1"], "--window"),
                        ([str(tmp_path), "--window", "1", "3"], "add --table"),
                        ([str(tmp_path), "--table", "--x", "physical_time_s", "--window", "5", "30"], "before 30"),
                        ([str(tmp_path), "--table", "--window", "0", "1"], "logs no return between 0 and 1"),
                        ([str(tmp_path), "--prefix", "../../escape_"], "--prefix"),
                        ([str(tmp_path), "--random-returns", str(tmp_path / "none.csv")], "--random-returns"),
                        ([str(tmp_path), "--random-returns", str(tmp_path / "sar1" / "config.json")], "--random-returns"),
                        ([str(tmp_path), "--only", ""], "--only")]:
        with pytest.raises(SystemExit) as exit_info:
            plot.main(argv + ["--out", str(tmp_path / "figures")])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err, (argv, err)
        assert "not a folder" not in err
    assert not (tmp_path / "figures").exists()


def test_plot_without_out_draws_into_figures_here_and_leaves_the_committed_ones(tmp_path, capsys, monkeypatch):
    fake_run(tmp_path / "runs", "sar1", 10.0)
    committed = {f: os.path.getmtime(f) for f in glob.glob(os.path.join(HERE, "results", "figures", "*"))}
    monkeypatch.chdir(tmp_path)
    assert plot.main([str(tmp_path / "runs"), "--kinds", "curves"]) == 0
    assert glob.glob(str(tmp_path / "figures" / "*.png"))
    capsys.readouterr()
    assert {f: os.path.getmtime(f) for f in glob.glob(os.path.join(HERE, "results", "figures", "*"))} == committed
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path / "runs"), "--out", ""])
    assert exit_info.value.code == 2 and capsys.readouterr().err.endswith("error: --out: empty; give a folder\n")


def test_plot_window_averages_the_return_of_the_updates_whose_x_lies_in_it(tmp_path, capsys):
    for seed, final in zip((1, 2), (10.0, 30.0)):
        fake_run(tmp_path, f"sar{seed}", final, seed=seed)  # return 0 for updates 1-5, `final` for 6-10
    # physical s 2, 4, ..., 20: [10, 12] holds updates 5 and 6, so each run's return is final / 2
    assert plot.main([str(tmp_path), "--table", "--x", "physical_time_s", "--window", "10", "12"]) == 0
    out = capsys.readouterr().out
    assert "| 10.0 ± 63.5 |" in out  # mean of 5 and 15, sample std 7.07; t(0.975, 1) = 12.706: 12.706 · 7.07 / sqrt(2)
    assert "| sar1 | 1,000 | 20 | 5.0 | 0.2 |" in out
    assert plot.main([str(tmp_path), "--summary", "--window", "100", "500"]) == 0  # decisions: updates 1-5
    assert "| 0.0 ± 0.0 (2) |" in capsys.readouterr().out


def test_plot_on_unfinished_runs_only_names_partial(tmp_path, capsys):
    fake_run(tmp_path, "sar1", 10.0, total_steps=10_000)
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path), "--out", str(tmp_path / "figures")])
    last = capsys.readouterr().err.splitlines()[-1]
    assert exit_info.value.code == 2 and "--partial" in last and "1 run(s) found unfinished" in last
    assert plot.main([str(tmp_path), "--partial", "--table"]) == 0


def test_plot_on_variant_runs_only_names_variants(tmp_path, capsys):
    fake_run(tmp_path, "sar-maxd0.2", 10.0, method="SAR-PPO (d_max=0.2)")
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path), "--table"])
    last = capsys.readouterr().err.splitlines()[-1]
    assert exit_info.value.code == 2 and "--variants" in last and "1 run(s) of a variant" in last
    assert plot.main([str(tmp_path), "--variants", "--table"]) == 0


def test_plot_writes_every_figure_named_by_task_and_skips_unfinished_runs(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed in (1, 2):
        fake_run(runs, f"sar{seed}", 10.0 * seed, seed=seed)
        fake_run(runs, f"ppo{seed}", 1.0, method="PPO", seed=seed, noise="ext-force")
        fake_run(runs, f"hop{seed}", 30.0, seed=seed, env_id="Hopper-v5", dt=0.008)
        fake_run(runs, f"variant{seed}", 99.0, method="SAR-PPO (d_max=0.2)", seed=seed)
    fake_run(runs, "unfinished", 3.0, seed=3, total_steps=10_000)
    random_returns = tmp_path / "random.csv"
    random_returns.write_text("env_id,return_mean\nInvertedPendulum-v5,5\nHopper-v5,10\n")
    out = tmp_path / "figures"
    assert plot.main([str(runs), "--out", str(out), "--x", "physical_time_s", "--format", "pdf",
                      "--random-returns", str(random_returns)]) == 0
    captured = capsys.readouterr()
    assert "unfinished" in captured.err and "d_max" not in captured.out  # variants only with --variants
    names = sorted(p.name for p in out.iterdir())
    per_task = [f"{task}_{setting}_{kind}.pdf" for task, setting in [("InvertedPendulum-v5", "deterministic"),
                                                                     ("Hopper-v5", "deterministic"),
                                                                     ("InvertedPendulum-v5", "ext-force")]
                for kind in ("return_vs_physical_time_s", "final_return", "action_duration_vs_physical_time_s")]
    assert names == sorted(per_task + [
        "deterministic_grid_return_vs_physical_time_s_InvertedPendulum+Hopper.pdf",
        "ext-force_grid_return_vs_physical_time_s_InvertedPendulum-v5.pdf",
        "deterministic_final_return_normalised_InvertedPendulum+Hopper.pdf"])  # normalised: deterministic only
    assert all(p.stat().st_size > 1000 for p in out.iterdir())
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(runs), "--out", str(out), "--smooth", "0"])
    assert exit_info.value.code == 2
    assert "--smooth" in capsys.readouterr().err
    assert plot.main([str(runs), "--table", "--only", "sar1", "ppo2"]) == 0
    captured = capsys.readouterr()
    assert "unfinished" not in captured.err  # runs left out by --only are not even read
    assert sorted(line.split(" | ")[0] for line in captured.out.splitlines() if line.startswith("| sar") or
                  line.startswith("| ppo")) == ["| ppo2", "| sar1"]
    assert plot.main([str(runs), "--table", "--variants"]) == 0
    assert "SAR-PPO (d_max=0.2)" in capsys.readouterr().out


def test_plot_redraws_the_same_bytes(tmp_path):
    for seed in (1, 2):
        fake_run(tmp_path / "runs", f"sar{seed}", 10.0 * seed, seed=seed)
    for out in ("a", "b"):
        assert plot.main([str(tmp_path / "runs"), "--out", str(tmp_path / out), "--kinds", "curves", "bars"]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(names) == 2
    for name in names:
        data = (tmp_path / "a" / name).read_bytes()
        assert data == (tmp_path / "b" / name).read_bytes() and b"matplotlib version" not in data


def test_plot_gives_each_method_one_colour_in_every_kind_of_figure(tmp_path):
    for seed in (1, 2):
        for method in ("SAR-PPO", "FiGAR-C-PPO", "PPO"):
            for dt in (0.002, 0.04):
                fake_run(tmp_path, f"{method}{dt}_{seed}", 100.0 * seed, method=method, dt=dt, seed=seed)
            fake_run(tmp_path, f"{method}_noise{seed}", 50.0, method=method, seed=seed, noise="action")
    groups = plot.load_groups([str(tmp_path)])
    base = {m: np.array(plot.matplotlib.colors.to_rgb(plot.FAMILY_COLORS[m])) for m in ("SAR-PPO", "FiGAR-C-PPO", "PPO")}

    def hue_of(rgba):
        """Which method's colour `rgba` is a shade of (mixed with white): the one it lies on the line to white from."""
        rgb = np.array(rgba[:3])
        distance = {m: np.linalg.norm(np.cross(rgb - 1, c - 1)) / np.linalg.norm(c - 1) for m, c in base.items()}
        return min(distance, key=distance.get)

    ip = "InvertedPendulum-v5"
    curves = plot.task_curves(groups, ip, "deterministic", "decision_steps", "return_mean", "r", "r", smooth=1)
    for line in curves.axes[0].get_lines():
        assert hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == line.get_label().split(",")[0]
    bars = plot.task_bars(groups, ip, "deterministic")
    ticks = [t.get_text() for t in bars.axes[0].get_xticklabels()]
    for patch in bars.axes[0].patches:
        assert hue_of(patch.get_facecolor()) == ticks[round(patch.get_x() + patch.get_width() / 2)]
    grid = plot.grid_figure(groups, "deterministic", "decision_steps", smooth=1)
    for ax in grid.axes:
        method = ax.get_title().split(" on")[0]
        assert all(hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == method for line in ax.get_lines())
    fig5 = plot.fig5_figure(groups, "decision_steps", 1, [ip])
    for line in fig5.axes[0].get_lines():
        assert hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == line.get_label().split(" (n")[0]
    assert len(fig5.axes[0].get_lines()) == 3
    for fig in (curves, bars, grid, fig5):
        plot.plt.close(fig)


def test_plot_moving_average_is_what_help_says(capsys):
    # nan: an update with no finished episode; the first N-1 updates average those so far
    y = np.array([np.nan, 2.0, np.nan, np.nan, 8.0, 4.0, 6.0])
    assert np.array_equal(plot.moving_average(y, 2), [np.nan, 2.0, 2.0, np.nan, 8.0, 6.0, 5.0], equal_nan=True)
    assert np.array_equal(plot.moving_average(y, 3), [np.nan, 2.0, 2.0, 2.0, 8.0, 6.0, 6.0], equal_nan=True)
    assert np.array_equal(plot.moving_average(y, 1), y, equal_nan=True)  # --smooth 1: the raw curve
    with pytest.raises(SystemExit):
        plot.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "last N updates (the first N-1 updates: over those so far" in help_text
    assert "1 draws the raw curves (default 10)" in help_text


def test_plot_grid_has_a_row_per_method_a_column_per_task_and_shared_y_per_column(tmp_path):
    for seed in (1, 2):
        fake_run(tmp_path, f"sar_hop{seed}", 3000.0, seed=seed, dt=0.008, env_id="Hopper-v5")
        for method in ("SAR-PPO", "PPO"):
            for dt in (0.002, 0.04):
                fake_run(tmp_path, f"{method}{dt}_{seed}", 100.0 * seed, method=method, dt=dt, seed=seed)
    fig = plot.grid_figure(plot.load_groups([str(tmp_path)]), "deterministic", "decision_steps", smooth=3)
    assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (2, 2)  # rows: methods, columns: tasks
    assert [ax.get_title() for ax in fig.axes] == [  # the paper's orders, not alphabetical
        "SAR-PPO on\nInvertedPendulum-v5 (n = 2)", "SAR-PPO on Hopper-v5 (n = 2)",  # a long title: two lines
        "PPO on InvertedPendulum-v5 (n = 2)", "PPO on Hopper-v5 (n = 0)"]
    (sar_ip, sar_hop), (ppo_ip, ppo_hop) = fig.axes[:2], fig.axes[2:]
    shared = sar_ip.get_shared_y_axes()
    assert shared.joined(sar_ip, ppo_ip) and shared.joined(sar_hop, ppo_hop) and not shared.joined(sar_ip, sar_hop)
    assert sar_ip.get_ylim() == ppo_ip.get_ylim() and sar_hop.get_ylim()[1] > 3000 > sar_ip.get_ylim()[1]
    assert len(sar_ip.get_lines()) == 2 and len(sar_hop.get_lines()) == 1  # a line per δ
    # rows 1-5 return 0, rows 6-10 the final (150 = the mean over seeds): row 6 at x = 600 is 150 / 3
    x, y = sar_ip.get_lines()[0].get_data()
    assert x[55] == pytest.approx(600) and y[55] == pytest.approx(50) and y[-1] == pytest.approx(150)
    plot.plt.close(fig)


def test_plot_normalisation_puts_the_best_largest_dt_return_at_1_and_a_random_policy_at_0(tmp_path, capsys):
    for method, dt, finals in [("SAR-PPO", 0.04, (700, 900)), ("PPO", 0.04, (1000, 1000)),
                               ("SAR-PPO", 0.002, (500, 600)), ("PPO", 0.002, (100, 300))]:
        for seed, final in enumerate(finals):
            fake_run(tmp_path, f"ip_{method}{dt}_{seed}", float(final), method=method, dt=dt, seed=seed, dt0=0.04)
    fake_run(tmp_path, "swimmer", 20.0, dt=0.002, dt0=0.04, env_id="Swimmer-v5")  # a lone 2 ms run: not "δ0"
    for seed, (dt, final) in enumerate([(0.02, -5.0), (0.001, -4.0), (0.001, -45.0)]):  # Reacher: R* < 0
        fake_run(tmp_path, f"reacher{seed}", final, dt=dt, seed=seed, env_id="Reacher-v5")
    fake_run(tmp_path, "hopper", 10.0, dt=0.008, env_id="Hopper-v5")  # R* = R_random: no scale
    fake_run(tmp_path, "walker", 10.0, dt=0.008, env_id="Walker2d-v5")  # no R_random
    chance = {"InvertedPendulum-v5": 0.0, "Reacher-v5": -45.0, "Hopper-v5": 10.0, "Swimmer-v5": 0.0}
    refs, scores = plot.normalised_finals(plot.load_groups([str(tmp_path)]), "deterministic", chance)
    err = capsys.readouterr().err
    assert "Hopper-v5 (deterministic) left out" in err and "Walker2d-v5 (deterministic) left out" in err
    assert refs == {"InvertedPendulum-v5": (1000.0, "PPO", 0.04, 0.0, True), "Reacher-v5": (-5.0, "SAR-PPO", 0.02, -45.0,
                    False), "Swimmer-v5": (20.0, "SAR-PPO", 0.002, 0.0, False)}  # Reacher's runs recorded no δ0
    ip = "InvertedPendulum-v5", "deterministic"
    assert list(scores[(*ip, "SAR-PPO", 0.04)]) == pytest.approx([0.7, 0.9])
    assert list(scores[(*ip, "SAR-PPO", 0.002)]) == pytest.approx([0.5, 0.6])
    assert list(scores[(*ip, "PPO", 0.002)]) == pytest.approx([0.1, 0.3])
    # a negative R*: still 1 at R*, 0 at R_random, higher is better: (−4 + 45) / 40 and (−45 + 45) / 40
    assert sorted(scores[("Reacher-v5", "deterministic", "SAR-PPO", 0.001)]) == pytest.approx([0.0, 41 / 40])
    assert plot.read_random_returns(os.path.join(HERE, "results", "random_returns.csv")).keys() == set(plot.TASKS)


def test_plot_fig5_verdict_needs_two_seeds_a_side_to_call_the_intervals():
    assert plot.verdict([900.0, 950.0], [100.0, 200.0]) == "SAR above by the intervals"
    assert plot.verdict([900.0], [100.0]) == "by the mean only (one seed)"
    assert plot.verdict([900.0, 950.0], [990.0]) == "not (one seed)"


def test_plot_fig5_draws_a_row_per_stochastic_setting_for_any_subset_of_tasks_with_a_verdict(tmp_path, capsys):
    finals = {("SAR-PPO", "action"): (900, 950), ("FiGAR-C-PPO", "action"): (100, 200),  # above by the intervals
              ("SAR-PPO", "ext-force"): (300, 900), ("FiGAR-C-PPO", "ext-force"): (400, 500),  # by the mean only
              ("SAR-PPO", "ext-force-perceptible"): (10, 20), ("FiGAR-C-PPO", "ext-force-perceptible"): (30, 40)}
    for (method, noise), values in finals.items():
        for seed, final in enumerate(values, 1):
            fake_run(tmp_path, f"hop_{method}_{noise}_{seed}", float(final), method=method, seed=seed,
                     noise=noise, env_id="Hopper-v5", dt=0.0005)
    fake_run(tmp_path, "hop_larger_dt", 5.0, noise="action", env_id="Hopper-v5", dt=0.008)  # not δ_lowest
    fake_run(tmp_path, "ip_action", 1000.0, noise="action")  # a task with one setting and one method
    fake_run(tmp_path, "ip_deterministic", 1000.0)  # not a stochastic setting
    out = tmp_path / "figures"
    assert plot.main([str(tmp_path), "--out", str(out), "--kinds", "fig5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(p.name for p in out.iterdir()) == ["fig5_return_vs_decision_steps_InvertedPendulum+Hopper.png"]
    table = lines[lines.index(next(line for line in lines if line.startswith("| task | setting | δ (ms)"))):]
    assert table[2:6] == [
        "| InvertedPendulum-v5 | action | 2 | 1,000 | 1000.0 [1000.0, 1000.0] (1) | – | – |",
        "| Hopper-v5 | action | 0.5 | 1,000 | 925.0 [900.0, 950.0] (2) | 150.0 [100.0, 200.0] (2) | SAR above by the intervals |",
        "| Hopper-v5 | ext-force | 0.5 | 1,000 | 600.0 [300.0, 900.0] (2) | 450.0 [400.0, 500.0] (2) | by the mean only |",
        "| Hopper-v5 | ext-force-perceptible | 0.5 | 1,000 | 15.0 [10.0, 20.0] (2) | 35.0 [30.0, 40.0] (2) | not |"]
    groups = plot.load_groups([str(tmp_path)])
    fig = plot.fig5_figure(groups, "decision_steps", 1, ["InvertedPendulum-v5", "Hopper-v5"])
    assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (3, 2)  # rows: settings, columns: tasks
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[1] == "Hopper-v5\naction, δ = 0.5 ms" and titles[5] == "Hopper-v5\next-force-perceptible, δ = 0.5 ms"
    assert len(fig.axes[1].get_lines()) == 2 and len(fig.axes[2].get_lines()) == 0  # IP: action only
    plot.plt.close(fig)


def test_plot_orders_methods_as_the_paper_with_each_variant_after_its_base():
    names = {"PPO", "FiGAR-C-PPO (no limit on t)", "SAR-PPO (d_max=0.2)", "FiGAR-C-PPO", "SAR-PPO", "λ-SAR-PPO", "other"}
    assert plot.ordered(names, plot.METHODS) == ["SAR-PPO", "SAR-PPO (d_max=0.2)", "λ-SAR-PPO", "FiGAR-C-PPO",
                                                 "FiGAR-C-PPO (no limit on t)", "PPO", "other"]


def test_plot_summary_gives_a_row_per_task_and_dt_main_methods_unless_asked(tmp_path, capsys):
    for seed in (1, 2):
        fake_run(tmp_path, f"hop_sar{seed}", 2000.0 + seed, seed=seed, dt=0.008, env_id="Hopper-v5")
        for dt, final in ((0.002, 900.0), (0.04, 1000.0)):
            fake_run(tmp_path, f"ip_sar{dt}_{seed}", final, dt=dt, seed=seed)
        fake_run(tmp_path, f"ip_variant{seed}", 5.0, seed=seed, method="SAR-PPO (l2)")
    fake_run(tmp_path, "ip_ppo", 500.0, method="PPO", dt=0.002, rows=20)  # a longer budget
    assert plot.main([str(tmp_path), "--summary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("deterministic:") and lines[2] == "| task | δ (s) | decisions | SAR-PPO | PPO |"
    assert lines[4:] == [  # the paper's order of tasks, largest δ first; – where no run finished
        "| InvertedPendulum-v5 | 0.04 | 1,000 | 1000.0 ± 0.0 (2) | – |",
        "| InvertedPendulum-v5 | 0.002 | 1,000–2,000 | 900.0 ± 0.0 (2) | 500.0 (1) |",
        "| Hopper-v5 | 0.008 | 1,000 | 2001.5 ± 6.4 (2) | – |"]  # one δ: its own row, not "largest δ"
    assert plot.main([str(tmp_path), "--summary", "--variants"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "| task | δ (s) | decisions | SAR-PPO | SAR-PPO (l2) | PPO |"


def test_readme_final_returns_come_from_the_committed_runs():
    # a clean clone must hold the runs behind every results table of the report, results/README.md
    here = os.path.dirname(os.path.abspath(__file__))
    groups = plot.load_groups([os.path.join(here, "results", "runs")])
    pendulums_and_hopper = [k for k in groups if k[0] in ("InvertedPendulum-v5", "InvertedDoublePendulum-v5", "Hopper-v5")]
    assert len(pendulums_and_hopper) >= 30  # 9 + 9 + 6 δ-cells + 6 noisy
    with open(os.path.join(here, "results", "README.md")) as f:
        readme = f.read()
    groups_1m = plot.load_groups([os.path.join(here, "results", "runs_1m")])
    assert sorted(len(runs) for runs in groups_1m.values()) == [3, 3, 3, 3, 8, 8]  # SAR-PPO's 8 seeds
    for runs in [*groups.values(), *groups_1m.values()]:  # every group of two seeds or more
        mean, ci = plot.mean_ci([plot.final_return(c) for _, c, _ in runs])
        assert len(runs) < 2 or f"{mean:.1f} ± {ci:.1f}" in readme


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_partially_observable_stochastic_setting_trains(tmp_path, script):
    # App. H: HoldPenalty inside the repetition, the perceptible force outside it (λ-SAR's setting)
    extra = ["--lambda-dt", "0.5"] if script == "sar_ppo.py" else []
    train(script, tmp_path, "--total-steps", "512", "--num-steps", "256", "--update-epochs", "1",
          "--noise", "ext-force-perceptible", "--hold-penalty", *extra)
    with open(os.path.join(tmp_path, "run", "config.json")) as f:
        config = json.load(f)
    assert config["hold_penalty"] and config["noise"] == "ext-force-perceptible"
    assert len(rows_of(tmp_path)) == 2


def test_resume_with_other_method_flags_exits_2_and_changes_nothing(tmp_path):
    flags = ["--total-steps", "512", "--num-steps", "256", "--update-epochs", "1"]
    train("sar_ppo.py", tmp_path, *flags)
    before = (tmp_path / "run" / "progress.csv").read_text(), (tmp_path / "run" / "config.json").read_text()
    result = train("sar_ppo.py", tmp_path, *flags, "--resume", "--norm", "l2", check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--norm" in result.stderr
    assert before == ((tmp_path / "run" / "progress.csv").read_text(), (tmp_path / "run" / "config.json").read_text())
    train("sar_ppo.py", tmp_path, *flags[:1], "1024", *flags[2:], "--resume")  # a longer budget is fine
    assert [int(r["decision_steps"]) for r in rows_of(tmp_path)] == [256, 512, 768, 1024]


def test_resume_of_a_finished_run_without_its_checkpoint_still_refuses_other_flags(tiny_run, tmp_path):
    copy_of(tiny_run, tmp_path, checkpoint=False)  # as in a fresh clone: config.json holds the flags
    result = train("sar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--resume", "--norm", "l2", check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--norm" in result.stderr, result.stderr
    assert "is finished" in train("sar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--resume").stdout


def test_variants_get_their_own_method_name_and_run_name():
    args = sar_ppo.parse_args(["--norm", "l2", "--max-t", "inf"])
    assert args.method == "SAR-PPO (l2, no limit on t)" and "__sar-l2-no-limit-t__" in args.run_name
    args = figar_ppo.parse_args(["--no-limit-t", "--noise", "action", "--noise-prob", "0.1"])
    assert args.method == "FiGAR-C-PPO (no limit on t)" and "__action-p0.1__" in args.run_name


# ---------------------------------------------------------------- runs are never erased or continued wrong
import resource
import shutil

TINY = ["--num-steps", "256", "--update-epochs", "1", "--minibatch-size", "128"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A finished run of 2 updates (512 decisions) with its checkpoint; tests copy it."""
    root = tmp_path_factory.mktemp("tiny")
    train("sar_ppo.py", root, "--total-steps", "512", *TINY)
    return root / "run"


def copy_of(run, tmp_path, checkpoint=True):
    shutil.copytree(run, tmp_path / "run")
    if not checkpoint:
        (tmp_path / "run" / "checkpoint.pt").unlink()
    return tmp_path / "run"


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def resume(tmp_path, total_steps, *flags, script="sar_ppo.py"):
    return train(script, tmp_path, "--total-steps", str(total_steps), *TINY, "--resume", *flags, check=False)


def decisions(tmp_path):
    return [int(r["decision_steps"]) for r in rows_of(tmp_path)]


COMMITTED = os.path.join(HERE, "results", "runs")


@pytest.mark.parametrize("script,run", [("sar_ppo.py", "InvertedPendulum-v5__sar__dt0.002__s1"),
                                        ("figar_ppo.py", "InvertedPendulum-v5__figar__dt0.04__s2")])
def test_resume_of_a_committed_run_in_a_fresh_clone_changes_nothing(tmp_path, script, run):
    # a clone has no checkpoints: a finished run is left alone, an unfinished one is refused, never retrained
    shutil.copytree(os.path.join(COMMITTED, run), tmp_path / run)
    with open(tmp_path / run / "config.json") as f:
        config = json.load(f)
    before = snapshot(tmp_path / run)
    flags = ["--env-id", config["env_id"], "--dt", str(config["dt"]), "--seed", str(config["seed"]),
             "--log-dir", str(tmp_path), "--resume"]
    done = subprocess.run([sys.executable, os.path.join(HERE, script), *flags, "--total-steps", str(config["total_steps"])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "finished" in done.stdout and snapshot(tmp_path / run) == before
    longer = subprocess.run([sys.executable, os.path.join(HERE, script), *flags, "--total-steps", "10000000"],
                            capture_output=True, text=True, timeout=120)
    assert longer.returncode == 2 and longer.stderr.count("\n") == 1 and "no checkpoint" in longer.stderr
    assert snapshot(tmp_path / run) == before


def test_resume_with_a_smaller_budget_is_finished_and_changes_nothing(tiny_run, tmp_path):
    run = copy_of(tiny_run, tmp_path)
    before = snapshot(run)
    result = resume(tmp_path, 256)
    assert result.returncode == 0 and "finished" in result.stdout and snapshot(run) == before


def test_unfinished_run_without_checkpoint_is_refused(tiny_run, tmp_path):
    run = copy_of(tiny_run, tmp_path, checkpoint=False)
    before = snapshot(run)
    result = resume(tmp_path, 1024)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "no checkpoint.pt" in result.stderr
    assert snapshot(run) == before


def torn(text):
    return text[:len(text) * 2 // 3]


@pytest.mark.parametrize("name,damage", [
    ("config.json", torn), ("config.json", lambda _: "\x00\xff garbage"), ("progress.csv", lambda t: t[:-25]),
    ("progress.csv", lambda _: "garbage\n1,2\n"), ("progress.csv", lambda t: t.replace("\n256,", "\n768,", 1)),
    ("progress.csv", lambda t: "".join(t.splitlines(True)[:2]))])  # torn, foreign, out of order, a row missing
def test_damaged_progress_or_config_beside_a_good_checkpoint_is_rebuilt_from_it(tiny_run, tmp_path, name, damage):
    run = copy_of(tiny_run, tmp_path)
    (run / name).write_text(damage((run / name).read_text()))
    assert resume(tmp_path, 1024).returncode == 0
    assert decisions(tmp_path) == [256, 512, 768, 1024]
    with open(run / "config.json") as f:
        assert [c["decision_steps"] for c in json.load(f)["code"]] == [0, 512]


@pytest.mark.parametrize("damage", [torn, lambda _: "garbage", lambda _: ""])
def test_damaged_checkpoint_is_refused_with_one_line_naming_it(tiny_run, tmp_path, damage):
    run = copy_of(tiny_run, tmp_path)
    path = run / "checkpoint.pt"
    path.write_bytes(damage(path.read_bytes().decode("latin-1")).encode("latin-1"))
    before = snapshot(run)
    result = resume(tmp_path, 1024)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "checkpoint.pt" in result.stderr
    assert snapshot(run) == before


def test_foreign_checkpoint_is_refused_with_one_line(tiny_run, tmp_path):
    run = copy_of(tiny_run, tmp_path)
    torch.save({"agent": {}}, run / "checkpoint.pt")
    before = snapshot(run)
    result = resume(tmp_path, 1024)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "checkpoint.pt" in result.stderr
    assert snapshot(run) == before


def test_checkpoint_of_another_seed_is_refused_naming_the_flag(tiny_run, tmp_path):
    run = copy_of(tiny_run, tmp_path)
    before = snapshot(run)
    result = resume(tmp_path, 1024, "--seed", "2")  # as if copied from seed 2's run: the flags differ
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--seed" in result.stderr
    assert "--method" not in result.stderr and snapshot(run) == before


def test_a_second_process_on_the_same_run_is_refused_while_the_first_trains(tmp_path):
    cmd = [sys.executable, os.path.join(HERE, "sar_ppo.py"), "--log-dir", str(tmp_path), "--run-name", "run",
           "--total-steps", "100000", *TINY]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not (tmp_path / "run" / "checkpoint.pt").exists():
            time.sleep(0.05)
        second = resume(tmp_path, 100000)
        assert second.returncode == 2 and second.stderr.count("\n") == 1 and "another process" in second.stderr
    finally:
        first.kill()
        first.wait()
    assert resume(tmp_path, len(decisions(tmp_path)) * 256 + 256).returncode == 0  # a killed process's lock is gone
    assert decisions(tmp_path) == list(range(256, decisions(tmp_path)[-1] + 1, 256))


def test_resume_with_save_model_on_a_finished_run_writes_the_model_or_says_why_not(tiny_run, tmp_path):
    run = copy_of(tiny_run, tmp_path)
    assert resume(tmp_path, 512, "--save-model").returncode == 0
    model, checkpoint = (torch.load(run / f, weights_only=True) for f in ("model.pt", "checkpoint.pt"))
    assert sorted(model) == ["agent", "obs_rms", "repetition_stats"]
    assert all(torch.equal(model["agent"][k], checkpoint["agent"][k]) for k in model["agent"])
    (run / "model.pt").unlink()
    (run / "checkpoint.pt").unlink()  # as in a clone
    result = resume(tmp_path, 512, "--save-model")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--save-model" in result.stderr


def test_config_and_checkpoint_are_replaced_whole_or_not_at_all(tmp_path):
    path = str(tmp_path / "config.json")
    sar_ppo.save_atomic(path, '{"old": 1}')
    os.mkdir(path + ".tmp")  # the write fails, as on a full disk
    with pytest.raises(OSError):
        sar_ppo.save_atomic(path, '{"new": 2}')
    assert open(path).read() == '{"old": 1}'


def test_interrupted_run_says_one_line_and_resumes_to_every_row(tmp_path):
    cmd = [sys.executable, os.path.join(HERE, "sar_ppo.py"), "--log-dir", str(tmp_path), "--run-name", "run",
           "--total-steps", "1000000", *TINY]  # it cannot finish before the signal
    # SIGINT as a terminal delivers it, also when the suite runs in the background (where it is ignored)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    progress = tmp_path / "run" / "progress.csv"
    deadline = time.time() + 120
    while time.time() < deadline and not (progress.exists() and len(progress.read_text().splitlines()) >= 3):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    assert err.count("\n") == 1 and "interrupted" in err and "--resume" in err
    total = 256 * (len(decisions(tmp_path)) + 2)
    assert resume(tmp_path, total).returncode == 0
    assert decisions(tmp_path) == list(range(256, total + 1, 256))


def test_failed_write_stops_with_one_line_and_the_run_resumes(tmp_path):
    # a file-size limit fails the first update's checkpoint (~1.6 MB) like a full disk would
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))  # noqa: E731
    cmd = [sys.executable, os.path.join(HERE, "sar_ppo.py"), "--log-dir", str(tmp_path), "--run-name", "run",
           "--total-steps", "512", *TINY]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "File too large" in result.stderr
    train("sar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--resume")
    assert decisions(tmp_path) == [256, 512]


def test_diverging_loss_stops_before_a_nan_row_or_checkpoint(tmp_path):
    run = {"dir": str(tmp_path), "counters": {"update": 3}, "rows": []}
    with pytest.raises(SystemExit) as exit_info:
        sar_ppo.log_row(run, {"policy_loss": math.nan, "value_loss": 0.5}, checkpoint=True)
    assert "diverged in update 3" in str(exit_info.value.code) and "--learning-rate" in str(exit_info.value.code)
    assert run["rows"] == [] and list(tmp_path.iterdir()) == []


MORE_BAD_FLAGS = [  # (flags, text the one line must hold), for both scripts
    (["--learning-rate", "inf"], "--learning-rate"), (["--gamma", "nan"], "--gamma"),
    (["--clip-coef", "0"], "--clip-coef"), (["--vf-coef", "-1"], "--vf-coef"),
    (["--max-grad-norm", "0"], "--max-grad-norm"), (["--adam-eps", "0"], "--adam-eps"),
    (["--ent-coef", "-0.1"], "--ent-coef"), (["--minibatch-size", "0"], "--minibatch-size"),
    (["--seed", "-1"], "--seed"), (["--seed", str(2 ** 64)], "--seed"), (["--threads", "100000"], "--threads"),
    (["--num-steps", str(10 ** 9)], "--num-steps"), (["--total-steps", str(10 ** 15)], "--total-steps"),
    (["--dt", "1e-9"], "--dt"), (["--max-t", "1e308"], "--max-t"),
    (["--noise", "ext-force", "--noise-std", "1e300"], "--noise-std"),
    (["--noise-prob", "0.1"], "--noise-prob"), (["--noise-std", "5"], "--noise-std"),
    (["--run-name", "a/b"], "--run-name"), (["--run-name", ".."], "--run-name"),
    (["--hold-penalty", "--env-id", "Ant-v5"], "Ant-v5"), (["--delta-dims", "2,9"], "--delta-dims"),
    (["--clip-coef", "1e308"], "--clip-coef"), (["--update-epochs", "1000000000000"], "--update-epochs"),
    (["--run-name", "x" * 300], "--run-name"), (["--adam-eps", "1e-320"], "--adam-eps"),
    (["--vf-coef", "1e308"], "--vf-coef"), (["--dt", ""], "--dt"), (["--log-dir", ""], "--log-dir"),
]


@pytest.mark.parametrize("flags,named", MORE_BAD_FLAGS + [(["--max-t=-inf"], "--max-t"), (["--max-t", "-inf"], "--max-t")])
@pytest.mark.parametrize("module", [sar_ppo, figar_ppo])
def test_every_flag_is_checked_before_any_work(module, flags, named, tmp_path, capsys):
    log_dir = [] if "--log-dir" in flags else ["--log-dir", str(tmp_path / "logs")]
    assert_exits_2_naming(module.parse_args, [*log_dir, *flags], named, capsys)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_a_log_dir_that_cannot_be_made_is_one_line_before_any_work(tmp_path, script):
    for log_dir in (os.path.join(HERE, "README.md"), os.path.join(HERE, "README.md", "runs")):
        result = train(script, tmp_path, "--log-dir", log_dir, "--total-steps", "256", *TINY, check=False)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--log-dir" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_max_t_inf_keeps_its_meaning_in_sar():
    assert sar_ppo.parse_args(["--max-t", "inf"]).max_t == math.inf


def test_full_grid_never_writes_to_the_committed_runs():
    listing = subprocess.run(["bash", os.path.join(HERE, "benchmark", "full_grid.sh"), "--list"],
                             capture_output=True, text=True).stdout
    assert listing.count("--log-dir runs/full_grid ") == len(listing.splitlines()) > 0


def test_plot_finds_runs_recursively_counts_a_seed_once_and_skips_torn_runs(tmp_path, capsys):
    fake_run(tmp_path / "runs", "sar1", 10.0, seed=1)
    fake_run(tmp_path / "runs", "sar2", 20.0, seed=2)
    fake_run(tmp_path / "copy", "sar1", 10.0, seed=1, rows=6)  # the same seed again, shorter
    fake_run(tmp_path / "runs", "sar3", 30.0, seed=3)
    progress = tmp_path / "runs" / "sar3" / "progress.csv"
    progress.write_text(progress.read_text()[:-20])
    groups = plot.load_groups([str(tmp_path)])
    err = capsys.readouterr().err
    assert "same seed" in err and "sar3" in err and "torn" in err
    [runs] = groups.values()
    assert sorted(folder for _, _, folder in runs) == [str(tmp_path / "runs" / "sar1"), str(tmp_path / "runs" / "sar2")]
    for out in (progress, progress / "figures"):  # a file, or a folder that would be made in one
        with pytest.raises(SystemExit) as exit_info:
            plot.main([str(tmp_path), "--out", str(out)])
        assert exit_info.value.code == 2 and capsys.readouterr().err.count("\n") == 1

# ---------------------------------------------------------------- benchmark/: the theory, measured (issue #14)
sys.path.insert(0, os.path.join(HERE, "benchmark"))
import alert_then_off  # noqa: E402
import exploration  # noqa: E402
import pg_variance  # noqa: E402


class Bandit(gym.Env):
    """One δ-step, observation always 0, reward ξ ~ N(0, 1) whatever the action."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    dt, gamma_dt = 0.01, 0.9

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3), {}

    def step(self, action):
        return np.zeros(3), float(self.np_random.normal()), True, False, {}


@pytest.fixture
def one_thread():  # as the scripts run; two threads on a busy machine are several times slower here
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("sar", [False, True])
def test_pg_variance_of_a_gaussian_bandit_is_three_per_action_dim(sar, one_thread):
    # With input 0 the fresh Agent's hidden layers are 0, μ = 0, σ = 1: only the mean head's bias
    # (G = ε·ξ, variance 1) and the log-stds (G = (ε² - 1)·ξ, variance 2) move, so tr V[G] = 3 per dim.
    decision_envs, learn = pg_variance.make_decision_envs(Bandit, sar, 10)
    torch.manual_seed(0)
    agent = sar_ppo.Agent(3, 2, repeat=sar)
    stats = pg_variance.Statistics(3, True, True)
    variances, decisions, steps = pg_variance.measure(decision_envs, learn, agent, stats, 1, ["VPG", "PPO"],
                                                      10, 1000, math.inf)
    assert variances["VPG"] == pytest.approx(3 * (2 + sar), rel=0.25) and (decisions, steps) == (1, 1)
    assert variances["PPO"] == 0.0  # one decision: its normalised advantage is 0


def test_pg_variance_skips_the_rows_it_has_and_appends_the_rest(tmp_path, one_thread):
    out = tmp_path / "pg.csv"
    flags = ["--envs", "InvertedPendulum-v5", "--dts", "original", "--methods", "VPG", "PPO", "--burn-in", "2",
             "--trajectories", "3", "--workers", "1", "--out", str(out)]
    pg_variance.main(flags + ["--policies", "1"])
    first = out.read_text()
    pg_variance.main(flags + ["--policies", "2"])
    rows = read_csv(out)
    assert out.read_text().startswith(first) and [(r["method"], r["policy_seed"]) for r in rows] == [
        ("VPG", "1"), ("PPO", "1"), ("VPG", "2"), ("PPO", "2")]
    assert list(rows[0]) == pg_variance.COLUMNS and (tmp_path / "pg.png").stat().st_size > 1000


def test_pg_variance_gives_the_same_rows_with_two_workers_as_with_one(tmp_path, one_thread):
    flags = ["--envs", "InvertedPendulum-v5", "--dts", "original", "--policies", "2", "--burn-in", "2",
             "--trajectories", "3"]
    by_workers = {}
    for workers in ("1", "2"):
        pg_variance.main(flags + ["--workers", workers, "--out", str(tmp_path / f"{workers}.csv")])
        rows = read_csv(tmp_path / f"{workers}.csv")
        by_workers[workers] = sorted(tuple(v for k, v in r.items() if k != "wall_time_s") for r in rows)
    assert len(by_workers["1"]) == 8 and by_workers["1"] == by_workers["2"]


def test_ppo_gradient_at_ratio_one_is_the_advantage_weighted_score(one_thread):
    torch.manual_seed(0)
    agent, stats = sar_ppo.Agent(3, 2, repeat=True), pg_variance.Statistics(3, False, False)
    rng = np.random.default_rng(0)
    run = {"obs": rng.normal(size=(5, 3)).astype(np.float32), "actions": rng.normal(size=(5, 3)).astype(np.float32),
           "R": rng.normal(size=5).astype(np.float32), "w": np.array([1, 3, 2, 1, 4], np.float32),
           "terminated": True, "final_obs": np.zeros(3, np.float32)}
    g = pg_variance.gradients(agent, run, stats, 0.9, ["PPO"])["PPO"]
    with torch.no_grad():
        values = agent.critic(torch.as_tensor(run["obs"])).squeeze(1).numpy()
    adv = sar_ppo.compute_gae(run["R"], values, np.append(values[1:], 0.0), 0.9 ** run["w"],
                              np.array([0, 0, 0, 0, 1.0]), 0.95)
    adv = torch.as_tensor((adv - adv.mean()) / (adv.std(ddof=1) + 1e-8))
    logprob = agent.dist(torch.as_tensor(run["obs"])).log_prob(torch.as_tensor(run["actions"])).sum(1)
    params = [p for name, p in agent.named_parameters() if not name.startswith("critic")]
    expected = torch.cat([x.flatten() for x in torch.autograd.grad(-(adv * logprob).sum(), params)])
    assert np.allclose(g, expected.double().numpy(), atol=1e-6) and np.abs(g).max() > 1e-3


def test_alert_then_off_optimal_policies_follow_proposition_2():
    # SAR: tr V[G] = E[N] = 3 - 3δ (the proof counts 2, see benchmark/alert_then_off.py); FiGAR-C: 1/x + 1 - x ≥ 1/x
    x = 0.05
    G, N = alert_then_off.gradient_samples("SAR", x, 3000, seed=1)
    variance, ci = alert_then_off.estimate(G)
    assert N.mean() == pytest.approx(3 - 3 * x / 5, abs=0.02) and abs(variance - (3 - 3 * x / 5)) < 0.6
    assert ci == pytest.approx(1.96 * math.sqrt(72 / 3000), rel=0.3)  # V[G²] = 8·E[N]² for G = N(0, N)·ξ
    G, N = alert_then_off.gradient_samples("FiGAR-C", x, 1000, seed=1)
    assert N.mean() == pytest.approx(1 / x + 1 - x, abs=0.05)
    assert alert_then_off.estimate(G)[0] == pytest.approx(1 / x + 1 - x, rel=0.3) and N.min() >= 1 / x


@pytest.mark.parametrize("dt,hold", [(0.5, 0.0), (0.2, 0.0), (0.1, 0.0), (0.2, 0.4), (0.1, 0.25), (0.05, 0.4)])
def test_exploration_exact_probability_matches_enumerating_every_walk(dt, hold):
    steps = exploration.lengths(dt, hold)
    signs = np.array(np.meshgrid(*[[-1, 1]] * len(steps))).reshape(len(steps), -1).T
    brute = np.mean(np.abs(signs @ steps) * 2 >= steps.sum())
    assert math.exp(exploration.log_p_exact(steps)) == pytest.approx(brute)
    if hold == 0:  # App. B: 1 - P(|Z| < √N/2)
        assert exploration.p_normal(steps) == pytest.approx(math.erfc(math.sqrt(2 / dt) / 2 / math.sqrt(2)))
    assert exploration.p_monte_carlo(steps, 20_000, np.random.default_rng(0)) == pytest.approx(brute, abs=0.015)


THEORY_BAD_FLAGS = [
    (pg_variance, ["--envs", "Pendulum-v1"], "--envs"), (pg_variance, ["--dts", "0.1"], "--dts"),
    (pg_variance, ["--dts", "tiny"], "--dts"), (pg_variance, ["--methods", "TRPO"], "--methods"),
    (pg_variance, ["--trajectories", "1"], "--trajectories"), (pg_variance, ["--policies", "0"], "--policies"),
    (pg_variance, ["--max-time", "0"], "--max-time"), (pg_variance, ["--workers", "0"], "--workers"),
    (alert_then_off, ["--episodes", "1"], "--episodes"), (alert_then_off, ["--xs", "0"], "--xs"),
    (exploration, ["--walks", "0"], "--walks"), (exploration, ["--no-such-flag"], "--no-such-flag"),
]


@pytest.mark.parametrize("module,flags,named", THEORY_BAD_FLAGS)
def test_theory_bad_flag_exits_2_with_one_line_naming_it(module, flags, named, capsys):
    assert_exits_2_naming(module.parse_args, flags, named, capsys)


def test_theory_bad_flag_on_the_command_line_writes_nothing(tmp_path):
    out = tmp_path / "theory" / "pg_variance.csv"
    result = subprocess.run([sys.executable, os.path.join(HERE, "benchmark", "pg_variance.py"), "--out", str(out),
                             "--policies", "0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--policies" in result.stderr
    assert not (tmp_path / "theory").exists()


# ---------------------------------------------------------------- the repetition wrappers as drop-in gymnasium wrappers
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


def test_sar_warns_when_no_repetition_is_possible_and_refuses_step_before_reset():
    with pytest.warns(UserWarning, match="no action can be repeated"):
        env = sar_ppo.SafeActionRepetition(Scripted(STILL, dt=0.05), max_t=0.05)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0.3, 1.0]))


def test_the_wrapper_copied_with_the_readme_imports_runs_without_torch_or_envs(tmp_path):
    import inspect
    imports = readme_section("## Use SAR in your own project").split("```python\n")[1].split("\n\n")[0]
    source = "\n\n\n".join(inspect.getsource(f) for f in (sar_ppo.SafeActionRepetition, sar_ppo.check_wrapped))
    (tmp_path / "sar.py").write_text(imports + "\n\n\n" + source)
    script = ("import sys; sys.modules['torch'] = sys.modules['envs'] = None\n"  # neither can be imported
              "import gymnasium as gym, numpy as np, sar\n"
              "env = sar.SafeActionRepetition(gym.make('Pendulum-v1'), max_t=0.2)\n"
              "env.reset(seed=0); print(env.step(np.array([0.0, 1.0], np.float32))[4]['w'])")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and 1 <= int(result.stdout) <= 4, result.stderr[-500:]


def test_repetition_needs_a_dt_and_box_spaces():
    with pytest.raises(ValueError, match="^dt:.*pass dt="):  # MountainCarContinuous has no dt of its own
        sar_ppo.SafeActionRepetition(gym.make("MountainCarContinuous-v0"))
    with pytest.raises(ValueError, match="^env:"):  # Discrete actions
        sar_ppo.SafeActionRepetition(gym.make("CartPole-v1"))
    env = sar_ppo.SafeActionRepetition(gym.make("MountainCarContinuous-v0"), dt=1.0, max_t=3.0)
    env = sar_ppo.SafeActionRepetition(gym.make("test/Still-v0"), dt=0.002, gamma_dt=0.5)  # arguments win
    assert (env.dt, env.gamma_dt, env.max_repeats) == (0.002, 0.5, 25)


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_repetition_wrappers_of_the_scripts_pass_check_env(script):
    module = sar_ppo if script == "sar_ppo.py" else figar_ppo
    wrapper = module.SafeActionRepetition if script == "sar_ppo.py" else module.DurativeRepetition
    check(wrapper(envs.make_env("InvertedPendulum-v5", "lowest")))


def readme_section(title):
    with open(os.path.join(HERE, "README.md")) as f:
        text = f.read()
    return text[text.index(title):].split("\n## ")[0]


def test_readme_snippet_to_use_sar_in_your_own_project_runs_as_written():
    # the section's first block is the user's file: the imports, then (where its comment says) the class and
    # check_wrapped copied from sar_ppo.py, then the example
    import inspect
    block = readme_section("## Use SAR in your own project").split("```python\n")[1].split("```")[0]
    imports, example = block.split("\n\n", 1)
    assert "SafeActionRepetition" in example and "import" not in example
    source = "\n\n\n".join(inspect.getsource(f) for f in (sar_ppo.SafeActionRepetition, sar_ppo.check_wrapped))
    scope = {"__name__": "readme"}
    exec(compile(imports + "\n\n\n" + source + "\n\n\n" + example, "README.md", "exec"), scope)  # noqa: S102
    assert 1 <= scope["info"]["w"] <= 4  # Pendulum-v1: δ = 0.05 s, max_t = 0.2 s


def test_every_file_and_heading_the_readmes_link_exists():
    # README.md, the report and benchmark/README.md: each relative link or image names a file of the clone, and
    # each #anchor a heading of its file (GitHub's slugs: lower case, punctuation dropped, spaces as hyphens)
    import re
    from pathlib import Path

    def slugs(path):
        text = re.sub(r"```.*?```", "", Path(path).read_text(), flags=re.S)
        return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}
    broken, checked = [], 0
    for doc in ("README.md", "results/README.md", "benchmark/README.md"):
        doc = os.path.join(HERE, doc)
        text = re.sub(r"```.*?```", "", Path(doc).read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if not re.match(r"https?://", target):
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                checked += 1
                if not os.path.exists(full) or anchor and anchor not in slugs(full):
                    broken.append(f"{os.path.relpath(doc, HERE)}: {target}")
    assert checked >= 50 and broken == []


def test_config_records_the_commit_of_the_code_at_every_start_and_resume(tmp_path):
    train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY)
    train("sar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--resume")
    with open(tmp_path / "run" / "config.json") as f:
        code = json.load(f)["code"]
    head = subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert [c["decision_steps"] for c in code] == [0, 256] and all(c["git_commit"] == head for c in code)
    assert all(isinstance(c["git_dirty"], bool) for c in code)


# ---------------------------------------------------------------- the pendulum analyses (issue #15)
sys.path.insert(0, os.path.join(HERE, "benchmark"))
import plot_rising_stochasticity  # noqa: E402
import safe_regions  # noqa: E402


def test_safe_regions_draws_a_trained_run_and_measures_radius_against_speed(tmp_path, capsys):
    train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY, "--delta-dims", "2,3", "--noise", "ext-force",
          "--save-model")
    (tmp_path / "run" / "checkpoint.pt").unlink()  # as in a clone: model.pt is all it needs
    safe_regions.main([str(tmp_path / "run"), "--draw", "5", "--decisions", "200", "--out", str(tmp_path / "fig")])
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == ["run_radius_vs_speed.png", "run_safe_regions.png"]
    assert "Spearman ρ(speed, d)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:  # a run without --delta-dims has no plane to draw
        safe_regions.main([str(tmp_path / "nothing")])
    assert exit_info.value.code == 2


def test_rising_stochasticity_normalises_each_method_by_its_own_cap(tmp_path):
    for p_ext, seed in [(None, 1), (None, 2), (0.2, 1)]:
        fake_run(tmp_path, f"figar{p_ext}{seed}", 100.0, method="FiGAR-C-PPO", seed=seed, noise="ext-force",
                 noise_prob=p_ext, max_t=0.05)
    found = plot_rising_stochasticity.cells(plot.load_groups([str(tmp_path)]))
    assert sorted(found) == [("FiGAR-C-PPO", 0.05), ("FiGAR-C-PPO", 0.2)]  # no --noise-prob: the paper's 0.05
    assert found[("FiGAR-C-PPO", 0.05)] == [(100.0, pytest.approx(0.4))] * 2  # t = 0.02 s of t_max = 0.05 s


def test_same_policy_across_dt_measures_each_dt_with_one_policy(capsys):
    sys.path.insert(0, os.path.join(HERE, "benchmark"))
    import same_policy_across_dt
    same_policy_across_dt.main(["--env-id", "InvertedPendulum-v5", "--episodes", "2", "--burn-in", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0.")]
    assert [row.split(" | ")[0] for row in rows] == ["| 0.002", "| 0.04"]
    durations = [float(row.split(" | ")[1]) for row in rows]
    assert 2.0 <= durations[0] <= 50.0 and durations[1] >= 40.0  # at δ0 a decision lasts at least one 40 ms step
    with pytest.raises(SystemExit):
        same_policy_across_dt.main(["--model", "/nonexistent/model.pt"])


def test_same_policy_across_dt_refuses_an_empty_model_rather_than_rolling_out_an_untrained_policy(capsys):
    exits_2_with_one_line(lambda: same_policy_across_dt.main(["--model", ""]), "--model: empty", capsys)


def test_same_policy_across_dt_reads_a_running_runs_checkpoint_as_its_model(tmp_path, capsys):
    import same_policy_across_dt
    train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY, "--save-model")
    tables = []
    for name in ("model.pt", "checkpoint.pt"):  # the end of a run: both hold the same agent and statistics
        same_policy_across_dt.main(["--model", str(tmp_path / "run" / name), "--episodes", "2"])
        tables.append([line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0.")])
    assert len(tables[0]) == 2 and tables[0] == tables[1]


def test_status_tells_finished_unfinished_and_not_started_runs_of_a_figure_script(tiny_run, tmp_path, monkeypatch,
                                                                                   capsys):
    import io

    import status
    for name in ("done", "half", "torn"):
        shutil.copytree(tiny_run, tmp_path / name)
    (tmp_path / "half" / "checkpoint.pt").unlink()  # as a clone has it
    with open(tmp_path / "torn" / "progress.csv", "a") as f:
        f.write("768,")  # a kill mid-write: not a whole row
    tiny = " ".join(TINY)
    commands = [f"python sar_ppo.py {tiny} --total-steps {steps} --log-dir {tmp_path} --run-name {name} --resume"
                for name, steps in (("done", 512), ("half", 1024), ("torn", 768))]
    commands.append(f"python figar_ppo.py {tiny} --total-steps 512 --log-dir {tmp_path} --resume")
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(commands) + "\n\n"))
    status.main([])
    assert capsys.readouterr().out.splitlines() == [
        "finished: 1", "unfinished: 2", f"  {tmp_path / 'half'} at 512 decisions",
        f"  {tmp_path / 'torn'} at 512 decisions (checkpoint.pt)",
        "not started: 1", f"  {tmp_path / 'InvertedPendulum-v5__figar__dt0.002__s1'}"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("bash benchmark/run.sh 2\n"))
    with pytest.raises(SystemExit) as exit_info:
        status.main([])
    assert exit_info.value.code == 2 and "not a command of sar_ppo.py" in capsys.readouterr().err


# ---- the SLURM path on a one-node cluster
import re  # noqa: E402
import socket  # noqa: E402
import tempfile  # noqa: E402

SLURM_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo")
SLURM_LIST = os.path.join(HERE, "benchmark", "fig_dt_invariance.sh")
# A figure script's runs with tiny budgets: 8 updates of 128 decisions each, written to a tmp folder.
SLURM_BUDGET = "--total-steps 1024 --num-steps 128 --minibatch-size 64"


def slurm_sh(args, task, cwd=HERE):
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_ARRAY_TASK_ID", "SEEDS")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if task is not None:
        env["SLURM_ARRAY_TASK_ID"] = task
    return subprocess.run(["bash", os.path.join(HERE, "benchmark", "slurm.sh"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def tiny_commands(folder):
    """The InvertedPendulum δ_lowest commands of a figure script's --list (SAR-PPO, FiGAR-C-PPO, PPO),
    their budgets made tiny and their runs sent to `folder`."""
    listed = subprocess.run(["bash", SLURM_LIST, "--list"], env={**os.environ, "SEEDS": "1"}, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    return [re.sub(r"--log-dir \S+", f"--log-dir {folder}", re.sub(r"--total-steps \d+", SLURM_BUDGET, line))
            for line in listed if "--env-id InvertedPendulum-v5 --dt lowest " in line]


@pytest.mark.parametrize("args,task,says", [
    ([], "1", "usage: sbatch --array=1-N"),
    (["--list"], "1", "--list is the figure script's flag"),
    ([SLURM_LIST, "--list"], "1", "usage: sbatch --array=1-N"),
    (["no/such/list"], "1", "no command list at no/such/list"),
    ([SLURM_LIST], None, "SLURM_ARRAY_TASK_ID is not set"),
    ([SLURM_LIST], "x", "task id 'x' is not a whole number"),
    ([SLURM_LIST], "1.5", "task id '1.5' is not a whole number"),
    ([SLURM_LIST], "0", "task 0 is out of range"),
    ([SLURM_LIST], "99999999999999999999", "task 99999999999999999999 is out of range"),
    ("commands.txt", "4", "task 4 is out of range: commands.txt has 3 commands, 1 to 3 (sbatch --array=1-3)"),
    ("empty.txt", "1", "empty.txt lists no commands"),
])
def test_slurm_sh_refuses_bad_input_in_one_line_before_any_work(tmp_path, args, task, says):
    (tmp_path / "commands.txt").write_text("\n".join(tiny_commands(tmp_path / "runs")) + "\n\n")
    (tmp_path / "empty.txt").write_text("\n  \n")
    if isinstance(args, str):  # a file of commands, named relative to the project's folder
        args = [os.path.relpath(tmp_path / args, HERE)]
        says = says.replace(os.path.basename(args[0]), args[0])
    done = slurm_sh(args, task)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("slurm.sh: ") and says in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["commands.txt", "empty.txt"]  # nothing written


def test_slurm_sh_passes_on_the_figure_scripts_own_reason_when_its_list_fails(monkeypatch):
    monkeypatch.setenv("SEEDS", "abc")  # slurm_sh() clears SEEDS, so slurm.sh is called here directly
    done = subprocess.run(["bash", os.path.join(HERE, "benchmark", "slurm.sh"), SLURM_LIST], cwd=HERE, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "SLURM_ARRAY_TASK_ID": "1"})
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "--list failed" in done.stderr and "SEEDS: whole numbers" in done.stderr


def test_slurm_sh_runs_the_tasks_line_from_the_projects_folder_with_one_thread(tmp_path):
    show = "python -c 'import os, sys; print(os.getcwd(), os.environ[\"OMP_NUM_THREADS\"], sys.argv[1:])'"
    (tmp_path / "commands.txt").write_text(f"true\n\n{show} 'a b' c\nfalse\n")
    done = slurm_sh([str(tmp_path / "commands.txt")], "02")
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == f"{HERE} 1 ['a b', 'c']"
    away = slurm_sh([str(tmp_path / "commands.txt")], "2", cwd=tmp_path)
    assert away.returncode == 2 and "submit from the project's folder" in away.stderr


def slurm_program(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def slurm_or_skip():
    """SLURM and munge from Debian's packages, which .ci/run installs. A test never changes the machine it tests:
    where they are missing it skips, saying what to install."""
    missing = [name for name in SLURM_PROGRAMS if not slurm_program(name)]
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)} missing): on Debian, as root, "
                    "apt-get install slurm-wlm munge (as .ci/run does) to run this test")
    if os.geteuid() != 0:
        pytest.skip("the one-node SLURM cluster runs its daemons as root (SlurmUser=root); run the test as root")


def wait_for(condition, what, timeout=300, logs=()):
    """Polls until condition() is true; the timeout only bounds a failure, it assumes no speed."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            tails = "".join(f"\n--- {log}:\n" + "".join(open(log, errors="replace").readlines()[-15:])
                            for log in logs if os.path.exists(log))
            pytest.fail(f"timed out after {timeout} s waiting for {what}{tails}")
        time.sleep(0.2)


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.fixture
def slurm_cluster(tmp_path):
    """munged, slurmctld and slurmd on this machine, all state in tmp_path; yields the environment of
    the clients (sbatch, squeue, ...) and stops every daemon it started, by pid, whatever happens."""
    slurm_or_skip()
    top = tmp_path / "cluster"
    for sub in ("munge", "state", "log"):
        (top / sub).mkdir(parents=True)
    (top / "munge").chmod(0o755)
    # slurmd's step sockets must fit a Unix socket path (108 bytes), which a deep tmp_path can exceed.
    spool = tempfile.mkdtemp(prefix="slurmd-", dir="/tmp")
    key = top / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    hardware = subprocess.run([slurm_program("slurmd"), "-C"], capture_output=True, text=True).stdout
    cpus, memory = (int(re.search(rf"{name}=(\d+)", hardware)[1]) for name in ("CPUs", "RealMemory"))
    ports = free_ports(2)
    # No cgroups (proctrack/linuxproc, task/none), so it runs in a container too; everything in tmp_path.
    (top / "slurm.conf").write_text(f"""\
ClusterName=sartest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={top}/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation={top}/state
SlurmdSpoolDir={spool}
SlurmctldPidFile={top}/slurmctld.pid
SlurmdPidFile={top}/slurmd.pid
SlurmctldLogFile={top}/log/slurmctld.log
SlurmdLogFile={top}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
ReturnToService=2
KillWait=5
MinJobAge=3600
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")
    # The clients read this slurm.conf; the tasks inherit PATH, so their `python` is this one (as with a venv active).
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SQUEUE_"))},
           "SLURM_CONF": str(top / "slurm.conf"),  # and no option of a real cluster's environment
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    logs = [str(top / "log" / f"{name}.log") for name in ("munged", "slurmctld", "slurmd")]
    daemons, outputs = [], []

    def start(*command):
        outputs.append(open(top / "log" / f"{os.path.basename(command[0])}.out", "w"))
        daemons.append(subprocess.Popen(command, env=env, stdout=outputs[-1], stderr=subprocess.STDOUT))

    def alive():
        dead = [f"{daemon.args[0]} (exit {daemon.returncode})" for daemon in daemons if daemon.poll() is not None]
        return not dead or pytest.fail("a SLURM daemon exited: " + ", ".join(dead))

    try:
        start(slurm_program("munged"), "--foreground", "--force", f"--key-file={key}",
              f"--socket={top}/munge/munge.socket", f"--pid-file={top}/munge/munged.pid",
              f"--log-file={logs[0]}", f"--seed-file={top}/munge/munged.seed")
        wait_for(lambda: alive() and os.path.exists(top / "munge" / "munge.socket"), "munged's socket", 60, logs)
        start(slurm_program("slurmctld"), "-D", "-i", "-f", str(top / "slurm.conf"))
        start(slurm_program("slurmd"), "-D", "-N", "localhost", "-f", str(top / "slurm.conf"))
        wait_for(lambda: alive() and subprocess.run([slurm_program("sinfo"), "-h", "-o", "%t"], env=env,
                                                    capture_output=True, text=True).stdout.strip() == "idle",
                 "the node to be idle", 120, logs)
        yield env
    finally:
        if len(daemons) == 3 and all(daemon.poll() is None for daemon in daemons):  # no task outlives the test
            subprocess.run([slurm_program("scancel"), "--user", str(os.geteuid())], env=env, capture_output=True)
            end = time.monotonic() + 60
            while time.monotonic() < end and subprocess.run(
                    [slurm_program("squeue"), "-h"], env=env, capture_output=True, text=True).stdout.strip():
                time.sleep(0.2)
        for daemon in reversed(daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        for output in outputs:
            output.close()
        shutil.rmtree(spool, ignore_errors=True)


def slurm(env, *command):
    return subprocess.run([slurm_program(command[0]), *command[1:]], env=env, capture_output=True, text=True,
                          check=True).stdout


def task_states(env, job):
    """{array task: (state, exit code)} of an array job."""
    lines = slurm(env, "scontrol", "show", "job", "-o", job).splitlines()
    return {int(re.search(r"ArrayTaskId=(\d+)", line)[1]): (re.search(r"JobState=(\S+)", line)[1],
                                                            re.search(r"ExitCode=(\S+)", line)[1]) for line in lines}


def submit_array(env, commands_file, n, out):
    """The README's sbatch line, from the project's folder, with the cluster's partition, time and memory."""
    return slurm(env, "sbatch", "--parsable", f"--array=1-{n}", "--partition=debug", "--time=30", "--mem=1G",
                 f"--output={out}/slurm-%A_%a.out", "benchmark/slurm.sh", str(commands_file)).strip()


def whole_rows(folder):
    try:
        with open(os.path.join(folder, "progress.csv")) as f:
            return [line.split(",") for line in f.read().split("\n")[1:-1]]
    except OSError:
        return []


def test_slurm_array_of_a_figure_script_finishes_and_a_cancelled_task_resumes(slurm_cluster, tmp_path):
    import status
    env, runs, out = slurm_cluster, tmp_path / "runs", tmp_path / "out"
    out.mkdir()
    commands = tiny_commands(runs)
    assert [line.split()[1] for line in commands] == ["sar_ppo.py", "figar_ppo.py", "sar_ppo.py"]
    (tmp_path / "commands.txt").write_text("\n".join(commands) + "\n")
    folders = [status.status(line)[1] for line in commands]
    n, rows = 128, 1024 // 128
    logs = [str(tmp_path / "cluster" / "log" / f"{name}.log") for name in ("slurmctld", "slurmd")]

    def array_done(job):
        return lambda: not slurm(env, "squeue", "-h", "-j", job).strip()

    def task_output(job, task):
        with open(out / f"slurm-{job}_{task}.out") as f:
            return f.read()

    # First submission: task 1 (SAR-PPO) is stopped mid-run, then cancelled.
    first = submit_array(env, tmp_path / "commands.txt", len(commands), out)
    pid = []

    def started():  # slurm.sh exec's its command: the task's process becomes the run's
        job = slurm(env, "squeue", "-h", "-j", f"{first}_1", "-t", "RUNNING", "-o", "%A").strip()
        listed = subprocess.run([slurm_program("scontrol"), "listpids", job], env=env, capture_output=True, text=True)
        for line in listed.stdout.splitlines()[1:] if job else []:
            try:
                with open(f"/proc/{line.split()[0]}/cmdline", "rb") as f:
                    if b"sar_ppo.py" in f.read():
                        pid.append(int(line.split()[0]))
            except OSError:
                pass
        return pid

    wait_for(started, "task 1's run to start", logs=logs)
    wait_for(lambda: len(whole_rows(folders[0])) >= 1, "task 1's first row", logs=logs)
    os.kill(pid[0], signal.SIGSTOP)  # holds it at a row, however fast this machine is
    cut = len(whole_rows(folders[0]))
    assert 1 <= cut < rows, f"task 1 had {cut} rows when stopped"
    slurm(env, "scancel", f"{first}_1")
    wait_for(array_done(first), "the first array to end", logs=logs)
    states = task_states(env, first)
    assert states[1][0] == "CANCELLED" and states[2] == states[3] == ("COMPLETED", "0:0")
    before = whole_rows(folders[0])
    kept = len(before)
    assert cut <= kept < rows  # a cancelled run keeps its rows, and is unfinished
    listed = subprocess.run([sys.executable, "benchmark/status.py"], input="\n".join(commands), cwd=HERE,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert listed[0] == "finished: 2" and listed[1] == "unfinished: 1" and "(checkpoint.pt)" in listed[2]
    saved = torch.load(os.path.join(folders[0], "checkpoint.pt"), weights_only=True)["counters"]["update"]
    assert 1 <= saved <= kept

    # The same array again: task 1 continues from its checkpoint, the finished runs only say so.
    second = submit_array(env, tmp_path / "commands.txt", len(commands), out)
    wait_for(array_done(second), "the second array to end", logs=logs)
    assert task_states(env, second) == {task: ("COMPLETED", "0:0") for task in (1, 2, 3)}
    assert whole_rows(folders[0])[:saved] == before[:saved]  # up to its checkpoint, as it was
    assert all("is finished" in task_output(second, task) for task in (2, 3))
    listed = subprocess.run([sys.executable, "benchmark/status.py"], input="\n".join(commands), cwd=HERE,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert listed == ["finished: 3", "unfinished: 0", "not started: 0"]
    for folder in folders:  # no row lost or repeated
        assert [int(row[0]) for row in whole_rows(folder)] == [n * k for k in range(1, rows + 1)]

    # plot.py finds the three runs.
    table = subprocess.run([sys.executable, "plot.py", str(runs), "--table"], cwd=HERE, capture_output=True,
                           text=True, check=True).stdout
    for folder in folders:
        assert re.search(rf"\| {re.escape(os.path.basename(folder))} \| 1,024 \|", table)
# ---------------------------------------------------------------- the animation
import animate  # noqa: E402


def rendering_unavailable():
    """Why MuJoCo cannot render headless here (None if it can)."""
    try:
        import mujoco
        context = mujoco.GLContext(8, 8)
        context.make_current()
        context.free()
    except Exception as e:  # no EGL/OSMesa library or device
        return f"MUJOCO_GL={os.environ.get('MUJOCO_GL')} cannot render: {type(e).__name__}: {e}"
    return None


def test_animation_renders_a_committed_model_to_a_gif_and_never_overwrites_the_committed_one(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:  # non-default flags without --out: refused before any work
        animate.main(["--max-frames", "5"])
    assert exit_info.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    from PIL import Image
    out = tmp_path / "five.gif"
    animate.main(["--max-frames", "5", "--width", "160", "--height", "120", "--out", str(out)])
    with Image.open(out) as gif:
        assert gif.n_frames == 5 and gif.size == (160, 120) and gif.info["duration"] == 50
        gif.seek(4)
        assert len(np.unique(np.asarray(gif.convert("RGB")).reshape(-1, 3), axis=0)) > 10  # a scene, not a blank frame
# ---- benchmark commands keep the training scripts' promises
import io  # noqa: E402
import shlex  # noqa: E402

import check_reproducible  # noqa: E402
import same_policy_across_dt  # noqa: E402
import status  # noqa: E402

BENCHMARK = os.path.join(HERE, "benchmark")
THEORY = os.path.join(HERE, "results", "theory")


def exits_2_with_one_line(call, named, capsys):
    """`call()` stops before any work with exit status 2 and one line on stderr holding `named`."""
    with pytest.raises(SystemExit) as exit_info:
        call()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err, err


def script(name, *args, stdin=None, env=None, timeout=120):
    return subprocess.run([sys.executable, os.path.join(BENCHMARK, name), *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("module,flags,committed", [
    (alert_then_off, ["--episodes", "2000"], "alert_then_off.csv"), (alert_then_off, ["--seed", "2"], "alert_then_off.csv"),
    (exploration, ["--walks", "5"], "exploration.csv"), (pg_variance, ["--trajectories", "20"], "pg_variance.csv"),
    (pg_variance, ["--envs", "Hopper-v5"], "pg_variance.csv"), (pg_variance, ["--burn-in", "3"], "pg_variance.csv")])
def test_theory_script_with_other_parameters_names_out_instead_of_writing_the_committed_results(
        module, flags, committed, capsys):
    assert module.parse_args([]).out == os.path.join(THEORY, committed)  # the defaults remake the committed numbers
    exits_2_with_one_line(lambda: module.parse_args(flags), "--out", capsys)
    exits_2_with_one_line(lambda: module.parse_args(flags + ["--out", os.path.join(THEORY, committed)]), "--out", capsys)
    figure = os.path.join(THEORY, committed.replace(".csv", ".png"))
    exits_2_with_one_line(lambda: module.parse_args(flags + ["--out", "/tmp/x.csv", "--figure", figure]), "--figure",
                          capsys)


@pytest.mark.parametrize("module", [alert_then_off, exploration, pg_variance])
def test_theory_script_docstring_examples_write_no_committed_file(module):
    for line in module.__doc__.splitlines():
        if line.strip().startswith("python benchmark/"):
            flags = shlex.split(line.split("#")[0])[2:]
            args = module.parse_args(flags)
            if [f for f in flags if f not in ("--plot-only", "--table")]:  # other parameters than the defaults
                assert not os.path.realpath(args.out).startswith(os.path.realpath(THEORY)), line
                assert not os.path.realpath(args.figure).startswith(os.path.realpath(THEORY)), line


PG_TINY = ["--envs", "InvertedPendulum-v5", "--dts", "original", "--methods", "VPG", "PPO", "--burn-in", "2",
           "--trajectories", "3", "--policies", "1", "--workers", "1"]


def without_wall_time(path):
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in csv.DictReader(open(path, newline=""))]


def test_pg_variance_cuts_a_torn_last_row_and_measures_it_again(tmp_path, one_thread):
    out = tmp_path / "pg.csv"
    pg_variance.main(PG_TINY + ["--out", str(out)])
    whole = without_wall_time(out)
    text = out.read_text()
    out.write_text(text[:-12])  # a kill in the middle of writing the last row
    pg_variance.main(PG_TINY + ["--out", str(out)])
    assert out.read_text().count("\n") == 3 and without_wall_time(out) == whole


@pytest.mark.parametrize("flag,value", [("--trajectories", "4"), ("--burn-in", "1"), ("--max-time", "0.5")])
def test_pg_variance_refuses_a_csv_of_other_parameters_naming_out(tmp_path, one_thread, capsys, flag, value):
    out = tmp_path / "pg.csv"
    pg_variance.main(PG_TINY + ["--out", str(out)])
    before = out.read_bytes()
    capsys.readouterr()
    exits_2_with_one_line(lambda: pg_variance.main(PG_TINY + ["--out", str(out), flag, value]), "--out", capsys)
    assert out.read_bytes() == before


def test_pg_variance_plot_only_without_a_csv_exits_2(tmp_path, capsys):
    exits_2_with_one_line(lambda: pg_variance.main(["--plot-only", "--out", str(tmp_path / "none.csv")]), "--out", capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("damage", [
    lambda text: text.replace("env_id,dt", "env,dt"),  # a foreign header
    lambda text: text.replace("\r\nInvertedPendulum", "InvertedPendulum", 1),  # two rows glued into one line
    lambda text: text.replace(",PPO,1,", ",PPO,one,"),
    lambda text: text + text.splitlines(keepends=True)[1]])  # a row twice
def test_pg_variance_damaged_csv_is_refused_in_one_line(tmp_path, capsys, damage):
    out = tmp_path / "pg.csv"
    shutil.copy(os.path.join(THEORY, "pg_variance.csv"), out)
    out.write_bytes(damage(out.read_bytes().decode()).encode())
    before = out.read_bytes()
    exits_2_with_one_line(lambda: pg_variance.main(PG_TINY + ["--out", str(out)]), str(out), capsys)
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["pg.csv"]


def test_pg_variance_reads_the_committed_table_as_complete(tmp_path, capsys):
    out = tmp_path / "pg.csv"
    shutil.copy(os.path.join(THEORY, "pg_variance.csv"), out)
    pg_variance.main(["--out", str(out)])  # the default table: nothing left to measure, the figure drawn
    assert out.read_bytes() == open(os.path.join(THEORY, "pg_variance.csv"), "rb").read()
    assert capsys.readouterr().out == "" and (tmp_path / "pg.png").stat().st_size > 10_000


def test_pg_variance_table_gives_growth_by_mean_and_median_with_the_policies_range(tmp_path, capsys):
    out = tmp_path / "pg.csv"
    rows = [(0.04, 1, 100), (0.04, 2, 200), (0.04, 3, 600), (0.002, 1, 1000), (0.002, 2, 4000), (0.002, 3, 100000)]
    out.write_text(",".join(pg_variance.COLUMNS) + "\r\n" + "".join(
        f"InvertedPendulum-v5,{dt},VPG,{seed},{v},100,{8 if dt == 0.04 else 300},8,1.0,10,inf\r\n" for dt, seed, v in rows))
    pg_variance.main(["--table", "--out", str(out)])
    table = capsys.readouterr().out.splitlines()
    assert table[2] == ("| InvertedPendulum-v5 | VPG | 40 → 2 | 3 | 300 → 3.5e4 (**×117**) | 200 → 4e3 (**×20**) | "
                        "[100, 600] → [1e3, 1e5] | 8 → 300 |") and len(table) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pg.csv"]  # measured and drew nothing


@pytest.fixture
def model_run(tiny_run, tmp_path):
    """A copy of the tiny run whose checkpoint.pt is its model.pt (it holds the same keys)."""
    run = copy_of(tiny_run, tmp_path)
    shutil.copy(run / "checkpoint.pt", run / "model.pt")
    return run


def damaged(run, name, data):
    (run / name).write_bytes(data)
    return run


BENCHMARK_BAD_INPUT = [  # (in-process call on tmp_path / model_run, text the one line must hold)
    (lambda tmp, run: alert_then_off.parse_args(["--seed", "-1", "--out", str(tmp / "a.csv")]), "--seed"),
    (lambda tmp, run: exploration.parse_args(["--seed", "-1", "--out", str(tmp / "e.csv")]), "--seed"),
    (lambda tmp, run: safe_regions.main([str(run), "--seed", "-1"]), "--seed"),
    (lambda tmp, run: same_policy_across_dt.main(["--seed", "-1", "--episodes", "1", "--burn-in", "0",
                                                  "--dts", "original", "--env-id", "InvertedPendulum-v5"]), "--seed"),
    (lambda tmp, run: same_policy_across_dt.main(["--env-id", "Pendulum-v1"]), "--env-id"),
    (lambda tmp, run: same_policy_across_dt.main(["--model", str(damaged(run, "model.pt", b"garbage"))]), "--model"),
    (lambda tmp, run: same_policy_across_dt.main(["--model", str(damaged(run, "config.json", b'{"env_id": "InvertedPendulum-v5"}') / "model.pt")]), "--model"),
    (lambda tmp, run: safe_regions.main([str(damaged(run, "model.pt", b"garbage"))]), "damaged"),
    (lambda tmp, run: safe_regions.main([str(run), "--out", str(run / "progress.csv" / "figures")]), "--out"),
    (lambda tmp, run: alert_then_off.parse_args(["--out", str(run / "progress.csv" / "a.csv")]), "--out"),
    (lambda tmp, run: exploration.parse_args(["--out", str(tmp)]), "--out"),
    (lambda tmp, run: pg_variance.parse_args(["--out", str(run / "progress.csv" / "pg.csv")]), "--out"),
    (lambda tmp, run: plot_rising_stochasticity.main([str(tmp), "--out", str(run / "progress.csv")]), "--out"),
    (lambda tmp, run: plot_rising_stochasticity.main([str(tmp / "missing")]), "missing"),
]


@pytest.mark.parametrize("call,named", BENCHMARK_BAD_INPUT)
def test_benchmark_bad_input_says_one_line_exits_2_and_writes_nothing(model_run, tmp_path, capsys, call, named):
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    exits_2_with_one_line(lambda: call(tmp_path, model_run), named, capsys)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert sorted(after) == sorted(before)


def test_status_tells_a_run_made_with_other_flags_from_a_finished_one(tiny_run, capsys, monkeypatch):
    config = json.loads((tiny_run / "config.json").read_text())
    command = (f"python sar_ppo.py --log-dir {tiny_run.parent} --run-name run --total-steps 512 --num-steps "
               f"{config['num_steps']} --update-epochs {config['update_epochs']} --minibatch-size {config['minibatch_size']}")
    for extra, expected in (("", "finished: 1"), (" --norm l2", "made with other flags: 1")):
        monkeypatch.setattr(sys, "stdin", io.StringIO(command + extra + "\n"))
        status.main([])
        assert expected in capsys.readouterr().out.splitlines()


def test_status_refuses_an_unbalanced_quote_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("python sar_ppo.py --run-name 'half\n"))
    exits_2_with_one_line(lambda: status.main([]), "closing quotation", capsys)


@pytest.mark.parametrize("args,named", [(["--updates", "0", "RUN"], "--updates"), (["/nonexistent/run"], "/nonexistent/run"),
                                        (["RUN", "--no-such-flag"], "--no-such-flag"), (["DAMAGED"], "config.json")])
def test_check_reproducible_bad_input_says_one_line_and_exits_2(tiny_run, tmp_path, capsys, args, named):
    damaged_run = damaged(copy_of(tiny_run, tmp_path), "config.json", b'{"method": "SAR-PPO"')
    args = [{"RUN": str(tiny_run), "DAMAGED": str(damaged_run)}.get(a, a) for a in args]
    exits_2_with_one_line(lambda: check_reproducible.main(args), named, capsys)


@pytest.mark.parametrize("tool", ["check_reproducible", "evaluate"])
def test_a_config_json_value_its_script_refuses_is_one_line_before_any_run_is_remade(tiny_run, tmp_path, capsys,
                                                                                      monkeypatch, tool):
    import evaluate
    config = json.loads((tiny_run / "config.json").read_text())
    bad = copy_of(tiny_run, tmp_path)
    (bad / "config.json").write_text(json.dumps({**config, "max_d": -5}))  # a hand-edited value
    remade = []
    monkeypatch.setattr(check_reproducible.subprocess, "run", lambda *a, **k: remade.append(a))
    args = {"check_reproducible": [str(tiny_run), str(bad)], "evaluate": [str(bad)]}[tool]  # the good run first
    exits_2_with_one_line(lambda: {"check_reproducible": check_reproducible, "evaluate": evaluate}[tool].main(args),
                          "--max-d", capsys)
    assert remade == []


def test_check_reproducible_compares_only_the_rows_a_run_has(tiny_run, capsys):
    assert check_reproducible.main([str(tiny_run), "--updates", "5"]) == 0  # the tiny run has 2 rows
    assert capsys.readouterr().out.startswith(f"identical: first 2 rows of {tiny_run}")


@pytest.mark.parametrize("script,flags", [("sar_ppo.py", ["--a2c"]), ("figar_trpo.py", ["--num-steps", "256"])])
def test_check_reproducible_remakes_an_a2c_and_a_trpo_run(tmp_path, capsys, script, flags):
    train(script, tmp_path, "--total-steps", "512", *flags)  # with its config.json's flags: --a2c sets the epochs
    assert check_reproducible.main([str(tmp_path / "run"), "--updates", "2"]) == 0
    assert capsys.readouterr().out.startswith(f"identical: first 2 rows of {tmp_path / 'run'}")


@pytest.mark.parametrize("name,args,named", [("speed.py", ["--threads", "0"], "--threads"),
                                             ("profile_parts.py", ["--quick"], "--quick")])
def test_speed_scripts_bad_input_says_one_line_and_exits_2(name, args, named):
    result = script(name, *args, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr, result.stderr


def run_sh(workers, commands):
    return subprocess.run(["bash", os.path.join(BENCHMARK, "run.sh"), *workers], input=commands,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("workers", ["0", "-1", "two"])
def test_run_sh_refuses_a_worker_count_below_one_before_running_anything(tmp_path, workers):
    result = run_sh([workers], f"touch {tmp_path / 'ran'}\n")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "workers" in result.stderr
    assert not (tmp_path / "ran").exists()


def test_run_sh_exits_non_zero_when_a_command_failed_and_runs_the_others():
    result = run_sh(["2"], "true\nfalse\n\ntrue\n")
    assert result.returncode != 0 and result.stdout.count("done:") == 2 and "FAILED: false" in result.stdout
    assert run_sh(["1"], "true\ntrue\n").returncode == 0


def test_hopper_1m_methods_choose_the_runs_and_a_bad_one_is_one_line_before_any_run(tmp_path):
    script = os.path.join(BENCHMARK, "fig_hopper_1m.sh")
    env = {**os.environ, "SEEDS": "4 5", "METHODS": "sar"}
    listing = subprocess.run(["bash", script, "--list"], capture_output=True, text=True, env=env, timeout=30)
    lines = listing.stdout.splitlines()
    assert listing.returncode == 0 and len(lines) == 4  # 2 seeds × 2 δ, SAR-PPO only
    assert all("sar_ppo.py" in line and "--no-repeat" not in line for line in lines)
    bad = subprocess.run(["bash", script, "2"], capture_output=True, text=True, timeout=30,
                         env={**fake_python(tmp_path, 0), "METHODS": "sar sarr"})
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "METHODS" in bad.stderr and "sarr" in bad.stderr
    assert bad.stdout == "" and not (tmp_path / "drawn").exists()


def fake_python(tmp_path, runs_exit):
    """A `python` on PATH that ends every training command with `runs_exit` (and trains nothing), runs
    status.py for real, and records any other command (a figure drawn) in tmp_path/drawn."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(
        "#!/bin/sh\n"
        f'case "$1" in sar_ppo.py|figar_ppo.py) exit {runs_exit};; benchmark/status.py) exec {sys.executable} "$@";; esac\n'
        f'echo "$*" >> {tmp_path / "drawn"}\n')
    (bin_dir / "python").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("figure_script", ["fig_ablations.sh", "fig_partial_observability.sh",
                                           "fig_rising_stochasticity.sh", "fig_safe_regions.sh"])
def test_figure_script_draws_nothing_when_a_run_failed(tmp_path, figure_script):
    result = subprocess.run(["bash", os.path.join(BENCHMARK, figure_script), "2"], capture_output=True, text=True,
                            env=fake_python(tmp_path, 1), timeout=120)
    assert result.returncode != 0 and "FAILED" in result.stdout and not (tmp_path / "drawn").exists()


@pytest.mark.parametrize("figure_script", ["fig_ablations.sh", "fig_rising_stochasticity.sh"])
def test_figure_script_draws_nothing_from_an_incomplete_set_of_runs(tmp_path, figure_script):
    env = {**fake_python(tmp_path, 0), "SEEDS": "99"}  # the runs "succeed" but seed 99 has no run folders
    result = subprocess.run(["bash", os.path.join(BENCHMARK, figure_script), "2"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode != 0 and "not finished" in result.stderr and not (tmp_path / "drawn").exists()


def test_random_returns_measures_a_uniform_policy_and_never_overwrites_the_committed_csv(tmp_path, capsys):
    import random_returns
    committed = os.path.join(HERE, "results", "random_returns.csv")
    before = open(committed).read()
    with pytest.raises(SystemExit) as exit_info:  # other parameters, the committed file: refused
        random_returns.main(["--episodes", "2"])
    assert exit_info.value.code == 2 and "--out" in capsys.readouterr().err and open(committed).read() == before
    out = tmp_path / "random.csv"
    random_returns.main(["--envs", "InvertedPendulum-v5", "--episodes", "3", "--out", str(out)])
    import csv
    [row] = list(csv.DictReader(open(out)))
    assert row["env_id"] == "InvertedPendulum-v5" and row["dt"] == "0.04" and row["episodes"] == "3"
    assert 1 <= float(row["return_min"]) <= float(row["return_mean"]) <= float(row["return_max"]) < 100  # it falls
# ---------------------------------------------------------------- any gymnasium task
def test_a_paper_task_gives_the_same_observations_and_rewards_as_before():
    # Recorded with the code that knew only the eight paper tasks: Hopper-v5 at δ_lowest and at δ0,
    # seed 7, five fixed actions. Python's float repr round-trips, so equality is exact.
    recorded = {
        "lowest": ([1.2539497636016155, 0.002730199365888404, -0.0028085792366020785, -0.0019658057274463707,
                    0.0037064378004439008, -0.0051819155185452385, -0.021111968124390455, -0.024296311591111917,
                    -0.048199518280056454, 0.027994326293249418, -0.021061315850036195],
                   [0.06215969424769315, 0.062159702857399385, 0.06215971012710107, 0.06215971873145076,
                    0.06215972599580277], 0.9993720512515479, 16000),
        None: ([1.246402382089822, -0.009427622105945672, -0.01695593928934326, -0.002264962264613336,
                -0.0017552274454706478, -0.049788421900811494, -0.38236315328055576, -0.6109004476644994,
                -0.710738759056736, -0.0072499135106432605, -0.27282223708204745],
               [0.992795447645947, 0.9928095872037204, 0.9719306250020447, 0.9513057434156352, 0.9515744176035245],
               0.99, 1000),
    }
    for level, (last_obs, rewards, gamma_dt, max_steps) in recorded.items():
        env = envs.make_env("Hopper-v5", level, 0.99)
        env.reset(seed=7)
        seen = []
        for k in range(5):
            obs, reward, *_ = env.step(np.array([0.5, -0.3, 0.2]) * (1 if k % 2 else -1))
            seen.append(float(reward))
        assert [float(x) for x in obs] == last_obs and seen == rewards
        assert (env.gamma_dt, env.max_steps, env.dt0) == (gamma_dt, max_steps, 0.008)
    assert envs.is_paper_task("Hopper-v5") and envs.dt0_of("Hopper-v5") == 0.008


def test_another_mujoco_task_runs_at_any_dt_as_the_paper_tasks_do():
    assert not envs.is_paper_task("Pusher-v5") and envs.dt0_of("Pusher-v5") == pytest.approx(0.05)
    own, fine = envs.make_env("Pusher-v5", None, 0.99), envs.make_env("Pusher-v5", 0.01, 0.99)
    assert own.unwrapped.frame_skip == 5 and (own.max_steps, own.reward_scale, own.gamma_dt) == (100, 1.0, 0.99)
    assert fine.unwrapped.frame_skip == 1 and fine.unwrapped.model.opt.timestep == 0.01
    assert fine.dt0 == pytest.approx(0.05) and fine.max_steps == 500  # the same 5 s: limit × δ0/δ
    assert fine.reward_scale == pytest.approx(0.2) and fine.gamma_dt == pytest.approx(0.99 ** 0.2)
    action = np.full(7, 0.3)
    own.reset(seed=0)
    own_obs, r_own, *_ = own.step(action)
    fine.reset(seed=0)  # five δ-steps of the same physics make one δ0-step...
    steps = [fine.step(action) for _ in range(5)]
    assert np.array_equal(steps[-1][0], own_obs)
    assert steps[-1][1] == pytest.approx(0.2 * r_own, rel=1e-12)  # ...paid δ/δ0 of a δ0-step's reward
    fine.reset(seed=0)
    for step in range(1, 501):
        _, _, terminated, truncated, info = fine.step(action)
        assert not terminated and truncated == (step == 500)
    assert info["episode"]["l"] == 500 and info["episode"]["t"] == pytest.approx(5.0)


def test_a_task_that_is_not_mujoco_runs_at_its_own_step_only():
    env = envs.make_env("Pendulum-v1", None, 0.9)
    assert (env.dt, env.dt0, env.gamma_dt, env.reward_scale, env.max_steps) == (0.05, 0.05, 0.9, 1.0, 200)
    assert envs.resolve_dt("Pendulum-v1", "0.05") == 0.05 and not envs.is_paper_task("Pendulum-v1")
    env.reset(seed=0)
    for step in range(1, 201):
        _, reward, terminated, truncated, info = env.step(np.array([0.0], np.float32))
        assert reward <= 0 and not terminated and truncated == (step == 200)  # a cost task, cut at its own limit
    assert info["episode"]["t"] == pytest.approx(10.0)
    assert envs.dt0_of("MountainCarContinuous-v0") is None  # no `dt` of its own: the user says what a step is
    for dt in (None, "lowest", "0", "nan", "-1"):
        with pytest.raises(ValueError, match="^dt: MountainCarContinuous-v0 has no dt of its own; give the seconds"):
            envs.make_env("MountainCarContinuous-v0", dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = envs.make_env("MountainCarContinuous-v0", 0.5)
        check_env(env, skip_render_check=True)  # rendering needs pygame
    assert (env.dt, env.dt0, env.reward_scale) == (0.5, 0.5, 1.0)
    for env_id, dt in [("Pendulum-v1", 0.01), ("Pendulum-v1", "lowest")]:
        with pytest.raises(ValueError, match="^dt: .* runs at its own step only"):
            envs.make_env(env_id, dt)


class Picture(gym.Env):
    observation_space = gym.spaces.Box(0.0, 1.0, (4, 4), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)


gym.register("test/Picture-v0", entry_point=Picture)


@pytest.mark.parametrize("env_id,dt,message", [
    ("Pusher-v5", "lowest", "^dt: levels of Table 1 exist for the eight paper tasks only; give δ in seconds"),
    ("Pusher-v5", 0.1, "^dt: 0.1 is above Pusher-v5's own δ0"),
    ("NoSuchTask-v0", None, "^env_id: unknown environment 'NoSuchTask-v0'"),
    ("Pendulum-v9", None, "^env_id: unknown environment 'Pendulum-v9'"),
    ("CartPole-v1", None, "^env_id: CartPole-v1 has .* Discrete"),  # discrete actions
    ("test/Picture-v0", None, r"^env_id: test/Picture-v0 has a Box of shape \(4, 4\) observation"),
])
def test_level_names_of_other_tasks_bad_ids_and_spaces_are_refused(env_id, dt, message):
    with pytest.raises(ValueError, match=message):
        envs.make_env(env_id, dt)


def test_stochastic_settings_and_hold_penalty_stay_with_the_paper_tasks():
    for call, name in [(lambda: envs.Perturb(envs.make_env("Pusher-v5"), "action"), "std"),
                       (lambda: envs.HoldPenalty(envs.make_env("Pusher-v5")), "t_thres"),
                       (lambda: envs.Perturb(envs.make_env("Pusher-v5"), "ext-force", 0.1, 1.0), "kind"),
                       (lambda: envs.Perturb(envs.make_env("Pendulum-v1"), "ext-force", 0.1, 1.0), "kind")]:
        with pytest.raises(ValueError, match=rf"^{name}:"):
            call()
    env = envs.HoldPenalty(envs.make_env("MountainCarContinuous-v0", 1.0), t_thres=3.0, penalty=-1.0)
    assert env.held_steps == 3  # given explicitly, at a step that stands for 1 s


@pytest.fixture(scope="module")
def sb3_sar():
    """examples/sb3_sar.py, the Stable-Baselines3 recipe (stable-baselines3 from benchmark/requirements.txt)."""
    pytest.importorskip("stable_baselines3", reason="pip install -r benchmark/requirements.txt (CI does)")
    sys.path.insert(0, os.path.join(HERE, "examples"))
    import sb3_sar
    return sb3_sar


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
    one_gamma = sar_ppo.compute_gae(rewards, values, next_values, np.full(n, gamma), np.maximum(terminated, truncated), lam)
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


# ---------------------------------------------------------------- TRPO (sar_trpo.py, figar_trpo.py) and A2C (--a2c)
import argparse  # noqa: E402

from torch.nn import utils as nn_utils  # noqa: E402

import figar_trpo  # noqa: E402
import sar_trpo  # noqa: E402

TRPO_FAST = ["--num-steps", "512", "--vf-minibatch-size", "128"]
LEARNER_SCRIPTS = ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py"]


@pytest.mark.parametrize("script,flags,method,slug", [
    ("sar_trpo.py", [], "SAR-TRPO", "sar-trpo"), ("figar_trpo.py", [], "FiGAR-C-TRPO", "figar-trpo"),
    ("sar_trpo.py", ["--no-repeat"], "TRPO", "trpo")])
def test_trpo_scripts_train_inverted_pendulum_at_lowest_dt_and_write_the_ppo_pairs_files(tmp_path, script, flags,
                                                                                          method, slug):
    result = subprocess.run([sys.executable, os.path.join(HERE, script), "--log-dir", str(tmp_path), "--total-steps",
                             "1024", *TRPO_FAST, *flags], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / f"InvertedPendulum-v5__{slug}__dt0.002__s1"
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt", "config.json", "progress.csv"]
    with open(run / "progress.csv") as f:
        assert f.readline().strip().split(",") == sar_ppo.COLUMNS + ["step_fraction"]
    rows = read_csv(run / "progress.csv")
    assert [int(r["decision_steps"]) for r in rows] == [512, 1024] and rows[0]["clip_fraction"] == ""
    for r in rows:
        assert 0 <= float(r["approx_kl"]) <= 1.5 * 0.01 and 0 <= float(r["step_fraction"]) <= 1
        duration = float(r["action_duration_mean_s"])
        assert duration == 2e-3 if "--no-repeat" in flags else 2e-3 < duration <= 0.05
    assert json.loads((run / "config.json").read_text())["method"] == method


def trpo_batch(seed=0, n=256, obs_dim=4, actions=2, init_logstd=0.0):
    """An agent (with the repetition dim) and a rollout it could have made, with advantages that favour some actions."""
    torch.manual_seed(seed)
    agent = sar_ppo.Agent(obs_dim, actions, repeat=True, init_logstd=init_logstd)
    obs = torch.randn(n, obs_dim)
    with torch.no_grad():
        dist = agent.dist(obs)
        acts = dist.sample()
        logprobs = dist.log_prob(acts).sum(1)
    advantages = (acts[:, 0] + acts[:, 1] - 0.3 * obs[:, 1]).numpy()
    returns = np.random.default_rng(seed).normal(size=n).astype(np.float32)
    return agent, (obs.numpy(), acts.numpy(), logprobs.numpy(), advantages, returns)


TRPO_ARGS = dict(max_kl=0.01, cg_iters=10, cg_damping=0.1, line_search_steps=10, ent_coef=0.0, vf_epochs=5,
                 vf_minibatch_size=128)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trpo_step_keeps_the_mean_kl_within_max_kl_and_raises_the_surrogate(seed, one_thread):
    agent, batch = trpo_batch(seed)
    obs, acts, logprobs, advantages, _ = map(torch.as_tensor, batch)
    std_adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    with torch.no_grad():
        old = agent.dist(obs)
    critic = [p.detach().clone() for p in agent.critic.parameters()]
    optimizer = torch.optim.Adam(agent.critic.parameters(), lr=1e-4, eps=1e-8)
    logs = sar_trpo.trpo_update(agent, optimizer, batch, argparse.Namespace(**TRPO_ARGS), np.random.default_rng(0))
    with torch.no_grad():
        new = agent.dist(obs)
        kl = torch.distributions.kl_divergence(old, new).sum(1).mean().item()
        surrogate = ((new.log_prob(acts).sum(1) - logprobs).exp() * std_adv).mean().item()
    # the full natural step is sized for KL = max_kl by the quadratic model; the line search allows 1.5·max_kl
    assert 0.005 < kl <= 0.01 * 1.1 and logs["step_fraction"] == 1.0 and logs["approx_kl"] == pytest.approx(kl)
    assert surrogate > 0.01 and logs["policy_loss"] == pytest.approx(-surrogate, abs=1e-6)  # E[A] = 0 before the step
    assert any(not torch.equal(a, b) for a, b in zip(critic, agent.critic.parameters()))  # the value fit ran


def test_trpo_line_search_keeps_the_old_policy_when_no_step_improves_the_surrogate(one_thread):
    agent, batch = trpo_batch(3)
    batch = (*batch[:3], np.zeros_like(batch[3]), batch[4])  # no advantage anywhere: no step can improve
    before = [p.detach().clone() for p in agent.parameters()]
    optimizer = torch.optim.Adam(agent.critic.parameters(), lr=1e-4)
    args = argparse.Namespace(**TRPO_ARGS)
    logs = sar_trpo.trpo_update(agent, optimizer, batch, args, np.random.default_rng(0))
    actor = [(a, b) for (name, b), a in zip(agent.named_parameters(), before) if not name.startswith("critic.")]
    assert logs["step_fraction"] == 0.0 and all(torch.equal(a, b) for a, b in actor)
    assert (logs["policy_loss"], logs["approx_kl"]) == (0.0, 0.0)  # finite: a row, not a divergence


def test_conjugate_gradient_matches_linalg_solve_on_a_positive_definite_system():
    torch.manual_seed(0)
    m = torch.randn(6, 6, dtype=torch.float64)
    a, b = m @ m.T + 0.5 * torch.eye(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    x = sar_trpo.conjugate_gradient(lambda v: a @ v, b, iters=6)  # exact in n iterations, up to rounding
    assert torch.allclose(x, torch.linalg.solve(a, b), atol=1e-8)


def test_a2c_update_equals_a_reference_a2c_gradient_step(one_thread):
    agent, batch = trpo_batch(4, init_logstd=-1.5)
    reference = sar_ppo.Agent(4, 2, repeat=True)
    reference.load_state_dict(agent.state_dict())
    args = argparse.Namespace(a2c=True, update_epochs=1, minibatch_size=256, clip_coef=0.2, ent_coef=0.0, vf_coef=0.5,
                              max_grad_norm=0.5)
    rmsprop = lambda params: torch.optim.RMSprop(params, lr=1e-4, alpha=0.99, eps=1e-5)  # noqa: E731
    sar_ppo.ppo_update(agent, rmsprop(agent.parameters()), batch, args, np.random.default_rng(0))
    obs, acts, _, advantages, returns = map(torch.as_tensor, batch)
    loss = -(advantages * reference.dist(obs).log_prob(acts).sum(1)).mean() \
        + 0.5 * ((reference.critic(obs).squeeze(1) - returns) ** 2).mean()  # A2C: −A·log π + 0.5·value MSE
    optimizer = rmsprop(reference.parameters())
    loss.backward()
    nn_utils.clip_grad_norm_(reference.parameters(), 0.5)
    optimizer.step()
    for (name, a), b in zip(agent.named_parameters(), reference.parameters()):
        assert torch.allclose(a, b, atol=1e-6), name
    assert agent.actor_logstd.detach().numpy() == pytest.approx(-1.5, abs=1e-3)  # A2C's initial log-std, moved once


@pytest.mark.parametrize("script,flags,method,slug", [
    ("sar_ppo.py", [], "SAR-A2C", "sar-a2c"), ("figar_ppo.py", [], "FiGAR-C-A2C", "figar-a2c"),
    ("sar_ppo.py", ["--no-repeat"], "A2C", "a2c")])
def test_a2c_flag_trains_with_table_4s_settings_under_the_a2c_names(tmp_path, script, flags, method, slug):
    result = subprocess.run([sys.executable, os.path.join(HERE, script), "--a2c", "--log-dir", str(tmp_path),
                             "--total-steps", "512", *flags], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / f"InvertedPendulum-v5__{slug}__dt0.002__s1"
    config = json.loads((run / "config.json").read_text())
    assert config["method"] == method and (config["num_steps"], config["update_epochs"], config["minibatch_size"],
                                           config["gae_lambda"], config["init_logstd"]) == (256, 1, 256, 1.0, -1.5)
    assert [int(r["decision_steps"]) for r in read_csv(run / "progress.csv")] == [256, 512]


@pytest.mark.parametrize("flag", ["--update-epochs", "--minibatch-size", "--clip-coef"])
@pytest.mark.parametrize("module", [sar_ppo, figar_ppo])
def test_a2c_refuses_flags_that_would_make_it_another_learner_or_do_nothing(module, flag, capsys):
    assert_exits_2_naming(module.parse_args, ["--a2c", flag, "4"], flag, capsys)


@pytest.mark.parametrize("flags", [["--max-t", "0.002"], ["--max-d", "0.3"], ["--norm", "l2"]], ids=" ".join)
@pytest.mark.parametrize("module", [sar_ppo, sar_trpo])
def test_the_plain_learner_refuses_sars_flags_that_would_do_nothing(module, flags, capsys):
    assert_exits_2_naming(module.parse_args, ["--no-repeat", *flags], "have no meaning with --no-repeat", capsys)
    assert module.parse_args(["--no-repeat", "--max-t", "0.05", "--max-d", "0.5"]).method.split()[0] in ("PPO", "TRPO")


TRPO_BAD_FLAGS = [(f, n) for f, n in MORE_BAD_FLAGS if n not in ("--learning-rate", "--clip-coef", "--vf-coef",
                  "--max-grad-norm", "--minibatch-size", "--update-epochs")] + [
    (["--max-kl", "0"], "--max-kl"), (["--max-kl", "nan"], "--max-kl"), (["--cg-iters", "0"], "--cg-iters"),
    (["--cg-damping", "-1"], "--cg-damping"), (["--line-search-steps", "0"], "--line-search-steps"),
    (["--vf-learning-rate", "inf"], "--vf-learning-rate"), (["--vf-epochs", "0"], "--vf-epochs"),
    (["--vf-minibatch-size", "2048"], "--vf-minibatch-size"), (["--scale-lr"], "--scale-lr"),
    (["--a2c"], "--a2c")]


@pytest.mark.parametrize("flags,named", TRPO_BAD_FLAGS)
@pytest.mark.parametrize("module", [sar_trpo, figar_trpo])
def test_every_trpo_flag_is_checked_before_any_work(module, flags, named, tmp_path, capsys):
    if module is figar_trpo and named == "--delta-dims":
        named = "unrecognized arguments"
    assert_exits_2_naming(module.parse_args, ["--log-dir", str(tmp_path / "logs"), *flags], named, capsys)
    assert not (tmp_path / "logs").exists()


def wrapper_text(script, name):  # the class, up to the next top-level definition
    text = open(os.path.join(HERE, script)).read()
    start = text.index(f"class {name}(")
    return text[start:re.search(r"\n(def|class) ", text[start + 1:]).start() + start]


def test_every_training_script_carries_the_same_wrapper_and_agent_text():
    for name, scripts in [("SafeActionRepetition", ["sar_ppo.py", "sar_trpo.py"]),
                          ("DurativeRepetition", ["figar_ppo.py", "figar_trpo.py"])]:
        assert wrapper_text(scripts[0], name) == wrapper_text(scripts[1], name)
    agents = {wrapper_text(script, "Agent") for script in LEARNER_SCRIPTS}
    assert len(agents) == 1


@pytest.mark.parametrize("module", [sar_trpo, figar_trpo])
def test_trpo_wrappers_pass_check_env(module):
    wrapper = getattr(module, "SafeActionRepetition", None) or module.DurativeRepetition
    check(wrapper(envs.make_env("InvertedPendulum-v5", "lowest")))


def test_plot_gives_each_learner_its_own_figures_in_its_family_colours(tmp_path, capsys):
    for method in ("SAR-PPO", "PPO", "SAR-TRPO", "TRPO"):
        for seed in (1, 2):
            fake_run(tmp_path / "runs", f"{method}__s{seed}", 100.0 + seed, method=method, seed=seed)
    assert plot.method_color("SAR-TRPO") == plot.method_color("SAR-PPO") != plot.method_color("TRPO")
    assert plot.main([str(tmp_path / "runs"), "--out", str(tmp_path / "figs"), "--kinds", "curves"]) == 0
    names = sorted(os.listdir(tmp_path / "figs"))
    assert [n.split("_")[0] for n in names] == ["ppo", "trpo"]
    capsys.readouterr()
    assert plot.main([str(tmp_path / "runs"), "--learner", "TRPO", "--table"]) == 0
    out = capsys.readouterr().out
    assert "SAR-TRPO" in out and "SAR-PPO" not in out


def test_plot_never_averages_runs_of_different_budgets_as_seeds(tmp_path, capsys):
    fake_run(tmp_path, "a__s1", 100.0, seed=1, rows=10)
    fake_run(tmp_path, "a__s2", 120.0, seed=2, rows=10)
    fake_run(tmp_path, "a__s3", 5000.0, seed=3, rows=4)
    assert plot.main([str(tmp_path), "--summary"]) == 0
    captured = capsys.readouterr()
    assert "110.0 ±" in captured.out and "(2)" in captured.out and "5000" not in captured.out
    assert "a__s3" in captured.err and "left out" in captured.err


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py"])
@pytest.mark.parametrize("flags,named", [(["--env-id", "MountainCarContinuous-v0"], "--dt 0.01"),
                                         (["--env-id", "Pendulum-v1"], "--max-t 0.2")])
def test_a_run_that_could_repeat_no_action_is_refused_naming_the_fix(tmp_path, script, flags, named):
    result = train(script, tmp_path / "logs", *flags, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr
    assert not (tmp_path / "logs").exists()


def test_with_the_suggested_flags_sar_repeats_actions_on_tasks_without_a_mujoco_dt(tmp_path):
    for flags in (["--env-id", "MountainCarContinuous-v0", "--dt", "0.01"], ["--env-id", "Pendulum-v1", "--max-t", "0.2"]):
        result = train("sar_ppo.py", tmp_path, *flags, "--total-steps", "500", *TINY, name=flags[1])
        assert "rounded up to 512" in result.stdout and str(tmp_path / flags[1]) in result.stdout
        dt = float(json.loads((tmp_path / flags[1] / "config.json").read_text())["dt"])
        assert all(float(r["action_duration_mean_s"]) > 1.2 * dt for r in rows_of(tmp_path, flags[1]))


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_the_papers_own_runs_at_a_50_ms_dt0_train_and_say_once_that_nothing_repeats(tmp_path, script):
    result = train(script, tmp_path, "--env-id", "InvertedDoublePendulum-v5", "--dt", "original", "--total-steps",
                   "256", *TINY)
    assert result.stdout.count("no action can be repeated") == 1 and "Warning" not in result.stderr


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo, sar_trpo, figar_trpo])
def test_help_shows_every_range_and_never_a_default_of_none(module, capsys):
    with pytest.raises(SystemExit):
        module.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "None" not in text and "SUPPRESS" not in text
    assert "--seed SEED seeds torch, numpy and the env (must lie in [0, 4294967295]; default: 1)" in text


def test_figar_wrapper_warns_when_no_repetition_is_possible():
    with pytest.warns(UserWarning, match="no action can be repeated"):
        figar_ppo.DurativeRepetition(envs.make_env("InvertedDoublePendulum-v5", "original"), max_t=0.05)


def test_figures_sh_that_fails_midway_leaves_every_committed_figure_as_it_was(tmp_path):
    fake = tmp_path / "python"  # an interpreter without matplotlib: the first plot.py call fails
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named matplotlib' >&2\nexit 1\n")
    fake.chmod(0o755)
    figures = sorted(glob.glob(os.path.join(HERE, "results", "figures", "*.png")) +
                     glob.glob(os.path.join(HERE, "results", "theory", "*.png")))
    before = {f: open(f, "rb").read() for f in figures}
    result = subprocess.run(["bash", os.path.join(HERE, "benchmark", "figures.sh")], capture_output=True, text=True,
                            env={**os.environ, "PYTHON": str(fake)}, timeout=60)
    assert result.returncode != 0 and len(figures) > 40
    assert {f: open(f, "rb").read() for f in figures} == before
    assert not glob.glob(os.path.join(HERE, "results", ".redraw.*"))


def kill_after_rows(cmd, progress, rows):
    """Start `cmd`, SIGKILL it once progress.csv has `rows` rows (or when it ends by itself)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline:
        if progress.exists() and len(progress.read_text().splitlines()) > rows:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("script,learner_flags", [
    ("sar_ppo.py", ["--update-epochs", "1", "--minibatch-size", "128"]),
    ("figar_ppo.py", ["--update-epochs", "1", "--minibatch-size", "128"]), ("sar_ppo.py", ["--a2c"]),
    ("sar_trpo.py", ["--vf-minibatch-size", "128"]), ("figar_trpo.py", ["--vf-minibatch-size", "128"])])
def test_a_run_killed_at_three_moments_and_resumed_gives_the_uninterrupted_runs_rows(tmp_path, script, learner_flags):
    flags = ["--total-steps", "1536", "--num-steps", "256", *learner_flags,
             "--checkpoint-every", "2", "--noise", "ext-force", "--noise-prob", "0.3"]  # the env's RNG matters too
    train(script, tmp_path, *flags, name="whole")
    cmd = [sys.executable, os.path.join(HERE, script), "--log-dir", str(tmp_path), "--run-name", "cut", *flags]
    for rows in (1, 3, 5):  # mid-update, and past a checkpoint: rows logged after it are made again
        kill_after_rows(cmd + ["--resume"] * (rows > 1), tmp_path / "cut" / "progress.csv", rows)
    train(script, tmp_path, *flags, "--resume", name="cut")
    strip = lambda rows: [{k: v for k, v in r.items() if k not in VARYING} for r in rows]  # noqa: E731
    assert len(rows_of(tmp_path, "whole")) == 6 and strip(rows_of(tmp_path, "cut")) == strip(rows_of(tmp_path, "whole"))


# ---------------------------------------------------------------- the promises of every command, class by class
def test_random_returns_refuses_the_committed_csv_reached_through_a_symlinked_folder(tmp_path, capsys):
    import random_returns
    committed = os.path.join(HERE, "results", "random_returns.csv")
    before = open(committed).read()
    (tmp_path / "link").symlink_to(os.path.join(HERE, "results"))
    with pytest.raises(SystemExit) as exit_info:
        random_returns.main(["--episodes", "2", "--out", str(tmp_path / "link" / "random_returns.csv")])
    assert exit_info.value.code == 2 and "--out" in capsys.readouterr().err and open(committed).read() == before


@pytest.mark.parametrize("script", ["sar_ppo.py", "sar_trpo.py"])
def test_a_folder_holding_only_a_checkpoint_is_a_run_and_is_not_started_over(tmp_path, script):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint.pt").write_bytes(b"the run")
    result = train(script, tmp_path, "--total-steps", "256", "--num-steps", "256", check=False)
    assert result.returncode == 2 and "--resume" in result.stderr and result.stderr.count("\n") == 1
    assert (tmp_path / "run" / "checkpoint.pt").read_bytes() == b"the run"


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


class _TwoDimActions(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (2, 2), np.float32)


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
    with pytest.raises(ValueError, match="^observation: not finite"):
        for _ in range(10):
            env.step(np.array([0.0, 1.0], np.float32))  # u = 1: long repetitions
    if module is sar_ppo:
        assert np.isfinite(env.obs_stats.mean).all() and np.isfinite(env.obs_stats.var).all()


def test_slurm_sh_strips_the_carriage_returns_of_a_crlf_command_list(tmp_path):
    listing = tmp_path / "commands.txt"
    listing.write_bytes(b"python -c \"import sys; print(repr(sys.argv[1]))\" runs\r\n")
    result = slurm_sh([str(listing)], "1")
    assert result.returncode == 0, result.stderr
    assert "'runs'" in result.stdout and "\\r" not in result.stdout


def test_plot_refuses_a_progress_csv_missing_every_other_row(tmp_path, capsys):
    fake_run(tmp_path, "run", 100.0, rows=10, num_steps=100)
    path = tmp_path / "run" / "progress.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + lines[2::2]) + "\n")  # rows 200, 400, …, 1000: half of them missing
    assert plot.load_run(str(tmp_path / "run")) is None and "missing row" in capsys.readouterr().err


# ---------------------------------------------------------------- every command, walked
import runpy  # noqa: E402
from unittest import mock  # noqa: E402


def python_commands():
    """Every Python command, found from the tree: top-level and benchmark/ scripts with a main, examples/."""
    scripts = sorted(glob.glob(os.path.join(HERE, "*.py"))) + sorted(glob.glob(os.path.join(BENCHMARK, "*.py")))
    return [p for p in scripts if re.search(r'^if __name__ == "__main__":', open(p).read(), re.M)] + \
        sorted(glob.glob(os.path.join(HERE, "examples", "*.py")))


COMMANDS = python_commands()
SHELL_COMMANDS = sorted(glob.glob(os.path.join(BENCHMARK, "*.sh")))
TRAINING = {"sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "dau.py"}
# The inputs a command reads from a run folder, and the arguments that make it read them (RUN: a copy of a
# finished SAR-PPO run with its model.pt, OUT: an empty folder). plot.py and plot_rising_stochasticity.py
# read folders of many runs: a damaged one is skipped with a warning by design.
RUN_INPUTS = {"evaluate.py": (["RUN"], ["config.json", "model.pt"]),
              "check_reproducible.py": (["RUN"], ["config.json", "progress.csv"]),
              "safe_regions.py": (["RUN", "--out", "OUT"], ["config.json", "model.pt"]),
              "animate.py": (["--run", "RUN", "--out", "OUT/a.gif"], ["config.json", "model.pt"]),
              "same_policy_across_dt.py": (["--model", "RUN/model.pt"], ["config.json", "model.pt"])}


class StartedWork(Exception):
    """A case meant to be refused before any work ran on instead."""


def run_in_process(path, argv, capsys, seconds=20):
    """`python path argv...` in this process (imports are paid once): (exit status, stdout, stderr)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGPIPE, signal.SIGTERM, signal.SIGINT)}

    def stuck(*_):
        raise StartedWork(f"{os.path.basename(path)} {' '.join(argv)} ran {seconds} s")
    signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        with mock.patch.object(sys, "argv", [path, *argv]):
            runpy.run_path(path, run_name="__main__")
        code, message = 0, ""
    except SystemExit as e:
        code, message = (e.code or 0, "") if e.code is None or isinstance(e.code, int) else (1, f"{e.code}\n")
    finally:
        signal.alarm(0)
        for s, handler in saved.items():
            signal.signal(s, handler)
    out = capsys.readouterr()
    return code, out.out, out.err + message


class Parsed(Exception):
    pass


def parser_of(path):
    """The command's argparse parser, caught at its first parse_args (None if it has none)."""
    caught = []

    def catch(self, *args, **kwargs):
        caught.append(self)
        raise Parsed
    with mock.patch.object(argparse.ArgumentParser, "parse_args", catch), mock.patch.object(sys, "argv", [path]):
        try:
            runpy.run_path(path, run_name="__main__")
        except (Parsed, SystemExit):
            pass
    return caught[0] if caught else None


def bad_values(rule):
    """Values outside a `within` rule, "must lie in [low, high]" or "(low, high]"."""
    low, high = (float(x) for x in re.search(r"[\[(](.+), (.+)\]", rule).groups())
    values = ["nan", f"{low:g}" if rule.startswith("must lie in (") else f"{low - 1:g}"]
    above = [f"{high * 10 + 1:.0f}"] + (["inf"] if "or be inf" not in rule else [])  # --max-t inf: no cap on t
    return values + (above if math.isfinite(high) else [])


def numeric_flags(parser):
    """(flag, nargs, its bad values) of each numeric flag with a range; the numeric flags without one."""
    ranged, unranged = [], []
    for action in parser._actions:
        flag = max(action.option_strings, key=len, default=None)
        if flag is None or action.type is None:
            continue
        if getattr(action.type, "rule", "").startswith("must lie in"):
            ranged.append((flag, action.nargs, bad_values(action.type.rule)))
        elif action.type in (int, float):
            unranged.append(flag)
    return ranged, unranged


def positionals(parser, run):
    return [str(run) for a in parser._actions if not a.option_strings and a.nargs not in ("?", "*")
            and a.dest != "help"]


def files_under(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def git_status():
    return subprocess.run(["git", "status", "--porcelain"], cwd=HERE, capture_output=True, text=True).stdout


def one_line(code, err, status, case):
    assert code == status and err.count("\n") == 1, f"{case}: exit {code}, stderr {err!r}"


@pytest.mark.parametrize("path", COMMANDS, ids=[os.path.relpath(p, HERE) for p in COMMANDS])
def test_every_command_answers_help_unknown_flags_and_bad_numbers_in_one_line(path, model_run, tmp_path, capsys,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)  # a command that started work by mistake writes here, not in the project
    before, work = git_status(), tmp_path / "work"
    work.mkdir()
    code, out, _ = run_in_process(path, ["--help"], capsys)
    assert code == 0 and out, "--help"
    one_line(*run_in_process(path, ["--no-such-flag"], capsys)[::2], 2, "--no-such-flag")
    parser = parser_of(path)
    ranged, unranged = numeric_flags(parser) if parser else ([], [])
    for flag, nargs, values in ranged:
        for value in values:
            argv = positionals(parser, model_run) + [flag] + [value] * (nargs if isinstance(nargs, int) else 1)
            code, _, err = run_in_process(path, argv, capsys)
            one_line(code, err, 2, f"{flag} {value}")
            assert flag in err, err
    print(f"{os.path.relpath(path, HERE)}: {len(ranged)} numeric flags with a range walked"
          + (f"; without one (not walked): {', '.join(unranged)}" if unranged else ""))
    if os.path.basename(path) not in TRAINING:
        assert not unranged, f"give {', '.join(unranged)} a range (promises.within)"
    assert files_under(work) == {} and git_status() == before


def out_cases(parser, tmp_path):
    """(--out value, what it is) that no command can write to, for a folder or for a file output."""
    a_file, a_folder = tmp_path / "a_file", tmp_path / "a_folder"
    a_file.write_bytes(b"old")
    a_folder.mkdir()
    out = next(a for a in parser._actions if "--out" in a.option_strings)
    wrong = a_file if "folder" in (out.help or "").lower() else a_folder  # a file where a folder is needed, or so
    return [(str(wrong), "the wrong kind"), (str(a_file / "x" / "y.csv"), "beneath a file"),
            ("/proc/x/y", "in /proc")]


@pytest.mark.parametrize("path", COMMANDS, ids=[os.path.relpath(p, HERE) for p in COMMANDS])
def test_every_command_refuses_an_unwritable_out_and_damaged_inputs_in_one_line(path, model_run, tmp_path, capsys,
                                                                                monkeypatch):
    name, parser = os.path.basename(path), parser_of(path)
    if name in TRAINING or parser is None:
        pytest.skip(f"{name}: its flags are walked by the test above; it writes no --out of its own")
    monkeypatch.chdir(tmp_path)
    before = git_status()
    walked = []
    if any("--out" in a.option_strings for a in parser._actions):
        for out, what in out_cases(parser, tmp_path):
            files = files_under(tmp_path)
            code, _, err = run_in_process(path, positionals(parser, model_run) + ["--out", out], capsys)
            one_line(code, err, 2, f"--out {what}")
            assert "--out" in err and files_under(tmp_path) == files, err
            walked.append(f"--out {what}")
        if os.geteuid() == 0:
            print(f"{name}: an unwritable --out folder not walked: as root, chmod 555 does not stop writes")
        else:
            locked_folder = tmp_path / "read_only"
            locked_folder.mkdir(mode=0o555)
            code, _, err = run_in_process(path, positionals(parser, model_run) + ["--out", str(locked_folder / "x")],
                                          capsys)
            one_line(code, err, 2, "--out in a read-only folder")
    if name in RUN_INPUTS:
        argv, read = RUN_INPUTS[name]
        for damaged_name in read:
            run = tmp_path / f"damaged_{damaged_name}"
            shutil.copytree(model_run, run)
            (run / damaged_name).write_bytes(b"\xff\xfe not what it should be")
            (tmp_path / f"out_{damaged_name}").mkdir()
            files = files_under(tmp_path)
            args = [a.replace("RUN", str(run)).replace("OUT", str(tmp_path / f"out_{damaged_name}")) for a in argv]
            code, _, err = run_in_process(path, args, capsys)
            one_line(code, err, 2, f"a damaged {damaged_name}")
            assert files_under(tmp_path) == files
            walked.append(f"a damaged {damaged_name}")
    print(f"{name}: {', '.join(walked) or 'no --out and no run folder to damage'}")
    assert git_status() == before


def fake_python_recording(tmp_path):
    """A `python` on PATH that records that it was started, and does nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "started"}\n')
    (bin_dir / "python").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": str(bin_dir / "python")}


@pytest.mark.parametrize("args", [["nonsense"], ["2", "nonsense"], ["--list", "nonsense"], [""], ["99999999999999999999"]],
                         ids=lambda args: " ".join(args) or "empty")
@pytest.mark.parametrize("path", SHELL_COMMANDS, ids=[os.path.relpath(p, HERE) for p in SHELL_COMMANDS])
def test_every_shell_command_refuses_a_bad_argument_in_one_line_and_starts_nothing(path, args, tmp_path):
    before = git_status()
    result = subprocess.run(["bash", path, *args], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL, env=fake_python_recording(tmp_path))
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "started").exists() and git_status() == before


SEEDED_SCRIPTS = [p for p in SHELL_COMMANDS if "SEEDS" in open(p).read()]


@pytest.mark.parametrize("seeds", ["x", "", "1,2", "-1"])
@pytest.mark.parametrize("path", SEEDED_SCRIPTS, ids=os.path.basename)
def test_a_figure_script_refuses_bad_seeds_in_one_line_before_listing_or_running(path, seeds, tmp_path):
    env = {**fake_python_recording(tmp_path), "SEEDS": seeds}
    for args in (["--list"], ["2"]):
        result = subprocess.run(["bash", path, *args], capture_output=True, text=True, timeout=30, env=env)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "SEEDS" in result.stderr
        assert result.stdout == "" and not (tmp_path / "started").exists()


@pytest.mark.parametrize("script, variable, value", [("fig_hopper_1m.sh", "METHODS", ""), ("fig_hopper_1m.sh", "METHODS", " "),
                                                     ("full_grid.sh", "LOG_DIR", ""), ("full_grid.sh", "LOG_DIR", "my runs")])
def test_a_figure_script_refuses_an_empty_or_unusable_setting_in_one_line(script, variable, value, tmp_path):
    env = {**fake_python_recording(tmp_path), variable: value}
    for args in (["--list"], ["2"]):
        result = subprocess.run(["bash", os.path.join(BENCHMARK, script), *args], capture_output=True, text=True,
                                timeout=30, env=env)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and variable in result.stderr
        assert result.stdout == "" and not (tmp_path / "started").exists()


# ---- K: a full disk, simulated by a file-size limit (writes past it fail with EFBIG; Python ignores SIGXFSZ)
def full_disk(limit=0):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


SAFE_REGIONS_RUN = os.path.join(HERE, "results", "runs", "InvertedPendulum-v5__sar-delta2-3__dt0.002__s1")
WRITERS = {  # a command's arguments (T: an empty folder), and an output it would replace there
    "exploration": (["benchmark/exploration.py", "--walks", "10", "--out", "T/e.csv"], "e.png"),
    "alert_then_off": (["benchmark/alert_then_off.py", "--xs", "0.2", "--episodes", "2", "--out", "T/a.csv"], "a.csv"),
    "random_returns": (["benchmark/random_returns.py", "--envs", "InvertedPendulum-v5", "--episodes", "1",
                        "--out", "T/r.csv"], "r.csv"),
    "pg_variance": (["benchmark/pg_variance.py", *PG_TINY, "--out", "T/pg.csv"], "pg.csv"),
    "safe_regions": (["benchmark/safe_regions.py", SAFE_REGIONS_RUN, "--draw", "2", "--decisions", "20", "--out", "T"],
                     "InvertedPendulum-v5__sar-delta2-3__dt0.002__s1_safe_regions.png"),
    "plot": (["plot.py", "T/runs", "--kinds", "bars", "--out", "T"], "InvertedPendulum-v5_deterministic_final_return.png"),
    "animate": (["benchmark/animate.py", "--max-frames", "2", "--width", "64", "--height", "64", "--out", "T/a.gif"],
                "a.gif"),
    "sb3_sar": (["examples/sb3_sar.py", "--total-steps", "64", "--eval-episodes", "1", "--out", "T/run"], "run/x"),
}


@pytest.mark.parametrize("name", WRITERS)
def test_a_full_disk_is_one_line_exit_1_and_keeps_the_old_file_with_no_empty_one(name, tmp_path):
    argv, kept = WRITERS[name]
    if name == "animate" and rendering_unavailable():
        pytest.skip(rendering_unavailable())
    if name == "sb3_sar":
        pytest.importorskip("stable_baselines3")
    fake_run(tmp_path / "runs", "run", 100.0)
    (tmp_path / kept).parent.mkdir(exist_ok=True)
    old = ",".join(pg_variance.COLUMNS).encode() + b"\r\n" if name == "pg_variance" else b"the old version"
    (tmp_path / kept).write_bytes(old)
    before, files = git_status(), files_under(tmp_path)
    argv = [a.replace("T", str(tmp_path), 1) if a.startswith("T") else a for a in argv]
    result = subprocess.run([sys.executable, *argv], cwd=HERE, capture_output=True, text=True, timeout=180,
                            preexec_fn=full_disk(4096 if name == "sb3_sar" else 0))  # tempfile's probe, for SB3
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "File too large" in result.stderr
    assert files_under(tmp_path) == files  # the old file whole, nothing new: no 0-byte or temporary file
    assert git_status() == before


def test_pg_variance_cuts_a_row_the_disk_could_not_take_off_the_csv(tmp_path, monkeypatch, one_thread):
    out = tmp_path / "pg.csv"
    real_write = os.write
    monkeypatch.setattr(pg_variance.os, "write", lambda fd, data: real_write(fd, data[:7]))  # the disk fills mid-row
    with pytest.raises(OSError):
        pg_variance.main(PG_TINY + ["--out", str(out)])
    assert out.read_bytes() == f"{','.join(pg_variance.COLUMNS)}\r\n".encode()  # the header, whole; no torn row


# ---- L: tracebacks on unchecked input
@pytest.mark.parametrize("flags,named", [(["--frame-s", "inf"], "--frame-s"), (["--out", "FOLDER.gif"], "--out"),
                                         (["--seed", "-1"], "--seed"), (["--run", "CONFIG_LIST"], "--run"),
                                         (["--slow-motion", "0.0001"], "--slow-motion")])
def test_animate_refuses_bad_input_in_one_line_before_rendering(flags, named, model_run, tmp_path, capsys):
    (tmp_path / "FOLDER.gif").mkdir()
    listed = tmp_path / "listed"
    shutil.copytree(model_run, listed)
    (listed / "config.json").write_text("[1, 2]")  # JSON, but not a config
    flags = [{"FOLDER.gif": str(tmp_path / "FOLDER.gif"), "CONFIG_LIST": str(listed)}.get(f, f) for f in flags]
    exits_2_with_one_line(lambda: animate.main(flags + ["--out", str(tmp_path / "a.gif")] * (named != "--out")),
                          named, capsys)
    assert not (tmp_path / "a.gif").exists()


def test_animate_with_a_bad_mujoco_gl_says_so_in_one_line(tmp_path):
    result = script("animate.py", "--out", tmp_path / "a.gif", "--max-frames", "2",
                    env={**os.environ, "MUJOCO_GL": "nonsense"})
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "MUJOCO_GL" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_sb3_recipe_interrupted_while_training_says_one_line_and_leaves_no_file(tmp_path):
    pytest.importorskip("stable_baselines3")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "examples", "sb3_sar.py"), "--out", str(tmp_path / "run")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("decisions ")  # training, one update done
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err == "sb3_sar.py: interrupted\n", err
    assert list((tmp_path / "run").iterdir()) == []


def test_status_refuses_an_undecodable_progress_csv_in_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "progress.csv").write_bytes(b"\xff\xfe")
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"python sar_ppo.py --log-dir {tmp_path} --run-name run\n"))
    exits_2_with_one_line(lambda: status.main([]), "progress.csv", capsys)


# ---- M: wrong or missing answers
def test_animate_reports_a_rollout_error_as_itself_not_as_opengl(model_run, tmp_path, capsys):
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    state = torch.load(model_run / "model.pt", weights_only=True)
    state["agent"].pop(next(iter(state["agent"])))  # a model that does not fit: found once the episode starts
    torch.save(state, model_run / "model.pt")
    exits_2_with_one_line(lambda: animate.main(["--run", str(model_run), "--max-frames", "2", "--out",
                                                str(tmp_path / "a.gif")]), "Missing key", capsys)
    assert not (tmp_path / "a.gif").exists()


@pytest.mark.parametrize("line", ["python sar_ppo.py --help", "python sar_trpo.py -h", "echo sar_ppo.py",
                                  "python figar_ppo.py --no-such-flag"])
def test_status_check_refuses_a_line_that_is_not_a_training_command(line, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    exits_2_with_one_line(lambda: status.main(["--check"]), line, capsys)


@pytest.mark.parametrize("said, named", [("", "no command"), ("\n\n", "no command"),
                                         ("python sar_ppo.py --env-id 'Hopper-v5\n", "closing quotation"),
                                         ("python sar_ppo.py --help\n", "trains nothing"),
                                         ("sar_ppo.py --env-id Hopper-v5\n", "not a command")])
@pytest.mark.parametrize("tool", ["status", "grid_hours"])
def test_status_and_grid_hours_read_the_same_commands_and_refuse_the_same_lines(tool, said, named, capsys, monkeypatch):
    import grid_hours
    monkeypatch.setattr(sys, "stdin", io.StringIO(said))
    exits_2_with_one_line(lambda: {"status": status, "grid_hours": grid_hours}[tool].main([]), named, capsys)


def test_run_sh_runs_each_command_with_its_quotes_intact(tmp_path):
    out = tmp_path / "said"
    result = run_sh(["2"], f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write('a  b')\" {out}\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_text() == "a  b"


def test_plot_follows_symlinked_run_folders_each_real_folder_once(tmp_path):
    fake_run(tmp_path / "elsewhere", "InvertedPendulum-v5__sar__dt0.002__s1", 100.0)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "runs" / "loop").symlink_to(tmp_path / "runs")  # a link back up: no endless walk
    assert [os.path.basename(f) for f in plot.run_folders(str(tmp_path / "runs"))] == \
        ["InvertedPendulum-v5__sar__dt0.002__s1"]


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


@pytest.mark.parametrize("setting", [{"noise": "ext-force"}, {"hold_penalty": True}])
def test_rollout_tools_refuse_a_run_trained_under_noise_or_a_hold_penalty(model_run, setting, capsys):
    import animate
    import same_policy_across_dt
    config = json.loads((model_run / "config.json").read_text())
    (model_run / "config.json").write_text(json.dumps({**config, **setting}))
    for call in (lambda: animate.main(["--run", str(model_run), "--out", str(model_run / "x.gif")]),
                 lambda: same_policy_across_dt.main(["--model", str(model_run / "model.pt"), "--episodes", "1"])):
        with pytest.raises(SystemExit) as exit_info:
            call()
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1 and ("noise" in err or "hold-penalty" in err)
    assert not (model_run / "x.gif").exists()


def test_plot_ratios_give_each_method_its_lowest_over_largest_dt_return_and_the_one_rules_verdict(tmp_path, capsys):
    for method, finals_by_dt in [("SAR-TRPO", {0.04: (1000, 1000), 0.002: (990, 1000)}),
                                 ("TRPO", {0.04: (900, 1000), 0.002: (50, 100)}),
                                 ("FiGAR-C-TRPO", {0.04: (500, 900), 0.002: (600, 200)})]:
        for dt, finals_ in finals_by_dt.items():
            for seed, final in enumerate(finals_):
                fake_run(tmp_path, f"{method}{dt}_{seed}", float(final), method=method, dt=dt, seed=seed)
    assert plot.main([str(tmp_path), "--ratios"]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert row == "| InvertedPendulum-v5 | 2 / 40 | 0.99, unclear | 0.57, invariant | 0.08, not |"  # 400 inside 700 ± 2541
    assert plot.invariance_verdict([1000.0, 999.9999999999], [1000.0000000001, 1000.0]) == "invariant"


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo, sar_trpo, figar_trpo])
def test_the_episode_state_of_every_paper_task_loads_with_weights_only(module):
    # Hopper's wrappers hold numpy scalars (DtEnv's episode return), which torch.load(weights_only=True) refuses
    args = module.parse_args(["--env-id", "Hopper-v5", "--noise", "ext-force", "--hold-penalty"])
    env, _ = module.make_decision_env(args)
    raw_obs, _ = env.reset(seed=0)
    for _ in range(3):
        raw_obs, *_ = env.step(env.action_space.sample())
    buffer = io.BytesIO()
    torch.save(module.episode_state(env, raw_obs, raw_obs.astype(np.float32), np.float64(1.5), 0.5), buffer)
    saved = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    assert saved["returns"] == [1.5, 0.5] and isinstance(saved["layers"][-1]["episode_return"], float)


# ---- the glance table
# README's "Results at a glance" and the report's opening table are one table: a row per claim of the paper, each
# with a headline pair of numbers, a verdict of a few words and a link to the report's section that holds the
# detail. The caps keep it a glance; the links and numbers keep it the sections' summary.
# (and re, imported above with the SLURM tests)
import itertools  # noqa: E402
from pathlib import Path  # noqa: E402

GLANCE_CELL_WORDS, GLANCE_TABLE_WORDS = 20, 450  # words as `wc -w` counts them, the table's pipes included


def github_anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def report_sections(report):
    """Each heading's anchor → its text, from the heading to the next heading of its level or higher."""
    text = re.sub(r"```.*?```", "", report, flags=re.S)  # a '# comment' in a code block is not a heading
    heads = [(m.start(), len(m.group(1)), github_anchor(m.group(2))) for m in re.finditer(r"^(#+) (.*)$", text, re.M)]
    return {anchor: text[start:next((s for s, lv, _ in heads[i + 1:] if lv <= level), len(text))]
            for i, (start, level, anchor) in enumerate(heads)}


def glance_table(text, link_prefix):
    """The table under '## Results at a glance', its links into the report written '#anchor' in either file."""
    lines = text.split("\n## Results at a glance\n", 1)[1].split("\n## ", 1)[0].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = "\n".join(itertools.takewhile(lambda line: line.startswith("|"), lines[first:]))
    return table.replace("](" + link_prefix, "](#")


def glance_problems(readme, report):
    """What is wrong with the glance tables of README's text and the report's: [] when nothing is."""
    table = glance_table(report, "#")
    problems = [] if glance_table(readme, "results/README.md#") == table else ["README's table is not the report's"]
    if len(table.split()) > GLANCE_TABLE_WORDS:
        problems.append(f"the table has {len(table.split())} words")
    sections = report_sections(report)
    for i, line in enumerate(table.splitlines()):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        problems += [f"{len(c.split())} words in a cell: {c}" for c in cells if len(c.split()) > GLANCE_CELL_WORDS]
        if len(cells) != 4:  # the claim with its figure, the numbers, the verdict, the section
            problems.append(f"{len(cells)} cells: {line}")
        elif i >= 2:  # below the header and its rule
            anchors = re.findall(r"\]\(#([^)\s]+)\)", cells[3])
            if not anchors or any(anchor not in sections for anchor in anchors):
                problems.append(f"no section of the report: {cells[3]}")
                continue
            # every number of the numbers and the verdict is in the linked section, to the number's own precision
            theirs = re.findall(r"\d+(?:\.\d+)?", " ".join(sections[anchor] for anchor in anchors))
            for number in re.findall(r"\d+(?:\.\d+)?", cells[1] + " " + cells[2]):
                places = len(number.partition(".")[2])
                if not any(round(float(n), places) == float(number) for n in theirs):
                    problems.append(f"{number} is not in {', '.join(anchors)}")
    return problems


def test_the_glance_table_is_one_table_in_readme_and_the_report_and_stays_a_glance():
    readme, report = Path(HERE, "README.md").read_text(), Path(HERE, "results", "README.md").read_text()
    assert glance_problems(readme, report) == []
    assert len(glance_table(report, "#").splitlines()) >= 2 + 16  # a row per claim, the three learners' in three


def replace_in(old, new, files=("README.md", "results/README.md")):
    def edit(texts):
        assert all(old in texts[f] for f in files), old  # a breakage that breaks nothing would prove nothing
        return {f: text.replace(old, new) if f in files else text for f, text in texts.items()}
    return edit


@pytest.mark.parametrize("edit, problem", [
    (replace_in("7989 → 8761", "7989 → 8760", files=("README.md",)), "README's table is not the report's"),
    (replace_in("**partly**, claim by claim", "**partly**, claim by claim" + " more" * 17), "21 words in a cell"),
    (replace_in("small-δ) |", "small-δ) |" + "\n| a | b | c | d |" * 60), "the table has"),  # rows after App. B's
    (replace_in("(#app-i-ablations)", "(#app-i-ablation)", files=("results/README.md",)), "no section of the report"),
    (replace_in("(results/README.md#app-i-ablations)", "(results/README.md#app-i-ablation)", files=("README.md",)),
     "README's table is not the report's"),
    (replace_in("d_max 0.2: 7258", "d_max 0.2: 7259"), "7259 is not in app-i-ablations"),
    (replace_in("| Ablations (App. I) |", "| Ablations | (App. I) |"), "5 cells"),
])
def test_the_glance_check_finds_a_broken_table(edit, problem):
    texts = edit({f: Path(HERE, f).read_text() for f in ("README.md", "results/README.md")})
    assert any(problem in p for p in glance_problems(texts["README.md"], texts["results/README.md"]))
