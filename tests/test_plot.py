"""plot.py: seeds grouped, and unfinished, torn, variant or mismatched runs left out with a line each; the
tables' t intervals and the figures' min–max bands; every kind of figure, named by task, in one colour per
method, redrawn byte for byte."""
import glob
import math
import os

import numpy as np
import pytest

import plot
from tests.helpers import ROOT, fake_run, train


def test_plot_groups_seeds_and_skips_bad_runs_tables_give_the_t_interval(tmp_path, capsys):
    for seed, final in zip((1, 2, 3), (10.0, 20.0, 30.0)):
        fake_run(tmp_path, f"sar{seed}", final, seed=seed)
    fake_run(tmp_path, "figar1", 5.0, method="FiGAR-C-PPO")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "progress.csv").write_text("decision_steps\n")
    (tmp_path / "broken" / "config.json").write_text("{not json")
    groups = plot.load_groups([str(tmp_path)])
    assert "broken" in capsys.readouterr().err
    sar = groups[("InvertedPendulum-v5", "deterministic", "SAR-PPO", 0.002)]
    mean, ci = plot.mean_ci([plot.final_return(c) for _, c, _ in sar])
    # the tables: mean 20, sample std 10, t(0.975, 2) = 4.303: 4.303 · 10 / sqrt(3)
    assert mean == pytest.approx(20.0) and ci == pytest.approx(4.303 * 10 / math.sqrt(3))
    assert plot.mean_ci([5.0]) == (5.0, 0.0)
    assert "| 20.0 ± 24.8 |" in plot.table(groups)
    assert "| 5.0 (one seed) |" in plot.table(groups)  # no interval from one seed
    assert plot.mean_range([10.0, 20.0, 30.0]) == (20.0, 10.0, 30.0)  # the figures: the seeds' min–max


def test_plot_intervals_stay_inside_the_seeds_min_and_max(tmp_path):
    # three seeds whose returns lie in [0, 1000]: a Student t band (n = 3) would reach far below 0 and above 1000
    for seed, final in zip((1, 2, 3), (0.0, 1000.0, 40.0)):
        fake_run(tmp_path, f"ppo{seed}", final, method="PPO", seed=seed)
    groups = plot.load_groups([str(tmp_path)])
    runs = groups[("InvertedPendulum-v5", "deterministic", "PPO", 0.002)]
    t_mean, t_ci = plot.mean_ci(plot.finals(runs))
    assert t_mean - t_ci < 0 and t_mean + t_ci > 1000  # what the old bands drew
    grid, mean, low, high = plot.seed_curves(runs, "decision_steps", "return_mean")
    assert (low >= 0).all() and (high <= 1000).all() and (low <= mean).all() and (mean <= high).all()
    fig = plot.task_bars(groups, "InvertedPendulum-v5", "deterministic")
    [bars] = [c for c in fig.axes[0].containers if hasattr(c, "errorbar") and c.errorbar]
    whisker = bars.errorbar.lines[2][0].get_segments()[0]
    assert whisker[:, 1].min() == pytest.approx(0.0) and whisker[:, 1].max() == pytest.approx(1000.0)
    fig_curves = plot.task_curves(groups, "InvertedPendulum-v5", "deterministic", "decision_steps", "return_mean",
                                  "training return", "training return", smooth=1)
    band = fig_curves.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() >= 0 and band.max() <= 1000
    plot.plt.close(fig)
    plot.plt.close(fig_curves)


