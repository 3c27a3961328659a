"""Helpers the test files share: training a script into tmp_path, reading its rows, fake run folders for
plot.py, and the one-line-error checks that every command's bad input is held to."""
import csv
import json
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import mujoco
import pytest
from gymnasium.utils.env_checker import check_env

import sar_ppo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the project's folder


def check(env):
    """gymnasium's check_env with its defaults: its render and close checks re-create the env from
    env.spec. Every render mode is checked but "human", which opens a window (CI has no display)."""
    env.metadata = {**env.metadata, "render_modes": [m for m in env.metadata.get("render_modes", []) if m != "human"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env)


FAST = ["--num-steps", "1024", "--update-epochs", "2", "--minibatch-size", "256"]


FRESH_WARNINGS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                  ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                  ("ignore", ResourceWarning, "")]  # a fresh interpreter's filters


class Forked:
    """`python path args` (or `python -c prelude path args`) started as a fork of this test process, whose torch,
    gymnasium and MuJoCo are imported already (the imports are half of a tiny run); with the part of Popen's
    interface the tests use. stdin, stdout and stderr are files (default /dev/null)."""

    def __init__(self, path, *args, files=None, prelude=None, env=None, cwd=None, preexec_fn=None):
        self.args, self.returncode = [path, *map(str, args)], None
        with open(os.devnull, "r+b") as devnull:
            sys.stdout.flush()
            sys.stderr.flush()
            self.pid = os.fork()
            if self.pid == 0:  # the child never returns into pytest
                os._exit(forked_child(os.path.join(ROOT, path), self.args[1:], prelude, files or [devnull] * 3, env,
                                      cwd, preexec_fn))

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig):
        if self.poll() is None:
            os.kill(self.pid, sig)

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(0.005)
        return self.returncode


