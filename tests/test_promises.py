"""Every command, walked (tools/promises.py's promises): each Python command and run list answers --help and
refuses unknown flags, out-of-range numbers, unwritable outputs and damaged inputs in one line before any
work; on a full disk it keeps the old file whole and leaves no empty one."""
import argparse
import glob
import math
import os
import re
import resource
import runpy
import shutil
import signal
import subprocess
import sys
from unittest import mock

import pytest

from benchmark import alert_then_off, pg_variance
from tests.helpers import BENCHMARK, PG_TINY, ROOT, fake_run, rendering_unavailable


def python_commands():
    """Every Python command, found from the tree: top-level, benchmark/ and tools/ scripts with a main, examples/."""
    folders = (ROOT, BENCHMARK, os.path.join(ROOT, "tools"))
    scripts = [p for folder in folders for p in sorted(glob.glob(os.path.join(folder, "*.py")))]
    return [p for p in scripts if re.search(r'^if __name__ == "__main__":', open(p).read(), re.M)] + \
        sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))


COMMANDS = python_commands()


TRAINING = {"sar_ppo.py", "figar_ppo.py", "sar_trpo.py", "figar_trpo.py", "arp_ppo.py", "dau.py"}


class StartedWork(Exception):
    """A case meant to be refused before any work ran on instead."""


def run_in_process(path, argv, capsys, seconds=20):
    """`python path argv...` in this process (imports are paid once): (exit status, stdout, stderr)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGPIPE, signal.SIGTERM, signal.SIGINT)}

    def stuck(*_):
        raise StartedWork(f"{os.path.basename(path)} {' '.join(argv)} ran {seconds} s")
    signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        with mock.patch.object(sys, "argv", [path, *argv]):
            runpy.run_path(path, run_name="__main__")
        code, message = 0, ""
    except SystemExit as e:
        code, message = (e.code or 0, "") if e.code is None or isinstance(e.code, int) else (1, f"{e.code}\n")
    finally:
        signal.alarm(0)
        for s, handler in saved.items():
            signal.signal(s, handler)
    out = capsys.readouterr()
    return code, out.out, out.err + message


class Parsed(Exception):
    pass


def parser_of(path):
    """The command's argparse parser, caught at its first parse_args (None if it has none)."""
    caught = []

    def catch(self, *args, **kwargs):
        caught.append(self)
        raise Parsed
    with mock.patch.object(argparse.ArgumentParser, "parse_args", catch), mock.patch.object(sys, "argv", [path]):
        try:
            runpy.run_path(path, run_name="__main__")
        except (Parsed, SystemExit):
            pass
    return caught[0] if caught else None


def bad_values(rule):
    """Values outside a `within` rule, "must lie in [low, high]", "(low, high]" or "[low, high)"."""
    low, high, closing = re.search(r"[\[(](.+?), (.+?)([\])])", rule).groups()
    low, high = float(low), float(high)
    values = ["nan", f"{low:g}" if rule.startswith("must lie in (") else f"{low - 1:g}"]
    above = [f"{high:g}" if closing == ")" else f"{high * 10 + 1:.0f}"]  # [0, 1): 1 itself is out
    above += ["inf"] if "or be inf" not in rule else []  # --max-t inf: no cap on t
    return values + (above if math.isfinite(high) else [])


def numeric_flags(parser):
    """(flag, nargs, its bad values) of each numeric flag with a range; the numeric flags without one."""
    ranged, unranged = [], []
    for action in parser._actions:
        flag = max(action.option_strings, key=len, default=None)
        if flag is None or action.type is None:
            continue
        if getattr(action.type, "rule", "").startswith("must lie in"):
            ranged.append((flag, action.nargs, bad_values(action.type.rule)))
        elif action.type in (int, float):
            unranged.append(flag)
    return ranged, unranged


def positionals(parser, run):
    return [str(run) for a in parser._actions if not a.option_strings and a.nargs not in ("?", "*")
            and a.dest != "help"]


