"""What every training script promises on its command line: its logs, the same seed giving the same rows,
a variant of the method its own name, every flag checked before any work (one line, exit 2), and the
text the four scripts share kept the same."""
import inspect
import json
import math
import os
import re

import pytest

import arp_ppo
import figar_ppo
import figar_trpo
import sar_ppo
import sar_trpo
from tests.helpers import FAST, MORE_BAD_FLAGS, ROOT, TINY, VARYING, assert_exits_2_naming, rows_of, train


def test_no_repeat_takes_one_delta_step_per_decision(tmp_path):
    train("sar_ppo.py", tmp_path, "--total-steps", "2048", "--no-repeat", *FAST)
    for r in rows_of(tmp_path):
        assert r["env_steps"] == r["decision_steps"] and float(r["action_duration_mean_s"]) == 2e-3
        assert r["safe_radius_mean"] == ""


def test_same_seed_gives_identical_progress(tmp_path):
    for name in ("a", "b"):
        train("sar_ppo.py", tmp_path, "--total-steps", "2048", "--seed", "7", *FAST, name=name)
    strip = lambda rows: [{k: v for k, v in r.items() if k not in VARYING} for r in rows]  # noqa: E731
    assert strip(rows_of(tmp_path, "a")) == strip(rows_of(tmp_path, "b"))


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_partially_observable_stochastic_setting_trains(tmp_path, script):
    # App. H: HoldPenalty inside the repetition, the perceptible force outside it (λ-SAR's setting)
    extra = ["--lambda-dt", "0.5"] if script == "sar_ppo.py" else []
    train(script, tmp_path, "--total-steps", "512", "--num-steps", "256", "--update-epochs", "1",
          "--noise", "ext-force-perceptible", "--hold-penalty", *extra)
    with open(os.path.join(tmp_path, "run", "config.json")) as f:
        config = json.load(f)
    assert config["hold_penalty"] and config["noise"] == "ext-force-perceptible"
    assert len(rows_of(tmp_path)) == 2


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "arp_ppo.py"])
def test_eval_every_s_evaluates_the_first_update_past_each_multiple_and_changes_no_training_number(tmp_path, script):
    flags = ["--env-id", "InvertedPendulum-v5", "--dt", "0.04", "--total-steps", "1280", "--num-steps", "256"]
    if "trpo" not in script:
        flags += ["--update-epochs", "1", "--minibatch-size", "128"]
    train(script, tmp_path, *flags, "--eval-every-s", "15", "--eval-episodes", "1", name="timed")
    train(script, tmp_path, *flags, name="plain")
    timed, plain = rows_of(tmp_path, "timed"), rows_of(tmp_path, "plain")
    times = [0.0] + [float(r["physical_time_s"]) for r in timed]
    due = [int(now / 15) > int(before / 15) for before, now in zip(times, times[1:])]
    assert [r["eval_return_mean"] != "" for r in timed] == due and 0 < sum(due) < len(due)
    training = lambda rows: [{k: v for k, v in r.items() if k not in VARYING | {"eval_return_mean"}}  # noqa: E731
                             for r in rows]
    assert training(timed) == training(plain)


def test_variants_get_their_own_method_name_and_run_name():
    args = sar_ppo.parse_args(["--norm", "l2", "--max-t", "inf"])
    assert args.method == "SAR-PPO (l2, no limit on t)" and "__sar-l2-no-limit-t__" in args.run_name
    args = figar_ppo.parse_args(["--no-limit-t", "--noise", "action", "--noise-prob", "0.1"])
    assert args.method == "FiGAR-C-PPO (no limit on t)" and "__action-p0.1__" in args.run_name


def test_max_t_inf_keeps_its_meaning_in_sar():
    assert sar_ppo.parse_args(["--max-t", "inf"]).max_t == math.inf


BAD_FLAGS = [
    (["--env-id", "NoSuchTask-v0"], "--env-id"), (["--dt", "0"], "--dt"), (["--dt", "-0.001"], "--dt"),
    (["--dt", "0.1"], "--dt"), (["--dt", "tiny"], "--dt"), (["--max-d", "-0.5"], "--max-d"),
    (["--max-t", "-0.05"], "--max-t"), (["--noise", "wind"], "--noise"),
    (["--noise-prob", "1.5"], "--noise-prob"), (["--noise-prob", "-0.1"], "--noise-prob"),
    (["--noise-std", "-1"], "--noise-std"), (["--lambda-dt", "1.5"], "--lambda-dt"),
    (["--lambda-dt", "-0.5"], "--lambda-dt"), (["--total-steps", "0"], "--total-steps"),
    (["--no-such-flag"], "--no-such-flag"), (["--num-steps", "129", "--minibatch-size", "64"], "--minibatch-size"),
    (["--lambda-dt", "0.5", "--max-t", "inf"], "--lambda-dt"),  # eq. 8's time term would vanish
]


@pytest.mark.parametrize("flags,named", BAD_FLAGS)
def test_bad_flag_exits_2_with_one_line_naming_it(flags, named, capsys):
    assert_exits_2_naming(sar_ppo.parse_args, flags, named, capsys)


FIGAR_BAD_FLAGS = [
    (["--env-id", "NoSuchTask-v0"], "--env-id"), (["--dt", "0"], "--dt"), (["--dt", "0.1"], "--dt"),
    (["--dt", "tiny"], "--dt"), (["--max-t", "-0.05"], "--max-t"), (["--noise", "wind"], "--noise"),
    (["--noise-prob", "2"], "--noise-prob"), (["--max-d", "0.5"], "--max-d"),
    (["--lambda-dt", "0.5"], "--lambda-dt"), (["--no-repeat"], "--no-repeat"),
]


