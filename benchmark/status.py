"""Which runs of a figure script are finished, unfinished or not started, without running anything.

    bash benchmark/fig_five_tasks.sh --list | python benchmark/status.py        # counts, and the runs left
    bash benchmark/fig_five_tasks.sh --list | python benchmark/status.py -v     # every run

Reads the commands on stdin (`python sar_ppo.py ...` or `python figar_ppo.py ...`, one per line), finds
each one's run folder with the script's own flag parsing, and compares its progress.csv with its
--total-steps. An unfinished run is resumable only if it has a checkpoint.pt (shown).
"""
import csv
import os
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import figar_ppo  # noqa: E402
import sar_ppo  # noqa: E402


def status(command):
    """(state, run folder, decisions logged) of one command line: state is finished, unfinished or not started."""
    words = shlex.split(command)
    script = next(w for w in words if w.endswith(".py"))
    module = {"sar_ppo.py": sar_ppo, "figar_ppo.py": figar_ppo}[os.path.basename(script)]
    args = module.parse_args(words[words.index(script) + 1:])
    folder = os.path.join(ROOT, args.log_dir, args.run_name)  # figure scripts run from the project's folder
    try:
        with open(os.path.join(folder, "progress.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return "not started", folder, 0
    decisions = int(rows[-1]["decision_steps"]) if rows else 0
    return ("finished" if decisions >= args.total_steps else "unfinished"), folder, decisions


def main(argv=None):
    verbose = "-v" in (sys.argv[1:] if argv is None else argv)
    found = {"finished": [], "unfinished": [], "not started": []}
    for line in sys.stdin:
        if line.strip():
            state, folder, decisions = status(line)
            resumable = " (checkpoint.pt)" if os.path.exists(os.path.join(folder, "checkpoint.pt")) else ""
            folder = os.path.relpath(folder, ROOT) if folder.startswith(ROOT + os.sep) else folder
            found[state].append(f"{folder} at {decisions:,} decisions{resumable}" if state == "unfinished" else folder)
    for state, folders in found.items():
        print(f"{state}: {len(folders)}")
        for folder in folders if verbose or state != "finished" else []:
            print(f"  {folder}")


if __name__ == "__main__":
    main()
