"""benchmark/paper_figures.py's baseline figures: App. F.2's PPO (scaled) and App. G's ARP (each task at its smallest
δ, every method overlaid, against physical time or training time) and Fig. 4's DAU (SAR-PPO against DAU at equal
physical time)."""
import json
import os

import numpy as np

import dau
import plot
from benchmark import paper_figures
import sar_ppo

TASKS = ["InvertedPendulum-v5", "Hopper-v5", "Walker2d-v5", "Reacher-v5", "Swimmer-v5"]
METHODS = ["SAR-PPO", "PPO", "PPO (scaled)", "ARP-PPO", "ARP-PPO (scaled)"]


def fake_run(root, env_id, method, dt, seed, final, seconds_per_row, physical_per_row=None):
    folder = root / f"{env_id}_{method}_{dt}_{seed}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(
        {"env_id": env_id, "method": method, "dt": dt, "seed": seed, "total_steps": 1000, "noise": None,
         "hold_penalty": False}))
    lines = [",".join(sar_ppo.SCRIPT.columns)]
    for i in range(1, 11):
        row = {c: "" for c in sar_ppo.SCRIPT.columns}
        row.update(decision_steps=i * 100, env_steps=i * 100, physical_time_s=i * (physical_per_row or 100 * dt),
                   wall_time_s=i * seconds_per_row, return_mean=final * i / 10, action_duration_mean_s=dt)
        lines.append(",".join(str(row[c]) for c in sar_ppo.SCRIPT.columns))
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")


def test_lowest_dt_figure_draws_a_panel_per_task_at_its_smallest_dt_with_every_method_in_its_colour(tmp_path):
    for env_id in TASKS:
        for k, method in enumerate(METHODS):
            for seed in (1, 2):
                for dt in (0.002, 0.04):  # the larger δ must stay out of the figure
                    fake_run(tmp_path, env_id, method, dt, seed, final=100.0 * (k + 1) * (dt == 0.002),
                             seconds_per_row=1 + k)
    groups = plot.load_groups([str(tmp_path)])
    for x_key in ("physical_time_s", "wall_time_s"):
        fig = paper_figures.lowest_figure(groups, "deterministic", x_key, 1, TASKS)
        shown = [ax for ax in fig.axes if ax.get_visible()]
        assert len(shown) == len(TASKS) and len(fig.axes) == 8  # two rows of four, the last three hidden
        for ax, env_id in zip(shown, TASKS):
            assert ax.get_title() == f"{env_id}, δ = 2 ms"
            lines = ax.get_lines()
            assert len(lines) == len(METHODS)
            for line, method in zip(lines, METHODS):
                assert np.allclose(plot.matplotlib.colors.to_rgb(line.get_color()),
                                   plot.matplotlib.colors.to_rgb(plot.FAMILY_COLORS[method]))
                assert line.get_linestyle() == ("--" if method.endswith("(scaled)") else "-")
                assert line.get_ydata().max() > 0  # the δ = 2 ms runs, not the 40 ms ones (0)
            assert ax.get_xlabel() == plot.X_LABELS[x_key]
        last = shown[0].get_lines()[-1].get_xdata()[-1]
        assert last == (10 * (1 + 4) if x_key == "wall_time_s" else 1000 * 0.002)  # each method to its own end
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert labels == [f"{m} (n = 2)" for m in METHODS]
        plot.plt.close(fig)


def test_lowest_dt_figures_are_written_by_kind_with_the_x_axis_in_the_name(tmp_path, capsys):
    for method in ("SAR-PPO", "ARP-PPO"):
        for seed in (1, 2):
            fake_run(tmp_path / "runs", "Hopper-v5", method, 0.0005, seed, final=10.0, seconds_per_row=1)
    assert paper_figures.main([str(tmp_path / "runs"), "--kinds", "lowest", "--x", "wall_time_s", "--out",
                      str(tmp_path / "figures")]) == 0
    assert os.listdir(tmp_path / "figures") == ["deterministic_lowest_dt_return_vs_wall_time_s_Hopper-v5.png"]


