"""tools/animate.py on the runs of every training script: a tiny run of each rendered to a GIF of a few frames,
each new decision marked where decisions repeat an action (SAR, FiGAR-C), and one line with exit status 2 for what
it cannot render (no model, a task MuJoCo does not draw, a model of another run)."""
import json
import os
import shutil

import numpy as np
import pytest
import torch
from PIL import Image

from tests.helpers import ROOT, TINY, exits_2_with_one_line, rendering_unavailable, train
from tools import animate

TRPO_TINY = ["--num-steps", "128", "--vf-minibatch-size", "64"]
DAU_TINY = ["--dt", "0.01", "--physical-time", "1", "--num-envs", "4", "--train-every", "5", "--gradient-steps", "3",
            "--batch-size", "16"]  # 5 rows of 4 envs × 5 δ-steps
SMALL_GIF = ["--max-frames", "3", "--frame-s", "0.04", "--width", "160", "--height", "120"]

RUNS = {  # method: (script, flags), each a tiny run; all but DAU's with --save-model
    "SAR-PPO": ("sar_ppo.py", TINY),
    "λ-SAR-PPO": ("sar_ppo.py", [*TINY, "--lambda-dt", "0.5"]),
    "FiGAR-C-PPO": ("figar_ppo.py", TINY),
    "PPO": ("sar_ppo.py", [*TINY, "--no-repeat"]),
    "PPO (scaled)": ("sar_ppo.py", [*TINY, "--no-repeat", "--scale-lr"]),
    "SAR-TRPO": ("sar_trpo.py", TRPO_TINY),
    "FiGAR-C-TRPO": ("figar_trpo.py", TRPO_TINY),
    "TRPO": ("sar_trpo.py", [*TRPO_TINY, "--no-repeat"]),
    "SAR-A2C": ("sar_ppo.py", ["--a2c", "--num-steps", "128"]),
    "FiGAR-C-A2C": ("figar_ppo.py", ["--a2c", "--num-steps", "128"]),
    "A2C": ("sar_ppo.py", ["--a2c", "--num-steps", "128", "--no-repeat"]),
    "ARP-PPO": ("arp_ppo.py", TINY),
    "DAU": ("dau.py", DAU_TINY),
}
REPEATING = {"SAR-PPO", "λ-SAR-PPO", "FiGAR-C-PPO", "SAR-TRPO", "FiGAR-C-TRPO", "SAR-A2C", "FiGAR-C-A2C"}


def tiny_run(tmp_path, method, *extra):
    script, flags = RUNS[method]
    budget = [] if script == "dau.py" else ["--total-steps", "256", "--save-model"]
    train(script, tmp_path, *flags, *budget, *extra)
    return tmp_path / "run"


def strip_pixels(path, frame):
    """How many pixels of the decision strip's two colours the row through the strip holds, in frame `frame`."""
    with Image.open(path) as gif:
        gif.seek(frame)
        row = np.asarray(gif.convert("RGB"))[-14].astype(int)
    return sum(int((np.abs(row - colour).sum(1) < 40).sum()) for colour in animate.BLOCK_COLOURS)


@pytest.mark.parametrize("method", RUNS)
def test_animate_renders_a_tiny_run_of_each_script_marking_decisions_where_they_repeat(method, tmp_path, capsys,
                                                                                      one_thread):
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    run = tiny_run(tmp_path, method)
    assert json.loads((run / "config.json").read_text())["method"] == method
    assert (run / "model.pt").exists() != (method == "DAU")  # DAU's is read from its checkpoint.pt
    out = tmp_path / "a.gif"
    animate.main(["--run", str(run), *SMALL_GIF, "--out", str(out)])
    said = capsys.readouterr().out
    assert f"{out}: 3 frames" in said and ("mean repetition" in said) == (method in REPEATING), said
    with Image.open(out) as gif:
        assert gif.n_frames == 3 and gif.size == (160, 120)
        gif.seek(2)
        assert len(np.unique(np.asarray(gif.convert("RGB")).reshape(-1, 3), axis=0)) > 10  # a scene, not a blank
    # the strip of decisions, one block each, where decisions repeat; none where every δ-step is a decision
    assert (strip_pixels(out, 2) > 10) == (method in REPEATING)  # 0.08 s of the strip's 0.5 s: 23 pixels


