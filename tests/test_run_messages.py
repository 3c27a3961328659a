"""What a training run says and does at its edges: a folder made by another process meanwhile, an environment that
fails, a budget changed on --resume (its kind kept), a folder of other files, a model written on a finished run, an
update with no episode, a failed write."""
import fcntl
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
import torch

import envs
from tests.helpers import ROOT, TOYS, Forked, rows_of, run_forked

SCRIPTS = ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "arp_ppo.py"]
TINY = {"sar_trpo.py": ["--num-steps", "256", "--vf-minibatch-size", "128"],
        "figar_trpo.py": ["--num-steps", "256", "--vf-minibatch-size", "128"]}
PPO_TINY = ["--num-steps", "256", "--update-epochs", "1", "--minibatch-size", "128"]

def run(script, log_dir, *flags, toys=False, preexec_fn=None):
    return run_forked(script, "--log-dir", log_dir, "--run-name", "run", *flags, prelude=TOYS if toys else None,
                      cwd=ROOT, preexec_fn=preexec_fn)


def tiny(script):
    return TINY.get(script, PPO_TINY)


def test_a_task_whose_own_dt_is_negative_is_refused_in_one_line(tmp_path):
    result = run("sar_ppo.py", tmp_path, "--env-id", "NegativeDt-v0", toys=True)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--env-id: NegativeDt-v0's own dt is -0.01" in result.stderr and not tmp_path.joinpath("run").exists()


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("env_id,named", [("NanObservation-v0", "observation: not finite"),
                                          ("NanReward-v0", "reward: not finite")])