def files_under(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def git_status():
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout


def one_line(code, err, status, case):
    assert code == status and err.count("\n") == 1, f"{case}: exit {code}, stderr {err!r}"


@pytest.mark.parametrize("path", COMMANDS, ids=[os.path.relpath(p, ROOT) for p in COMMANDS])
def test_every_command_answers_help_unknown_flags_and_bad_numbers_in_one_line(path, model_run, tmp_path, capsys,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)  # a command that started work by mistake writes here, not in the project
    before, work = git_status(), tmp_path / "work"
    work.mkdir()
    code, out, _ = run_in_process(path, ["--help"], capsys)
    assert code == 0 and out, "--help"
    one_line(*run_in_process(path, ["--no-such-flag"], capsys)[::2], 2, "--no-such-flag")
    parser = parser_of(path)
    ranged, unranged = numeric_flags(parser) if parser else ([], [])
    for flag, nargs, values in ranged:
        for value in values:
            argv = positionals(parser, model_run) + [flag] + [value] * (nargs if isinstance(nargs, int) else 1)
            code, _, err = run_in_process(path, argv, capsys)
            one_line(code, err, 2, f"{flag} {value}")
            assert flag in err, err
    print(f"{os.path.relpath(path, ROOT)}: {len(ranged)} numeric flags with a range walked"
          + (f"; without one (not walked): {', '.join(unranged)}" if unranged else ""))
    if os.path.basename(path) not in TRAINING:
        assert not unranged, f"give {', '.join(unranged)} a range (promises.within)"
    assert files_under(work) == {} and git_status() == before


# The inputs a command reads from a run folder, and the arguments that make it read them (RUN: a copy of a
# finished SAR-PPO run with its model.pt, OUT: an empty folder). plot.py and plot_rising_stochasticity.py
# read folders of many runs: a damaged one is skipped with a warning by design.
RUN_INPUTS = {"evaluate.py": (["RUN"], ["config.json", "model.pt"]),
              "check_reproducible.py": (["RUN"], ["config.json", "progress.csv"]),
              "safe_regions.py": (["RUN", "--out", "OUT"], ["config.json", "model.pt"]),
              "animate.py": (["--run", "RUN", "--out", "OUT/a.gif"], ["config.json", "model.pt"]),
              "same_policy_across_dt.py": (["--model", "RUN/model.pt"], ["config.json", "model.pt"])}


def out_cases(parser, tmp_path):
    """(--out value, what it is) that no command can write to, for a folder or for a file output."""
    a_file, a_folder = tmp_path / "a_file", tmp_path / "a_folder"
    a_file.write_bytes(b"old")
    a_folder.mkdir()
    out = next(a for a in parser._actions if "--out" in a.option_strings)
    wrong = a_file if "folder" in (out.help or "").lower() else a_folder  # a file where a folder is needed, or so
    return [(str(wrong), "the wrong kind"), (str(a_file / "x" / "y.csv"), "beneath a file"),
            ("/proc/x/y", "in /proc")]


@pytest.mark.parametrize("path", COMMANDS, ids=[os.path.relpath(p, ROOT) for p in COMMANDS])
def test_every_command_refuses_an_unwritable_out_and_damaged_inputs_in_one_line(path, model_run, tmp_path, capsys,
                                                                                monkeypatch):
    name, parser = os.path.basename(path), parser_of(path)
    if name in TRAINING or parser is None:
        pytest.skip(f"{name}: its flags are walked by the test above; it writes no --out of its own")
    monkeypatch.chdir(tmp_path)
    before = git_status()
    walked = []
    if any("--out" in a.option_strings for a in parser._actions):
        for out, what in out_cases(parser, tmp_path):
            files = files_under(tmp_path)
            code, _, err = run_in_process(path, positionals(parser, model_run) + ["--out", out], capsys)
            one_line(code, err, 2, f"--out {what}")
            assert "--out" in err and files_under(tmp_path) == files, err
            walked.append(f"--out {what}")
        if os.geteuid() == 0:
            print(f"{name}: an unwritable --out folder not walked: as root, chmod 555 does not stop writes")
        else:
            locked_folder = tmp_path / "read_only"
            locked_folder.mkdir(mode=0o555)
            code, _, err = run_in_process(path, positionals(parser, model_run) + ["--out", str(locked_folder / "x")],
                                          capsys)
            one_line(code, err, 2, "--out in a read-only folder")
    if name in RUN_INPUTS:
        argv, read = RUN_INPUTS[name]
        for damaged_name in read:
            run = tmp_path / f"damaged_{damaged_name}"
            shutil.copytree(model_run, run)
            (run / damaged_name).write_bytes(b"\xff\xfe not what it should be")
            (tmp_path / f"out_{damaged_name}").mkdir()
            files = files_under(tmp_path)
            args = [a.replace("RUN", str(run)).replace("OUT", str(tmp_path / f"out_{damaged_name}")) for a in argv]
            code, _, err = run_in_process(path, args, capsys)
            one_line(code, err, 2, f"a damaged {damaged_name}")
            assert files_under(tmp_path) == files
            walked.append(f"a damaged {damaged_name}")
    print(f"{name}: {', '.join(walked) or 'no --out and no run folder to damage'}")
    assert git_status() == before


SHELL_COMMANDS = sorted(glob.glob(os.path.join(BENCHMARK, "*.sh")))


def fake_python_recording(tmp_path):
    """A `python` on PATH that records that it was started, and does nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "started"}\n')
    (bin_dir / "python").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": str(bin_dir / "python")}


@pytest.mark.parametrize("args", [["nonsense"], ["2", "nonsense"], ["--list", "nonsense"], [""],
                                  ["99999999999999999999"]],
                         ids=lambda args: " ".join(args) or "empty")
@pytest.mark.parametrize("path", SHELL_COMMANDS, ids=[os.path.relpath(p, ROOT) for p in SHELL_COMMANDS])
def test_every_shell_command_refuses_a_bad_argument_in_one_line_and_starts_nothing(path, args, tmp_path):
    before = git_status()
    result = subprocess.run(["bash", path, *args], capture_output=True, text=True, timeout=30,
                            stdin=subprocess.DEVNULL, env=fake_python_recording(tmp_path))
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "started").exists() and git_status() == before


SEEDED_SCRIPTS = [p for p in SHELL_COMMANDS if "SEEDS" in open(p).read()]


@pytest.mark.parametrize("seeds", ["x", "", "1,2", "-1", "1 01", "4294967296"])  # twins; past --seed
@pytest.mark.parametrize("path", SEEDED_SCRIPTS, ids=os.path.basename)
def test_a_figure_script_refuses_bad_seeds_in_one_line_before_listing_or_running(path, seeds, tmp_path):
    env = {**fake_python_recording(tmp_path), "SEEDS": seeds}
    for args in (["--list"], ["2"]):
        result = subprocess.run(["bash", path, *args], capture_output=True, text=True, timeout=30, env=env)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "SEEDS" in result.stderr
        assert result.stdout == "" and not (tmp_path / "started").exists()


@pytest.mark.parametrize("script, variable, value", [
    ("fig3_hopper_1m.sh", "METHODS", ""), ("fig3_hopper_1m.sh", "METHODS", " "),
    ("full_grid.sh", "LOG_DIR", ""), ("full_grid.sh", "LOG_DIR", "my runs"), ("full_grid.sh", "LOG_DIR", "x;uname"),
    ("full_grid.sh", "LOG_DIR", "$HOME/grid")])  # the commands go through a shell
def test_a_figure_script_refuses_an_empty_or_unusable_setting_in_one_line(script, variable, value, tmp_path):
    env = {**fake_python_recording(tmp_path), variable: value}
    for args in (["--list"], ["2"]):
        result = subprocess.run(["bash", os.path.join(BENCHMARK, script), *args], capture_output=True, text=True,
                                timeout=30, env=env)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and variable in result.stderr
        assert result.stdout == "" and not (tmp_path / "started").exists()


def full_disk(limit=0):
    """A full disk, simulated by a file-size limit: writes past it fail with EFBIG (Python ignores SIGXFSZ)."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


SAFE_REGIONS_RUN = os.path.join(ROOT, "results", "runs", "InvertedPendulum-v5__sar-delta2-3__dt0.002__s1")


WRITERS = {  # a command's arguments (T: an empty folder), and an output it would replace there
    "exploration": (["benchmark/exploration.py", "--walks", "10", "--out", "T/e.csv"], "e.png"),
    "alert_then_off": (["benchmark/alert_then_off.py", "--xs", "0.2", "--episodes", "2", "--out", "T/a.csv"], "a.csv"),
    "random_returns": (["benchmark/random_returns.py", "--envs", "InvertedPendulum-v5", "--episodes", "1",
                        "--out", "T/r.csv"], "r.csv"),
    "pg_variance": (["benchmark/pg_variance.py", *PG_TINY, "--out", "T/pg.csv"], "pg.csv"),
    "safe_regions": (["benchmark/safe_regions.py", SAFE_REGIONS_RUN, "--draw", "2", "--decisions", "20", "--out", "T"],
                     "InvertedPendulum-v5__sar-delta2-3__dt0.002__s1_safe_regions.png"),
    "plot": (["plot.py", "T/runs", "--kinds", "bars", "--out", "T"],
             "InvertedPendulum-v5_deterministic_final_return.png"),
    "paper_figures": (["benchmark/paper_figures.py", "T/runs", "--kinds", "grid", "--out", "T"],
                      "deterministic_grid_return_vs_decision_steps_InvertedPendulum-v5.png"),
    "animate": (["tools/animate.py", "--max-frames", "2", "--width", "64", "--height", "64", "--out", "T/a.gif"],
                "a.gif"),
    "sb3_sar": (["examples/sb3_sar.py", "--total-steps", "64", "--eval-episodes", "1", "--out", "T/run"], "run/x"),
}


@pytest.mark.parametrize("name", WRITERS)
def test_a_full_disk_is_one_line_exit_1_and_keeps_the_old_file_with_no_empty_one(name, tmp_path):
    argv, kept = WRITERS[name]
    if name == "animate" and rendering_unavailable():
        pytest.skip(rendering_unavailable())
    if name == "sb3_sar":
        pytest.importorskip("stable_baselines3")
    fake_run(tmp_path / "runs", "run", 100.0)
    (tmp_path / kept).parent.mkdir(exist_ok=True)
    own_csv = {"pg_variance": pg_variance.COLUMNS, "alert_then_off": alert_then_off.COLUMNS}  # refused otherwise
    old = ",".join(own_csv[name]).encode() + b"\r\n" if name in own_csv else b"the old version"
    (tmp_path / kept).write_bytes(old)
    before, files = git_status(), files_under(tmp_path)
    argv = [a.replace("T", str(tmp_path), 1) if a.startswith("T") else a for a in argv]
    result = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=180,
                            preexec_fn=full_disk(4096 if name == "sb3_sar" else 0))  # tempfile's probe, for SB3
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "File too large" in result.stderr
    assert files_under(tmp_path) == files  # the old file whole, nothing new: no 0-byte or temporary file
    assert git_status() == before
