"""bookkeeping.py, the run's folder shared by every training script, tested directly: the lock, whole-or-nothing
writes, a diverged loss, exact resume of one env and of many (Ant's positions read before a step included), and
that no training script carries a copy of it."""
import argparse
import ast
import errno
import io
import math
import os

import numpy as np
import pytest
import torch

import arp_ppo
import bookkeeping
import dau
import envs
import figar_ppo
import figar_trpo
import sar_ppo
import sar_trpo
from tests.helpers import ROOT

SCRIPTS = ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "arp_ppo.py", "dau.py"]


def test_a_fresh_start_refuses_a_run_another_process_made_while_it_took_the_lock(tmp_path, monkeypatch, capsys):
    args = sar_ppo.parse_args(["--log-dir", str(tmp_path), "--run-name", "run"])
    real_flock = bookkeeping.fcntl.flock

    def flock_after_another_run(fd, flags):  # another process's run lands between the first check and the lock
        (tmp_path / "run" / "progress.csv").write_text("theirs")
        return real_flock(fd, flags)

    monkeypatch.setattr(bookkeeping.fcntl, "flock", flock_after_another_run)
    with pytest.raises(SystemExit) as exit_info:
        bookkeeping.open_run(args, [], sar_ppo.SCRIPT, {}, {}, np.random.default_rng(0))
    assert exit_info.value.code == 2 and "exists" in capsys.readouterr().err
    assert (tmp_path / "run" / "progress.csv").read_text() == "theirs"


def test_a_run_folder_held_by_another_process_is_refused_in_one_line(tmp_path, capsys):
    args = dau.parse_args(["--log-dir", str(tmp_path), "--run-name", "run"])
    os.makedirs(tmp_path / "run")
    fd = os.open(tmp_path / "run", os.O_RDONLY)
    bookkeeping.fcntl.flock(os.open(tmp_path / "run", os.O_RDONLY), bookkeeping.fcntl.LOCK_EX)  # another open file
    try:
        with pytest.raises(SystemExit) as exit_info:
            bookkeeping.open_run(args, [], dau.SCRIPT, {}, {})
    finally:
        os.close(fd)
    assert exit_info.value.code == 2 and "being trained by another process" in capsys.readouterr().err


@pytest.mark.parametrize("data", ['{"new": 2}', {"new": torch.ones(3)}])
def test_a_failed_write_leaves_the_old_file_its_mode_and_no_temporary(tmp_path, monkeypatch, data):
    path = str(tmp_path / "config.json")
    bookkeeping.save_atomic(path, '{"old": 1}')
    os.chmod(path, 0o640)

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(bookkeeping.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left") as error:
        bookkeeping.save_atomic(path, data)
    assert error.value.filename == path  # the file meant, not its temporary
    assert open(path).read() == '{"old": 1}' and os.listdir(tmp_path) == ["config.json"]
    monkeypatch.undo()
    bookkeeping.save_atomic(path, '{"new": 2}')
    assert open(path).read() == '{"new": 2}' and os.stat(path).st_mode & 0o777 == 0o640


EVERY_UPDATE = argparse.Namespace(checkpoint_every=1, total_steps=10, physical_time=None)  # a checkpoint each row


def test_diverging_loss_stops_before_a_nan_row_or_checkpoint(tmp_path):
    run = {"dir": str(tmp_path), "counters": {"update": 3}, "rows": [], "script": sar_ppo.SCRIPT}
    with pytest.raises(SystemExit) as exit_info:
        bookkeeping.log_row(run, EVERY_UPDATE, {"policy_loss": math.nan, "value_loss": 0.5})
    assert "diverged in update 3" in str(exit_info.value.code) and "--learning-rate" in str(exit_info.value.code)
    assert run["rows"] == [] and list(tmp_path.iterdir()) == []
    run.update(counters={"row": 7}, script=dau.SCRIPT)
    with pytest.raises(SystemExit) as exit_info:
        bookkeeping.log_row(run, EVERY_UPDATE, {"policy_loss": 0.1, "value_loss": math.inf})
    assert "diverged in row 7" in str(exit_info.value.code) and "a smaller --learning-rate" in str(exit_info.value.code)


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo, sar_trpo, figar_trpo])
def test_the_episode_state_of_every_paper_task_loads_with_weights_only(module):
    # Hopper's wrappers hold numpy scalars (DtEnv's episode return), which torch.load(weights_only=True) refuses
    args = module.parse_args(["--env-id", "Hopper-v5", "--noise", "ext-force", "--hold-penalty"])
    env, _ = module.make_decision_env(args)
    raw_obs, _ = env.reset(seed=0)
    for _ in range(3):
        raw_obs, *_ = env.step(env.action_space.sample())
    buffer = io.BytesIO()
    episode = bookkeeping.episode_now(env, (raw_obs, raw_obs.astype(np.float32), np.float64(1.5), 0.5))
    torch.save(episode, buffer)
    saved = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)["episode"]
    assert saved["returns"] == [1.5, 0.5] and isinstance(saved["layers"][-1]["episode_return"], float)


