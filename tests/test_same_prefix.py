"""tools/same_prefix.py: a longer run repeats its committed run's rows, integers exactly, the rest to 12 digits."""
import subprocess
import sys

from tests.helpers import ROOT

HEADER = "decision_steps,episodes,return_mean,wall_time_s\n"


def write(folder, run, rows):
    (folder / run).mkdir(parents=True)
    (folder / run / "progress.csv").write_text(HEADER + "".join(r + "\n" for r in rows))


def same_prefix(*args):
    return subprocess.run([sys.executable, "tools/same_prefix.py", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_last_digit_differences_pass_to_12_digits_and_a_changed_count_is_named(tmp_path):
    long, short = tmp_path / "long", tmp_path / "short"
    write(short, "a", ["2048,3,-18.40417361367108,1.0"])
    write(long, "a", ["2048,3,-18.404173613671077,9.0", "4096,5,-1.0,2.0"])
    write(short, "b", ["2048,3,1.5,1.0"])
    write(long, "b", ["2048,4,1.5,1.0"])
    write(short, "c", ["2048,3,1.5,1.0"])
    write(long, "c", ["2048,3,1.5,7.0"])
    result = same_prefix(long, short)
    assert result.returncode == 0
    assert "a: same to 12 digits in its 1 rows" in result.stdout
    assert "b: differs at row 1, episodes: 3 against 4" in result.stdout
    assert "c: same in its 1 rows" in result.stdout


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path):
    result = same_prefix(tmp_path / "nope", tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "no such folder" in result.stderr
