"""tools/, what a user runs on their own runs: status.py and grid_hours.py read command lists,
check_reproducible.py and evaluate.py remake or roll out a run from its config.json, animate.py renders an
episode, first_reach.py reads when runs first reach a return; each refuses bad input in one line."""
import fcntl
import io
import json
import os
import shutil
import sys

import numpy as np
import pytest
import torch
from PIL import Image

from benchmark import same_policy_across_dt
from tests.helpers import ROOT, TINY, copy_of, damaged, exits_2_with_one_line, rendering_unavailable, run_python, train
from tools import animate, check_reproducible, evaluate, first_reach, grid_hours, status


def test_status_tells_finished_unfinished_and_not_started_runs_of_a_figure_script(tiny_run, tmp_path, monkeypatch,
                                                                                   capsys):
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


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="reads the locks Linux lists")
def test_status_tells_a_run_training_now_from_one_to_resume(tiny_run, tmp_path, monkeypatch, capsys):
    shutil.copytree(tiny_run, tmp_path / "half")
    command = f"python sar_ppo.py {' '.join(TINY)} --total-steps 1024 --log-dir {tmp_path} --run-name half --resume\n"
    folder = os.open(tmp_path / "half", os.O_RDONLY)
    fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a training script holds its run folder
    monkeypatch.setattr(sys, "stdin", io.StringIO(command))
    status.main([])
    assert f"  {tmp_path / 'half'} at 512 decisions (training now)" in capsys.readouterr().out.splitlines()
    os.close(folder)  # the lock goes with it: resumable again
    monkeypatch.setattr(sys, "stdin", io.StringIO(command))
    status.main([])
    assert f"  {tmp_path / 'half'} at 512 decisions (checkpoint.pt)" in capsys.readouterr().out.splitlines()


def test_status_tells_a_run_made_with_other_flags_from_a_finished_one(tiny_run, capsys, monkeypatch):
    config = json.loads((tiny_run / "config.json").read_text())
    command = (f"python sar_ppo.py --log-dir {tiny_run.parent} --run-name run --total-steps 512 --num-steps "
               f"{config['num_steps']} --update-epochs {config['update_epochs']} "
               f"--minibatch-size {config['minibatch_size']}")
    for extra, expected in (("", "finished: 1"), (" --norm l2", "made with other flags: 1")):
        monkeypatch.setattr(sys, "stdin", io.StringIO(command + extra + "\n"))
        status.main([])
        assert expected in capsys.readouterr().out.splitlines()


def test_status_refuses_an_unbalanced_quote_in_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("python sar_ppo.py --run-name 'half\n"))
    exits_2_with_one_line(lambda: status.main([]), "closing quotation", capsys)


def test_status_refuses_an_undecodable_progress_csv_in_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "progress.csv").write_bytes(b"\xff\xfe")
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"python sar_ppo.py --log-dir {tmp_path} --run-name run\n"))
    exits_2_with_one_line(lambda: status.main([]), "progress.csv", capsys)


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
    monkeypatch.setattr(sys, "stdin", io.StringIO(said))
    exits_2_with_one_line(lambda: {"status": status, "grid_hours": grid_hours}[tool].main([]), named, capsys)