def test_a_non_finite_observation_or_reward_ends_the_run_in_one_line_naming_it(tmp_path, script, env_id, named):
    flags = ["--env-id", env_id, "--dt", "0.01", "--total-steps", "512", *tiny(script)]
    if script == "sar_trpo.py":
        flags += ["--no-repeat"]  # the plain learner, whose repetition wrapper takes one δ-step
    if script == "arp_ppo.py":
        flags += ["--arp-p", "1", "--arp-alpha", "0.5"]
    result = run(script, tmp_path, *flags, toys=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert named in result.stderr and "the environment failed in update 1" in result.stderr
    assert "diverged" not in result.stderr


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_non_finite_observation_in_an_evaluation_names_the_update_it_ends(tmp_path, script):
    flags = ["--env-id", "NanInEvaluation-v0", "--dt", "0.01", "--total-steps", "512", "--eval-every", "1",
             *tiny(script)]
    if script == "arp_ppo.py":
        flags += ["--arp-p", "1", "--arp-alpha", "0.5"]
    result = run(script, tmp_path, *flags, toys=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "the environment failed in update 1 (observation: not finite" in result.stderr, result.stderr
    assert not (tmp_path / "run" / "progress.csv").read_text().split("\n")[1]  # no row of update 1


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_resume_that_changes_the_budget_says_so_in_one_line_and_keeps_its_kind(tmp_path, script):
    flags = ["--total-steps", "256", *tiny(script)]
    assert run(script, tmp_path, *flags).returncode == 0
    longer = run(script, tmp_path, *flags[2:], "--total-steps", "512", "--resume")
    assert longer.returncode == 0 and "was made with --total-steps 256; it now ends at 512" in longer.stdout
    shorter = run(script, tmp_path, *flags[2:], "--total-steps", "256", "--resume")
    assert shorter.returncode == 0 and "it now ends at" not in shorter.stdout  # it ended already: one line says so
    assert "is finished: 512 decisions reach --total-steps 256; nothing to do" in shorter.stdout
    same = run(script, tmp_path, *flags[2:], "--total-steps", "512", "--resume")
    assert "was made with" not in same.stdout
    other = run(script, tmp_path, *flags[2:], "--physical-time", "9", "--resume")  # the other kind of budget
    assert other.returncode == 2 and other.stderr.count("\n") == 1
    assert "--physical-time: " in other.stderr and "was made with --total-steps; a run keeps" in other.stderr


@pytest.mark.parametrize("script", ["sar_ppo.py", "dau.py"])
@pytest.mark.parametrize("resume", [[], ["--resume"]])
def test_a_folder_of_other_files_is_refused_as_a_run_folder_and_left_as_it_was(tmp_path, script, resume):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    result = run(script, tmp_path, *resume)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "holds files that are not a run's (notes.txt)" in result.stderr
    assert os.listdir(tmp_path / "run") == ["notes.txt"]


def test_resuming_another_scripts_run_names_the_script_that_made_it(tmp_path):
    assert run("sar_ppo.py", tmp_path, "--total-steps", "256", *PPO_TINY).returncode == 0
    for script, flags in [("figar_ppo.py", PPO_TINY), ("sar_trpo.py", TINY["sar_trpo.py"]), ("dau.py", [])]:
        result = run(script, tmp_path, *flags, "--resume")
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "is a SAR-PPO run, made by sar_ppo.py; resume it with sar_ppo.py" in result.stderr


def test_save_model_on_a_finished_run_says_it_wrote_the_model(tmp_path):
    flags = ["--total-steps", "256", *PPO_TINY]
    assert run("sar_ppo.py", tmp_path, *flags).returncode == 0
    result = run("sar_ppo.py", tmp_path, *flags, "--resume", "--save-model")
    assert result.returncode == 0 and "wrote model.pt from its checkpoint" in result.stdout
    assert "nothing to do" not in result.stdout and (tmp_path / "run" / "model.pt").exists()
    assert set(torch.load(tmp_path / "run" / "model.pt", weights_only=True)) == {"agent", "obs_rms", "repetition_stats",
                                                                                  "config"}


@pytest.mark.parametrize("script,flags", [("sar_ppo.py", ["--no-repeat"]), ("figar_ppo.py", []),
                                          ("arp_ppo.py", [])])
def test_a_progress_line_has_no_nan_to_decode(tmp_path, script, flags):
    # 32 decisions an update at 2 ms: InvertedPendulum's first episodes outlast some updates
    result = run(script, tmp_path, "--total-steps", "256", "--num-steps", "32", "--minibatch-size", "16", *flags)
    lines = [line for line in result.stdout.splitlines() if line.startswith("update ")]
    assert result.returncode == 0 and len(lines) == 8
    assert not any("nan" in line for line in lines) and any("| return " in line for line in lines)
    if script != "figar_ppo.py":  # one δ-step a decision: the first episodes outlast an update
        assert any("no episode ended" in line for line in lines)
    assert not any("radius" in line for line in lines)  # none of these methods has a safe radius


def test_sar_progress_lines_show_the_safe_radius(tmp_path):
    result = run("sar_ppo.py", tmp_path, "--total-steps", "64", "--num-steps", "32", "--minibatch-size", "16")
    assert result.returncode == 0 and all("| radius 0." in line for line in result.stdout.splitlines()
                                          if line.startswith("update "))


def full_disk():  # writes past 64 kB fail with EFBIG (Python ignores SIGXFSZ)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_failed_write_on_resume_does_not_advise_adding_resume_again(tmp_path):
    flags = ["--total-steps", "256", *PPO_TINY]
    assert run("sar_ppo.py", tmp_path, *flags).returncode == 0
    result = run("sar_ppo.py", tmp_path, *flags[2:], "--total-steps", "512", "--resume", preexec_fn=full_disk)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "continue the run with the same command" in result.stderr and "plus --resume" not in result.stderr
    fresh = run("sar_ppo.py", tmp_path / "other", *flags, preexec_fn=full_disk)
    assert fresh.returncode == 1 and "the same command plus --resume" in fresh.stderr


@pytest.mark.parametrize("script,flags,named", [
    ("sar_trpo.py", ["--num-steps", "2"], "--num-steps/--vf-minibatch-size: --vf-minibatch-size 128 must not exceed "
                                          "--num-steps 2"),
    ("figar_trpo.py", ["--num-steps", "64"], "--vf-minibatch-size 128 must not exceed --num-steps 64"),
    ("sar_ppo.py", ["--num-steps", "32"], "--num-steps/--minibatch-size: --minibatch-size 64 must not exceed "
                                          "--num-steps 32"),
    ("arp_ppo.py", ["--num-steps", "65"], "--num-steps/--minibatch-size: 65 decisions in minibatches of 64")])
def test_a_num_steps_below_a_default_minibatch_names_the_flag_given(tmp_path, script, flags, named):
    result = run(script, tmp_path, *flags)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr


def test_envs_task_refuses_an_own_dt_that_is_not_seconds():
    class Weird(gym.Env):
        observation_space, action_space = gym.spaces.Box(-1, 1, (2,)), gym.spaces.Box(-1, 1, (1,))
        dt = "fast"

        def reset(self, seed=None, options=None):
            return np.zeros(2, np.float32), {}

    gym.register("WeirdDt-v0", entry_point=Weird, max_episode_steps=10)
    with pytest.raises(ValueError, match="^env_id: WeirdDt-v0's own dt is 'fast'"):
        envs.task("WeirdDt-v0")


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "arp_ppo.py"])
def test_a_non_finite_observation_at_the_first_reset_is_one_line_naming_the_observation(tmp_path, script):
    result = run(script, tmp_path, "--env-id", "NanReset-v0", *(["--arp-p", "1", "--arp-alpha", "0.5"]
                                                              if script == "arp_ppo.py" else []), toys=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "the environment failed in update 1 (observation: not finite" in result.stderr


def test_a_run_without_its_checkpoint_is_not_sent_to_resume_it_cannot_do(tmp_path):
    flags = ["--total-steps", "256", *tiny("sar_ppo.py")]
    assert run("sar_ppo.py", tmp_path, *flags).returncode == 0
    (tmp_path / "run" / "checkpoint.pt").unlink()  # as a committed run in a clone
    again = run("sar_ppo.py", tmp_path, "--total-steps", "512", *flags[2:])
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "--resume" not in again.stderr
    assert "exists without a checkpoint.pt to train further from, finished by its own budget" in again.stderr


def test_a_tiny_run_resumed_without_a_budget_keeps_its_own_and_a_fresh_start_says_it_is_finished(tmp_path):
    flags = tiny("figar_ppo.py")
    assert run("figar_ppo.py", tmp_path, "--total-steps", "256", *flags).returncode == 0
    again = run("figar_ppo.py", tmp_path, *flags)  # the plain command: refused, saying why
    assert again.returncode == 2
    assert "exists, finished by its own budget: 256 decisions reach --total-steps 256" in again.stderr
    assert "--resume to continue it (with a larger budget to train it further" in again.stderr
    resumed = run("figar_ppo.py", tmp_path, *flags, "--resume")  # no budget given: the run's own, not 1,000,000
    assert resumed.returncode == 0 and "is finished: 256 decisions reach --total-steps 256" in resumed.stdout
    longer = run("figar_ppo.py", tmp_path, *flags, "--total-steps", "512", "--resume")  # given: taken, and said
    assert longer.returncode == 0 and "it now ends at 512" in longer.stdout
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["total_steps"] == 512 and rows_of(tmp_path)[-1]["decision_steps"] == "512"
    shorter = run("figar_ppo.py", tmp_path, *flags, "--total-steps", "256", "--resume")
    assert shorter.returncode == 0 and json.loads((tmp_path / "run" / "config.json").read_text()) == config


def test_a_resumed_run_keeps_its_evaluation_schedule_unless_the_command_line_gives_one(tmp_path):
    flags = [*tiny("sar_ppo.py"), "--dt", "0.04", "--eval-episodes", "1"]
    assert run("sar_ppo.py", tmp_path, *flags, "--total-steps", "512", "--eval-every-s", "15").returncode == 0
    assert run("sar_ppo.py", tmp_path, *flags, "--total-steps", "768", "--resume").returncode == 0
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["eval_every_s"] == 15 and config["eval_every"] == 0
    switched = run("sar_ppo.py", tmp_path, *flags, "--total-steps", "1024", "--eval-every", "1", "--resume")
    assert switched.returncode == 0 and "evaluated every 15 s of physical time; it now evaluates every 1 update\n" in (
        switched.stdout)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["eval_every_s"] is None and config["eval_every"] == 1
    assert rows_of(tmp_path)[-1]["eval_return_mean"] != ""


def test_a_run_folder_that_is_a_file_is_refused_as_one(tmp_path):
    (tmp_path / "run").write_text("not a folder")
    result = run("sar_ppo.py", tmp_path, "--resume")
    assert result.returncode == 2 and "is a file, not a run folder" in result.stderr


def test_a_config_that_is_json_but_not_an_object_is_one_line_on_resume(tmp_path):
    flags = ["--total-steps", "256", *tiny("sar_ppo.py")]
    assert run("sar_ppo.py", tmp_path, *flags).returncode == 0
    (tmp_path / "run" / "checkpoint.pt").unlink()  # as in a clone
    (tmp_path / "run" / "config.json").write_text("[1, 2]")
    result = run("sar_ppo.py", tmp_path, *flags, "--resume")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "config.json" in result.stderr


def test_the_progress_lines_speeds_are_progress_csvs_and_say_which_clock(tmp_path):
    result = run("sar_ppo.py", tmp_path, "--total-steps", "256", "--no-repeat", *PPO_TINY)
    line = result.stdout.strip().splitlines()[-1]
    row = rows_of(tmp_path)[-1]
    parts = {part.split(" ", 1)[1]: part.split()[0] for part in line.split(" | ") if "/s" in part}
    assert result.returncode == 0 and parts == {"decisions/s": f"{float(row['decisions_per_s']):.0f}",
                                                "δ-steps/s in the rollout": f"{float(row['env_steps_per_s']):.0f}"}


@pytest.mark.parametrize("script,copy,flags", [("sar_ppo.py", "my_sar.py", []),
                                               ("figar_ppo.py", "tacos_mine.py", ["--switch-cost", "0.1"])])
def test_a_renamed_copy_of_a_script_resumes_its_own_runs(tmp_path, script, copy, flags):
    shutil.copy(os.path.join(ROOT, script), tmp_path / copy)
    command = [sys.executable, str(tmp_path / copy), "--log-dir", str(tmp_path), *PPO_TINY, *flags]
    environment = {**os.environ, "PYTHONPATH": ROOT}  # bookkeeping.py, envs.py beside the original
    first = subprocess.run([*command, "--total-steps", "256"], capture_output=True, text=True, env=environment)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([*command, "--total-steps", "512", "--resume"], capture_output=True, text=True,
                           env=environment)
    assert again.returncode == 0 and "it now ends at 512" in again.stdout, again.stderr
    config = json.loads(next(tmp_path.glob("*__s1/config.json")).read_text())
    assert config["script"] == copy and config["total_steps"] == 512


def test_a_plain_resume_continues_the_run_as_it_was_made(tmp_path):
    made = ["--env-id", "InvertedPendulum-v5", "--total-steps", "256", "--num-steps", "128", "--update-epochs", "1",
            "--minibatch-size", "64", "--gamma", "0.98", "--learning-rate", "0.0003"]
    assert run("sar_ppo.py", tmp_path, *made).returncode == 0
    plain = run("sar_ppo.py", tmp_path, "--resume")  # every flag not given: the run's own, its budget too
    assert plain.returncode == 0 and "is finished: 256 decisions reach --total-steps 256" in plain.stdout, plain.stderr
    changed = run("sar_ppo.py", tmp_path, "--resume", "--num-steps", "256")
    assert changed.returncode == 2 and changed.stderr.count("\n") == 1, changed.stderr
    assert "--num-steps: " in changed.stderr and "was made with --num-steps 128, not 256" in changed.stderr
    longer = run("sar_ppo.py", tmp_path, "--resume", "--total-steps", "512")  # a larger budget: taken, and said
    assert longer.returncode == 0 and "it now ends at 512" in longer.stdout, longer.stderr
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (config["num_steps"], config["gamma"], config["learning_rate"], config["total_steps"]) == (
        128, 0.98, 0.0003, 512)
    assert [row["decision_steps"] for row in rows_of(tmp_path)] == ["128", "256", "384", "512"]


def test_a_physical_time_resume_never_passes_over_the_run_of_another_budget(tmp_path):
    flags = ["--env-id", "InvertedPendulum-v5", "--dt", "0.04", "--log-dir", tmp_path, *PPO_TINY]
    first = run_forked("sar_ppo.py", *flags, "--physical-time", "5", cwd=ROOT)
    assert first.returncode == 0, first.stderr
    name = "InvertedPendulum-v5__sar__dt0.04__T{}__s1"
    longer = run_forked("sar_ppo.py", *flags, "--physical-time", "20", "--resume", cwd=ROOT)
    assert longer.returncode == 2 and longer.stderr.count("\n") == 1, longer.stderr
    assert f"no run in {tmp_path / name.format(20)} to continue; {tmp_path / name.format(5)} is this run with " \
           "--physical-time 5: to extend it, rename its folder" in longer.stderr
    assert not (tmp_path / name.format(20)).exists()
    untrue = run_forked("sar_ppo.py", *flags, "--run-name", name.format(5), "--physical-time", "20", "--resume",
                        cwd=ROOT)  # its name would no longer say its budget
    assert untrue.returncode == 2 and f"{name.format(5)} is named for its 5 s" in untrue.stderr, untrue.stderr
    os.rename(tmp_path / name.format(5), tmp_path / name.format(20))  # as the messages say
    renamed = run_forked("sar_ppo.py", *flags, "--physical-time", "20", "--resume", cwd=ROOT)
    assert renamed.returncode == 0 and "it now ends at 20 s" in renamed.stdout, renamed.stderr


def test_sigterm_ends_a_run_as_ctrl_c_does_and_says_how_to_continue(tmp_path):
    flags = ["--total-steps", "1000000", *PPO_TINY]  # it cannot finish before the signal
    proc = Forked("sar_ppo.py", "--log-dir", tmp_path, "--run-name", "run", *flags,
                  files=[open(os.devnull, "rb"), open(tmp_path / "out", "wb"), open(tmp_path / "err", "wb")])
    progress, deadline = tmp_path / "run" / "progress.csv", time.time() + 120
    while proc.poll() is None and time.time() < deadline and not (
            progress.exists() and len(progress.read_text().splitlines()) > 1):
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    err = (proc.wait(60), (tmp_path / "err").read_text())[1]
    assert proc.returncode == 143 and err.count("\n") == 1, err
    assert "terminated (SIGTERM); continue the run with the same command plus --resume" in err
    saved = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)
    assert len(rows_of(tmp_path)) == len(saved["rows"]) >= 1  # the last update's row and its checkpoint