def test_animate_reads_a_dau_run_without_input_normalisation_as_made_before_the_flag(tmp_path, capsys, one_thread):
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    run = tiny_run(tmp_path, "DAU", "--no-input-norm")
    config = json.loads((run / "config.json").read_text())
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    for made in (config, state["config"]):  # a run made before the flag existed, as the committed ones
        del made["no_input_norm"]
        made["method"] = "DAU"
    (run / "config.json").write_text(json.dumps(config))
    torch.save(state, run / "checkpoint.pt")
    module, args, _ = animate.load(str(run))
    assert module.__name__ == "dau" and args.no_input_norm and args.method == "DAU (no normalisation)"
    animate.main(["--run", str(run), *SMALL_GIF, "--out", str(tmp_path / "a.gif")])
    assert f"{tmp_path / 'a.gif'}: 3 frames" in capsys.readouterr().out


def test_animate_renders_a_run_in_the_stochastic_setting_and_hold_penalty_it_was_trained_in(tmp_path, capsys,
                                                                                            one_thread):
    reason = rendering_unavailable()
    if reason:
        pytest.skip(reason)
    run = tiny_run(tmp_path, "SAR-PPO", "--noise", "ext-force", "--hold-penalty")
    module, args, state = animate.load(str(run))
    assert animate.title_of(args, state)[1] == "trained and shown under: ext-force, hold penalty"
    animate.main(["--run", str(run), *SMALL_GIF, "--out", str(tmp_path / "a.gif")])
    assert f"{tmp_path / 'a.gif'}: 3 frames" in capsys.readouterr().out


@pytest.mark.parametrize("method,named", [("SAR-PPO", "--save-model"), ("DAU", "dau.py command again")])
def test_animate_says_in_one_line_that_a_run_without_a_model_has_nothing_to_render(method, named, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    config = {"SAR-PPO": {"method": "SAR-PPO", "env_id": "InvertedPendulum-v5", "dt": 0.002, "num_steps": 256},
              "DAU": {"method": "DAU", "env_id": "InvertedPendulum-v5", "dt": 0.01, "num_envs": 4, "train_every": 5}}
    (run / "config.json").write_text(json.dumps(config[method]))  # as a committed run in a clone: no .pt file
    (run / "progress.csv").write_text("decision_steps\n")
    with pytest.raises(SystemExit) as exit_info:
        animate.main(["--run", str(run), "--out", str(tmp_path / "a.gif")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "neither model.pt nor checkpoint.pt" in err, err
    assert named in err and (method != "DAU" or "--save-model" not in err), err  # dau.py has no --save-model
    assert not (tmp_path / "a.gif").exists()


def test_animate_refuses_a_task_mujoco_does_not_draw_in_one_line(tmp_path, capsys):
    run = tiny_run(tmp_path, "PPO", "--env-id", "Pendulum-v1")
    exits_2_with_one_line(lambda: animate.main(["--run", str(run), "--out", str(tmp_path / "a.gif")]),
                          "Pendulum-v1 is not a MuJoCo task", capsys)
    assert not (tmp_path / "a.gif").exists()


@pytest.mark.parametrize("folder,source,named", [
    ("Hopper-v5__sar__dt0.008__s1", "Hopper-v5__figar__dt0.008__s1", "it is of a FiGAR-C run"),
    ("Hopper-v5__figar__dt0.008__s1", "Hopper-v5__ppo__dt0.008__s1", "no repetition head"),
], ids=["figar-model-in-sar", "ppo-model-in-figar"])
def test_animate_refuses_a_model_of_another_run_than_config_json_in_one_line(folder, source, named, tmp_path, capsys):
    runs = os.path.join(ROOT, "results", "runs_1m")
    run = tmp_path / folder
    run.mkdir()
    shutil.copy(os.path.join(runs, folder, "config.json"), run)
    shutil.copy(os.path.join(runs, source, "model.pt"), run)  # dropped in from another run folder
    exits_2_with_one_line(lambda: animate.main(["--run", str(run), "--frame-s", "0.048", "--out",
                                                str(tmp_path / "a.gif")]), named, capsys)


def test_animate_without_frame_s_takes_the_multiple_of_delta_nearest_50_ms(tmp_path, capsys):
    run = os.path.join(ROOT, "results", "runs_1m", "Hopper-v5__figar__dt0.008__s1")  # the docstring's example
    animate.main(["--run", run, "--out", str(tmp_path / "a.gif"), "--max-frames", "2", "--width", "64",
                  "--height", "64"])
    assert f"{tmp_path / 'a.gif'}: 2 frames, 48 ms each" in capsys.readouterr().out


def test_animate_names_a_frame_time_the_runs_delta_divides(model_run, tmp_path, capsys):
    exits_2_with_one_line(lambda: animate.main(["--run", str(model_run), "--frame-s", "0.0203", "--out",
                                                str(tmp_path / "a.gif")]), "say --frame-s 0.02", capsys)
