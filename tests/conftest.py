"""Fixtures the test files share: a finished tiny run (and a copy of it with its model.pt), one torch thread,
the Stable-Baselines3 example (skipped without stable-baselines3). pytest.ini keeps only a failed test's
temporary folder, and one session's at most."""
import os
import shutil
import warnings

os.environ.setdefault("MUJOCO_GL", "egl")  # check_env renders; EGL needs no display; before mujoco is imported

import pytest
import torch

from tests.helpers import TINY, copy_of, train

warnings.filterwarnings("ignore", module="gymnasium")


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """A finished run of 2 updates (512 decisions) with its checkpoint; tests copy it."""
    root = tmp_path_factory.mktemp("tiny")
    train("sar_ppo.py", root, "--total-steps", "512", *TINY)
    return root / "run"


@pytest.fixture
def one_thread():  # as the scripts run; two threads on a busy machine are several times slower here
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def model_run(tiny_run, tmp_path):
    """A copy of the tiny run whose checkpoint.pt is its model.pt (it holds the same keys)."""
    run = copy_of(tiny_run, tmp_path)
    shutil.copy(run / "checkpoint.pt", run / "model.pt")
    return run


@pytest.fixture(scope="session")
def sb3_sar():
    """examples/sb3_sar.py, the Stable-Baselines3 recipe (stable-baselines3 from benchmark/requirements.txt)."""
    pytest.importorskip("stable_baselines3", reason="pip install -r benchmark/requirements.txt (CI does)")
    from examples import sb3_sar
    return sb3_sar

