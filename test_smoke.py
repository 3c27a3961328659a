"""The smoke test: each training script trains a couple of updates of InvertedPendulum-v5 at δ_lowest and
writes its run folder (config.json, progress.csv, checkpoint.pt) as the logs' contract says. The rest of the
suite, by subject, is in tests/; `python -m pytest -q -n auto` runs both."""
import json
import os
import subprocess
import sys

import pytest

import sar_ppo
from tests.helpers import FAST, ROOT, read_csv, rows_of, train


def test_sar_run_writes_spec_logs_with_durations_between_dt_and_max_t(tmp_path):
    train("sar_ppo.py", tmp_path, "--total-steps", "4096", "--eval-every", "4", "--eval-episodes", "1", *FAST)
    with open(os.path.join(tmp_path, "run", "progress.csv")) as f:
        assert f.readline().strip().split(",") == sar_ppo.SCRIPT.columns
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


def test_figar_run_writes_spec_logs_with_durations_between_dt_and_max_t(tmp_path):
    train("figar_ppo.py", tmp_path, "--total-steps", "4096", *FAST)
    with open(os.path.join(tmp_path, "run", "progress.csv")) as f:
        assert f.readline().strip().split(",") == sar_ppo.SCRIPT.columns
    rows = rows_of(tmp_path)
    assert [int(r["decision_steps"]) for r in rows] == [1024, 2048, 3072, 4096]
    for r in rows:
        assert 2e-3 <= float(r["action_duration_mean_s"]) <= 0.05 and r["safe_radius_mean"] == ""
        assert int(r["env_steps"]) > int(r["decision_steps"])
    with open(os.path.join(tmp_path, "run", "config.json")) as f:
        assert json.load(f)["method"] == "FiGAR-C-PPO"


TRPO_FAST = ["--num-steps", "512", "--vf-minibatch-size", "128"]


@pytest.mark.parametrize("script,flags,method,slug", [
    ("sar_trpo.py", [], "SAR-TRPO", "sar-trpo"), ("figar_trpo.py", [], "FiGAR-C-TRPO", "figar-trpo"),
    ("sar_trpo.py", ["--no-repeat"], "TRPO", "trpo")])
def test_trpo_scripts_train_inverted_pendulum_at_lowest_dt_and_write_the_ppo_pairs_files(tmp_path, script, flags,
                                                                                          method, slug):
    result = subprocess.run([sys.executable, os.path.join(ROOT, script), "--log-dir", str(tmp_path), "--total-steps",
                             "1024", *TRPO_FAST, *flags], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / f"InvertedPendulum-v5__{slug}__dt0.002__s1"
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pt", "config.json", "progress.csv"]
    with open(run / "progress.csv") as f:
        assert f.readline().strip().split(",") == sar_ppo.SCRIPT.columns + ["step_fraction"]
    rows = read_csv(run / "progress.csv")
    assert [int(r["decision_steps"]) for r in rows] == [512, 1024] and rows[0]["clip_fraction"] == ""
    for r in rows:
        assert 0 <= float(r["approx_kl"]) <= 1.5 * 0.01 and 0 <= float(r["step_fraction"]) <= 1
        duration = float(r["action_duration_mean_s"])
        assert duration == 2e-3 if "--no-repeat" in flags else 2e-3 < duration <= 0.05
    assert json.loads((run / "config.json").read_text())["method"] == method
