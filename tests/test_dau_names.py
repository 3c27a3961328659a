"""dau.py's run names and --resume: the default name carries its budget (two budgets, two runs), a resume
with another budget says which run it would start and how to extend the existing one, a run named for its
budget is never extended under that name, every flag not given takes the run's own value, and the committed
runs named before names carried their budget are still found by their own commands."""
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

import dau
from tests.helpers import run_forked

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--num-envs", "4", "--train-every", "5", "--gradient-steps", "3", "--batch-size", "16"]
NAME = "InvertedPendulum-v5__dau-norm__dt0.002__T{}__s1"  # δ_lowest, seed 1


def dau_main(log_dir, *flags):
    """dau.py forked from this process (a run folder's lock is its process's): (exit status, stdout, stderr)."""
    result = run_forked("dau.py", "--log-dir", log_dir, *flags)
    return result.returncode, result.stdout, result.stderr


def config(folder):
    return json.loads((folder / "config.json").read_text())


def test_two_budgets_are_two_runs_each_named_for_its_own(tmp_path):
    for seconds in ("0.04", "0.08"):  # one row, then two rows of 4 envs × 5 steps at 2 ms
        status, out, err = dau_main(tmp_path, "--physical-time", seconds, *SMALL)
        assert status == 0, err
    assert sorted(os.listdir(tmp_path)) == [NAME.format("0.04"), NAME.format("0.08")]
    for seconds in ("0.04", "0.08"):
        assert config(tmp_path / NAME.format(seconds))["physical_time"] == float(seconds)


def test_a_resume_with_another_budget_names_the_run_it_would_start_and_how_to_extend_the_old(tmp_path):
    assert dau_main(tmp_path, "--physical-time", "0.04", *SMALL)[0] == 0
    status, out, err = dau_main(tmp_path, "--physical-time", "0.08", *SMALL, "--resume")
    assert status == 2 and err.count("\n") == 1 and out == "", err
    assert f"no run in {tmp_path / NAME.format('0.08')} to continue" in err
    assert f"{NAME.format('0.04')} is this run with --physical-time 0.04" in err
    assert f"rename its folder to {NAME.format('0.08')} first" in err and "leave out --resume" in err
    assert os.listdir(tmp_path) == [NAME.format("0.04")]  # nothing started
    # the same run under its own name: a larger budget would make the name untrue
    status, out, err = dau_main(tmp_path, "--physical-time", "0.08", *SMALL, "--resume",
                                "--run-name", NAME.format("0.04"))
    assert status == 2 and err.count("\n") == 1 and f"{NAME.format('0.04')} is named for its 0.04 s" in err
    # renamed as the message says, it continues to its new budget under a true name
    os.rename(tmp_path / NAME.format("0.04"), tmp_path / NAME.format("0.08"))
    status, out, err = dau_main(tmp_path, "--physical-time", "0.08", *SMALL, "--resume")
    assert status == 0 and "was made with --physical-time 0.04 s; it now ends at 0.08 s" in out, err
    assert config(tmp_path / NAME.format("0.08"))["physical_time"] == 0.08
    assert len((tmp_path / NAME.format("0.08") / "progress.csv").read_text().splitlines()) == 1 + 2


def test_a_resume_of_a_budget_never_made_starts_it_as_a_run_list_does(tmp_path):
    status, out, err = dau_main(tmp_path, "--physical-time", "0.04", *SMALL, "--resume")
    assert status == 0 and f"no run in {tmp_path / NAME.format('0.04')} yet; starting it" in out, err


def test_resume_takes_every_flag_not_given_from_the_run_and_refuses_one_given_otherwise(tmp_path):
    made = ["--env-id", "Hopper-v5", "--dt", "0.004", "--physical-time", "0.08", *SMALL, "--ou-sigma", "1.2",
            "--gamma", "0.98", "--seed", "3", "--run-name", "run"]
    assert dau_main(tmp_path, *made)[0] == 0
    status, out, err = dau_main(tmp_path, "--run-name", "run", "--resume")  # its own budget: finished
    assert status == 0 and "is finished" in out, err
    status, out, err = dau_main(tmp_path, "--run-name", "run", "--resume", "--physical-time", "0.16")
    assert status == 0 and "it now ends at 0.16 s" in out, err
    kept = config(tmp_path / "run")
    assert (kept["env_id"], kept["dt"], kept["num_envs"], kept["ou_sigma"], kept["gamma"], kept["seed"]) == (
        "Hopper-v5", 0.004, 4, 1.2, 0.98, 3)
    assert len((tmp_path / "run" / "progress.csv").read_text().splitlines()) == 1 + 2
    status, out, err = dau_main(tmp_path, "--run-name", "run", "--resume", "--physical-time", "0.2", "--num-envs", "8")
    assert status == 2 and err.count("\n") == 1 and "--num-envs: " in err, err
    assert "was made with --num-envs 4, not 8" in err


@pytest.mark.parametrize("script", ["fig4_dau.sh", "fig4_dau_norm.sh"])
def test_every_committed_run_is_found_by_its_own_command(script):
    # named before names carried their budget: <env>__dau[-norm]__dt<δ>__s<seed>, in results/runs
    commands = subprocess.run(["bash", os.path.join(ROOT, "benchmark", script), "--list"], capture_output=True,
                              text=True, cwd=ROOT, check=True).stdout.splitlines()
    assert len(commands) == 54
    cwd = os.getcwd()
    os.chdir(ROOT)  # the lists' --log-dir results/runs
    try:
        found = [dau.parse_args(shlex.split(command)[2:]) for command in commands]
    finally:
        os.chdir(cwd)
    for args in found:
        assert "__T" not in args.run_name, args.run_name
        made = config(Path(ROOT, args.log_dir, args.run_name))
        assert made["physical_time"] == args.physical_time and made["seed"] == args.seed
