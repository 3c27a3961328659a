"""plot.py: seeds grouped, and unfinished, torn, variant or mismatched runs left out with a line each; the
tables' t intervals and the figures' min–max bands; every kind of figure, named by task, in one colour per
method, redrawn byte for byte."""
import glob
import math
import os

import numpy as np
import pytest

import plot
from benchmark import paper_figures
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


@pytest.mark.parametrize("program", ["plot", "paper_figures"])
def test_plot_bad_paths_and_values_exit_2_with_one_line(tmp_path, capsys, program):
    fake_run(tmp_path, "sar1", 10.0)
    main = plot.main if program == "plot" else paper_figures.main
    paper_only = {"--random-returns", "--summary", "--ratios"}  # paper_figures.py's flags
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
        if program == "plot" and paper_only & set(argv):
            continue
        printing = {"--table", "--summary", "--ratios"} & set(argv)  # they draw nothing: no --out
        with pytest.raises(SystemExit) as exit_info:
            main(argv + ([] if printing else ["--out", str(tmp_path / "figures")]))
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
    assert paper_figures.main([str(tmp_path), "--summary", "--window", "100", "500"]) == 0  # decisions: updates 1-5
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


def test_a_mean_of_equal_seeds_stays_inside_their_range_so_no_whisker_is_negative():
    values = [999.9999999996382] * 3  # three DAU seeds that evaluate to 1000: their float mean lies above them
    assert np.mean(values) > max(values) and plot.mean_range(values) == (max(values),) * 3