def test_plot_refuses_runs_with_missing_repeated_or_misplaced_rows_one_line_each(tmp_path, capsys):
    fake_run(tmp_path, "good", 10.0, seed=1)
    for seed, name, change in [(2, "missing", lambda rows: rows[:4] + rows[5:]),
                               (3, "repeated", lambda rows: rows[:5] + [rows[4]] + rows[5:]),
                               (4, "swapped", lambda rows: rows[:3] + [rows[4], rows[3]] + rows[5:])]:
        fake_run(tmp_path, name, 10.0, seed=seed)
        progress = tmp_path / name / "progress.csv"
        header, *rows = progress.read_text().splitlines()
        progress.write_text("\n".join([header] + change(rows)) + "\n")
    groups = plot.load_groups([str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert [folder for _, _, folder in groups[("InvertedPendulum-v5", "deterministic", "SAR-PPO", 0.002)]] == [
        str(tmp_path / "good")]
    assert len(err) == 3
    assert "missing" in err[0] and "a missing row" in err[0] and "n, 2n, 3n" in err[0]
    assert "repeated" in err[1] and "a repeated row" in err[1]
    assert "swapped" in err[2] and "out of order" in err[2]


def test_plot_refuses_a_progress_csv_missing_every_other_row(tmp_path, capsys):
    fake_run(tmp_path, "run", 100.0, rows=10, num_steps=100)
    path = tmp_path / "run" / "progress.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + lines[2::2]) + "\n")  # rows 200, 400, …, 1000: half of them missing
    assert plot.load_run(str(tmp_path / "run")) is None and "missing row" in capsys.readouterr().err


def test_partial_reads_a_run_in_flight_up_to_the_last_row_it_is_writing(tmp_path, capsys):
    fake_run(tmp_path, "sar1", 10.0, seed=1, rows=12, total_steps=2000)
    progress = tmp_path / "sar1" / "progress.csv"
    progress.write_text(progress.read_text()[:-20])  # row 12 half written
    [[(_, columns, _)]] = plot.load_groups([str(tmp_path)], partial=True).values()
    assert list(columns["decision_steps"]) == [100.0 * i for i in range(1, 12)] and capsys.readouterr().err == ""


def test_plot_finds_runs_recursively_counts_a_seed_once_and_skips_torn_runs(tmp_path, capsys):
    fake_run(tmp_path / "runs", "sar1", 10.0, seed=1)
    fake_run(tmp_path / "runs", "sar2", 20.0, seed=2)
    fake_run(tmp_path / "copy", "sar1", 10.0, seed=1, rows=6)  # the same seed again, shorter
    fake_run(tmp_path / "runs", "sar3", 30.0, seed=3)
    progress = tmp_path / "runs" / "sar3" / "progress.csv"
    progress.write_text(progress.read_text()[:-20])
    groups = plot.load_groups([str(tmp_path)])
    err = capsys.readouterr().err
    assert "same seed" in err and "sar3" in err and "torn" in err
    [runs] = groups.values()
    assert sorted(folder for _, _, folder in runs) == [str(tmp_path / "runs" / "sar1"), str(tmp_path / "runs" / "sar2")]
    for out in (progress, progress / "figures"):  # a file, or a folder that would be made in one
        with pytest.raises(SystemExit) as exit_info:
            plot.main([str(tmp_path), "--out", str(out)])
        assert exit_info.value.code == 2 and capsys.readouterr().err.count("\n") == 1


def test_plot_follows_symlinked_run_folders_each_real_folder_once(tmp_path):
    fake_run(tmp_path / "elsewhere", "InvertedPendulum-v5__sar__dt0.002__s1", 100.0)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "runs" / "loop").symlink_to(tmp_path / "runs")  # a link back up: no endless walk
    assert [os.path.basename(f) for f in plot.run_folders(str(tmp_path / "runs"))] == \
        ["InvertedPendulum-v5__sar__dt0.002__s1"]


def test_plot_never_averages_runs_of_different_budgets_as_seeds(tmp_path, capsys):
    fake_run(tmp_path, "a__s1", 100.0, seed=1, rows=10)
    fake_run(tmp_path, "a__s2", 120.0, seed=2, rows=10)
    fake_run(tmp_path, "a__s3", 5000.0, seed=3, rows=4)
    assert plot.main([str(tmp_path), "--summary"]) == 0
    captured = capsys.readouterr()
    assert "110.0 ±" in captured.out and "(2)" in captured.out and "5000" not in captured.out
    assert "a__s3" in captured.err and "left out" in captured.err


def test_plot_bad_paths_and_values_exit_2_with_one_line(tmp_path, capsys):
    fake_run(tmp_path, "sar1", 10.0)
    for argv, named in [([str(tmp_path / "nowhere")], "does not exist"),
                        ([str(tmp_path / "sar1" / "config.json")], "is a file"),
                        ([str(tmp_path), "--max-steps", "-5"], "--max-steps"),
                        ([str(tmp_path), "--max-steps", "0"], "--max-steps"),
                        ([str(tmp_path), "--table", "--max-steps", "1"], "is before the first update of"),
                        ([str(tmp_path), "--kinds", "pie"], "--kinds"),
                        ([str(tmp_path), "--table", "--window", "3", "1"], "--window"),
                        ([str(tmp_path), "--window", "1", "3"], "add --table"),
                        ([str(tmp_path), "--table", "--x", "physical_time_s", "--window", "5", "30"], "before 30"),
                        ([str(tmp_path), "--table", "--window", "0", "1"], "logs no return between 0 and 1"),
                        ([str(tmp_path), "--prefix", "../../escape_"], "--prefix"),
                        ([str(tmp_path), "--random-returns", str(tmp_path / "none.csv")], "--random-returns"),
                        ([str(tmp_path), "--random-returns", str(tmp_path / "sar1" / "config.json")],
                         "--random-returns"),
                        ([str(tmp_path), "--only", ""], "--only"),
                        ([str(tmp_path), "--table", "--summary"], "--summary: --table prints other tables"),
                        ([str(tmp_path), "--summary", "--ratios"], "--ratios: --summary prints other tables"),
                        ([str(tmp_path), "--ratios", "--out", str(tmp_path / "figures")], "leave out --out")]:
        printing = {"--table", "--summary", "--ratios"} & set(argv)  # they draw nothing: no --out
        with pytest.raises(SystemExit) as exit_info:
            plot.main(argv + ([] if printing else ["--out", str(tmp_path / "figures")]))
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err, (argv, err)
        assert "not a folder" not in err
    assert not (tmp_path / "figures").exists()


def test_plot_without_out_draws_into_figures_here_and_leaves_the_committed_ones(tmp_path, capsys, monkeypatch):
    fake_run(tmp_path / "runs", "sar1", 10.0)
    committed = {f: os.path.getmtime(f) for f in glob.glob(os.path.join(ROOT, "results", "figures", "*"))}
    monkeypatch.chdir(tmp_path)
    assert plot.main([str(tmp_path / "runs"), "--kinds", "curves"]) == 0
    assert glob.glob(str(tmp_path / "figures" / "*.png"))
    capsys.readouterr()
    assert {f: os.path.getmtime(f) for f in glob.glob(os.path.join(ROOT, "results", "figures", "*"))} == committed
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path / "runs"), "--out", ""])
    assert exit_info.value.code == 2 and capsys.readouterr().err.endswith("error: --out: empty; give a folder\n")


