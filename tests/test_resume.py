"""Runs are never erased or continued wrong: a killed or interrupted run resumes to the rows of an
uninterrupted one; damaged, foreign or missing files are rebuilt from the checkpoint or refused in one line;
one process per run folder; a committed run in a fresh clone is left as it is."""
import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch

import bookkeeping
from tests.helpers import ROOT, TINY, VARYING, Forked, copy_of, rows_of, run_forked, train


def kill_after_rows(cmd, progress, rows):
    """Start `cmd` (a script and its flags), SIGKILL it once progress.csv has `rows` rows (or when it ends)."""
    proc = Forked(*cmd)
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
    cmd = [script, "--log-dir", tmp_path, "--run-name", "cut", *flags]
    for rows in (1, 3, 5):  # mid-update, and past a checkpoint: rows logged after it are made again
        kill_after_rows(cmd + ["--resume"] * (rows > 1), tmp_path / "cut" / "progress.csv", rows)
    train(script, tmp_path, *flags, "--resume", name="cut")
    strip = lambda rows: [{k: v for k, v in r.items() if k not in VARYING} for r in rows]  # noqa: E731
    assert len(rows_of(tmp_path, "whole")) == 6 and strip(rows_of(tmp_path, "cut")) == strip(rows_of(tmp_path, "whole"))


def resume(tmp_path, total_steps, *flags, script="sar_ppo.py"):
    return train(script, tmp_path, "--total-steps", str(total_steps), *TINY, "--resume", *flags, check=False)


def decisions(tmp_path):
    return [int(r["decision_steps"]) for r in rows_of(tmp_path)]


def test_interrupted_run_says_one_line_and_resumes_to_every_row(tmp_path):
    cmd = [sys.executable, os.path.join(ROOT, "sar_ppo.py"), "--log-dir", str(tmp_path), "--run-name", "run",
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
    assert proc.returncode == 130 and err.count("\n") == 1 and "interrupted" in err and "--resume" in err
    total = 256 * (len(decisions(tmp_path)) + 2)
    assert resume(tmp_path, total).returncode == 0
    assert decisions(tmp_path) == list(range(256, total + 1, 256))


def interrupting(module, function):
    """A prelude for run_forked: the script runs as Ctrl-C would leave it when `module.function` is called."""
    return (f"import runpy, sys, {module}\n"
            "def interrupted(*args, **kwargs):\n"
            "    raise KeyboardInterrupt\n"
            f"{module}.{function} = interrupted\n"
            "sys.argv = sys.argv[1:]\n"
            "runpy.run_path(sys.argv[0], run_name='__main__')\n")


@pytest.mark.parametrize("script", ["sar_ppo.py", "dau.py"])
def test_ctrl_c_before_the_run_folder_is_opened_says_its_files_are_as_they_were(tmp_path, script):
    result = run_forked(script, "--log-dir", tmp_path / "logs", prelude=interrupting("envs", "make_env"))
    assert result.returncode == 130 and result.stderr.count("\n") == 1
    assert "interrupted before the run folder was opened; its files are as they were" in result.stderr
    assert not (tmp_path / "logs").exists()


def test_ctrl_c_after_the_last_row_says_the_run_finished(tmp_path):
    result = run_forked("sar_ppo.py", "--log-dir", tmp_path, "--run-name", "run", "--total-steps", "256", *TINY,
                        "--save-model", prelude=interrupting("bookkeeping", "save_model"))
    assert result.returncode == 130 and result.stderr.count("\n") == 1
    assert "interrupted after the run finished; its checkpoint holds every row" in result.stderr


def test_resume_of_a_run_not_yet_made_says_it_starts_it(tmp_path):
    result = train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY, "--resume")
    assert f"note: --resume: no run in {tmp_path / 'run'} yet; starting it" in result.stdout
    again = train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY, "--resume")
    assert "no run in" not in again.stdout and "is finished" in again.stdout


def test_failed_write_stops_with_one_line_and_the_run_resumes(tmp_path):
    # a file-size limit fails the first update's checkpoint (~1.6 MB) like a full disk would
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))  # noqa: E731
    cmd = [sys.executable, os.path.join(ROOT, "sar_ppo.py"), "--log-dir", str(tmp_path), "--run-name", "run",
           "--total-steps", "512", *TINY]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "File too large" in result.stderr
    train("sar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--resume")
    assert decisions(tmp_path) == [256, 512]


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


COMMITTED = os.path.join(ROOT, "results", "runs")


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
    done = subprocess.run([sys.executable, os.path.join(ROOT, script), *flags,
                           "--total-steps", str(config["total_steps"])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "finished" in done.stdout and snapshot(tmp_path / run) == before
    longer = subprocess.run([sys.executable, os.path.join(ROOT, script), *flags, "--total-steps", "10000000"],
                            capture_output=True, text=True, timeout=120)
    assert longer.returncode == 2 and longer.stderr.count("\n") == 1 and "no checkpoint" in longer.stderr
    assert snapshot(tmp_path / run) == before


def committed_checkpoints():
    """The checkpoint.pt files git holds under results/runs_1m (not those of runs training there now)."""
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "results/runs_1m"], capture_output=True, text=True)
    return sorted(os.path.join(ROOT, p) for p in listed.stdout.split() if p.endswith("/checkpoint.pt"))


