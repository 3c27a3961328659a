"""The test suite's own promises: what a session leaves on disk."""
import os
import subprocess
import sys

from tests.helpers import ROOT

PASSING_AND_FAILING = '''
def test_passes(tmp_path):
    (tmp_path / "run.csv").write_text("1")

def test_fails(tmp_path):
    (tmp_path / "run.csv").write_text("1")
    assert False
'''


def test_a_failing_session_keeps_only_the_failed_tests_temporary_folders(tmp_path):
    # a session with one failure once left every test's folder (253 MB of runs) under the system's temp folder
    (tmp_path / "test_two.py").write_text(PASSING_AND_FAILING)
    basetemp = tmp_path / "basetemp"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "-c", os.path.join(ROOT, "pytest.ini"), "--rootdir", str(tmp_path), f"--basetemp={basetemp}",
               str(tmp_path / "test_two.py")]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1, result.stdout  # one test failed
    kept = [name for name in os.listdir(basetemp) if not os.path.islink(basetemp / name)]  # "…current": links
    assert kept == ["test_fails0"]
