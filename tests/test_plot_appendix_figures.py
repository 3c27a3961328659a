"""plot.py's appendix figures (App. F.2's PPO (scaled), App. G's ARP): each task at its smallest δ, every method
overlaid, against physical time or training time."""
import json
import os

import numpy as np

import plot
import sar_ppo

TASKS = ["InvertedPendulum-v5", "Hopper-v5", "Walker2d-v5", "Reacher-v5", "Swimmer-v5"]
METHODS = ["SAR-PPO", "PPO", "PPO (scaled)", "ARP-PPO", "ARP-PPO (scaled)"]


def fake_run(root, env_id, method, dt, seed, final, seconds_per_row):
    folder = root / f"{env_id}_{method}_{dt}_{seed}"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(
        {"env_id": env_id, "method": method, "dt": dt, "seed": seed, "total_steps": 1000, "noise": None,
         "hold_penalty": False}))
    lines = [",".join(sar_ppo.COLUMNS)]
    for i in range(1, 11):
        row = {c: "" for c in sar_ppo.COLUMNS}
        row.update(decision_steps=i * 100, env_steps=i * 100, physical_time_s=i * 100 * dt,
                   wall_time_s=i * seconds_per_row, return_mean=final * i / 10, action_duration_mean_s=dt)
        lines.append(",".join(str(row[c]) for c in sar_ppo.COLUMNS))
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
        fig = plot.lowest_figure(groups, "deterministic", x_key, 1, TASKS)
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
    assert plot.main([str(tmp_path / "runs"), "--kinds", "lowest", "--x", "wall_time_s", "--out",
                      str(tmp_path / "figures")]) == 0
    assert os.listdir(tmp_path / "figures") == ["deterministic_lowest_dt_return_vs_wall_time_s_Hopper-v5.png"]


def test_arp_methods_are_paper_methods_with_the_arp_colour_and_not_variants():
    assert plot.base_method("ARP-PPO (scaled)") == "ARP-PPO (scaled)" and plot.base_method("ARP-PPO") == "ARP-PPO"
    assert plot.base_method("ARP-PPO (p=1, α=0.5)") == "ARP-PPO"  # another (p, α): a variant of ARP-PPO
    assert plot.method_color("ARP-PPO (scaled)") == plot.method_color("ARP-PPO") != plot.method_color("SAR-PPO")
    assert len({plot.FAMILY_COLORS[m] for m in ("SAR-PPO", "PPO", "PPO (scaled)", "ARP-PPO", "FiGAR-C-PPO")}) == 5