def run_forked(path, *args, stdin=None, timeout=240, **how):
    """subprocess.run(..., capture_output=True, text=True) of a Forked script: its exit status, stdout, stderr."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write((stdin or "").encode())
        given.seek(0)
        child = Forked(path, *args, files=[given, out, err], **how)
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait()
            raise
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(child.args, child.returncode, out.read().decode(), err.read().decode())


def forked_child(path, args, prelude, files, env, cwd, preexec_fn):
    """Runs the script as a fresh interpreter would (its stdio, argv, sys.path, signals, warnings); its exit status."""
    status = 1
    try:
        for fd, f in enumerate(files):
            os.dup2(f.fileno(), fd)
        sys.stdin, sys.stdout, sys.stderr = (open(fd, mode, closefd=False) for fd, mode in enumerate("rww"))
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd:
            os.chdir(cwd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        warnings.resetwarnings()
        for action, category, module in reversed(FRESH_WARNINGS):
            warnings.filterwarnings(action, category=category, module=module)
        if preexec_fn:
            preexec_fn()
        sys.argv = ["-c", path, *args] if prelude else [path, *args]
        sys.path.insert(0, "" if prelude else os.path.dirname(path))
        if prelude:
            exec(prelude, {"__name__": "__main__"})
        else:
            runpy.run_path(path, run_name="__main__")
        status = 0
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 0 if e.code is None else print(e.code, file=sys.stderr) or 1
    except BaseException:  # noqa: BLE001 - as the interpreter would: the traceback, exit status 1
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return status


def train(script, tmp_path, *flags, name="run", check=True):
    result = run_forked(script, "--log-dir", tmp_path, "--run-name", name, *flags)
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rows_of(tmp_path, name="run"):
    return read_csv(os.path.join(tmp_path, name, "progress.csv"))


VARYING = {"wall_time_s", "decisions_per_s", "env_steps_per_s"}


def assert_exits_2_naming(parse_args, flags, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(flags)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err


def fake_run(root, name, final, method="SAR-PPO", dt=0.002, seed=1, rows=10, **config):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(
        {"env_id": "InvertedPendulum-v5", "method": method, "dt": dt, "seed": seed,
         "total_steps": rows * 100, "noise": None, "hold_penalty": False, **config}))
    lines = [",".join(sar_ppo.SCRIPT.columns)]
    for i in range(1, rows + 1):
        row = {c: "" for c in sar_ppo.SCRIPT.columns}
        row.update(decision_steps=i * 100, env_steps=i * 1000, physical_time_s=i * 2.0, wall_time_s=i,
                   return_mean=final if i > rows // 2 else 0.0, action_duration_mean_s=0.02)
        lines.append(",".join(str(row[c]) for c in sar_ppo.SCRIPT.columns))
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")


TINY = ["--num-steps", "256", "--update-epochs", "1", "--minibatch-size", "128"]


def copy_of(run, tmp_path, checkpoint=True):
    shutil.copytree(run, tmp_path / "run")
    if not checkpoint:
        (tmp_path / "run" / "checkpoint.pt").unlink()
    return tmp_path / "run"


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
    (["--eval-every-s", "0"], "--eval-every-s"), (["--eval-every", "2", "--eval-every-s", "60"], "--eval-every-s"),
]


def rendering_unavailable():
    """Why MuJoCo cannot render headless here (None if it can)."""
    try:
        context = mujoco.GLContext(8, 8)
        context.make_current()
        context.free()
    except Exception as e:  # no EGL/OSMesa library or device
        return f"MUJOCO_GL={os.environ.get('MUJOCO_GL')} cannot render: {type(e).__name__}: {e}"
    return None


BENCHMARK = os.path.join(ROOT, "benchmark")


def exits_2_with_one_line(call, named, capsys):
    """`call()` stops before any work with exit status 2 and one line on stderr holding `named`."""
    with pytest.raises(SystemExit) as exit_info:
        call()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err, err


def run_python(path, *args, stdin=None, env=None, timeout=120):
    return run_forked(path, *args, stdin=stdin, env=env, timeout=timeout)


PG_TINY = ["--envs", "InvertedPendulum-v5", "--dts", "original", "--methods", "VPG", "PPO", "--burn-in", "2",
           "--trajectories", "3", "--policies", "1", "--workers", "1"]


def damaged(run, name, data):
    (run / name).write_bytes(data)
    return run


# Toy tasks registered in the child process: a negative own dt, a non-finite observation (after a step, at the
# reset, or in evaluation only), a non-finite reward, no time limit.
TOYS = '''
import runpy, sys
import gymnasium as gym
import numpy as np
class Toy(gym.Env):
    observation_space, action_space = gym.spaces.Box(-1, 1, (2,)), gym.spaces.Box(-1, 1, (1,))
    dt, bad = 0.01, None
    def reset(self, seed=None, options=None):
        return np.full(2, np.nan if self.bad == "reset" else 0.0, np.float32), {}
    def step(self, action):
        obs = np.full(2, np.nan if self.bad == "obs" else 0.0, np.float32)
        return obs, float("nan") if self.bad == "reward" else 0.0, False, False, {}
gym.register("NegativeDt-v0", entry_point=type("NegativeDt", (Toy,), {"dt": -0.01}), max_episode_steps=100)
gym.register("NanObservation-v0", entry_point=type("NanObservation", (Toy,), {"bad": "obs"}), max_episode_steps=100)
gym.register("NanReward-v0", entry_point=type("NanReward", (Toy,), {"bad": "reward"}), max_episode_steps=100)
gym.register("NanReset-v0", entry_point=type("NanReset", (Toy,), {"bad": "reset"}), max_episode_steps=100)
gym.register("NoLimit-v0", entry_point=Toy)  # no time limit
class NanInEvaluation(Toy):  # finite in training; not finite in the evaluation's episodes (their seeds: 10,000 on)
    def reset(self, seed=None, options=None):
        if seed is not None:
            self.bad = "obs" if seed >= 10_000 else None
        return np.zeros(2, np.float32), {}
gym.register("NanInEvaluation-v0", entry_point=NanInEvaluation, max_episode_steps=100)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''