@pytest.mark.parametrize("flags,named", FIGAR_BAD_FLAGS)
def test_figar_bad_flag_exits_2_with_one_line_naming_it(flags, named, capsys):
    assert_exits_2_naming(figar_ppo.parse_args, flags, named, capsys)


@pytest.mark.parametrize("flags,named", MORE_BAD_FLAGS + [(["--max-t=-inf"], "--max-t"),
                                                          (["--max-t", "-inf"], "--max-t")])
@pytest.mark.parametrize("module", [sar_ppo, figar_ppo])
def test_every_flag_is_checked_before_any_work(module, flags, named, tmp_path, capsys):
    log_dir = [] if "--log-dir" in flags else ["--log-dir", str(tmp_path / "logs")]
    assert_exits_2_naming(module.parse_args, [*log_dir, *flags], named, capsys)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("script,flag,value", [("sar_ppo.py", "--dt", "0"), ("figar_ppo.py", "--noise-prob", "-1")])
def test_bad_flag_on_the_command_line_writes_nothing(tmp_path, script, flag, value):
    result = train(script, tmp_path / "logs", flag, value, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and flag in result.stderr
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_a_log_dir_that_cannot_be_made_is_one_line_before_any_work(tmp_path, script):
    for log_dir in (os.path.join(ROOT, "README.md"), os.path.join(ROOT, "README.md", "runs")):
        result = train(script, tmp_path, "--log-dir", log_dir, "--total-steps", "256", *TINY, check=False)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--log-dir" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py"])
@pytest.mark.parametrize("flags,named", [(["--env-id", "MountainCarContinuous-v0"], "--dt: MountainCarContinuous-v0 "
                                          "has no dt of its own; give the seconds one of its steps stands for, "
                                          "e.g. 0.01"),
                                         (["--env-id", "Pendulum-v1"], "--max-t 0.2")])
def test_a_run_that_could_repeat_no_action_is_refused_naming_the_fix(tmp_path, script, flags, named):
    result = train(script, tmp_path / "logs", *flags, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr
    assert not (tmp_path / "logs").exists()


def test_with_the_suggested_flags_sar_repeats_actions_on_tasks_without_a_mujoco_dt(tmp_path):
    for flags in (["--env-id", "MountainCarContinuous-v0", "--dt", "0.01"],
                  ["--env-id", "Pendulum-v1", "--max-t", "0.2"]):
        result = train("sar_ppo.py", tmp_path, *flags, "--total-steps", "500", *TINY, name=flags[1])
        assert "rounded up to 512" in result.stdout and str(tmp_path / flags[1]) in result.stdout
        dt = float(json.loads((tmp_path / flags[1] / "config.json").read_text())["dt"])
        assert all(float(r["action_duration_mean_s"]) > 1.2 * dt for r in rows_of(tmp_path, flags[1]))


@pytest.mark.parametrize("script", ["sar_ppo.py", "figar_ppo.py"])
def test_the_papers_own_runs_at_a_50_ms_dt0_train_and_say_once_that_nothing_repeats(tmp_path, script):
    result = train(script, tmp_path, "--env-id", "InvertedDoublePendulum-v5", "--dt", "original", "--total-steps",
                   "256", *TINY)
    assert result.stdout.count("no action can be repeated") == 1 and "Warning" not in result.stderr


@pytest.mark.parametrize("module", [sar_ppo, figar_ppo, sar_trpo, figar_trpo])
def test_help_shows_every_range_and_never_a_default_of_none(module, capsys):
    with pytest.raises(SystemExit):
        module.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "None" not in text and "SUPPRESS" not in text
    assert "--seed SEED seeds torch, numpy and the env (must lie in [0, 4294967295]; default: 1)" in text


LEARNER_SCRIPTS = ["sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py"]


def wrapper_text(script, name):  # the class, up to the next top-level line (a definition or a comment)
    text = open(os.path.join(ROOT, script)).read()
    start = text.index(f"class {name}(")
    return text[start:re.search(r"\n(def|class|#) ", text[start + 1:]).start() + start]


def test_every_training_script_carries_the_same_wrapper_and_agent_text():
    for name, scripts in [("SafeActionRepetition", ["sar_ppo.py", "sar_trpo.py", "arp_ppo.py"]),
                          ("DurativeRepetition", ["figar_ppo.py", "figar_trpo.py"]),
                          ("Agent", ["sar_ppo.py", "figar_ppo.py", "arp_ppo.py"]),  # PPO's, with A2C's head
                          ("Agent", ["sar_trpo.py", "figar_trpo.py"])]:  # TRPO's, with the authors' TRPO head
        assert wrapper_text(scripts[0], name) == wrapper_text(scripts[1], name) == wrapper_text(scripts[-1], name)
    modules = (sar_ppo, figar_ppo, sar_trpo, figar_trpo, arp_ppo)
    for shared in ("dt_and_gamma_dt", "check_action", "check_finite", "layer_init", "normalize", "compute_gae"):
        assert len({inspect.getsource(getattr(module, shared)) for module in modules}) == 1, shared
    assert len({inspect.getsource(module.Agent.dist) for module in modules}) == 1  # the policy, one text
