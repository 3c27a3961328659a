"""envs.py: the δ-rescaled tasks keep physical time, returns and Table 1's levels; the stochastic settings,
the hold penalty and AlertThenOff do what the paper says; any other gymnasium task runs as the paper's
tasks do, or is refused naming the argument."""
import os
import shutil
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from tests.helpers import ROOT, check


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


def test_a_dt_that_is_dt0_to_float_error_leaves_the_env_untouched_too():
    env = envs.make_env("Hopper-v5", 0.008 + 1e-12)
    assert env.dt == 0.008 and env.unwrapped.frame_skip == 4 and env.unwrapped.model.opt.timestep == 0.002


def test_envs_py_copied_alone_makes_a_task_without_torch_or_bookkeeping(tmp_path):
    shutil.copy(os.path.join(ROOT, "envs.py"), tmp_path)
    script = ("import sys; sys.modules['torch'] = sys.modules['bookkeeping'] = None\n"  # neither can be imported
              "import envs; print(envs.make_env('Hopper-v5', 0.002).max_steps)")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "4000\n", result.stderr[-500:]


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
    (lambda: envs.make_env("Hopper-v5", None, 1.5), "gamma"), (lambda: envs.make_env("Hopper-v5", None, 0.0), "gamma"),
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


def test_a_paper_task_gives_the_same_observations_and_rewards_as_before():
    # Recorded with the code that knew only the eight paper tasks: Hopper-v5 at δ_lowest and at δ0,
    # seed 7, five fixed actions. Within 1e-12: MuJoCo's last bits follow the CPU's libm, a change of
    # δ, frame skip, reward scale or seed moves them by far more.
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
        assert list(obs) == pytest.approx(last_obs, rel=1e-12, abs=0)
        assert seen == pytest.approx(rewards, rel=1e-12, abs=0)
        assert env.gamma_dt == pytest.approx(gamma_dt, rel=1e-12) and (env.max_steps, env.dt0) == (max_steps, 0.008)
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