def test_grid_hours_times_a_cell_without_runs_by_the_nearest_measured_one_and_says_how():
    # (seconds per decision, seconds per physical second) of each run
    rates = {("Hopper-v5", "PPO", 0.0005, None): [(2.0, 4.0)], ("Hopper-v5", "PPO", 0.008, None): [(9.0, 1.0)],
             ("InvertedPendulum-v5", "DAU", 0.002, None): [(1.0, 1.0), (3.0, 3.0)],
             ("Swimmer-v5", "DAU", 0.002, None): [(4.0, 4.0)], ("Swimmer-v5", "DAU", 0.04, None): [(50.0, 5.0)],
             ("Reacher-v5", "DAU (no normalisation)", 0.001, None): [(7.0, 7.0)],
             ("Hopper-v5", "FiGAR-C-PPO", 0.0005, None): [(6.0, 12.0)]}
    assert grid_hours.estimate(rates, ("Hopper-v5", "PPO", 0.008, None)) == ((9.0, 1.0), "by their own cell")
    assert grid_hours.estimate(rates, ("Hopper-v5", "ARP-PPO", 0.0005, None)) == ((2.0, 4.0), "by PPO's cell")
    assert grid_hours.estimate(rates, ("Hopper-v5", "TRPO", 0.001, None)) == ((2.0, 4.0), "by the nearest δ")
    assert grid_hours.estimate(rates, ("Ant-v5", "DAU", 0.002, None)) == ((3.0, 3.0), "by other tasks")  # (2 + 4) / 2
    assert grid_hours.estimate(rates, ("Reacher-v5", "DAU", 0.001, None)) == \
        ((7.0, 7.0), "by their cell without normalisation")
    assert grid_hours.estimate(rates, ("Hopper-v5", "TaCoS-PPO (c=0.32)", 0.0005, None)) == \
        ((6.0, 12.0), "by FiGAR-C-PPO's cell")
    assert grid_hours.estimate(rates, ("Ant-v5", "SAR-PPO", 0.002, None)) == (None, "none")


@pytest.mark.parametrize("args,named", [(["--updates", "0", "RUN"], "--updates"),
                                        (["/nonexistent/run"], "/nonexistent/run"),
                                        (["RUN", "--no-such-flag"], "--no-such-flag"), (["DAMAGED"], "config.json")])
def test_check_reproducible_bad_input_says_one_line_and_exits_2(tiny_run, tmp_path, capsys, args, named):
    damaged_run = damaged(copy_of(tiny_run, tmp_path), "config.json", b'{"method": "SAR-PPO"')
    args = [{"RUN": str(tiny_run), "DAMAGED": str(damaged_run)}.get(a, a) for a in args]
    exits_2_with_one_line(lambda: check_reproducible.main(args), named, capsys)


def test_check_reproducible_compares_only_the_rows_a_run_has(tiny_run, capsys):
    assert check_reproducible.main([str(tiny_run), "--updates", "5"]) == 0  # the tiny run has 2 rows
    assert capsys.readouterr().out.startswith(f"identical: first 2 rows of {tiny_run}")


@pytest.mark.parametrize("script,flags", [("sar_ppo.py", ["--a2c"]), ("figar_trpo.py", ["--num-steps", "256"])])
def test_check_reproducible_remakes_an_a2c_and_a_trpo_run(tmp_path, capsys, script, flags):
    train(script, tmp_path, "--total-steps", "512", *flags)  # with its config.json's flags: --a2c sets the epochs
    assert check_reproducible.main([str(tmp_path / "run"), "--updates", "2"]) == 0
    assert capsys.readouterr().out.startswith(f"identical: first 2 rows of {tmp_path / 'run'}")


def test_check_reproducible_remakes_a_dau_run_and_finds_a_changed_row(tmp_path, capsys):
    result = run_python("dau.py", "--env-id", "InvertedPendulum-v5", "--dt", "0.01", "--physical-time", "1",
                        "--num-envs", "4", "--train-every", "5", "--gradient-steps", "3", "--batch-size", "16",
                        "--eval-every", "2", "--eval-episodes", "1", "--log-dir", tmp_path, "--run-name", "run")
    assert result.returncode == 0, result.stderr  # 5 rows of 4 envs × 5 δ-steps, evaluated every 2nd
    assert check_reproducible.main([str(tmp_path / "run"), "--updates", "4"]) == 0  # a budget of 4 rows' physical time
    assert capsys.readouterr().out.startswith(f"identical: first 4 rows of {tmp_path / 'run'}")
    progress = tmp_path / "run" / "progress.csv"
    lines = progress.read_text().splitlines(keepends=True)
    cells = lines[2].split(",")
    cells[5] = str(float(cells[5] or 0) + 1)  # return_mean of row 2
    progress.write_text("".join(lines[:2] + [",".join(cells)] + lines[3:]))
    assert check_reproducible.main([str(tmp_path / "run"), "--updates", "4"]) == 1
    assert capsys.readouterr().out.startswith("DIFFERENT: first 4 rows")


