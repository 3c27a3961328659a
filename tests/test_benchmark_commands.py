"""benchmark/, what reproduces the paper: the run lists (full_grid.sh never writes to the committed runs,
METHODS chooses fig3_hopper_1m.sh's runs, a list draws no figure from failed or missing runs), run.sh,
figures.sh, and the analysis scripts behind the figures (safe regions, rising stochasticity, one policy
across δ, the random policy's returns, speed). The walk of every run list's bad input is test_promises.py's."""
import csv
import glob
import os
import shutil
import subprocess
import sys

import pytest

import plot
from benchmark import (
    alert_then_off,
    exploration,
    pg_variance,
    plot_rising_stochasticity,
    random_returns,
    safe_regions,
    same_policy_across_dt,
)
from tests.helpers import BENCHMARK, ROOT, TINY, damaged, exits_2_with_one_line, fake_run, run_python, train


def test_full_grid_never_writes_to_the_committed_runs():
    listing = subprocess.run(["bash", os.path.join(ROOT, "benchmark", "full_grid.sh"), "--list"],
                             capture_output=True, text=True).stdout
    assert listing.count("--log-dir runs/full_grid ") == len(listing.splitlines()) > 0


def fake_python(tmp_path, runs_exit):
    """A `python` on PATH that ends every training command with `runs_exit` (and trains nothing), runs
    status.py for real, and records any other command (a figure drawn) in tmp_path/drawn."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(
        "#!/bin/sh\n"
        f'case "$1" in sar_ppo.py|figar_ppo.py) exit {runs_exit};; tools/status.py) exec {sys.executable} "$@";; esac\n'
        f'echo "$*" >> {tmp_path / "drawn"}\n')
    (bin_dir / "python").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_hopper_1m_methods_choose_the_runs_and_a_bad_one_is_one_line_before_any_run(tmp_path):
    script = os.path.join(BENCHMARK, "fig3_hopper_1m.sh")
    env = {**os.environ, "SEEDS": "4 5", "METHODS": "sar"}
    listing = subprocess.run(["bash", script, "--list"], capture_output=True, text=True, env=env, timeout=30)
    lines = listing.stdout.splitlines()
    assert listing.returncode == 0 and len(lines) == 4  # 2 seeds × 2 δ, SAR-PPO only
    assert all("sar_ppo.py" in line and "--no-repeat" not in line for line in lines)
    bad = subprocess.run(["bash", script, "2"], capture_output=True, text=True, timeout=30,
                         env={**fake_python(tmp_path, 0), "METHODS": "sar sarr"})
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "METHODS" in bad.stderr and "sarr" in bad.stderr
    assert bad.stdout == "" and not (tmp_path / "drawn").exists()


def run_sh(workers, commands):
    return subprocess.run(["bash", os.path.join(BENCHMARK, "run.sh"), *workers], input=commands,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("workers", ["0", "-1", "two"])
def test_run_sh_refuses_a_worker_count_below_one_before_running_anything(tmp_path, workers):
    result = run_sh([workers], f"touch {tmp_path / 'ran'}\n")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "workers" in result.stderr
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("script", ["fig3_ppo_three_tasks.sh", "fig6_safe_regions.sh"])  # the second draws after
def test_a_run_lists_help_says_its_usage_in_one_line_and_runs_and_draws_nothing(tmp_path, script):
    result = subprocess.run(["bash", os.path.join(BENCHMARK, script), "--help"], text=True,
                            capture_output=True, timeout=30, env=fake_python(tmp_path, 0))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "a run list takes [workers] (1 to 9999, default 2) or --list, got '--help'" in result.stderr
    assert "start:" not in result.stdout and not (tmp_path / "drawn").exists()


def test_run_sh_given_a_run_lists_list_flag_says_whose_flag_it_is_and_runs_nothing(tmp_path):
    result = run_sh(["--list"], f"touch {tmp_path / 'ran'}\n")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--list is a run list's flag" in result.stderr
    assert not (tmp_path / "ran").exists()


def test_run_sh_exits_non_zero_when_a_command_failed_and_runs_the_others():
    result = run_sh(["2"], "true\nfalse\n\ntrue\n")
    assert result.returncode != 0 and result.stdout.count("done:") == 2 and "FAILED: false" in result.stdout
    assert run_sh(["1"], "true\ntrue\n").returncode == 0


def test_run_sh_runs_each_command_with_its_quotes_intact(tmp_path):
    out = tmp_path / "said"
    result = run_sh(["2"], f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write('a  b')\" {out}\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_text() == "a  b"


@pytest.mark.parametrize("figure_script", ["appI_ablations.sh", "appH_lambda_sar.sh",
                                           "appE_rising_stochasticity.sh", "fig6_safe_regions.sh"])
def test_figure_script_draws_nothing_when_a_run_failed(tmp_path, figure_script):
    result = subprocess.run(["bash", os.path.join(BENCHMARK, figure_script), "2"], capture_output=True, text=True,
                            env=fake_python(tmp_path, 1), timeout=120)
    assert result.returncode != 0 and "FAILED" in result.stdout and not (tmp_path / "drawn").exists()


@pytest.mark.parametrize("figure_script", ["appI_ablations.sh", "appE_rising_stochasticity.sh"])
def test_figure_script_draws_nothing_from_an_incomplete_set_of_runs(tmp_path, figure_script):
    env = {**fake_python(tmp_path, 0), "SEEDS": "99"}  # the runs "succeed" but seed 99 has no run folders
    result = subprocess.run(["bash", os.path.join(BENCHMARK, figure_script), "2"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode != 0 and "not finished" in result.stderr and not (tmp_path / "drawn").exists()


def test_figures_sh_that_fails_midway_leaves_every_committed_figure_as_it_was(tmp_path):
    fake = tmp_path / "python"  # an interpreter without matplotlib: the first paper_figures.py call fails
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named matplotlib' >&2\nexit 1\n")
    fake.chmod(0o755)
    figures = sorted(glob.glob(os.path.join(ROOT, "results", "figures", "*.png")) +
                     glob.glob(os.path.join(ROOT, "results", "theory", "*.png")))
    before = {f: open(f, "rb").read() for f in figures}
    result = subprocess.run(["bash", os.path.join(ROOT, "benchmark", "figures.sh")], capture_output=True, text=True,
                            env={**os.environ, "PYTHON": str(fake)}, timeout=60)
    assert result.returncode != 0 and len(figures) > 40
    assert {f: open(f, "rb").read() for f in figures} == before
    assert not glob.glob(os.path.join(ROOT, "results", ".redraw.*"))


def test_safe_regions_draws_a_trained_run_and_measures_radius_against_speed(tmp_path, capsys):
    train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY, "--delta-dims", "2,3", "--noise", "ext-force",
          "--save-model")
    (tmp_path / "run" / "checkpoint.pt").unlink()  # as in a clone: model.pt is all it needs
    safe_regions.main([str(tmp_path / "run"), "--draw", "5", "--decisions", "200", "--out", str(tmp_path / "fig")])
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == ["run_radius_vs_speed.png", "run_safe_regions.png"]
    assert "Spearman ρ(speed, d)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:  # a run without --delta-dims has no plane to draw
        safe_regions.main([str(tmp_path / "nothing")])
    assert exit_info.value.code == 2


def test_rising_stochasticity_normalises_each_method_by_its_own_cap(tmp_path):
    for p_ext, seed in [(None, 1), (None, 2), (0.2, 1)]:
        fake_run(tmp_path, f"figar{p_ext}{seed}", 100.0, method="FiGAR-C-PPO", seed=seed, noise="ext-force",
                 noise_prob=p_ext, max_t=0.05)
    found = plot_rising_stochasticity.cells(plot.load_groups([str(tmp_path)]))
    assert sorted(found) == [("FiGAR-C-PPO", 0.05), ("FiGAR-C-PPO", 0.2)]  # no --noise-prob: the paper's 0.05
    assert found[("FiGAR-C-PPO", 0.05)] == [(100.0, pytest.approx(0.4))] * 2  # t = 0.02 s of t_max = 0.05 s


def test_same_policy_across_dt_measures_each_dt_with_one_policy(capsys):
    same_policy_across_dt.main(["--env-id", "InvertedPendulum-v5", "--episodes", "2", "--burn-in", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0.")]
    assert [row.split(" | ")[0] for row in rows] == ["| 0.002", "| 0.04"]
    durations = [float(row.split(" | ")[1]) for row in rows]
    assert 2.0 <= durations[0] <= 50.0 and durations[1] >= 40.0  # at δ0 a decision lasts at least one 40 ms step
    with pytest.raises(SystemExit):
        same_policy_across_dt.main(["--model", "/nonexistent/model.pt"])


def test_same_policy_across_dt_refuses_an_empty_model_rather_than_rolling_out_an_untrained_policy(capsys):
    exits_2_with_one_line(lambda: same_policy_across_dt.main(["--model", ""]), "--model: empty", capsys)


def test_same_policy_across_dt_reads_a_running_runs_checkpoint_as_its_model(tmp_path, capsys):
    train("sar_ppo.py", tmp_path, "--total-steps", "256", *TINY, "--save-model")
    tables = []
    for name in ("model.pt", "checkpoint.pt"):  # the end of a run: both hold the same agent and statistics
        same_policy_across_dt.main(["--model", str(tmp_path / "run" / name), "--episodes", "2"])
        tables.append([line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0.")])
    assert len(tables[0]) == 2 and tables[0] == tables[1]


def test_random_returns_measures_a_uniform_policy_and_never_overwrites_the_committed_csv(tmp_path, capsys):
    committed = os.path.join(ROOT, "results", "random_returns.csv")
    before = open(committed).read()
    with pytest.raises(SystemExit) as exit_info:  # other parameters, the committed file: refused
        random_returns.main(["--episodes", "2"])
    assert exit_info.value.code == 2 and "--out" in capsys.readouterr().err and open(committed).read() == before
    out = tmp_path / "random.csv"
    random_returns.main(["--envs", "InvertedPendulum-v5", "--episodes", "3", "--out", str(out)])
    [row] = list(csv.DictReader(open(out)))
    assert row["env_id"] == "InvertedPendulum-v5" and row["dt"] == "0.04" and row["episodes"] == "3"
    assert 1 <= float(row["return_min"]) <= float(row["return_mean"]) <= float(row["return_max"]) < 100  # it falls


def test_random_returns_refuses_the_committed_csv_reached_through_a_symlinked_folder(tmp_path, capsys):
    committed = os.path.join(ROOT, "results", "random_returns.csv")
    before = open(committed).read()
    (tmp_path / "link").symlink_to(os.path.join(ROOT, "results"))
    with pytest.raises(SystemExit) as exit_info:
        random_returns.main(["--episodes", "2", "--out", str(tmp_path / "link" / "random_returns.csv")])
    assert exit_info.value.code == 2 and "--out" in capsys.readouterr().err and open(committed).read() == before


BENCHMARK_BAD_INPUT = [  # (in-process call on tmp_path / model_run, text the one line must hold)
    (lambda tmp, run: alert_then_off.parse_args(["--seed", "-1", "--out", str(tmp / "a.csv")]), "--seed"),
    (lambda tmp, run: exploration.parse_args(["--seed", "-1", "--out", str(tmp / "e.csv")]), "--seed"),
    (lambda tmp, run: safe_regions.main([str(run), "--seed", "-1"]), "--seed"),
    (lambda tmp, run: same_policy_across_dt.main(["--seed", "-1", "--episodes", "1", "--burn-in", "0",
                                                  "--dts", "original", "--env-id", "InvertedPendulum-v5"]), "--seed"),
    (lambda tmp, run: same_policy_across_dt.main(["--env-id", "Pendulum-v1"]), "--env-id"),
    (lambda tmp, run: same_policy_across_dt.main(["--model", str(damaged(run, "model.pt", b"garbage"))]), "--model"),
    (lambda tmp, run: same_policy_across_dt.main(
        ["--model", str(damaged(run, "config.json", b'{"env_id": "InvertedPendulum-v5"}') / "model.pt")]), "--model"),
    (lambda tmp, run: safe_regions.main([str(damaged(run, "model.pt", b"garbage"))]), "damaged"),
    (lambda tmp, run: safe_regions.main([str(run), "--out", str(run / "progress.csv" / "figures")]), "--out"),
    (lambda tmp, run: alert_then_off.parse_args(["--out", str(run / "progress.csv" / "a.csv")]), "--out"),
    (lambda tmp, run: exploration.parse_args(["--out", str(tmp)]), "--out"),
    (lambda tmp, run: exploration.parse_args(["--out", str(run / "config.json")]), "does not end in .csv"),
    (lambda tmp, run: alert_then_off.parse_args(["--out", str(run / "progress.csv")]), "is not a CSV of"),
    (lambda tmp, run: alert_then_off.parse_args(["--out", str(tmp / "a.csv"), "--figure", str(tmp / "a.md")]),
     "--figure"),
    (lambda tmp, run: pg_variance.parse_args(["--out", str(run / "progress.csv" / "pg.csv")]), "--out"),
    (lambda tmp, run: plot_rising_stochasticity.main([str(tmp), "--out", str(run / "progress.csv")]), "--out"),
    (lambda tmp, run: plot_rising_stochasticity.main([str(tmp / "missing")]), "missing"),
]


@pytest.mark.parametrize("call,named", BENCHMARK_BAD_INPUT)
def test_benchmark_bad_input_says_one_line_exits_2_and_writes_nothing(model_run, tmp_path, capsys, call, named):
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    exits_2_with_one_line(lambda: call(tmp_path, model_run), named, capsys)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert sorted(after) == sorted(before)


@pytest.mark.parametrize("name,args,named", [("speed.py", ["--threads", "0"], "--threads"),
                                             ("profile_parts.py", ["--quick"], "--quick")])
def test_speed_scripts_bad_input_says_one_line_and_exits_2(name, args, named):
    result = run_python(f"benchmark/{name}", *args, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr, result.stderr


def figures_sh_project(tmp_path, mv_calls_before_interrupt=0):
    """A scratch project for benchmark/figures.sh: four committed figures and one theory figure (each b"old"),
    a `python` whose first call "redraws" every one of them (b"new") and whose other calls draw nothing, and
    an `mv` that, before each rename, logs every committed figure it cannot find (and, if asked, interrupts
    figures.sh with SIGTERM at its n-th call). Returns (project, environment, log of missing figures)."""
    project, bin_dir, log = tmp_path / "project", tmp_path / "bin", tmp_path / "missing.log"
    (project / "benchmark").mkdir(parents=True)
    shutil.copy(os.path.join(BENCHMARK, "figures.sh"), project / "benchmark")
    committed = [f"results/figures/{n}.png" for n in "abcd"] + ["results/theory/t.png"]
    for name in committed:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(b"old")
    bin_dir.mkdir()
    (bin_dir / "python").write_text(
        "#!/bin/sh\nprev=; out=\nfor a in \"$@\"; do [ \"$prev\" = --out ] && out=$a; prev=$a; done\n"
        'case "$out" in */figures) new=$(dirname "$out")\n'
        '  if [ ! -e "$new/drawn" ]; then for f in results/figures/*.png results/theory/*.png; do\n'
        '    printf new > "$new/$(basename $(dirname $f))/$(basename $f)"; done; touch "$new/drawn"; fi;; esac\n')
    (bin_dir / "mv").write_text(
        "#!/bin/sh\n" + "".join(f'[ -e {name} ] || echo "{name} missing before mv $*" >> {log}\n' for name in committed)
        + f'n=$(($(cat {tmp_path}/calls 2>/dev/null || echo 0) + 1)); echo $n > {tmp_path}/calls\n'
        + (f'[ $n -eq {mv_calls_before_interrupt} ] && kill -TERM $PPID\n' if mv_calls_before_interrupt else "")
        + f'exec {shutil.which("mv")} "$@"\n')
    for tool in ("python", "mv"):
        (bin_dir / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": "python"}
    return project, env, log, committed


@pytest.mark.parametrize("interrupt_at", [0, 2], ids=["completes", "interrupted"])
def test_figures_sh_replaces_each_figure_by_a_rename_so_an_interrupt_leaves_every_one_old_or_new(
        tmp_path, interrupt_at):
    project, env, log, committed = figures_sh_project(tmp_path, interrupt_at)
    result = subprocess.run(["bash", str(project / "benchmark" / "figures.sh")], capture_output=True, text=True,
                            env=env, timeout=60)
    assert not log.exists(), log.read_text()  # at every rename every committed figure was there
    contents = [(project / name).read_bytes() for name in committed]
    assert set(contents) <= {b"old", b"new"}
    if interrupt_at:
        assert result.returncode != 0 and b"old" in contents and b"new" in contents
    else:
        assert result.returncode == 0 and set(contents) == {b"new"}, result.stderr
    assert not list((project / "results").glob(".redraw.*"))  # its own folder removed on exit, interrupted or not


def test_figures_sh_removes_the_redraw_folders_a_killed_run_left_and_keeps_a_running_ones(tmp_path):
    project, env, log, committed = figures_sh_project(tmp_path)
    gone_pid = subprocess.Popen(["true"])  # a process that has ended: its pid names a folder no process uses
    gone_pid.wait()
    stale = [project / "results" / f".redraw.{gone_pid.pid}.a1b2c3", project / "results" / ".redraw.Q1w2E3"]
    live = project / "results" / f".redraw.{os.getpid()}.x9y8z7"  # this test's own pid: a redraw still running
    for folder in stale + [live]:
        (folder / "figures").mkdir(parents=True)
        (folder / "figures" / "a.png").write_bytes(b"half")
    result = subprocess.run(["bash", str(project / "benchmark" / "figures.sh")], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert not any(folder.exists() for folder in stale) and live.exists()
    assert sorted(p.name for p in (project / "results").glob(".redraw.*")) == [live.name]


def test_run_sh_runs_a_crlf_command_list_with_the_carriage_returns_stripped(tmp_path):
    out = tmp_path / "said"
    result = run_sh(["1"], f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write(repr(sys.argv[2:]))\" "
                           f"{out} --log-dir runs\r\n\r\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_text() == "['--log-dir', 'runs']"  # not 'runs\r', a folder of its own


def test_run_sh_shows_why_a_command_failed_and_discards_the_output_of_those_that_succeed():
    # each text the commands print is joined at run time, so that the command lines run.sh echoes never hold it
    chatter = f"{sys.executable} -c \"import sys; print('chat' + 'ter'); print('chat' + 'ter', file=sys.stderr)\""
    failing = (f"{sys.executable} -c \"import sys; print('progress' + ' line'); "
               "print('earlier' + ' line', file=sys.stderr); "
               "sys.exit('sar_ppo.py: error: --dt: ' + 'the reason it failed')\"")
    result = run_sh(["2"], f"{chatter}\n{failing}\n")
    assert result.returncode == 1 and "FAILED:" in result.stdout
    said = result.stdout + result.stderr
    assert "sar_ppo.py: error: --dt: the reason it failed" in said and "earlier line" in said
    assert "chatter" not in said and "progress line" not in said


def test_run_sh_names_a_line_with_an_unmatched_quote_as_failed_and_runs_the_others(tmp_path):
    result = run_sh(["1"], f"echo 'unmatched\ntouch {tmp_path / 'ran'}\n")
    assert result.returncode == 1 and "FAILED: echo 'unmatched" in result.stdout
    assert "Unterminated quoted string" in result.stdout and (tmp_path / "ran").exists()