def test_a_damaged_checkpoint_is_said_to_be_damaged_with_what_to_do(tmp_path):
    flags = ["--total-steps", "256", *PPO_TINY]
    assert run("sar_ppo.py", tmp_path, *flags).returncode == 0
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])  # torn
    result = run("sar_ppo.py", tmp_path, "--total-steps", "512", "--resume")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"--resume: {checkpoint} is damaged" in result.stderr and "train the run anew" in result.stderr


@pytest.mark.parametrize("resume", [[], ["--resume"]])
def test_a_run_another_process_trains_is_said_to_be_trained_whatever_its_files_say(tmp_path, resume):
    assert run("sar_ppo.py", tmp_path, "--total-steps", "256", *PPO_TINY).returncode == 0
    fd = os.open(tmp_path / "run", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as the process training it holds it
    try:
        result = run("sar_ppo.py", tmp_path, "--total-steps", "512", *PPO_TINY, *resume)
    finally:
        os.close(fd)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "is being trained by another process" in result.stderr and "pass --resume" not in result.stderr


def test_a_resumed_run_on_a_task_that_is_not_mujoco_says_it_starts_a_fresh_episode(tmp_path):
    flags = ["--env-id", "Pendulum-v1", "--no-repeat", *PPO_TINY]
    assert run("sar_ppo.py", tmp_path, *flags, "--total-steps", "256").returncode == 0
    result = run("sar_ppo.py", tmp_path, *flags, "--total-steps", "512", "--resume")
    notes = [line for line in result.stdout.splitlines() if "fresh episode" in line]
    assert result.returncode == 0 and len(notes) == 1, result.stdout
    assert notes[0].startswith("note: Pendulum-v1 is not a MuJoCo task")
    assert "update 2 starts a fresh episode" in notes[0]


def test_a_tacos_progress_line_says_its_return_is_before_the_switch_cost_and_shows_the_cost(tmp_path):
    result = run("figar_ppo.py", tmp_path, "--total-steps", "256", "--num-steps", "128", "--update-epochs", "1",
                 "--minibatch-size", "64", "--switch-cost", "0.1")
    lines = [line for line in result.stdout.splitlines() if line.startswith("update ")]
    assert result.returncode == 0 and lines, result.stderr
    assert all(" before the switch cost | switch cost " in line for line in lines if "| return " in line)


def test_a_time_feature_on_a_task_without_a_time_limit_is_refused(tmp_path):
    result = run("figar_ppo.py", tmp_path, "--env-id", "NoLimit-v0", "--time-feature", toys=True)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "--time-feature: NoLimit-v0 has no time limit, so the time feature would be 0" in result.stderr