def test_plot_orders_methods_as_the_paper_with_each_variant_after_its_base():
    names = {"PPO", "FiGAR-C-PPO (no limit on t)", "SAR-PPO (d_max=0.2)", "FiGAR-C-PPO", "SAR-PPO", "λ-SAR-PPO",
             "other"}
    assert plot.ordered(names, plot.METHODS) == ["SAR-PPO", "SAR-PPO (d_max=0.2)", "λ-SAR-PPO", "FiGAR-C-PPO",
                                                 "FiGAR-C-PPO (no limit on t)", "PPO", "other"]


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


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_a_run_whose_progress_csv_holds_a_non_finite_return_is_named_in_one_line_and_left_out(tmp_path, capsys,
                                                                                              value):
    fake_run(tmp_path, "good__s1", 100.0)
    fake_run(tmp_path, "bad__s2", 100.0, seed=2)
    progress = tmp_path / "bad__s2" / "progress.csv"
    lines = progress.read_text().splitlines()
    lines[10] = lines[10].replace(",100.0,", f",{value},")  # the last row: line 11 of the file
    progress.write_text("\n".join(lines) + "\n")
    assert plot.main([str(tmp_path), "--table"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and f"{tmp_path / 'bad__s2'}" in err and "progress.csv" in err, err
    assert "non-finite" in err and "line 11" in err and f"return_mean = {value}" in err, err
    assert "bad__s2" not in out and "inf" not in out and "| 100.0 (one seed) |" in out


def test_a_folder_of_examples_sb3_sar_is_named_in_one_line_not_skipped_silently(tmp_path, capsys):
    fake_run(tmp_path / "runs", "InvertedPendulum-v5__sar__dt0.002__s1", 100.0)
    sb3 = tmp_path / "runs" / "sb3_sar" / "Pendulum-v1__sar__s1"  # examples/sb3_sar.py's own format
    sb3.mkdir(parents=True)
    for name in ("model.zip", "delta_stats.npz"):
        (sb3 / name).write_bytes(b"x")
    assert plot.main([str(tmp_path / "runs"), "--table"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(sb3) in err and "examples/sb3_sar.py" in err, err


def test_a_method_of_ones_own_is_read_without_variants_in_a_colour_of_its_own(tmp_path, capsys):
    for seed in (1, 2):
        fake_run(tmp_path, f"mine{seed}", 500.0, method="MySAR-PPO", seed=seed)  # a new script's method
        fake_run(tmp_path, f"lagrange{seed}", 400.0, method="Lagrange-PPO", seed=seed)
        fake_run(tmp_path, f"sar{seed}", 300.0, seed=seed)
        fake_run(tmp_path, f"variant{seed}", 200.0, method="SAR-PPO (d_max=0.2)", seed=seed)
    assert plot.main([str(tmp_path), "--table"]) == 0
    out, err = capsys.readouterr()
    assert "| MySAR-PPO | 0.002 | 2 |" in out and "| Lagrange-PPO | 0.002 | 2 |" in out
    assert "d_max" not in out and "2 run(s) of a variant" in err  # a paper method's variant: with --variants
    methods = ("MySAR-PPO", "Lagrange-PPO", "SAR-PPO", "PPO", "FiGAR-C-PPO", "DAU", "TaCoS-PPO")
    assert len({plot.method_color(m) for m in methods}) == len(methods)
    assert plot.method_color("MySAR-PPO") == plot.method_color("MySAR-PPO")  # the same in every figure
    groups = plot.load_groups([str(tmp_path)], variants=False)
    fig = plot.task_curves(groups, "InvertedPendulum-v5", "deterministic", "decision_steps", "return_mean", "r", "r", 1)
    drawn = {line.get_label().split(",")[0]: line.get_color() for line in fig.axes[0].get_lines()}
    assert drawn.keys() == {"MySAR-PPO", "Lagrange-PPO", "SAR-PPO"}
    assert all(plot.matplotlib.colors.to_rgb(c) == plot.method_color(m) for m, c in drawn.items())
    assert all(line.get_linestyle() == "-" for line in fig.axes[0].get_lines())  # one δ and no variant: solid
    plot.plt.close(fig)


@pytest.mark.parametrize("program", ["plot", "paper_figures"])
def test_help_tells_the_default_kinds_and_every_kind_there_is(program, capsys):
    module = plot if program == "plot" else paper_figures
    default = list(plot.KINDS) if program == "plot" else paper_figures.DEFAULT_KINDS
    with pytest.raises(SystemExit):
        module.main(["--help"])
    text = capsys.readouterr().out
    assert f"(default: {' '.join(default)}; see below)" in " ".join(text.split())
    told = [line.split()[0] for line in text.split("--kinds, each written as", 1)[1].splitlines()[1:]
            if line.startswith("  ") and not line.startswith("   ")]
    assert told == list(module.KINDS)


def test_a_kind_added_to_the_registry_is_drawn_chosen_and_told_with_no_other_change(tmp_path, capsys, monkeypatch):
    fake_run(tmp_path / "runs", "sar1", 10.0)
    kind = plot.Kind("<task>_<setting>_radius: the safe radius", "task", lambda groups, args, env_id, setting: [(
        f"{env_id}_{setting}_radius", plot.task_bars(groups, env_id, setting))])
    monkeypatch.setitem(plot.KINDS, "radius", kind)
    assert plot.main([str(tmp_path / "runs"), "--kinds", "radius", "--out", str(tmp_path / "figs")]) == 0
    assert os.listdir(tmp_path / "figs") == ["InvertedPendulum-v5_deterministic_radius.png"]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        plot.main(["--help"])
    assert "radius      <task>_<setting>_radius: the safe radius" in capsys.readouterr().out


def test_plot_draws_its_three_kinds_by_default(tmp_path, capsys):
    fake_run(tmp_path / "runs", "sar1", 10.0)
    assert plot.main([str(tmp_path / "runs"), "--out", str(tmp_path / "figs")]) == 0
    assert sorted(os.listdir(tmp_path / "figs")) == [f"InvertedPendulum-v5_deterministic_{name}.png" for name in
                                                     ("action_duration_vs_decision_steps", "final_return",
                                                      "return_vs_decision_steps")]
