"""Which runs of a figure script are finished, unfinished, not started or made with other flags, running nothing.

    bash benchmark/fig3_ppo_five_tasks.sh --list | python tools/status.py        # counts, and the runs left
    bash benchmark/fig3_ppo_five_tasks.sh --list | python tools/status.py -v     # every run
    bash benchmark/fig3_ppo_five_tasks.sh --list | python tools/status.py --check  # exit 1 unless all finished

Reads the commands on stdin (`python sar_ppo.py ...`, or of figar_ppo.py, sar_trpo.py, figar_trpo.py, arp_ppo.py,
dau.py, one per line, run from the project's folder as the figure scripts do), finds each one's run folder with the
script's own flag parsing, and compares the last whole row of its progress.csv with its --total-steps (dau.py: the
transitions of its --physical-time). An unfinished run
can be resumed only if it has a checkpoint.pt (shown), unless a process is training it now (shown instead: read
from the lock its script holds, on Linux). A run with rows whose config.json holds other flags
than the command's (say --max-kl) is "made with other flags": the command would refuse to resume it. The
figure scripts call it with --check before drawing, so that no figure is drawn from an incomplete set of runs.
"""
import argparse
import contextlib
import importlib.util
import io
import json
import os
import shlex
import signal
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import arp_ppo
import bookkeeping
import dau
import figar_ppo
import figar_trpo
import sar_ppo
import sar_trpo
from tools import ROOT, promises
from tools.promises import brief, fail

SCRIPTS = {"sar_ppo.py": sar_ppo, "figar_ppo.py": figar_ppo, "sar_trpo.py": sar_trpo, "figar_trpo.py": figar_trpo,
           "arp_ppo.py": arp_ppo, "dau.py": dau}


def module(name):
    """The training script `name` (a file name in the project's folder: a renamed copy too) as a module."""
    if name not in SCRIPTS and os.path.isfile(os.path.join(ROOT, name)) and name.endswith(".py"):
        spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(ROOT, name))
        found = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(found)
        if hasattr(found, "SCRIPT"):
            SCRIPTS[name] = found
    return SCRIPTS.get(name)


def script_of(config):
    """The file name of the script that made a run: its config.json's "script". The committed runs made before
    config.json recorded it are known by their method: FiGAR-C-TRPO's is figar_trpo.py, TaCoS-PPO's figar_ppo.py
    (its flags), an A2C run the PPO scripts' (--a2c)."""
    if "script" in config:
        return config["script"]
    method = str(config.get("method", ""))
    if method.startswith("DAU"):
        return "dau.py"
    family = {"FiGAR": "figar", "TaCoS": "figar", "ARP": "arp"}.get(method.split("-")[0], "sar")
    return f"{family}_{'trpo' if 'TRPO' in method else 'ppo'}.py"



def training_args(command):
    """(the script's module, its flags as it parses them) of a training command line `python <script> ...`;
    anything else (another program, --help, a flag the script refuses) is one line and exit 2."""
    try:
        words = shlex.split(command)
    except ValueError as e:  # an unbalanced quote
        fail(f"{e}: {command.strip()}")
    at = next((i for i, w in enumerate(words) if w.endswith(".py") and module(os.path.basename(w))), None)
    if at is None or at == 0 or not os.path.basename(words[at - 1]).startswith("python"):
        fail(f"not a command of {', '.join(SCRIPTS)} (python <script> ...): {command.strip()}")
    script = module(os.path.basename(words[at]))
    try:
        return script, parsed(script, words[at + 1:])
    except ValueError as e:
        fail(f"not a training command ({e}): {command.strip()}")


def parsed(module, flags):
    """The training script's own parsing of its flags, its words kept; ValueError with its one-line reason
    where it would stop (--help would print its help and exit 0: it trains nothing)."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            return module.parse_args(flags)
    except SystemExit as e:
        reason = said.getvalue().strip().splitlines()
        raise ValueError(reason[-1].split("error: ", 1)[-1] if e.code and reason else "it trains nothing") from None


def status(command):
    """(state, run folder, decisions in whole rows) of one command line; state: finished, unfinished, not started
    or made with other flags."""
    module, args = training_args(command)
    folder = os.path.join(ROOT, args.log_dir, args.run_name)
    try:
        with open(os.path.join(folder, "progress.csv"), newline="") as f:
            lines = f.read().split("\n")[:-1]  # a last line without its newline is torn
    except FileNotFoundError:
        return "not started", folder, 0
    except (OSError, UnicodeDecodeError) as e:
        fail(f"{folder}/progress.csv is unreadable ({brief(e)}); move it aside, or resume the run to rebuild it")
    width = lines[0].count(",") if lines else len(module.SCRIPT.columns) - 1  # the header's (TaCoS-PPO logs more)
    whole = [line.split(",") for line in lines[1:] if line.count(",") == width]
    decisions = int(whole[-1][0]) if whole and whole[-1][0].isdigit() else 0
    physical = float(whole[-1][2]) if decisions else 0.0
    try:  # the flags a run with rows was made with, as the script compares them on --resume
        made = json.loads(Path(folder, "config.json").read_text()) if decisions else {}
        if not isinstance(made, dict):
            raise ValueError("config.json is not a JSON object")
        made = {**module.FLAGS_ADDED_LATER, **made} if made else {}
        if made and any(made.get(k) != v for k, v in vars(args).items() if k not in module.SCRIPT.resumable):
            return "made with other flags", folder, decisions
    except (OSError, ValueError):  # no config.json (or a torn one): progress.csv alone says how far it is
        pass
    done = decisions and bookkeeping.finished(args, decisions, physical)  # --total-steps or --physical-time
    return ("finished" if done else "unfinished"), folder, decisions


def locked_folders():
    """"major:minor:inode" of every file a process holds a lock on, as a training script holds its run folder's
    while it trains (Linux's /proc/locks, read only; elsewhere none is known)."""
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return set()
    return {field for line in lines for field in line.split() if field.count(":") == 2}


def training_now(folder, locked):
    """Whether a process is training the run in `folder` now (it holds the folder's lock)."""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}" in locked


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("-v", "--verbose", action="store_true", help="list the finished runs too")
    p.add_argument("--check", action="store_true",
                   help="exit status 1, with one line on stderr, unless every run is finished")
    args = p.parse_args(argv)
    verbose = args.verbose
    found = {"finished": [], "unfinished": [], "not started": [], "made with other flags": []}
    locked = locked_folders()
    for line in sys.stdin:  # a bad line stops it before anything is printed
        if line.strip():
            state, folder, decisions = status(line)
            resumable = " (checkpoint.pt)" if os.path.exists(os.path.join(folder, "checkpoint.pt")) else ""
            if state == "unfinished" and training_now(folder, locked):
                resumable = " (training now)"
            folder = os.path.relpath(folder, ROOT) if folder.startswith(ROOT + os.sep) else folder
            found[state].append(f"{folder} at {decisions:,} decisions{resumable}" if state == "unfinished" else folder)
    if not any(found.values()):
        fail("no command on stdin (pipe a figure script's --list into it)")
    for state, folders in found.items():
        if state == "made with other flags" and not folders:  # said only when there are some
            continue
        print(f"{state}: {len(folders)}")
        for folder in folders if verbose or state != "finished" else []:
            print(f"  {folder}")
    left = len(found["unfinished"]) + len(found["not started"]) + len(found["made with other flags"])
    if args.check and left:
        print(f"{os.path.basename(sys.argv[0])}: {left} of {left + len(found['finished'])} runs are not finished "
              "with these flags",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `status.py ... | head` ends quietly
    promises.run(main)
