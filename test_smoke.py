"""The test suite: seconds-long checks of the behaviours SPEC.md pins down. Run: pytest -q"""
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs

warnings.filterwarnings("ignore", module="gymnasium")


def check(env):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True, skip_close_check=True)  # both re-make from the registry


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
    assert env.max_steps == 1000 and env.gamma == 0.99 and env.reward_scale == 1.0


def test_dt_levels_and_gamma_follow_table_1():
    env = envs.make_env("Reacher-v5", "middle")
    assert (env.dt, env.dt0, env.max_steps) == (5e-3, 2e-2, 200)
    assert env.gamma == pytest.approx(0.99 ** 0.25)
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
    spy = Spy(inner.env, inner.dt, inner.dt0, 1000, 0.99)
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
    (lambda: envs.make_env("Pendulum-v1"), "env_id"),
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