def steps(env, actions):
    return [env.step(a)[:2] for a in actions]


@pytest.mark.parametrize("env_id", ["Ant-v5", "Hopper-v5"])
def test_one_env_resumes_exactly_even_where_the_task_reads_positions_before_a_step(env_id):
    # Ant's reward reads data.xpos, left by the step before: a restored simulator alone gives a wrong first reward
    env = envs.make_env(env_id, "lowest")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, env.action_space.shape) for _ in range(30)]
    steps(env, actions[:10])
    saved = torch.load(io.BytesIO(save(bookkeeping.env_state(env))), weights_only=True)
    expected = steps(env, actions[10:])
    other = envs.make_env(env_id, "lowest")
    other.reset(seed=5)
    steps(other, actions[:3])  # elsewhere in another episode
    bookkeeping.restore_env(other, saved)
    for (obs, r), (obs_then, r_then) in zip(steps(other, actions[10:]), expected):
        assert np.array_equal(obs, obs_then) and r == r_then


def save(state):
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def test_dau_many_envs_resume_exactly_with_their_observations():
    made = [envs.make_env("Hopper-v5", "lowest") for _ in range(3)]
    obs = np.stack([e.reset(seed=i)[0] for i, e in enumerate(made)])
    saved = torch.load(io.BytesIO(save(dau.envs_now(made, obs))), weights_only=True)["envs"]
    action = np.full(made[0].action_space.shape, 0.3)
    expected = [steps(e, [action] * 5) for e in made]
    fresh = [envs.make_env("Hopper-v5", "lowest") for _ in range(3)]
    for e in fresh:
        e.reset(seed=99)
    assert np.array_equal(dau.restore_envs_from(saved, fresh), obs)
    for e, then in zip(fresh, expected):
        assert all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(steps(e, [action] * 5), then))


def test_no_training_script_defines_its_own_copy_of_the_bookkeeping():
    shared = {node.name for node in ast.parse(open(os.path.join(ROOT, "bookkeeping.py")).read()).body
              if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    shared |= {node.name for node in ast.parse(open(os.path.join(ROOT, "flags.py")).read()).body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert {"open_or_resume", "log_and_checkpoint", "end", "save_atomic", "fail", "within", "restore_env"} <= shared
    for script in SCRIPTS:
        tree = ast.parse(open(os.path.join(ROOT, script)).read())
        own = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        assert own & shared == set(), f"{script} defines {own & shared}: use bookkeeping's"
        imported = {alias.name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in node.names}
        assert "bookkeeping" in imported and not {"fcntl", "subprocess", "mujoco"} & imported, script


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo, sar_trpo, figar_trpo, arp_ppo])
def test_each_wrapper_keeps_the_episode_state_it_kept_before_it_had_a_state_method(module):
    # a checkpoint made before state()/restore() saved these attributes of each layer: the same keys, in order
    old_attributes = ("obs", "force", "last_action", "held", "episode_return", "episode_length")
    args = module.parse_args(["--env-id", "Hopper-v5", "--noise", "ext-force", "--hold-penalty"])
    env, _ = module.make_decision_env(args)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    layers, layer = [], env
    while layer is not env.unwrapped:
        layers.append(sorted(k for k in vars(layer) if k in old_attributes))
        layer = layer.env
    assert [sorted(layer) for layer in envs.env_state(env)["layers"]] == layers


def test_bookkeeping_knows_no_method():
    text = open(os.path.join(ROOT, "bookkeeping.py")).read()
    for word in ("SAR", "FiGAR", "TaCoS", "radius", "script_of", "EPISODE_ATTRIBUTES", "safe_radius"):
        assert word not in text, word
    assert len(text.splitlines()) <= 480


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "arp_ppo.py"])
def test_main_shows_its_loop_and_at_most_five_calls_into_bookkeeping(script):
    tree = ast.parse(open(os.path.join(ROOT, script)).read())
    main = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main")
    loops = [node for node in main.body if isinstance(node, ast.While)]
    assert loops and "bookkeeping" not in ast.unparse(loops[0].test)  # its bound, in main
    calls = {node.func.attr for node in ast.walk(main) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", None) == "bookkeeping"}
    assert len(calls) <= 5, calls
