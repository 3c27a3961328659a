"""benchmark/paper_figures.py: the paper's grid, normalised bars and Fig. 5 with their verdicts, --summary and
--ratios, each method in its one colour; plot.py's notes on the runs it leaves out, through them."""
import os

import numpy as np
import pytest

import plot
from benchmark import paper_figures
from tests.helpers import ROOT, fake_run


def test_plot_never_averages_runs_of_different_budgets_as_seeds(tmp_path, capsys):
    fake_run(tmp_path, "a__s1", 100.0, seed=1, rows=10)
    fake_run(tmp_path, "a__s2", 120.0, seed=2, rows=10)
    fake_run(tmp_path, "a__s3", 5000.0, seed=3, rows=4)
    assert paper_figures.main([str(tmp_path), "--summary"]) == 0
    captured = capsys.readouterr()
    assert "110.0 ±" in captured.out and "(2)" in captured.out and "5000" not in captured.out
    assert "a__s3" in captured.err and "left out" in captured.err


def test_plot_writes_every_figure_named_by_task_and_skips_unfinished_runs(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed in (1, 2):
        fake_run(runs, f"sar{seed}", 10.0 * seed, seed=seed)
        fake_run(runs, f"ppo{seed}", 1.0, method="PPO", seed=seed, noise="ext-force")
        fake_run(runs, f"hop{seed}", 30.0, seed=seed, env_id="Hopper-v5", dt=0.008)
        fake_run(runs, f"variant{seed}", 99.0, method="SAR-PPO (d_max=0.2)", seed=seed)
    fake_run(runs, "unfinished", 3.0, seed=3, total_steps=10_000)
    random_returns = tmp_path / "random.csv"
    random_returns.write_text("env_id,return_mean\nInvertedPendulum-v5,5\nHopper-v5,10\n")
    out = tmp_path / "figures"
    assert paper_figures.main([str(runs), "--out", str(out), "--x", "physical_time_s", "--format", "pdf",
                      "--random-returns", str(random_returns)]) == 0
    captured = capsys.readouterr()
    assert "unfinished" in captured.err and "d_max" not in captured.out  # variants only with --variants
    names = sorted(p.name for p in out.iterdir())
    per_task = [f"{task}_{setting}_{kind}.pdf" for task, setting in [("InvertedPendulum-v5", "deterministic"),
                                                                     ("Hopper-v5", "deterministic"),
                                                                     ("InvertedPendulum-v5", "ext-force")]
                for kind in ("return_vs_physical_time_s", "final_return", "action_duration_vs_physical_time_s")]
    assert names == sorted(per_task + [
        "deterministic_grid_return_vs_physical_time_s_InvertedPendulum+Hopper.pdf",
        "ext-force_grid_return_vs_physical_time_s_InvertedPendulum-v5.pdf",
        "deterministic_final_return_normalised_InvertedPendulum+Hopper.pdf"])  # normalised: deterministic only
    assert all(p.stat().st_size > 1000 for p in out.iterdir())
    with pytest.raises(SystemExit) as exit_info:
        paper_figures.main([str(runs), "--out", str(out), "--smooth", "0"])
    assert exit_info.value.code == 2
    assert "--smooth" in capsys.readouterr().err
    assert paper_figures.main([str(runs), "--table", "--only", "sar1", "ppo2"]) == 0
    captured = capsys.readouterr()
    assert "unfinished" not in captured.err  # runs left out by --only are not even read
    assert sorted(line.split(" | ")[0] for line in captured.out.splitlines() if line.startswith("| sar") or
                  line.startswith("| ppo")) == ["| ppo2", "| sar1"]
    assert paper_figures.main([str(runs), "--table", "--variants"]) == 0
    assert "SAR-PPO (d_max=0.2)" in capsys.readouterr().out


def test_plot_gives_each_method_one_colour_in_every_kind_of_figure(tmp_path):
    for seed in (1, 2):
        for method in ("SAR-PPO", "FiGAR-C-PPO", "PPO"):
            for dt in (0.002, 0.04):
                fake_run(tmp_path, f"{method}{dt}_{seed}", 100.0 * seed, method=method, dt=dt, seed=seed)
            fake_run(tmp_path, f"{method}_noise{seed}", 50.0, method=method, seed=seed, noise="action")
    groups = plot.load_groups([str(tmp_path)])
    base = {m: np.array(plot.matplotlib.colors.to_rgb(plot.FAMILY_COLORS[m]))
            for m in ("SAR-PPO", "FiGAR-C-PPO", "PPO")}

    def hue_of(rgba):
        """Which method's colour `rgba` is a shade of (mixed with white): the one it lies on the line to white from."""
        rgb = np.array(rgba[:3])
        distance = {m: np.linalg.norm(np.cross(rgb - 1, c - 1)) / np.linalg.norm(c - 1) for m, c in base.items()}
        return min(distance, key=distance.get)

    ip = "InvertedPendulum-v5"
    curves = plot.task_curves(groups, ip, "deterministic", "decision_steps", "return_mean", "r", "r", smooth=1)
    for line in curves.axes[0].get_lines():
        assert hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == line.get_label().split(",")[0]
    bars = plot.task_bars(groups, ip, "deterministic")
    ticks = [t.get_text() for t in bars.axes[0].get_xticklabels()]
    for patch in bars.axes[0].patches:
        assert hue_of(patch.get_facecolor()) == ticks[round(patch.get_x() + patch.get_width() / 2)]
    grid = paper_figures.grid_figure(groups, "deterministic", "decision_steps", smooth=1)
    for ax in grid.axes:
        method = ax.get_title().split(" on")[0]
        assert all(hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == method for line in ax.get_lines())
    fig5 = paper_figures.fig5_figure(groups, "decision_steps", 1, [ip])
    for line in fig5.axes[0].get_lines():
        assert hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == line.get_label().split(" (n")[0]
    assert len(fig5.axes[0].get_lines()) == 3
    for fig in (curves, bars, grid, fig5):
        plot.plt.close(fig)


def test_plot_grid_has_a_row_per_method_a_column_per_task_and_shared_y_per_column(tmp_path):
    for seed in (1, 2):
        fake_run(tmp_path, f"sar_hop{seed}", 3000.0, seed=seed, dt=0.008, env_id="Hopper-v5")
        for method in ("SAR-PPO", "PPO"):
            for dt in (0.002, 0.04):
                fake_run(tmp_path, f"{method}{dt}_{seed}", 100.0 * seed, method=method, dt=dt, seed=seed)
    fig = paper_figures.grid_figure(plot.load_groups([str(tmp_path)]), "deterministic", "decision_steps", smooth=3)
    assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (2, 2)  # rows: methods, columns: tasks
    assert [ax.get_title() for ax in fig.axes] == [  # the paper's orders, not alphabetical
        "SAR-PPO on\nInvertedPendulum-v5 (n = 2)", "SAR-PPO on Hopper-v5 (n = 2)",  # a long title: two lines
        "PPO on InvertedPendulum-v5 (n = 2)", "PPO on Hopper-v5 (n = 0)"]
    (sar_ip, sar_hop), (ppo_ip, ppo_hop) = fig.axes[:2], fig.axes[2:]
    shared = sar_ip.get_shared_y_axes()
    assert shared.joined(sar_ip, ppo_ip) and shared.joined(sar_hop, ppo_hop) and not shared.joined(sar_ip, sar_hop)
    assert sar_ip.get_ylim() == ppo_ip.get_ylim() and sar_hop.get_ylim()[1] > 3000 > sar_ip.get_ylim()[1]
    assert len(sar_ip.get_lines()) == 2 and len(sar_hop.get_lines()) == 1  # a line per δ
    # rows 1-5 return 0, rows 6-10 the final (150 = the mean over seeds): row 6 at x = 600 is 150 / 3
    x, y = sar_ip.get_lines()[0].get_data()
    assert x[55] == pytest.approx(600) and y[55] == pytest.approx(50) and y[-1] == pytest.approx(150)
    plot.plt.close(fig)


def test_plot_normalisation_puts_the_best_largest_dt_return_at_1_and_a_random_policy_at_0(tmp_path, capsys):
    for method, dt, finals in [("SAR-PPO", 0.04, (700, 900)), ("PPO", 0.04, (1000, 1000)),
                               ("SAR-PPO", 0.002, (500, 600)), ("PPO", 0.002, (100, 300))]:
        for seed, final in enumerate(finals):
            fake_run(tmp_path, f"ip_{method}{dt}_{seed}", float(final), method=method, dt=dt, seed=seed, dt0=0.04)
    fake_run(tmp_path, "swimmer", 20.0, dt=0.002, dt0=0.04, env_id="Swimmer-v5")  # a lone 2 ms run: not "δ0"
    for seed, (dt, final) in enumerate([(0.02, -5.0), (0.001, -4.0), (0.001, -45.0)]):  # Reacher: R* < 0
        fake_run(tmp_path, f"reacher{seed}", final, dt=dt, seed=seed, env_id="Reacher-v5")
    fake_run(tmp_path, "hopper", 10.0, dt=0.008, env_id="Hopper-v5")  # R* = R_random: no scale
    fake_run(tmp_path, "walker", 10.0, dt=0.008, env_id="Walker2d-v5")  # no R_random
    chance = {"InvertedPendulum-v5": 0.0, "Reacher-v5": -45.0, "Hopper-v5": 10.0, "Swimmer-v5": 0.0}
    refs, scores = paper_figures.normalised_finals(plot.load_groups([str(tmp_path)]), "deterministic", chance)
    err = capsys.readouterr().err
    assert "Hopper-v5 (deterministic) left out" in err and "Walker2d-v5 (deterministic) left out" in err
    assert refs == {"InvertedPendulum-v5": (1000.0, "PPO", 0.04, 0.0, True),
                    "Reacher-v5": (-5.0, "SAR-PPO", 0.02, -45.0, False),  # Reacher's runs recorded no δ0
                    "Swimmer-v5": (20.0, "SAR-PPO", 0.002, 0.0, False)}
    ip = "InvertedPendulum-v5", "deterministic"
    assert list(scores[(*ip, "SAR-PPO", 0.04)]) == pytest.approx([0.7, 0.9])
    assert list(scores[(*ip, "SAR-PPO", 0.002)]) == pytest.approx([0.5, 0.6])
    assert list(scores[(*ip, "PPO", 0.002)]) == pytest.approx([0.1, 0.3])
    # a negative R*: still 1 at R*, 0 at R_random, higher is better: (−4 + 45) / 40 and (−45 + 45) / 40
    assert sorted(scores[("Reacher-v5", "deterministic", "SAR-PPO", 0.001)]) == pytest.approx([0.0, 41 / 40])
    committed = paper_figures.read_random_returns(os.path.join(ROOT, "results", "random_returns.csv"))
    assert committed.keys() == set(plot.TASKS)


def test_plot_fig5_verdict_needs_two_seeds_a_side_to_call_the_intervals():
    assert paper_figures.verdict([900.0, 950.0], [100.0, 200.0]) == "SAR above by the intervals"
    assert paper_figures.verdict([900.0], [100.0]) == "by the mean only (one seed)"
    assert paper_figures.verdict([900.0, 950.0], [990.0]) == "not (one seed)"
    assert paper_figures.verdict([1000.0 + 1e-9, 1000.0 + 1e-9], [1000.0, 1000.0]) == "equal"  # float noise is no lead
    assert paper_figures.verdict([1000.04], [1000.0]) == "equal (one seed)"


def test_plot_fig5_draws_a_row_per_stochastic_setting_for_any_subset_of_tasks_with_a_verdict(tmp_path, capsys):
    finals = {("SAR-PPO", "action"): (900, 950), ("FiGAR-C-PPO", "action"): (100, 200),  # above by the intervals
              ("SAR-PPO", "ext-force"): (300, 900), ("FiGAR-C-PPO", "ext-force"): (400, 500),  # by the mean only
              ("SAR-PPO", "ext-force-perceptible"): (10, 20), ("FiGAR-C-PPO", "ext-force-perceptible"): (30, 40)}
    for (method, noise), values in finals.items():
        for seed, final in enumerate(values, 1):
            fake_run(tmp_path, f"hop_{method}_{noise}_{seed}", float(final), method=method, seed=seed,
                     noise=noise, env_id="Hopper-v5", dt=0.0005)
    fake_run(tmp_path, "hop_larger_dt", 5.0, noise="action", env_id="Hopper-v5", dt=0.008)  # not δ_lowest
    fake_run(tmp_path, "ip_action", 1000.0, noise="action")  # a task with one setting and one method
    fake_run(tmp_path, "ip_deterministic", 1000.0)  # not a stochastic setting
    out = tmp_path / "figures"
    assert paper_figures.main([str(tmp_path), "--out", str(out), "--kinds", "fig5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(p.name for p in out.iterdir()) == ["fig5_return_vs_decision_steps_InvertedPendulum+Hopper.png"]
    table = lines[lines.index(next(line for line in lines if line.startswith("| task | setting | δ (ms)"))):]
    assert table[2:6] == [
        "| InvertedPendulum-v5 | action | 2 | 1,000 | 1000.0 [1000.0, 1000.0] (1) | – | – |",
        "| Hopper-v5 | action | 0.5 | 1,000 | 925.0 [900.0, 950.0] (2) | 150.0 [100.0, 200.0] (2) | "
        "SAR above by the intervals |",
        "| Hopper-v5 | ext-force | 0.5 | 1,000 | 600.0 [300.0, 900.0] (2) | 450.0 [400.0, 500.0] (2) | "
        "by the mean only |",
        "| Hopper-v5 | ext-force-perceptible | 0.5 | 1,000 | 15.0 [10.0, 20.0] (2) | 35.0 [30.0, 40.0] (2) | not |"]
    groups = plot.load_groups([str(tmp_path)])
    fig = paper_figures.fig5_figure(groups, "decision_steps", 1, ["InvertedPendulum-v5", "Hopper-v5"])
    assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (3, 2)  # rows: settings, columns: tasks
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[1] == "Hopper-v5\naction, δ = 0.5 ms" and titles[5] == "Hopper-v5\next-force-perceptible, δ = 0.5 ms"
    assert len(fig.axes[1].get_lines()) == 2 and len(fig.axes[2].get_lines()) == 0  # IP: action only
    plot.plt.close(fig)


def test_plot_summary_gives_a_row_per_task_and_dt_main_methods_unless_asked(tmp_path, capsys):
    for seed in (1, 2):
        fake_run(tmp_path, f"hop_sar{seed}", 2000.0 + seed, seed=seed, dt=0.008, env_id="Hopper-v5")
        for dt, final in ((0.002, 900.0), (0.04, 1000.0)):
            fake_run(tmp_path, f"ip_sar{dt}_{seed}", final, dt=dt, seed=seed)
        fake_run(tmp_path, f"ip_variant{seed}", 5.0, seed=seed, method="SAR-PPO (l2)")
    fake_run(tmp_path, "ip_ppo", 500.0, method="PPO", dt=0.002, rows=20)  # a longer budget
    assert paper_figures.main([str(tmp_path), "--summary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("deterministic:") and lines[2] == "| task | δ (s) | decisions | SAR-PPO | PPO |"
    assert lines[4:] == [  # the paper's order of tasks, largest δ first; – where no run finished
        "| InvertedPendulum-v5 | 0.04 | 1,000 | 1000.0 ± 0.0 (2) | – |",
        "| InvertedPendulum-v5 | 0.002 | 1,000–2,000 | 900.0 ± 0.0 (2) | 500.0 (1) |",
        "| Hopper-v5 | 0.008 | 1,000 | 2001.5 ± 6.4 (2) | – |"]  # one δ: its own row, not "largest δ"
    assert paper_figures.main([str(tmp_path), "--summary", "--variants"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "| task | δ (s) | decisions | SAR-PPO | SAR-PPO (l2) | PPO |"


def test_plot_ratios_give_each_method_its_lowest_over_largest_dt_return_and_the_one_rules_verdict(tmp_path, capsys):
    for method, finals_by_dt in [("SAR-TRPO", {0.04: (1000, 1000), 0.002: (990, 1000)}),
                                 ("TRPO", {0.04: (900, 1000), 0.002: (50, 100)}),
                                 ("FiGAR-C-TRPO", {0.04: (500, 900), 0.002: (600, 200)})]:
        for dt, finals_ in finals_by_dt.items():
            for seed, final in enumerate(finals_):
                fake_run(tmp_path, f"{method}{dt}_{seed}", float(final), method=method, dt=dt, seed=seed)
    assert paper_figures.main([str(tmp_path), "--ratios"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("| TRPO | SAR-TRPO ≥ FiGAR-C-TRPO at δ_lowest |")
    # FiGAR-C-TRPO's 0.57, invariant: 400 inside 700 ± 2541; at 2 ms each SAR-TRPO seed (990, 1000) above 600
    assert lines[2] == ("| InvertedPendulum-v5 | 2 / 40 | 0.99, unclear | 0.57, invariant | 0.08, not "
                        "| SAR above by the intervals |")
    fake_run(tmp_path, "SAR-TRPO0.008_0", 2000.0, method="SAR-TRPO", env_id="Hopper-v5", dt=0.008)
    assert paper_figures.main([str(tmp_path), "--ratios"]) == 0  # Hopper at one δ only: no row, no "8 / 8"
    assert [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines()[2:]] == ["| InvertedPendulum-v5"]
    for dt in (0.008, 0.0005):  # FiGAR-C-TRPO at δ0 only: no comparison at δ_lowest
        fake_run(tmp_path, f"SAR-TRPO{dt}_1", 2000.0, method="SAR-TRPO", env_id="Hopper-v5", dt=dt, seed=1)
    fake_run(tmp_path, "FiGAR-C-TRPO0.008_0", 500.0, method="FiGAR-C-TRPO", env_id="Hopper-v5", dt=0.008)
    assert paper_figures.main([str(tmp_path), "--ratios"]) == 0
    assert capsys.readouterr().out.splitlines()[3] == "| Hopper-v5 | 0.5 / 8 | 1.00, invariant | – | – | – |"
    assert paper_figures.invariance_verdict([1000.0, 999.9999999999], [1000.0000000001, 1000.0]) == "invariant"
    # every seed 1000 up to float noise (DAU's evaluations on InvertedPendulum): no δ_lowest seed is below
    assert paper_figures.invariance_verdict([999.9999999996382] * 3, [1000.0] * 3) == "invariant"
    assert paper_figures.invariance_verdict([999.8] * 3, [1000.0] * 3) == "not"


def test_plot_says_in_one_note_per_group_which_runs_of_another_budget_it_left_out_and_why(tmp_path, capsys):
    for seed, rows in ((1, 10), (2, 10), (3, 4)):
        fake_run(tmp_path, f"sar__s{seed}", 100.0, seed=seed, rows=rows)
    for seed, rows in ((1, 10), (2, 20), (3, 20)):
        fake_run(tmp_path, f"figar__s{seed}", 50.0, method="FiGAR-C-PPO", seed=seed, rows=rows)
    assert paper_figures.main([str(tmp_path), "--summary"]) == 0
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 2 and "warning" not in err, err  # one line per group, not a warning
    sar = next(line for line in lines if "SAR-PPO" in line)
    figar = next(line for line in lines if "FiGAR-C-PPO" in line)
    assert sar.startswith("note: ") and "sar__s3 (400 decisions)" in sar and "1,000" in sar and "never averaged" in sar
    assert "figar__s1 (1,000 decisions)" in figar and "2,000" in figar and "--max-steps 1000" in figar


def test_plot_keeps_one_of_two_folders_of_the_same_seed_and_says_why_without_claiming_more_decisions(tmp_path, capsys):
    fake_run(tmp_path, "a__s1", 100.0)
    fake_run(tmp_path, "b__s1", 100.0)  # a copy of the same seed, as many decisions
    fake_run(tmp_path, "c__s2", 100.0, seed=2, rows=10)
    fake_run(tmp_path, "d__s2", 100.0, seed=2, rows=12)
    assert paper_figures.main([str(tmp_path), "--summary"]) == 0
    lines = capsys.readouterr().err.splitlines()
    same = next(line for line in lines if "a__s1" in line)
    longer = next(line for line in lines if "c__s2" in line)
    assert "more decisions" not in same and "both have 1,000 decisions" in same and "keeping" in same
    assert "keeping" in longer and "d__s2" in longer.split("keeping")[1] and "1,200" in longer