@pytest.mark.parametrize("checkpoint", committed_checkpoints() or [None],
                         ids=lambda p: p.split(os.sep)[-2] if p else "none")
def test_every_committed_checkpoint_holds_its_progress_csvs_rows_as_numbers(checkpoint):
    if checkpoint is None:
        pytest.skip("no checkpoint.pt is committed under results/runs_1m")
    # --resume reads the budget off the checkpoint's last row and rewrites progress.csv from its rows: a finished
    # run's are all of progress.csv; a partial run's (committed to go on in another session) the rows up to it
    state = torch.load(checkpoint, weights_only=True)
    args = argparse.Namespace(total_steps=state["config"]["total_steps"], physical_time=None)
    last = state["rows"][-1]
    columns = list(state["rows"][0])
    with open(os.path.join(os.path.dirname(checkpoint), "progress.csv"), newline="") as f:
        on_disk = f.read()
    held = bookkeeping.csv_text(columns, state["rows"], header=True)
    if bookkeeping.finished(args, last["decision_steps"], last["physical_time_s"]):
        assert held == on_disk
    else:
        assert on_disk.startswith(held) and len(state["rows"]) >= len(on_disk.splitlines()) - 2
    assert all(isinstance(row[c], int) for row in state["rows"] for c in ("decision_steps", "env_steps", "episodes"))


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


@pytest.mark.parametrize("script", ["sar_ppo.py", "sar_trpo.py"])
def test_a_folder_holding_only_a_checkpoint_is_a_run_and_is_not_started_over(tmp_path, script):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint.pt").write_bytes(b"the run")
    result = train(script, tmp_path, "--total-steps", "256", "--num-steps", "256", check=False)
    assert result.returncode == 2 and "--resume" in result.stderr and result.stderr.count("\n") == 1
    assert (tmp_path / "run" / "checkpoint.pt").read_bytes() == b"the run"


def test_a_second_process_on_the_same_run_is_refused_while_the_first_trains(tmp_path):
    cmd = [sys.executable, os.path.join(ROOT, "sar_ppo.py"), "--log-dir", str(tmp_path), "--run-name", "run",
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
    assert sorted(model) == ["agent", "config", "obs_rms", "repetition_stats"]
    assert all(torch.equal(model["agent"][k], checkpoint["agent"][k]) for k in model["agent"])
    (run / "model.pt").unlink()
    (run / "checkpoint.pt").unlink()  # as in a clone
    result = resume(tmp_path, 512, "--save-model")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--save-model" in result.stderr


def test_config_records_the_commit_of_the_code_at_every_start_and_resume(tmp_path):
    train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY)
    train("sar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--resume")
    with open(tmp_path / "run" / "config.json") as f:
        code = json.load(f)["code"]
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert [c["decision_steps"] for c in code] == [0, 256] and all(c["git_commit"] == head for c in code)
    assert all(isinstance(c["git_dirty"], bool) for c in code)


@pytest.mark.parametrize("script,flags", [
    ("sar_ppo.py", ["--update-epochs", "1", "--minibatch-size", "128"]),
    ("figar_ppo.py", ["--update-epochs", "1", "--minibatch-size", "128"]), ("sar_ppo.py", ["--a2c"]),
    ("sar_trpo.py", ["--vf-minibatch-size", "128"]), ("figar_trpo.py", ["--vf-minibatch-size", "128"]),
    ("arp_ppo.py", ["--update-epochs", "1", "--minibatch-size", "128"])])
def test_an_ant_run_resumed_mid_episode_gives_the_uninterrupted_runs_rows(tmp_path, script, flags):
    # Ant's reward reads the body positions the step before left (data.xpos): a checkpoint must restore them
    flags = ["--env-id", "Ant-v5", "--dt", "original", "--num-steps", "256", *flags]
    train(script, tmp_path, "--total-steps", "768", *flags, name="whole")
    train(script, tmp_path, "--total-steps", "512", *flags, name="cut")  # mid-episode: 1,000 decisions each
    train(script, tmp_path, "--total-steps", "768", *flags, "--resume", name="cut")
    strip = lambda rows: [{k: v for k, v in r.items() if k not in VARYING} for r in rows]  # noqa: E731
    assert strip(rows_of(tmp_path, "cut")) == strip(rows_of(tmp_path, "whole"))


def test_an_ant_dau_run_resumed_gives_the_uninterrupted_runs_rows(tmp_path):
    flags = ["--env-id", "Ant-v5", "--dt", "original", "--num-envs", "4", "--train-every", "5", "--gradient-steps",
             "3", "--batch-size", "16", "--checkpoint-every", "1"]
    train("dau.py", tmp_path, "--physical-time", "6", *flags, name="whole")
    train("dau.py", tmp_path, "--physical-time", "3", *flags, name="cut")
    train("dau.py", tmp_path, "--physical-time", "6", *flags, "--resume", name="cut")
    timings = VARYING | {"gradient_steps_per_s"}
    strip = lambda rows: [{k: v for k, v in r.items() if k not in timings} for r in rows]  # noqa: E731
    assert len(rows_of(tmp_path, "whole")) == 6 and strip(rows_of(tmp_path, "cut")) == strip(rows_of(tmp_path, "whole"))
