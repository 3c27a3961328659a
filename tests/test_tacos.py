"""TaCoS-PPO (Treven et al., 2024) as flags of figar_ppo.py: with every flag off it is FiGAR-C-PPO to the last
digit; the cost it logs is c per decision of each finished episode; every hold lies in [K_MIN, t_max/δ]; the time
feature counts the episode's physical time under the repetition."""
import json
import math
import os
import re

import numpy as np
import pytest

import envs
import figar_ppo
import figar_trpo
from tests.helpers import ROOT, TINY, VARYING, rows_of, train
from tools import check_reproducible, evaluate, status


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


def test_the_tools_read_a_tacos_run_through_figar_ppo(tmp_path, capsys):
    # its flags are figar_ppo.py's: evaluate, animate (through evaluate's loading) and check_reproducible take them
    train("figar_ppo.py", tmp_path, "--total-steps", "512", *TINY, "--switch-cost", "0.25", "--min-steps", "2",
          "--duration-map", "tacos", "--time-feature", "--save-model")
    evaluate.main([str(tmp_path / "run"), "--episodes", "1"])
    check_reproducible.main([str(tmp_path / "run"), "--updates", "1"])
    out = capsys.readouterr().out
    assert "TaCoS-PPO (c=0.25, K_MIN=2) on InvertedPendulum-v5" in out and "identical: first 1 rows" in out
    assert "mean return (without the switch cost)" in out and " decisions\n" in out  # and each episode's decisions
    methods = {"TaCoS-PPO": "figar_ppo.py", "FiGAR-C-TRPO (no limit on t)": "figar_trpo.py", "SAR-A2C": "sar_ppo.py",
               "λ-SAR-TRPO": "sar_trpo.py", "PPO (scaled)": "sar_ppo.py", "ARP-PPO (scaled)": "arp_ppo.py",
               "DAU (no normalisation)": "dau.py"}
    assert {method: status.script_of({"method": method}) for method in methods} == methods  # runs made before
    assert status.script_of({"method": "SAR-PPO", "script": "mine.py"}) == "mine.py"  # config.json named its script


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
                                         (["--duration-map", "floor"], "--duration-map"),
                                         (["--duration-map", "tacos", "--dt", "0.03"], "one at --max-t 0.05 s")])