@pytest.mark.parametrize("tool", ["check_reproducible", "evaluate"])
def test_a_config_json_value_its_script_refuses_is_one_line_before_any_run_is_remade(tiny_run, tmp_path, capsys,
                                                                                      monkeypatch, tool):
    config = json.loads((tiny_run / "config.json").read_text())
    bad = copy_of(tiny_run, tmp_path)
    (bad / "config.json").write_text(json.dumps({**config, "max_d": -5}))  # a hand-edited value
    remade = []
    monkeypatch.setattr(check_reproducible.subprocess, "run", lambda *a, **k: remade.append(a))
    args = {"check_reproducible": [str(tiny_run), str(bad)], "evaluate": [str(bad)]}[tool]  # the good run first
    exits_2_with_one_line(lambda: {"check_reproducible": check_reproducible, "evaluate": evaluate}[tool].main(args),
                          "--max-d", capsys)
    assert remade == []


def test_animation_renders_a_committed_model_to_a_gif_and_never_overwrites_the_committed_one(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:  # non-default flags without --out: refused before any work
        animate.main(["--max-frames", "5"])
    assert exit_info.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "five.gif"
    animate.main(["--max-frames", "5", "--width", "160", "--height", "120", "--out", str(out)])
    with Image.open(out) as gif:
        assert gif.n_frames == 5 and gif.size == (160, 120) and gif.info["duration"] == 50
        gif.seek(4)
        assert len(np.unique(np.asarray(gif.convert("RGB")).reshape(-1, 3), axis=0)) > 10  # a scene, not a blank frame


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
    result = run_python("tools/animate.py", "--out", tmp_path / "a.gif", "--max-frames", "2",
                    env={**os.environ, "MUJOCO_GL": "nonsense"})
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "MUJOCO_GL" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


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


@pytest.mark.parametrize("setting", [{"noise": "ext-force"}, {"hold_penalty": True}])
def test_same_policy_across_dt_refuses_a_run_trained_under_noise_or_a_hold_penalty(model_run, setting, capsys):
    # (animate.py renders such a run in its own setting: tests/test_animate.py)
    config = json.loads((model_run / "config.json").read_text())
    (model_run / "config.json").write_text(json.dumps({**config, **setting}))
    with pytest.raises(SystemExit) as exit_info:
        same_policy_across_dt.main(["--model", str(model_run / "model.pt"), "--episodes", "1"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and ("noise" in err or "hold-penalty" in err)


RUNS_1M = os.path.join(ROOT, "results", "runs_1m")


def test_evaluate_and_animate_say_a_missing_folder_is_not_a_run_folder(tmp_path, capsys):
    exits_2_with_one_line(lambda: evaluate.main([str(tmp_path / "nope")]), "is not a run folder", capsys)
    exits_2_with_one_line(lambda: animate.main(["--run", str(tmp_path / "nope"), "--out", str(tmp_path / "a.gif")]),
                          "is not a run folder", capsys)


@pytest.mark.parametrize("folder,file,source,named", [
    ("Hopper-v5__sar__dt0.008__s1", "checkpoint.pt", "Hopper-v5__figar__dt0.008__s1", "method"),  # another script's
    ("Hopper-v5__sar__dt0.008__s1", "checkpoint.pt", "Hopper-v5__sar__dt0.008__s2", "seed"),
    ("Hopper-v5__sar__dt0.008__s1", "checkpoint.pt", "Hopper-v5__sar__dt0.0005__s1", "dt"),
    ("Hopper-v5__sar__dt0.008__s1", "model.pt", "Hopper-v5__figar__dt0.008__s1", "FiGAR-C"),
    ("Hopper-v5__figar__dt0.008__s1", "model.pt", "Hopper-v5__sar__dt0.008__s1", "FiGAR-C-PPO"),
    ("Hopper-v5__sar__dt0.008__s1", "model.pt", "Hopper-v5__ppo__dt0.008__s1", "repetition"),
], ids=["figar-checkpoint-in-sar", "other-seed", "other-dt", "figar-model-in-sar", "sar-model-in-figar",
        "plain-model-in-sar"])
def test_evaluate_refuses_a_checkpoint_or_model_of_another_run_than_config_json_in_one_line(
        tmp_path, capsys, folder, file, source, named):
    run = tmp_path / folder
    run.mkdir()
    for name in ("config.json", "progress.csv"):
        shutil.copy(os.path.join(RUNS_1M, folder, name), run)
    shutil.copy(os.path.join(RUNS_1M, source, file), run)  # dropped in from another run folder
    exits_2_with_one_line(lambda: evaluate.main([str(run), "--episodes", "1"]), named, capsys)


@pytest.mark.parametrize("file", ["checkpoint.pt", "model.pt"])
def test_evaluate_reads_a_runs_own_checkpoint_or_model(tmp_path, capsys, file):
    run = tmp_path / "run"
    run.mkdir()
    for name in ("config.json", "progress.csv", file):
        shutil.copy(os.path.join(RUNS_1M, "Hopper-v5__figar__dt0.008__s1", name), run)
    evaluate.main([str(run), "--episodes", "1"])
    assert "FiGAR-C-PPO on Hopper-v5 at δ = 0.008 s (deterministic): mean return" in capsys.readouterr().out


def test_animate_renders_a_run_from_its_checkpoint_when_it_has_no_model_and_makes_the_out_folder(tiny_run, tmp_path,
                                                                                                  capsys):
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    run = copy_of(tiny_run, tmp_path)  # trained without --save-model: config.json, progress.csv, checkpoint.pt
    assert not (run / "model.pt").exists()
    out = tmp_path / "new" / "folder" / "a.gif"
    animate.main(["--run", str(run), "--max-frames", "3", "--width", "64", "--height", "64", "--out", str(out)])
    assert out.is_file() and f"{out}: 3 frames" in capsys.readouterr().out


def test_animate_says_in_one_line_what_to_do_for_a_run_with_neither_model_nor_checkpoint(tiny_run, tmp_path, capsys):
    run = copy_of(tiny_run, tmp_path, checkpoint=False)  # a committed run in a clone: config.json and progress.csv
    with pytest.raises(SystemExit) as exit_info:
        animate.main(["--run", str(run), "--out", str(tmp_path / "a.gif")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1, err
    assert "neither model.pt nor checkpoint.pt" in err and "--save-model" in err and "Error" not in err, err
    assert not (tmp_path / "a.gif").exists()


def test_status_and_plot_read_a_config_that_is_json_but_not_an_object_as_damaged(tiny_run, tmp_path, capsys):
    import plot
    from tools import status
    run = copy_of(tiny_run, tmp_path)
    (run / "config.json").write_text("[1, 2]")
    assert plot.load_run(str(run)) is None and "not a JSON object" in capsys.readouterr().err
    state, _, decisions = status.status(f"python sar_ppo.py --total-steps 512 {' '.join(TINY)} --log-dir "
                                        f"{tmp_path} --run-name {run.name} --resume")
    assert state == "finished" and decisions == 512  # progress.csv alone says how far it is


def test_first_reach_prints_the_first_row_at_or_above_the_value_and_never_with_the_best(tmp_path, capsys):
    rows = "decision_steps,return_mean\n2048,\n4096,500.5\n6144,990.0\n8192,980.0\n"
    for name, text in (("reached", rows), ("short", rows.replace("990.0", "989.9"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "progress.csv").write_text(text)
    first_reach.main(["990", str(tmp_path / "reached"), str(tmp_path / "short")])
    assert capsys.readouterr().out.splitlines() == [f"{tmp_path / 'reached'}  6,144",
                                                    f"{tmp_path / 'short'}  never (best 989.9)"]


@pytest.mark.parametrize("args,named", [(["x", "results/runs"], "argument value"),
                                        (["990", "README.md"], "no progress.csv"),
                                        (["990", "results"], "no progress.csv")])
def test_first_reach_refuses_what_is_not_a_run_in_one_line(args, named, capsys):
    exits_2_with_one_line(lambda: first_reach.main(args), named, capsys)