def test_plot_window_averages_the_return_of_the_updates_whose_x_lies_in_it(tmp_path, capsys):
    for seed, final in zip((1, 2), (10.0, 30.0)):
        fake_run(tmp_path, f"sar{seed}", final, seed=seed)  # return 0 for updates 1-5, `final` for 6-10
    # physical s 2, 4, ..., 20: [10, 12] holds updates 5 and 6, so each run's return is final / 2
    assert plot.main([str(tmp_path), "--table", "--x", "physical_time_s", "--window", "10", "12"]) == 0
    out = capsys.readouterr().out
    assert "| 10.0 ± 63.5 |" in out  # mean of 5 and 15, sample std 7.07; t(0.975, 1) = 12.706: 12.706 · 7.07 / sqrt(2)
    assert "| sar1 | 1,000 | 20 | 5.0 | 0.2 |" in out
    assert plot.main([str(tmp_path), "--summary", "--window", "100", "500"]) == 0  # decisions: updates 1-5
    assert "| 0.0 ± 0.0 (2) |" in capsys.readouterr().out


def test_plot_on_unfinished_runs_only_names_partial(tmp_path, capsys):
    fake_run(tmp_path, "sar1", 10.0, total_steps=10_000)
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path), "--out", str(tmp_path / "figures")])
    last = capsys.readouterr().err.splitlines()[-1]
    assert exit_info.value.code == 2 and "--partial" in last and "1 run(s) found unfinished" in last
    assert plot.main([str(tmp_path), "--partial", "--table"]) == 0


