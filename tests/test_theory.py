"""benchmark/'s theory measurements: the policy gradient's variance (Thm. 1, App. F.1), AlertThenOff's
optimal policies (Prop. 2, App. C), the exploration probabilities (App. B); their CSVs resumable, refused
when damaged or of other parameters, never written over the committed ones."""
import csv
import math
import os
import shlex
import shutil
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch

import sar_ppo
from benchmark import alert_then_off, exploration, pg_variance
from tests.helpers import PG_TINY, ROOT, assert_exits_2_naming, exits_2_with_one_line, read_csv


class Bandit(gym.Env):
    """One δ-step, observation always 0, reward ξ ~ N(0, 1) whatever the action."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (3,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    dt, gamma_dt = 0.01, 0.9

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3), {}

    def step(self, action):
        return np.zeros(3), float(self.np_random.normal()), True, False, {}


@pytest.mark.parametrize("sar", [False, True])
def test_pg_variance_of_a_gaussian_bandit_is_three_per_action_dim(sar, one_thread):
    # With input 0 the fresh Agent's hidden layers are 0, μ = 0, σ = 1: only the mean head's bias
    # (G = ε·ξ, variance 1) and the log-stds (G = (ε² - 1)·ξ, variance 2) move, so tr V[G] = 3 per dim.
    decision_envs, learn = pg_variance.make_decision_envs(Bandit, sar, 10)
    torch.manual_seed(0)
    agent = sar_ppo.Agent(3, 2, repeat=sar)
    stats = pg_variance.Statistics(3, True, True)
    variances, decisions, steps = pg_variance.measure(decision_envs, learn, agent, stats, 1, ["VPG", "PPO"],
                                                      10, 1000, math.inf)
    assert variances["VPG"] == pytest.approx(3 * (2 + sar), rel=0.25) and (decisions, steps) == (1, 1)
    assert variances["PPO"] == 0.0  # one decision: its normalised advantage is 0


def test_ppo_gradient_at_ratio_one_is_the_advantage_weighted_score(one_thread):
    torch.manual_seed(0)
    agent, stats = sar_ppo.Agent(3, 2, repeat=True), pg_variance.Statistics(3, False, False)
    rng = np.random.default_rng(0)
    run = {"obs": rng.normal(size=(5, 3)).astype(np.float32), "actions": rng.normal(size=(5, 3)).astype(np.float32),
           "R": rng.normal(size=5).astype(np.float32), "w": np.array([1, 3, 2, 1, 4], np.float32),
           "terminated": True, "final_obs": np.zeros(3, np.float32)}
    g = pg_variance.gradients(agent, run, stats, 0.9, ["PPO"])["PPO"]
    with torch.no_grad():
        values = agent.critic(torch.as_tensor(run["obs"])).squeeze(1).numpy()
    adv = sar_ppo.compute_gae(run["R"], values, np.append(values[1:], 0.0), 0.9 ** run["w"],
                              np.array([0, 0, 0, 0, 1.0]), 0.95)
    adv = torch.as_tensor((adv - adv.mean()) / (adv.std(ddof=1) + 1e-8))
    logprob = agent.dist(torch.as_tensor(run["obs"])).log_prob(torch.as_tensor(run["actions"])).sum(1)
    params = [p for name, p in agent.named_parameters() if not name.startswith("critic")]
    expected = torch.cat([x.flatten() for x in torch.autograd.grad(-(adv * logprob).sum(), params)])
    assert np.allclose(g, expected.double().numpy(), atol=1e-6) and np.abs(g).max() > 1e-3


def test_pg_variance_skips_the_rows_it_has_and_appends_the_rest(tmp_path, one_thread):
    out = tmp_path / "pg.csv"
    flags = ["--envs", "InvertedPendulum-v5", "--dts", "original", "--methods", "VPG", "PPO", "--burn-in", "2",
             "--trajectories", "3", "--workers", "1", "--out", str(out)]
    pg_variance.main(flags + ["--policies", "1"])
    first = out.read_text()
    pg_variance.main(flags + ["--policies", "2"])
    rows = read_csv(out)
    assert out.read_text().startswith(first) and [(r["method"], r["policy_seed"]) for r in rows] == [
        ("VPG", "1"), ("PPO", "1"), ("VPG", "2"), ("PPO", "2")]
    assert list(rows[0]) == pg_variance.COLUMNS and (tmp_path / "pg.png").stat().st_size > 1000


def test_pg_variance_gives_the_same_rows_with_two_workers_as_with_one(tmp_path, one_thread):
    flags = ["--envs", "InvertedPendulum-v5", "--dts", "original", "--policies", "2", "--burn-in", "2",
             "--trajectories", "3"]
    by_workers = {}
    for workers in ("1", "2"):
        pg_variance.main(flags + ["--workers", workers, "--out", str(tmp_path / f"{workers}.csv")])
        rows = read_csv(tmp_path / f"{workers}.csv")
        by_workers[workers] = sorted(tuple(v for k, v in r.items() if k != "wall_time_s") for r in rows)
    assert len(by_workers["1"]) == 8 and by_workers["1"] == by_workers["2"]


def without_wall_time(path):
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in csv.DictReader(open(path, newline=""))]


def test_pg_variance_cuts_a_torn_last_row_and_measures_it_again(tmp_path, one_thread):
    out = tmp_path / "pg.csv"
    pg_variance.main(PG_TINY + ["--out", str(out)])
    whole = without_wall_time(out)
    text = out.read_text()
    out.write_text(text[:-12])  # a kill in the middle of writing the last row
    pg_variance.main(PG_TINY + ["--out", str(out)])
    assert out.read_text().count("\n") == 3 and without_wall_time(out) == whole


def test_pg_variance_cuts_a_row_the_disk_could_not_take_off_the_csv(tmp_path, monkeypatch, one_thread):
    out = tmp_path / "pg.csv"
    real_write = os.write
    monkeypatch.setattr(pg_variance.os, "write", lambda fd, data: real_write(fd, data[:7]))  # the disk fills mid-row
    with pytest.raises(OSError):
        pg_variance.main(PG_TINY + ["--out", str(out)])
    assert out.read_bytes() == f"{','.join(pg_variance.COLUMNS)}\r\n".encode()  # the header, whole; no torn row


@pytest.mark.parametrize("flag,value", [("--trajectories", "4"), ("--burn-in", "1"), ("--max-time", "0.5")])
def test_pg_variance_refuses_a_csv_of_other_parameters_naming_out(tmp_path, one_thread, capsys, flag, value):
    out = tmp_path / "pg.csv"
    pg_variance.main(PG_TINY + ["--out", str(out)])
    before = out.read_bytes()
    capsys.readouterr()
    exits_2_with_one_line(lambda: pg_variance.main(PG_TINY + ["--out", str(out), flag, value]), "--out", capsys)
    assert out.read_bytes() == before


def test_pg_variance_plot_only_without_a_csv_exits_2(tmp_path, capsys):
    exits_2_with_one_line(lambda: pg_variance.main(["--plot-only", "--out", str(tmp_path / "none.csv")]), "--out",
                          capsys)
    assert list(tmp_path.iterdir()) == []


THEORY = os.path.join(ROOT, "results", "theory")


@pytest.mark.parametrize("damage", [
    lambda text: text.replace("env_id,dt", "env,dt"),  # a foreign header
    lambda text: text.replace("\r\nInvertedPendulum", "InvertedPendulum", 1),  # two rows glued into one line
    lambda text: text.replace(",PPO,1,", ",PPO,one,"),
    lambda text: text + text.splitlines(keepends=True)[1]])  # a row twice
def test_pg_variance_damaged_csv_is_refused_in_one_line(tmp_path, capsys, damage):
    out = tmp_path / "pg.csv"
    shutil.copy(os.path.join(THEORY, "pg_variance.csv"), out)
    out.write_bytes(damage(out.read_bytes().decode()).encode())
    before = out.read_bytes()
    exits_2_with_one_line(lambda: pg_variance.main(PG_TINY + ["--out", str(out)]), str(out), capsys)
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["pg.csv"]


def test_pg_variance_reads_the_committed_table_as_complete(tmp_path, capsys):
    out = tmp_path / "pg.csv"
    shutil.copy(os.path.join(THEORY, "pg_variance.csv"), out)
    pg_variance.main(["--out", str(out)])  # the default table: nothing left to measure, the figure drawn
    assert out.read_bytes() == open(os.path.join(THEORY, "pg_variance.csv"), "rb").read()
    assert capsys.readouterr().out == "" and (tmp_path / "pg.png").stat().st_size > 10_000


def test_pg_variance_table_gives_growth_by_mean_and_median_with_the_policies_range(tmp_path, capsys):
    out = tmp_path / "pg.csv"
    rows = [(0.04, 1, 100), (0.04, 2, 200), (0.04, 3, 600), (0.002, 1, 1000), (0.002, 2, 4000), (0.002, 3, 100000)]
    out.write_text(",".join(pg_variance.COLUMNS) + "\r\n" + "".join(
        f"InvertedPendulum-v5,{dt},VPG,{seed},{v},100,{8 if dt == 0.04 else 300},8,1.0,10,inf\r\n"
        for dt, seed, v in rows))
    pg_variance.main(["--table", "--out", str(out)])
    table = capsys.readouterr().out.splitlines()
    assert table[2] == ("| InvertedPendulum-v5 | VPG | 40 → 2 | 3 | 300 → 3.5e4 (**×117**) | 200 → 4e3 (**×20**) | "
                        "[100, 600] → [1e3, 1e5] | 8 → 300 |") and len(table) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pg.csv"]  # measured and drew nothing


def test_alert_then_off_optimal_policies_follow_proposition_2():
    # SAR: tr V[G] = E[N] = 3 - 3δ (the proof counts 2, see benchmark/alert_then_off.py); FiGAR-C: 1/x + 1 - x ≥ 1/x
    x = 0.05
    G, N = alert_then_off.gradient_samples("SAR", x, 3000, seed=1)
    variance, ci = alert_then_off.estimate(G)
    assert N.mean() == pytest.approx(3 - 3 * x / 5, abs=0.02) and abs(variance - (3 - 3 * x / 5)) < 0.6
    assert ci == pytest.approx(1.96 * math.sqrt(72 / 3000), rel=0.3)  # V[G²] = 8·E[N]² for G = N(0, N)·ξ
    G, N = alert_then_off.gradient_samples("FiGAR-C", x, 1000, seed=1)
    assert N.mean() == pytest.approx(1 / x + 1 - x, abs=0.05)
    assert alert_then_off.estimate(G)[0] == pytest.approx(1 / x + 1 - x, rel=0.3) and N.min() >= 1 / x


@pytest.mark.parametrize("dt,hold", [(0.5, 0.0), (0.2, 0.0), (0.1, 0.0), (0.2, 0.4), (0.1, 0.25), (0.05, 0.4)])
def test_exploration_exact_probability_matches_enumerating_every_walk(dt, hold):
    steps = exploration.lengths(dt, hold)
    signs = np.array(np.meshgrid(*[[-1, 1]] * len(steps))).reshape(len(steps), -1).T
    brute = np.mean(np.abs(signs @ steps) * 2 >= steps.sum())
    assert math.exp(exploration.log_p_exact(steps)) == pytest.approx(brute)
    if hold == 0:  # App. B: 1 - P(|Z| < √N/2)
        assert exploration.p_normal(steps) == pytest.approx(math.erfc(math.sqrt(2 / dt) / 2 / math.sqrt(2)))
    assert exploration.p_monte_carlo(steps, 20_000, np.random.default_rng(0)) == pytest.approx(brute, abs=0.015)


THEORY_BAD_FLAGS = [
    (pg_variance, ["--envs", "Pendulum-v1"], "--envs"), (pg_variance, ["--dts", "0.1"], "--dts"),
    (pg_variance, ["--dts", "tiny"], "--dts"), (pg_variance, ["--methods", "TRPO"], "--methods"),
    (pg_variance, ["--trajectories", "1"], "--trajectories"), (pg_variance, ["--policies", "0"], "--policies"),
    (pg_variance, ["--max-time", "0"], "--max-time"), (pg_variance, ["--workers", "0"], "--workers"),
    (alert_then_off, ["--episodes", "1"], "--episodes"), (alert_then_off, ["--xs", "0"], "--xs"),
    (exploration, ["--walks", "0"], "--walks"), (exploration, ["--no-such-flag"], "--no-such-flag"),
]


@pytest.mark.parametrize("module,flags,named", THEORY_BAD_FLAGS)
def test_theory_bad_flag_exits_2_with_one_line_naming_it(module, flags, named, capsys):
    assert_exits_2_naming(module.parse_args, flags, named, capsys)


def test_theory_bad_flag_on_the_command_line_writes_nothing(tmp_path):
    out = tmp_path / "theory" / "pg_variance.csv"
    result = subprocess.run([sys.executable, os.path.join(ROOT, "benchmark", "pg_variance.py"), "--out", str(out),
                             "--policies", "0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--policies" in result.stderr
    assert not (tmp_path / "theory").exists()


@pytest.mark.parametrize("module,flags,committed", [
    (alert_then_off, ["--episodes", "2000"], "alert_then_off.csv"),
    (alert_then_off, ["--seed", "2"], "alert_then_off.csv"),
    (exploration, ["--walks", "5"], "exploration.csv"), (pg_variance, ["--trajectories", "20"], "pg_variance.csv"),
    (pg_variance, ["--envs", "Hopper-v5"], "pg_variance.csv"), (pg_variance, ["--burn-in", "3"], "pg_variance.csv")])
def test_theory_script_with_other_parameters_names_out_instead_of_writing_the_committed_results(
        module, flags, committed, capsys):
    assert module.parse_args([]).out == os.path.join(THEORY, committed)  # the defaults remake the committed numbers
    exits_2_with_one_line(lambda: module.parse_args(flags), "--out", capsys)
    exits_2_with_one_line(lambda: module.parse_args(flags + ["--out", os.path.join(THEORY, committed)]), "--out",
                          capsys)
    figure = os.path.join(THEORY, committed.replace(".csv", ".png"))
    exits_2_with_one_line(lambda: module.parse_args(flags + ["--out", "/tmp/x.csv", "--figure", figure]), "--figure",
                          capsys)


@pytest.mark.parametrize("module", [alert_then_off, exploration, pg_variance])
def test_theory_script_docstring_examples_write_no_committed_file(module):
    for line in module.__doc__.splitlines():
        if line.strip().startswith("python benchmark/"):
            flags = shlex.split(line.split("#")[0])[2:]
            args = module.parse_args(flags)
            if [f for f in flags if f not in ("--plot-only", "--table")]:  # other parameters than the defaults
                assert not os.path.realpath(args.out).startswith(os.path.realpath(THEORY)), line
                assert not os.path.realpath(args.figure).startswith(os.path.realpath(THEORY)), line