def test_arp_methods_are_paper_methods_with_the_arp_colour_and_not_variants():
    assert plot.base_method("ARP-PPO (scaled)") == "ARP-PPO (scaled)" and plot.base_method("ARP-PPO") == "ARP-PPO"
    assert plot.base_method("ARP-PPO (p=1, α=0.5)") == "ARP-PPO"  # another (p, α): a variant of ARP-PPO
    assert plot.method_color("ARP-PPO (scaled)") == plot.method_color("ARP-PPO") != plot.method_color("SAR-PPO")
    assert len({plot.FAMILY_COLORS[m] for m in ("SAR-PPO", "PPO", "PPO (scaled)", "ARP-PPO", "FiGAR-C-PPO")}) == 5


def fake_dau_run(root, env_id, dt, seed, seconds, evaluations):
    """A DAU run of `seconds` physical time in 10 rows, evaluated deterministically at the rows given."""
    folder = root / f"{env_id}__dau__dt{dt}__s{seed}"
    folder.mkdir(parents=True)
    steps = round(seconds / dt)
    (folder / "config.json").write_text(json.dumps(
        {"env_id": env_id, "method": "DAU", "dt": dt, "seed": seed, "total_steps": steps, "noise": None,
         "hold_penalty": False, "physical_time": seconds, "num_envs": 4, "train_every": steps // 40}))
    lines = [",".join(dau.SCRIPT.columns)]
    for i in range(1, 11):
        row = {c: "" for c in dau.SCRIPT.columns}
        row.update(decision_steps=steps * i // 10, env_steps=steps * i // 10, physical_time_s=seconds * i / 10,
                   wall_time_s=i, eval_return_mean=evaluations.get(i, ""))
        lines.append(",".join(str(row[c]) for c in dau.SCRIPT.columns))
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")


def test_fig4_reads_sar_ppo_at_daus_physical_time_and_says_where_its_run_ended_before(tmp_path, capsys):
    for seed in (1, 2):
        fake_run(tmp_path, "Hopper-v5", "SAR-PPO", 0.002, seed, final=100.0, seconds_per_row=1, physical_per_row=100)
        fake_run(tmp_path, "Hopper-v5", "SAR-PPO", 0.0004, seed, final=100.0, seconds_per_row=1, physical_per_row=40)
        for dt in (0.002, 0.0004):
            fake_dau_run(tmp_path, "Hopper-v5", dt, seed, 500.0, {5: 7.0, 10: 30.0 + seed})
    groups = plot.load_groups([str(tmp_path)])
    table = paper_figures.fig4_table(groups)
    rows = {line.split(" | ")[1]: line for line in table.splitlines() if line.startswith("| Hopper-v5")}
    # at 2 ms SAR-PPO passes T = 500 s at its 5th row (of 1,000 s): its rows in [450, 500] s give 50; DAU's last
    # evaluations 31 and 32
    # each cell the seeds' mean [min, max], the ranges the verdict compares
    assert rows["2"] == ("| Hopper-v5 | 2 | 500 | 50.0 [50.0, 50.0] (2) | 31.5 [31.0, 32.0] (2) | "
                         "SAR above by the intervals | 500 | 250,000 |")
    # at 0.4 ms its runs end at 400 s, before T: read over their last 10% of decisions (rows 9, 10: 95), and marked
    assert rows["0.4"].startswith("| Hopper-v5 | 0.4 | 500 | 95.0 [95.0, 95.0] (2) †2 | 31.5 [31.0, 32.0] (2) |")
    assert "Hopper 1250.0×" in table  # the smallest δ: 1,250,000 transitions against 1,000 decisions
    # δ-invariance at T by the one rule: SAR-PPO 95 at 0.4 ms over 50 at 2 ms, DAU 31.5 over 31.5
    assert table.splitlines()[-1] == "| Hopper-v5 | 0.4 / 2 | 1.90, invariant | 1.00, invariant |"
    fig = paper_figures.fig4_figure(groups, ["Hopper-v5"])
    bars = [p for p in fig.axes[0].patches if isinstance(p, plot.matplotlib.patches.Rectangle)]
    assert [b.get_height() for b in bars] == [95.0, 31.5, 50.0, 31.5]  # 0.4 ms first: SAR-PPO, DAU; then 2 ms
    assert [b.get_hatch() or "" for b in bars] == ["//", "", "", ""]
    assert np.allclose(plot.matplotlib.colors.to_rgb(bars[1].get_facecolor()),
                       plot.matplotlib.colors.to_rgb(plot.FAMILY_COLORS["DAU"]))
    plot.plt.close(fig)
    assert paper_figures.main([str(tmp_path), "--kinds", "fig4", "--out", str(tmp_path / "figures")]) == 0
    assert os.listdir(tmp_path / "figures") == ["fig4_final_return_at_equal_physical_time_Hopper-v5.png"]
    assert "| task | δ (ms) | T (s) | SAR-PPO | DAU |" in capsys.readouterr().out


def test_fig4_says_which_cells_have_no_dau_evaluation_and_gives_no_verdict_from_nan(tmp_path, capsys):
    for seed in (1, 2):
        fake_run(tmp_path, "Hopper-v5", "SAR-PPO", 0.002, seed, final=100.0, seconds_per_row=1, physical_per_row=100)
        fake_run(tmp_path, "Hopper-v5", "SAR-PPO", 0.0004, seed, final=100.0, seconds_per_row=1, physical_per_row=40)
        fake_dau_run(tmp_path, "Hopper-v5", 0.002, seed, 500.0, {})  # dau.py's default --eval-every 0: none
        fake_dau_run(tmp_path, "Hopper-v5", 0.0004, seed, 500.0, {10: 30.0} if seed == 1 else {})
    assert paper_figures.main([str(tmp_path), "--kinds", "fig4", "--out", str(tmp_path / "figures")]) == 0
    out, err = capsys.readouterr()
    warnings = [line for line in err.splitlines() if "Fig. 4" in line]
    assert len(warnings) == 1 and "Hopper-v5 at 0.4 ms (1 of 2 runs), 2 ms (2 of 2 runs)" in warnings[0], err
    assert "dau.py" in warnings[0] and "--eval-every N" in warnings[0]
    fig4 = out[out.index("| task | δ (ms) | T (s) |"):]
    assert "nan" not in fig4
    rows = {line.split(" | ")[1]: line for line in fig4.splitlines() if line.startswith("| Hopper-v5 | ")}
    assert rows["2"] == "| Hopper-v5 | 2 | 500 | 50.0 [50.0, 50.0] (2) | no evaluation | – | 500 | 250,000 |"
    assert rows["0.4"].startswith("| Hopper-v5 | 0.4 | 500 | 95.0 [95.0, 95.0] (2) †2 | 30.0 [30.0, 30.0] (1), "
                                  "1 without evaluation | by the mean only (one seed) |")
    assert "| Hopper-v5 | 0.4 / 2 | 1.90, invariant | – |" in fig4.splitlines()  # DAU: no value at 2 ms
    assert os.listdir(tmp_path / "figures") == ["fig4_final_return_at_equal_physical_time_Hopper-v5.png"]


def test_fig4_says_nothing_of_evaluations_when_every_dau_run_has_them(tmp_path, capsys):
    fake_run(tmp_path, "Hopper-v5", "SAR-PPO", 0.002, 1, final=100.0, seconds_per_row=1, physical_per_row=100)
    fake_dau_run(tmp_path, "Hopper-v5", 0.002, 1, 500.0, {10: 30.0})
    assert paper_figures.main([str(tmp_path), "--kinds", "fig4", "--table"]) == 0
    assert "Fig. 4" not in capsys.readouterr().err


def fake_sar_run_to_T(root, dt, seed, seconds, returns, evaluations):
    """A SAR-PPO run trained to T = `seconds` (--physical-time) in 10 rows: training `returns` and evaluations
    at the rows given."""
    folder = root / f"Hopper-v5__sar__dt{dt}__T{seconds:g}__s{seed}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(
        {"env_id": "Hopper-v5", "method": "SAR-PPO", "dt": dt, "seed": seed, "total_steps": None, "noise": None,
         "hold_penalty": False, "physical_time": seconds}))
    lines = [",".join(sar_ppo.SCRIPT.columns)]
    for i in range(1, 11):
        row = {c: "" for c in sar_ppo.SCRIPT.columns}
        row.update(decision_steps=i * 100, env_steps=i * 1000, physical_time_s=seconds * i / 10, wall_time_s=i,
                   return_mean=returns.get(i, ""), eval_return_mean=evaluations.get(i, ""), action_duration_mean_s=dt)
        lines.append(",".join(str(row[c]) for c in sar_ppo.SCRIPT.columns))
    (folder / "progress.csv").write_text("\n".join(lines) + "\n")


def test_fig4_on_equal_terms_reads_both_methods_by_evaluation_and_by_training_return(tmp_path, capsys):
    for seed in (1, 2):
        # last 10% of T = 500 s: rows 9 and 10; SAR-PPO evaluated at 40 and 42 + seed, trained at 10 + seed
        fake_sar_run_to_T(tmp_path, 0.002, seed, 500.0, {9: 10.0 + seed, 10: 10.0 + seed}, {9: 40.0, 10: 42.0 + seed})
        fake_dau_run(tmp_path, "Hopper-v5", 0.002, seed, 500.0, {10: 30.0 + seed})
        config = tmp_path / f"Hopper-v5__dau__dt0.002__s{seed}" / "config.json"  # made with normalisation
        config.write_text(json.dumps({**json.loads(config.read_text()), "no_input_norm": False}))
        progress = tmp_path / f"Hopper-v5__dau__dt0.002__s{seed}" / "progress.csv"
        lines = progress.read_text().splitlines()  # DAU's training return 20 + seed in its last two rows
        index = dau.SCRIPT.columns.index("return_mean")
        for i in (9, 10):
            cells = lines[i].split(",")
            cells[index] = str(20.0 + seed)
            lines[i] = ",".join(cells)
        progress.write_text("\n".join(lines) + "\n")
    groups = plot.load_groups([str(tmp_path)])
    assert paper_figures.fig4_cells(groups) == {}  # not the committed Fig. 4's DAU (without normalisation)
    table = paper_figures.fig4_equal_table(groups)
    rows = [line for line in table.splitlines() if line.startswith("| Hopper-v5 | 2 |")]
    # evaluation: SAR-PPO 41.5, 42 (mean of 40 and 42 + seed) against DAU 31, 32; training: 11, 12 against 21, 22
    assert rows == ["| Hopper-v5 | 2 | 500 | 41.8 [41.5, 42.0] (2) | 31.5 [31.0, 32.0] (2) | SAR above by the intervals"
                    " | 11.5 [11.0, 12.0] (2) | 21.5 [21.0, 22.0] (2) | not |"]
    assert "DAU's transitions / SAR-PPO's decisions up to T: Hopper 250.0×" in table  # 250,000 against 1,000
    assert "δ-invariance" not in table  # one δ: nothing to compare
    fig = paper_figures.fig4_equal_figure(groups, ["Hopper-v5"])
    bars = [p for p in fig.axes[0].patches if isinstance(p, plot.matplotlib.patches.Rectangle)]
    assert [b.get_height() for b in bars] == [41.75, 31.5]  # the evaluations; the training returns as diamonds
    plot.plt.close(fig)
    assert paper_figures.main([str(tmp_path), "--kinds", "fig4", "--out", str(tmp_path / "figures")]) == 0
    assert os.listdir(tmp_path / "figures") == ["fig4_equal_terms_Hopper-v5.png"]
    out, err = capsys.readouterr()
    assert "SAR-PPO, evaluation | DAU, evaluation" in out and "no DAU run found" not in err


def test_fig4_on_equal_terms_reads_each_methods_dt_invariance_by_its_evaluations(tmp_path):
    for seed in (1, 2):
        for dt, sar_eval, dau_eval in ((0.0005, 40.0, 10.0), (0.008, 41.0, 30.0)):  # SAR-PPO holds, DAU drops
            fake_sar_run_to_T(tmp_path, dt, seed, 500.0, {}, {9: sar_eval + seed, 10: sar_eval + seed})
            fake_dau_run(tmp_path, "Hopper-v5", dt, seed, 500.0, {10: dau_eval + seed})
            config = tmp_path / f"Hopper-v5__dau__dt{dt}__s{seed}" / "config.json"
            config.write_text(json.dumps({**json.loads(config.read_text()), "no_input_norm": False}))
    table = paper_figures.fig4_equal_table(plot.load_groups([str(tmp_path)]))
    assert table.splitlines()[-1] == "| Hopper-v5 | 0.5 / 8 | 0.98, invariant | 0.37, not |"
    assert "Hopper 1000.0×" in table  # at 0.5 ms: 1,000,000 transitions against 1,000 decisions