def test_plot_on_variant_runs_only_names_variants(tmp_path, capsys):
    fake_run(tmp_path, "sar-maxd0.2", 10.0, method="SAR-PPO (d_max=0.2)")
    with pytest.raises(SystemExit) as exit_info:
        plot.main([str(tmp_path), "--table"])
    last = capsys.readouterr().err.splitlines()[-1]
    assert exit_info.value.code == 2 and "--variants" in last and "1 run(s) of a variant" in last
    assert plot.main([str(tmp_path), "--variants", "--table"]) == 0


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
    assert plot.main([str(runs), "--out", str(out), "--x", "physical_time_s", "--format", "pdf",
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
        plot.main([str(runs), "--out", str(out), "--smooth", "0"])
    assert exit_info.value.code == 2
    assert "--smooth" in capsys.readouterr().err
    assert plot.main([str(runs), "--table", "--only", "sar1", "ppo2"]) == 0
    captured = capsys.readouterr()
    assert "unfinished" not in captured.err  # runs left out by --only are not even read
    assert sorted(line.split(" | ")[0] for line in captured.out.splitlines() if line.startswith("| sar") or
                  line.startswith("| ppo")) == ["| ppo2", "| sar1"]
    assert plot.main([str(runs), "--table", "--variants"]) == 0
    assert "SAR-PPO (d_max=0.2)" in capsys.readouterr().out


def test_plot_redraws_the_same_bytes(tmp_path):
    for seed in (1, 2):
        fake_run(tmp_path / "runs", f"sar{seed}", 10.0 * seed, seed=seed)
    for out in ("a", "b"):
        assert plot.main([str(tmp_path / "runs"), "--out", str(tmp_path / out), "--kinds", "curves", "bars"]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(names) == 2
    for name in names:
        data = (tmp_path / "a" / name).read_bytes()
        assert data == (tmp_path / "b" / name).read_bytes() and b"matplotlib version" not in data


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
    grid = plot.grid_figure(groups, "deterministic", "decision_steps", smooth=1)
    for ax in grid.axes:
        method = ax.get_title().split(" on")[0]
        assert all(hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == method for line in ax.get_lines())
    fig5 = plot.fig5_figure(groups, "decision_steps", 1, [ip])
    for line in fig5.axes[0].get_lines():
        assert hue_of(plot.matplotlib.colors.to_rgba(line.get_color())) == line.get_label().split(" (n")[0]
    assert len(fig5.axes[0].get_lines()) == 3
    for fig in (curves, bars, grid, fig5):
        plot.plt.close(fig)


def test_plot_gives_each_learner_its_own_figures_in_its_family_colours(tmp_path, capsys):
    for method in ("SAR-PPO", "PPO", "SAR-TRPO", "TRPO"):
        for seed in (1, 2):
            fake_run(tmp_path / "runs", f"{method}__s{seed}", 100.0 + seed, method=method, seed=seed)
    assert plot.method_color("SAR-TRPO") == plot.method_color("SAR-PPO") != plot.method_color("TRPO")
    assert plot.main([str(tmp_path / "runs"), "--out", str(tmp_path / "figs"), "--kinds", "curves"]) == 0
    names = sorted(os.listdir(tmp_path / "figs"))
    assert [n.split("_")[0] for n in names] == ["ppo", "trpo"]
    capsys.readouterr()
    assert plot.main([str(tmp_path / "runs"), "--learner", "TRPO", "--table"]) == 0
    out = capsys.readouterr().out
    assert "SAR-TRPO" in out and "SAR-PPO" not in out


def test_plot_moving_average_is_what_help_says(capsys):
    # nan: an update with no finished episode; the first N-1 updates average those so far
    y = np.array([np.nan, 2.0, np.nan, np.nan, 8.0, 4.0, 6.0])
    assert np.array_equal(plot.moving_average(y, 2), [np.nan, 2.0, 2.0, np.nan, 8.0, 6.0, 5.0], equal_nan=True)
    assert np.array_equal(plot.moving_average(y, 3), [np.nan, 2.0, 2.0, 2.0, 8.0, 6.0, 6.0], equal_nan=True)
    assert np.array_equal(plot.moving_average(y, 1), y, equal_nan=True)  # --smooth 1: the raw curve
    with pytest.raises(SystemExit):
        plot.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "last N updates (the first N-1 updates: over those so far" in help_text
    assert "1 draws the raw curves (default 10)" in help_text


def test_plot_grid_has_a_row_per_method_a_column_per_task_and_shared_y_per_column(tmp_path):
    for seed in (1, 2):
        fake_run(tmp_path, f"sar_hop{seed}", 3000.0, seed=seed, dt=0.008, env_id="Hopper-v5")
        for method in ("SAR-PPO", "PPO"):
            for dt in (0.002, 0.04):
                fake_run(tmp_path, f"{method}{dt}_{seed}", 100.0 * seed, method=method, dt=dt, seed=seed)
    fig = plot.grid_figure(plot.load_groups([str(tmp_path)]), "deterministic", "decision_steps", smooth=3)
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
    refs, scores = plot.normalised_finals(plot.load_groups([str(tmp_path)]), "deterministic", chance)
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
    assert plot.read_random_returns(os.path.join(ROOT, "results", "random_returns.csv")).keys() == set(plot.TASKS)


def test_plot_fig5_verdict_needs_two_seeds_a_side_to_call_the_intervals():
    assert plot.verdict([900.0, 950.0], [100.0, 200.0]) == "SAR above by the intervals"
    assert plot.verdict([900.0], [100.0]) == "by the mean only (one seed)"
    assert plot.verdict([900.0, 950.0], [990.0]) == "not (one seed)"
    assert plot.verdict([1000.0 + 1e-9, 1000.0 + 1e-9], [1000.0, 1000.0]) == "equal"  # float noise is no lead
    assert plot.verdict([1000.04], [1000.0]) == "equal (one seed)"


def test_a_mean_of_equal_seeds_stays_inside_their_range_so_no_whisker_is_negative():
    values = [999.9999999996382] * 3  # three DAU seeds that evaluate to 1000: their float mean lies above them
    assert np.mean(values) > max(values) and plot.mean_range(values) == (max(values),) * 3


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
    assert plot.main([str(tmp_path), "--out", str(out), "--kinds", "fig5"]) == 0
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
    fig = plot.fig5_figure(groups, "decision_steps", 1, ["InvertedPendulum-v5", "Hopper-v5"])
    assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (3, 2)  # rows: settings, columns: tasks
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[1] == "Hopper-v5\naction, δ = 0.5 ms" and titles[5] == "Hopper-v5\next-force-perceptible, δ = 0.5 ms"
    assert len(fig.axes[1].get_lines()) == 2 and len(fig.axes[2].get_lines()) == 0  # IP: action only
    plot.plt.close(fig)


def test_plot_orders_methods_as_the_paper_with_each_variant_after_its_base():
    names = {"PPO", "FiGAR-C-PPO (no limit on t)", "SAR-PPO (d_max=0.2)", "FiGAR-C-PPO", "SAR-PPO", "λ-SAR-PPO",
             "other"}
    assert plot.ordered(names, plot.METHODS) == ["SAR-PPO", "SAR-PPO (d_max=0.2)", "λ-SAR-PPO", "FiGAR-C-PPO",
                                                 "FiGAR-C-PPO (no limit on t)", "PPO", "other"]


def test_plot_summary_gives_a_row_per_task_and_dt_main_methods_unless_asked(tmp_path, capsys):
    for seed in (1, 2):
        fake_run(tmp_path, f"hop_sar{seed}", 2000.0 + seed, seed=seed, dt=0.008, env_id="Hopper-v5")
        for dt, final in ((0.002, 900.0), (0.04, 1000.0)):
            fake_run(tmp_path, f"ip_sar{dt}_{seed}", final, dt=dt, seed=seed)
        fake_run(tmp_path, f"ip_variant{seed}", 5.0, seed=seed, method="SAR-PPO (l2)")
    fake_run(tmp_path, "ip_ppo", 500.0, method="PPO", dt=0.002, rows=20)  # a longer budget
    assert plot.main([str(tmp_path), "--summary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("deterministic:") and lines[2] == "| task | δ (s) | decisions | SAR-PPO | PPO |"
    assert lines[4:] == [  # the paper's order of tasks, largest δ first; – where no run finished
        "| InvertedPendulum-v5 | 0.04 | 1,000 | 1000.0 ± 0.0 (2) | – |",
        "| InvertedPendulum-v5 | 0.002 | 1,000–2,000 | 900.0 ± 0.0 (2) | 500.0 (1) |",
        "| Hopper-v5 | 0.008 | 1,000 | 2001.5 ± 6.4 (2) | – |"]  # one δ: its own row, not "largest δ"
    assert plot.main([str(tmp_path), "--summary", "--variants"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "| task | δ (s) | decisions | SAR-PPO | SAR-PPO (l2) | PPO |"


def test_plot_ratios_give_each_method_its_lowest_over_largest_dt_return_and_the_one_rules_verdict(tmp_path, capsys):
    for method, finals_by_dt in [("SAR-TRPO", {0.04: (1000, 1000), 0.002: (990, 1000)}),
                                 ("TRPO", {0.04: (900, 1000), 0.002: (50, 100)}),
                                 ("FiGAR-C-TRPO", {0.04: (500, 900), 0.002: (600, 200)})]:
        for dt, finals_ in finals_by_dt.items():
            for seed, final in enumerate(finals_):
                fake_run(tmp_path, f"{method}{dt}_{seed}", float(final), method=method, dt=dt, seed=seed)
    assert plot.main([str(tmp_path), "--ratios"]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    # FiGAR-C-TRPO's 0.57, invariant: 400 inside 700 ± 2541
    assert row == "| InvertedPendulum-v5 | 2 / 40 | 0.99, unclear | 0.57, invariant | 0.08, not |"
    assert plot.invariance_verdict([1000.0, 999.9999999999], [1000.0000000001, 1000.0]) == "invariant"
    # every seed 1000 up to float noise (DAU's evaluations on InvertedPendulum): no δ_lowest seed is below
    assert plot.invariance_verdict([999.9999999996382] * 3, [1000.0] * 3) == "invariant"
    assert plot.invariance_verdict([999.8] * 3, [1000.0] * 3) == "not"


def test_plot_says_in_one_note_per_group_which_runs_of_another_budget_it_left_out_and_why(tmp_path, capsys):
    for seed, rows in ((1, 10), (2, 10), (3, 4)):
        fake_run(tmp_path, f"sar__s{seed}", 100.0, seed=seed, rows=rows)
    for seed, rows in ((1, 10), (2, 20), (3, 20)):
        fake_run(tmp_path, f"figar__s{seed}", 50.0, method="FiGAR-C-PPO", seed=seed, rows=rows)
    assert plot.main([str(tmp_path), "--summary"]) == 0
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
    assert plot.main([str(tmp_path), "--summary"]) == 0
    lines = capsys.readouterr().err.splitlines()
    same = next(line for line in lines if "a__s1" in line)
    longer = next(line for line in lines if "c__s2" in line)
    assert "more decisions" not in same and "both have 1,000 decisions" in same and "keeping" in same
    assert "keeping" in longer and "d__s2" in longer.split("keeping")[1] and "1,200" in longer


def test_plot_says_which_figures_of_out_it_did_not_draw_and_leaves_them_as_they_were(tmp_path, capsys):
    for env_id in ("InvertedPendulum-v5", "Hopper-v5"):
        fake_run(tmp_path / "runs", f"{env_id}__sar__s1", 100.0, env_id=env_id)
    out = tmp_path / "figs"
    assert plot.main([str(tmp_path / "runs"), "--out", str(out), "--kinds", "bars"]) == 0
    first = sorted(p.name for p in out.iterdir())
    assert len(first) == 2 and "did not draw" not in capsys.readouterr().out
    assert plot.main([str(tmp_path / "runs"), "--out", str(out), "--kinds", "bars", "--only", "InvertedPendulum"]) == 0
    printed = capsys.readouterr().out
    wrote = [line.split("wrote ", 1)[1] for line in printed.splitlines() if line.startswith("wrote ")]
    older = [line for line in printed.splitlines() if "did not draw" in line]
    assert [os.path.basename(p) for p in wrote] == ["InvertedPendulum-v5_deterministic_final_return.png"]
    assert (len(older) == 1 and "Hopper-v5_deterministic_final_return.png" in older[0]
            and "InvertedPendulum" not in older[0])
    assert sorted(p.name for p in out.iterdir()) == first  # an earlier call's figure is named, not deleted


def test_a_run_without_a_training_return_in_its_last_10_percent_is_named_where_its_last_one_stands_in(tmp_path, capsys):
    fake_run(tmp_path, "late__s1", 100.0)
    fake_run(tmp_path, "quiet__s2", 100.0, seed=2)
    progress = tmp_path / "quiet__s2" / "progress.csv"
    lines = progress.read_text().splitlines()
    column = lines[0].split(",").index("return_mean")
    for i in (9, 10):  # the last 10% of its 1,000 decisions: rows 9 and 10 end no episode
        cells = lines[i].split(",")
        cells[column] = ""
        lines[i] = ",".join(cells)
    lines[8] = lines[8].replace(",100.0,", ",60.0,")
    progress.write_text("\n".join(lines) + "\n")
    assert plot.main([str(tmp_path), "--table"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and f"no training return in the last 10% of {tmp_path / 'quiet__s2'}:" in err
    assert "late__s1" not in err
    assert "| quiet__s2 | 1,000 | 20 | 60.0 |" in out  # the number is unchanged: its last one, named


def test_a_run_in_which_no_episode_ended_reads_as_a_dash_not_nan(tmp_path, capsys):
    train("dau.py", tmp_path, "--env-id", "Pendulum-v1", "--physical-time", "2", "--num-envs", "2", "--train-every",
          "5", "--gradient-steps", "1", "--batch-size", "8", name="Pendulum-v1__dau__dt0.05__s1")  # 10 s episodes
    plot.main([str(tmp_path), "--table"])
    said = capsys.readouterr().out
    assert "– (no episode ended)" in said and "nan" not in said
