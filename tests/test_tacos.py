"""TaCoS-PPO (Treven et al., 2024) as flags of figar_ppo.py: with every flag off it is FiGAR-C-PPO to the last
digit; the cost it logs is c per decision of each finished episode; every hold lies in [K_MIN, t_max/δ]; the time
feature counts the episode's physical time under the repetition."""
import json

import numpy as np
import pytest

import envs
import figar_ppo
import figar_trpo
from tests.helpers import TINY, VARYING, rows_of, train


def strip(rows):
    return [{k: v for k, v in r.items() if k not in VARYING} for r in rows]


def test_with_every_tacos_flag_off_the_rows_are_figar_c_ppos(tmp_path):
    train("figar_ppo.py", tmp_path, "--total-steps", "512", *TINY, name="figar")
    train("figar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--switch-cost", "0", "--min-steps", "1",
          "--duration-map", "figar", name="off")
    assert strip(rows_of(tmp_path, "off")) == strip(rows_of(tmp_path, "figar"))
    assert json.loads((tmp_path / "off" / "config.json").read_text())["method"] == "FiGAR-C-PPO"


def test_the_logged_cost_is_c_per_decision_of_each_finished_episode(tmp_path):
    train("figar_ppo.py", tmp_path, "--total-steps", "1024", *TINY, "--switch-cost", "0.25", "--duration-map",
          "tacos", "--time-feature", "--eval-every", "2", "--eval-episodes", "2")
    rows = [r for r in rows_of(tmp_path) if r["cost_mean"] != ""]
    assert rows  # InvertedPendulum's episodes end
    for r in rows:  # return_mean is the environment's; the return with the cost is return_mean − cost_mean
        assert float(r["cost_mean"]) == pytest.approx(0.25 * float(r["decisions_per_episode"]))
    assert [r["eval_decisions_per_episode"] != "" for r in rows_of(tmp_path)] == [False, True, False, True]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["method"] == "TaCoS-PPO (c=0.25)"


@pytest.mark.parametrize("module", [figar_ppo, figar_trpo])
@pytest.mark.parametrize("tacos_map,min_steps", [(True, 1), (True, 3), (False, 3)])
def test_every_hold_lies_between_k_min_and_t_max_over_delta(module, tacos_map, min_steps):
    env = module.DurativeRepetition(envs.make_env("HalfCheetah-v5", 0.002), max_t=0.05, min_steps=min_steps,
                                    tacos_map=tacos_map)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    held = []
    for u_raw in [-1.0, 1.0, *rng.uniform(-1.5, 1.5, 60)]:
        action = np.append(np.zeros(6, np.float32), np.float32(u_raw))
        held.append(env.step(action)[4]["w"])
    assert held[0] == min_steps and held[1] == 25 and min_steps <= min(held) and max(held) <= 25  # K = 0.05/0.002


def test_tacos_map_floors_once_in_whole_delta_steps():
    env = figar_ppo.DurativeRepetition(envs.make_env("HalfCheetah-v5", 0.002), max_t=0.05, tacos_map=True)
    env.reset(seed=0)
    for u, expected in [(0.5, 13), (0.999, 24), (0.05, 2), (0.04, 1)]:  # ⌊1 + 24u⌋
        action = np.append(np.zeros(6, np.float32), np.float32(2 * u - 1))
        assert env.step(action)[4]["w"] == expected


def test_the_time_feature_counts_physical_time_under_the_repetition():
    env = figar_ppo.DurativeRepetition(envs.TimeFeature(envs.make_env("InvertedPendulum-v5", 0.002)), max_t=0.05)
    obs, _ = env.reset(seed=0)
    assert obs[-1] == 0 and env.observation_space.shape == (5,)
    obs, *_, info = env.step(np.array([0.0, 1.0], np.float32))  # 25 δ-steps of the 20,000 of 40 s
    assert info["w"] == 25 and obs[-1] == pytest.approx(25 / 20_000)


@pytest.mark.parametrize("flags,named", [(["--switch-cost", "-1"], "--switch-cost"),
                                         (["--min-steps", "0"], "--min-steps"),
                                         (["--min-steps", "26", "--dt", "0.002"], "--min-steps"),
                                         (["--duration-map", "tacos", "--no-limit-t"], "--duration-map"),
                                         (["--duration-map", "floor"], "--duration-map")])
def test_a_bad_tacos_flag_is_one_line_naming_it(flags, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        figar_ppo.parse_args(flags)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err