def test_a_bad_tacos_flag_is_one_line_naming_it(flags, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        figar_ppo.parse_args(flags)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err


def fake_run(root, method, seed, final, decisions_per_episode, cost=0.0):
    """A finished run of 1,000 decisions in 10 rows on Hopper at 0.5 ms: training return `final` in its last
    rows, an episode every `decisions_per_episode` decisions."""
    import plot
    import sar_ppo
    folder = root / f"{method}_{cost}_{seed}"
    folder.mkdir(parents=True)
    config = {"env_id": "Hopper-v5", "method": method, "dt": 0.0005, "seed": seed, "total_steps": 1000,
              "noise": None, "hold_penalty": False, "switch_cost": cost}
    (folder / "config.json").write_text(json.dumps(config))
    lines = [",".join(sar_ppo.SCRIPT.columns)]
    for i in range(1, 11):
        row = {c: "" for c in sar_ppo.SCRIPT.columns}
        row.update(decision_steps=i * 100, env_steps=i * 1000, physical_time_s=i * 0.5, wall_time_s=i,
                   episodes=i * 100 // decisions_per_episode, return_mean=final, action_duration_mean_s=0.005)
        lines.append(",".join(str(row[c]) for c in sar_ppo.SCRIPT.columns))
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")
    return plot


def test_the_tacos_table_charges_every_method_c_per_decision_and_compares_sar_both_ways(tmp_path):
    from benchmark import paper_figures
    for seed in (1, 2):
        fake_run(tmp_path, "SAR-PPO", seed, 1000.0 + seed, 50)  # 2 episodes a row
        fake_run(tmp_path, "FiGAR-C-PPO", seed, 900.0, 20)
        fake_run(tmp_path, "TaCoS-PPO (c=0.32)", seed, 1010.0 + seed, 10, cost=0.32)
        plot = fake_run(tmp_path, "TaCoS-PPO (c=0)", seed, 990.0, 100)
    groups = plot.load_groups([str(tmp_path)])
    table = paper_figures.tacos_table(groups)
    rows = {line.split(" | ")[3]: line for line in table.splitlines() if line.startswith("| Hopper-v5")}
    assert list(rows) == ["SAR-PPO", "FiGAR-C-PPO", "TaCoS-PPO (c=0)", "TaCoS-PPO (c=0.32)"]
    # SAR-PPO: 1001, 1002 at 50 decisions an episode: 1001 − 0.32·50 = 985 and 986
    assert rows["SAR-PPO"] == ("| Hopper-v5 | deterministic | 0.5 | SAR-PPO | 1001.5 [1001.0, 1002.0] (2) | "
                               "5.0 [5.0, 5.0] (2) | 50.0 [50.0, 50.0] (2) | 985.5 [985.0, 986.0] (2) (c = 0.32) |")
    # TaCoS-PPO (c=0.32): 1011, 1012 at 10 decisions: 1011 − 3.2 = 1007.8 and 1008.8
    tacos = "| 1011.5 [1011.0, 1012.0] (2) | 5.0 [5.0, 5.0] (2) | 10.0 [10.0, 10.0] (2) | 1008.3 [1007.8, 1008.8] (2)"
    assert tacos in rows["TaCoS-PPO (c=0.32)"]
    verdicts = [line for line in table.splitlines() if line.startswith("- ")]
    assert "- Hopper-v5, deterministic, 0.5 ms: SAR-PPO against TaCoS-PPO (c=0.32): by the return not; by return " \
           "− 0.32·decisions not" in verdicts
    assert "- Hopper-v5, deterministic, 0.5 ms: SAR-PPO against TaCoS-PPO (c=0): by the return SAR above by the " \
           "intervals; by return − 0.32·decisions SAR above by the intervals" in verdicts
    fig = paper_figures.tacos_figure(groups)
    dots = {c.get_label(): c.get_offsets().tolist() for c in fig.axes[0].collections}
    assert dots["SAR-PPO"] == [[50.0, 1001.0], [50.0, 1002.0]] and dots["TaCoS-PPO (c=0.32)"][0] == [10.0, 1011.0]
    plot.plt.close(fig)
    figures = str(tmp_path / "figures")
    assert paper_figures.main([str(tmp_path), "--variants", "--kinds", "tacos", "--out", figures]) == 0
    assert (tmp_path / "figures" / "tacos_return_vs_decisions.png").exists()


def test_the_tacos_tables_mean_hold_is_the_last_tenths_physical_time_over_its_decisions():
    import numpy as np
    from benchmark import paper_figures
    steps = np.arange(1, 11) * 100.0  # 5 ms a decision up to 800 decisions, then 10 ms: 4 s + 2 s
    time = np.minimum(steps, 800) * 0.005 + np.maximum(steps - 800, 0) * 0.010
    assert paper_figures.final_hold({"decision_steps": steps, "physical_time_s": time}) == pytest.approx(0.010)
    one_row = {"decision_steps": np.array([100.0]), "physical_time_s": np.array([0.5])}
    assert paper_figures.final_hold(one_row) == pytest.approx(0.005)  # the whole run


def test_the_tacos_table_asked_for_without_tacos_runs_says_so_in_one_line(tmp_path, capsys):
    from benchmark import paper_figures
    for seed in (1, 2):
        fake_run(tmp_path, "SAR-PPO", seed, 1000.0, 50)
    assert paper_figures.main([str(tmp_path), "--variants", "--kinds", "tacos", "--table"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--kinds tacos: no TaCoS-PPO run among these" in err


def test_with_the_time_in_the_state_a_time_limit_ends_the_value_as_tacos_has_it(tmp_path, monkeypatch):
    # Reacher never terminates: each of its 50-step episodes ends at the time limit, within 256 decisions
    seen = []
    real = figar_ppo.compute_gae

    def spy(rewards, values, next_values, discounts, dones, gae_lambda):
        seen.append((next_values[dones > 0], values[dones > 0]))
        return real(rewards, values, next_values, discounts, dones, gae_lambda)

    monkeypatch.setattr(figar_ppo, "compute_gae", spy)
    for name, flags in (("bootstrapped", []), ("tacos", ["--time-feature"])):
        figar_ppo.main(["--env-id", "Reacher-v5", "--dt", "original", "--total-steps", "256", *TINY,
                        "--log-dir", str(tmp_path), "--run-name", name, *flags])
    (figar, figar_values), (tacos, _) = seen
    assert len(figar) >= 5 and len(tacos) >= 5
    assert (tacos == 0).all()  # V at the limit of a time-augmented state: nothing is left
    assert (figar != 0).all() and not np.allclose(figar, figar_values)  # V(final observation), not V(s)


def test_a_tacos_run_resumed_mid_episode_logs_the_uninterrupted_runs_cost_and_decisions(tmp_path):
    # Reacher's episodes (1 s) end every few dozen decisions: the cut at 256 falls inside one
    flags = ["--env-id", "Reacher-v5", "--dt", "0.002", *TINY, "--switch-cost", "2", "--duration-map", "tacos",
             "--time-feature"]
    train("figar_ppo.py", tmp_path, "--total-steps", "768", *flags, name="whole")
    train("figar_ppo.py", tmp_path, "--total-steps", "256", *flags, name="cut")
    train("figar_ppo.py", tmp_path, "--total-steps", "768", *flags, "--resume", name="cut")
    assert all(r["cost_mean"] != "" for r in rows_of(tmp_path, "whole"))
    assert strip(rows_of(tmp_path, "cut")) == strip(rows_of(tmp_path, "whole"))


def test_the_tacos_map_warns_when_it_can_hold_one_delta_step_only():
    with pytest.warns(UserWarning, match="no action can be repeated"):  # K = ⌊0.05/0.03⌋ = 1
        figar_ppo.DurativeRepetition(envs.make_env("InvertedPendulum-v5", 0.03), max_t=0.05, tacos_map=True)


def test_decisions_per_episode_reach_back_to_twenty_episodes_where_few_end_in_the_last_tenth():
    from benchmark import paper_figures
    steps = np.arange(1, 101) * 1000.0  # 100 rows of 1,000 decisions; an episode every 3,000
    columns = {"decision_steps": steps, "episodes": steps // 3000}
    # the last tenth alone (its rows from 89,000 decisions on): 11,000 decisions over 4 episodes, 8% short
    assert paper_figures.decisions_per_episode(columns, episodes_at_least=1) == 2750
    assert paper_figures.decisions_per_episode(columns) == pytest.approx(3000, rel=0.05)  # over the last 20
    assert math.isnan(paper_figures.decisions_per_episode({"decision_steps": steps, "episodes": steps * 0}))


def test_the_tacos_codes_two_floors_shorten_the_holds_the_page_says(capsys):
    from benchmark import tacos_short_holds
    x = np.random.default_rng(0).uniform(-1, 1, 10_000)
    assert tacos_short_holds.short_share(x, np.float64, 2.0 ** -9) == 0  # k·δ exact: never short
    tacos_short_holds.main([])
    said = re.findall(r"(\d+\.\d)% of 1,000,000", capsys.readouterr().out)
    page = open(os.path.join(ROOT, "results", "tacos.md")).read()
    assert len(said) == 3 and f"`python benchmark/tacos_short_holds.py`: {', '.join(s + '%' for s in said)}" in page
