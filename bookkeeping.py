"""The run's bookkeeping, shared by every training script: its folder, its files and its messages, nothing of
any method (as CleanRL keeps its helpers in cleanrl_utils beside the scripts).

A run folder holds config.json, progress.csv and checkpoint.pt. The checkpoint is the run: the learner, every RNG,
the envs where the next step starts, the logged rows and the config; progress.csv and config.json are views of it,
rewritten from it on --resume. A row reaches the disk before the checkpoint that holds it; every file is written
whole or not at all; one process at a time holds a run folder.
A script passes what is its own as a `Script`: its file, its CSV columns, the flags a resume may change, the flags
it gained after its first committed runs (with the value those runs had), the flags that make smaller steps.
"""
import argparse
import contextlib
import fcntl
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import NamedTuple

import mujoco
import numpy as np
import torch
from gymnasium.envs.mujoco import mujoco_env
from gymnasium.wrappers.utils import RunningMeanStd


COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes", "return_mean",  # progress.csv
           "eval_return_mean", "action_duration_mean_s", "safe_radius_mean", "policy_loss", "value_loss",
           "approx_kl", "clip_fraction", "entropy", "decisions_per_s", "env_steps_per_s"]  # a script may add its own
RESUMABLE = {"total_steps", "physical_time", "eval_every", "eval_every_s", "eval_episodes", "log_dir",  # the run's
             "run_name", "checkpoint_every", "save_model", "resume", "threads", "method"}  # may differ on --resume


class Script(NamedTuple):
    path: str  # the script's __file__: provenance
    make_parser: object  # the script's parser: which flags a command line gives
    added_later: dict  # a run made before a flag existed had this value
    smaller_steps: str  # the flags that make smaller steps, named when the loss diverges
    columns: list = COLUMNS  # progress.csv's
    resumable: set = RESUMABLE  # flags that may differ on --resume
    unit: str = "decisions"  # what progress.csv's first column counts (DAU: transitions)
    counters: tuple = ("update", "decision_steps", "env_steps", "episodes", "wall_time_s")  # a new run's, all 0


# ---------------------------------------------------------------- bad input: one line, exit status 2
def fail(message):  # bad input: one line naming the flag on stderr, exit status 2, nothing written
    print(f"{os.path.basename(sys.argv[0])}: error: {' '.join(str(message).split())}", file=sys.stderr)
    sys.exit(2)


def checked(kind, ok, rule):  # an argparse type: `kind(text)` if `ok` holds for it, else the one-line error `rule`
    def parse(text):
        try:
            if ok(value := kind(text)):
                return value
        except (ValueError, OverflowError):
            if kind is int:  # "1e5", "1.5"
                raise argparse.ArgumentTypeError(f"{rule} as a whole number, got {text!r}") from None
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    parse.rule = rule  # shown by --help
    return parse


def within(kind, low, high, open_low=False):  # [low, high], or (low, high]; nan is in neither
    return checked(kind, lambda v: low < v <= high if open_low else low <= v <= high,
                   f"must lie in {'(' if open_low else '['}{low}, {high}]")


SEED = within(int, 0, 2 ** 32 - 1)  # what torch, numpy and gymnasium all take


class HelpFormatter(argparse.RawDescriptionHelpFormatter):  # --help: each flag's range, and its default if it has one
    def _get_help_string(self, action):
        notes = [getattr(action.type, "rule", "")]
        if not any(action.default is no for no in (None, False, argparse.SUPPRESS)):  # 0 == False: by identity
            notes.append(f"default: {action.default}")
        notes = [note for note in notes if note]
        return f"{action.help} ({'; '.join(notes)})" if notes else action.help


def given_flags(parser, argv):
    """The flags given on the command line, by their dests (argparse sets a default only where none is)."""
    unset = object()
    namespace = argparse.Namespace(**{action.dest: unset for action in parser._actions})
    with contextlib.redirect_stderr(io.StringIO()):  # bad input is parse_args' to report, not this
        try:
            parsed = parser.parse_args(argv, namespace)
        except SystemExit:
            return set()
    return {dest for dest, value in vars(parsed).items() if value is not unset}


def parser(description):
    """An argparse parser whose errors (unknown flag, bad value) are one line too, and whose --help shows ranges."""
    p = argparse.ArgumentParser(description=description, formatter_class=HelpFormatter)
    p.error = fail
    return p


def add_budget_flags(p, total_steps):  # a run's budget: decisions, or seconds of physical time
    p.add_argument("--total-steps", type=within(int, 1, 10 ** 10), help=f"decisions to train for ({total_steps:,})")
    p.add_argument("--physical-time", type=within(float, 0, 10 ** 9, open_low=True), help="seconds of physical "
                   "time instead: the run ends at the first update that reaches them (Fig. 4 at equal physical time)")


def check_budget(args, total_steps):  # one budget (default: `total_steps` decisions), one evaluation schedule
    if args.total_steps is not None and args.physical_time is not None:
        fail("--physical-time: a run has one budget; leave out --total-steps")
    if args.eval_every and args.eval_every_s:
        fail("--eval-every-s: a run has one evaluation schedule; leave out --eval-every")
    if args.physical_time is None:
        args.total_steps = args.total_steps or total_steps


def add_run_flags(p, every="updates", checkpoint_every=1, save_model=True,
                  run_name="<env>__<method>__dt<δ>[__<noise>][__T<seconds>]__s<seed>"):
    """Evaluation, logs, checkpoints: the flags of a run's folder."""
    p.add_argument("--eval-every", type=within(int, 0, 10 ** 9), default=0, help=f"{every} between evaluations")
    if every == "updates":  # updates vary in physical time (DAU's rows do not)
        p.add_argument("--eval-every-s", type=within(float, 0, 10 ** 9, open_low=True), help="seconds of physical "
                       "time between evaluations instead: at the first update that reaches each multiple")
    p.add_argument("--eval-episodes", type=within(int, 1, 1000), default=5, help="episodes per evaluation")
    p.add_argument("--log-dir", type=checked(str, bool, "must name a folder"), default="runs",
                   help="runs are written to <log-dir>/<run-name>/")
    p.add_argument("--run-name", type=checked(str, lambda v: v.strip(".") and "/" not in v and len(v) < 200, "must be "
                   "a folder name under 200 characters"), help=f"default: {run_name}")
    p.add_argument("--checkpoint-every", type=within(int, 1, 10 ** 9), default=checkpoint_every,
                   help=f"{every} between checkpoints")
    if save_model:
        p.add_argument("--save-model", action="store_true",
                       help="also save model.pt, the agent and its input statistics")
    p.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    p.add_argument("--threads", type=within(int, 1, os.cpu_count()), default=1, help="torch threads")


OPENED = {}  # "run": the run this process trains, while its folder is locked (what guard says of an interruption)


def guard(main):
    """Run a script's main: Ctrl-C, or a failed write (a full disk), is one line; the run resumes."""
    OPENED.clear()
    try:
        main()
    except (KeyboardInterrupt, OSError) as e:
        name, run = os.path.basename(sys.argv[0]), OPENED.get("run")
        again = "the same command" if "--resume" in sys.argv else "the same command plus --resume"
        since = ""  # rows logged after the last checkpoint (--checkpoint-every above 1: DAU's 500)
        first, last = (run["checkpointed"] + 1, len(run["rows"])) if run else (0, 0)
        if first <= last:
            since = f" (from its checkpoint: row{f's {first} to' if first < last else ''} {last} made again)"
        if isinstance(e, KeyboardInterrupt) and run is None:
            print(f"{name}: interrupted before the run folder was opened; its files are as they were",
                  file=sys.stderr)
        elif isinstance(e, KeyboardInterrupt) and run["finished"]:
            print(f"{name}: interrupted after the run finished; its checkpoint holds every row", file=sys.stderr)
        elif isinstance(e, KeyboardInterrupt):
            print(f"{name}: interrupted; continue the run with {again}{since}", file=sys.stderr)
        else:
            sys.exit(f"{name}: {e}; once that is mended, continue the run with {again}{since}")
        sys.exit(130)  # as a shell's for Ctrl-C
    finally:
        OPENED.clear()  # the run (DAU: its replay memory) is not kept past main


# ---------------------------------------------------------------- files, whole or not at all
@contextlib.contextmanager
def replacing(path, binary=False):
    """A file to write `path` through, whole or not at all: a temporary file in the same folder (a rename
    cannot cross file systems), on the disk before it is renamed over `path`, with `path`'s mode. A kill, a full
    disk, an error or Ctrl-C leaves `path` as it was, and no temporary file but after a kill."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())  # on the disk before the rename, even through a power loss
        os.chmod(temporary, os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o666 & ~umask())
        os.replace(temporary, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(e, OSError):  # name the file meant, not the temporary one
            raise OSError(e.errno, e.strerror or str(e), path) from e
        raise


def umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save_atomic(path, data):
    """`data` (str, or a dict to torch.save) written to `path` whole or not at all (`replacing`)."""
    if isinstance(data, dict):
        torch.save(data, buffer := io.BytesIO())  # in memory first: a failed write is then an OSError
    with replacing(path, binary=True) as f:
        f.write(buffer.getbuffer() if isinstance(data, dict) else data.encode())  # no copy: DAU's memory is large


def csv_text(columns, rows, header=False):  # what csv.DictWriter writes for these numbers, \r\n included
    lines = ([columns] if header else []) + [[row[c] for c in columns] for row in rows]
    return "".join(",".join(map(str, line)) + "\r\n" for line in lines)


def code_version(script):
    """The git commit, and whether the code that makes a run's numbers differs from it (None outside git)."""
    code = (os.path.basename(script), "envs.py", "bookkeeping.py", "requirements.txt")
    git = lambda *a: subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(script)), *a],  # noqa: E731
                                    capture_output=True, text=True).stdout.strip() if shutil.which("git") else ""
    commit = git("rev-parse", "HEAD") or None
    return {"git_commit": commit, "git_dirty": commit and git("status", "--porcelain", "--", *code) != ""}


# ---------------------------------------------------------------- input statistics, as tensors for torch.save
def stats_state(stats):  # a RunningMeanStd
    return {"mean": torch.as_tensor(stats.mean), "var": torch.as_tensor(stats.var), "count": float(stats.count)}


def load_stats(stats, state):
    stats.mean, stats.var, stats.count = state["mean"].numpy(), state["var"].numpy(), state["count"]


# ---------------------------------------------------------------- the budget
def budget(args):
    """The flag that ends the run and its value: --physical-time if the run has one, else --total-steps."""
    if args.physical_time is not None:
        return "--physical-time", args.physical_time
    return "--total-steps", args.total_steps


def finished(args, decisions, physical_time):
    """Whether a run with these logged decisions (DAU: transitions) and physical seconds has spent its budget.
    DAU's --physical-time is its --total-steps in whole rows of transitions."""
    if args.total_steps is not None:
        return decisions >= args.total_steps
    return physical_time >= args.physical_time - 1e-9


def spent(args, script, decisions, physical_time):  # "4,096 decisions reach --total-steps 4,096", for messages
    flag, value = budget(args)
    if flag == "--total-steps":
        return f"{decisions:,} {script.unit} reach --total-steps {value:,}"
    if args.total_steps is not None:  # DAU: transitions
        return f"{decisions:,} {script.unit} reach --physical-time {value:g} s"
    return f"{physical_time:g} s reach --physical-time {value:g} s"


def evaluation_due(args, counters, steps, dt):
    """Whether the update just counted in `counters` ends with an evaluation: every --eval-every updates, or the
    first update that reaches each multiple of --eval-every-s seconds of physical time (one evaluation if it passes
    several; `steps`: the update's δ-steps)."""
    if args.eval_every_s:
        before, now = (counters["env_steps"] - steps) * dt, counters["env_steps"] * dt
        return int(now / args.eval_every_s + 1e-9) > int(before / args.eval_every_s + 1e-9)
    return bool(args.eval_every) and counters["update"] % args.eval_every == 0


def run_finished(run, args):  # whether the run's last row has spent its budget
    if not run["rows"]:
        return False
    return finished(args, run["rows"][-1]["decision_steps"], run["rows"][-1]["physical_time_s"])


# ---------------------------------------------------------------- what a run says as it goes
def say_plan(run, args, n):
    """The run's first line: its folder, its method and its budget in updates of `n` decisions."""
    if args.total_steps is None:
        plan = f"updates of {n:,} decisions until --physical-time {args.physical_time:g} s"
    else:
        updates = math.ceil(args.total_steps / n)
        plan = f"{updates} update{'s' * (updates != 1)} of {n:,} decisions"
        if args.total_steps % n:
            plan += f" (--total-steps {args.total_steps:,} rounded up to {updates * n:,})"
    print(f"{run['dir']}: {args.method}, {plan}", flush=True)


def say_progress(run, args, row, update_time):
    """An update's line: how far, the training return, the repetition, the speed (decisions and δ-steps per
    second of the whole update) and the time left at this update's pace."""
    dt, n, update = run["config"]["dt"], args.num_steps, run["counters"]["update"]
    steps_per_decision = row["action_duration_mean_s"] / dt
    if args.total_steps is None:  # updates as long in physical time as this one
        done = f"{update}"
        this_update = n * row["action_duration_mean_s"]
        left = max(0.0, args.physical_time - row["physical_time_s"]) / this_update
    else:
        updates = math.ceil(args.total_steps / n)
        done = f"{update}/{updates}"
        left = updates - update
    returns = "no episode ended"
    if row["return_mean"] != "":
        returns = f"return {row['return_mean']:.1f}"
    radius = ""
    if row["safe_radius_mean"] != "":
        radius = f" | radius {row['safe_radius_mean']:.3f}"  # SAR's d
    print(f"update {done} | decisions {row['decision_steps']} | physical {row['physical_time_s']:.0f}s | "
          f"{returns} | duration {1e3 * row['action_duration_mean_s']:.1f}ms{radius} | "
          f"{row['decisions_per_s']:.0f} decisions/s | {row['decisions_per_s'] * steps_per_decision:.0f} δ-steps/s | "
          f"left {left * update_time / 60:.1f} min", flush=True)


def env_failed(error, where):  # the wrappers' checks (a non-finite observation or reward): one line
    sys.exit(f"{os.path.basename(sys.argv[0])}: the environment failed in {where} ({' '.join(str(error).split())}); "
             "the run is kept up to its last checkpoint")


# ---------------------------------------------------------------- the run folder
def open_run(args, argv, script, learner, config, rng=None):
    """Lock the run folder; continue the run from its checkpoint or start it (a finished run exits 0, a bad one 2).
    `learner`: the parts with a state (a RunningMeanStd, or anything with state_dict). On --resume a budget or
    evaluation flag not on the command line `argv` takes the run's own value, not the script's default (one
    evaluation schedule given, the run's other one is dropped)."""
    run_dir = os.path.join(args.log_dir, args.run_name)
    progress, checkpoint = os.path.join(run_dir, "progress.csv"), os.path.join(run_dir, "checkpoint.pt")
    if os.path.isfile(run_dir):
        fail(f"--run-name: {run_dir} is a file, not a run folder; choose another --run-name")
    if os.path.isdir(run_dir) and not (os.path.exists(progress) or os.path.exists(checkpoint)):
        # a folder of something else (the run writes these, and hidden .tmp files, before its first row)
        others = sorted(f for f in os.listdir(run_dir) if f not in ("config.json", "model.pt") and f[0] != ".")
        if others:
            fail(f"--run-name: {run_dir} holds files that are not a run's ({', '.join(others[:3])}); choose "
                 "another --run-name or --log-dir")
    if os.path.exists(checkpoint) and not args.resume:
        fail(f"--run-name: {run_dir} exists{as_it_stands(run_dir, script)}; pass --resume to continue it (with a "
             "larger budget to train it further; a --physical-time run with its --run-name) or choose another "
             "--run-name")
    if os.path.exists(progress) and not args.resume:  # a committed run in a clone: rows, no state to go on from
        fail(f"--run-name: {run_dir} exists without a checkpoint.pt to train further from"
             f"{as_it_stands(run_dir, script)}; choose another --run-name or --log-dir")
    try:
        os.makedirs(run_dir, exist_ok=True)
        fcntl.flock(os.open(run_dir, os.O_RDONLY), fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until the process ends
    except BlockingIOError:
        fail(f"--run-name: {run_dir} is being trained by another process")
    except OSError as e:
        fail(f"--log-dir: cannot make {run_dir} ({e.strerror})")
    if (os.path.exists(progress) or os.path.exists(checkpoint)) and not args.resume:  # made meanwhile by another
        fail(f"--run-name: {run_dir} exists; pass --resume to continue it or choose another --run-name")
    if args.resume and not (os.path.exists(progress) or os.path.exists(checkpoint)):  # as a list starts its runs
        print(f"note: --resume: no run in {run_dir} yet; starting it")
    counters = {name: 0 for name in script.counters}
    run = {"dir": run_dir, "script": script, "learner": learner, "rng": rng, "rows": [], "config": None,
           "state": None, "counters": counters, "checkpointed": 0, "finished": False}
    OPENED["run"] = run
    state, done, physical, made = None, 0, 0.0, {}
    if args.resume and os.path.exists(checkpoint):
        try:
            state = torch.load(checkpoint, weights_only=True)
            refuse_changed_flags(args, script, state["config"], run_dir)
            for name, part in learner.items():
                if isinstance(part, RunningMeanStd):
                    load_stats(part, state[name])
                else:
                    part.load_state_dict(state[name])
            torch.set_rng_state(state["torch_rng"])
            if rng is not None:
                rng.bit_generator.state = state["numpy_rng"]
            run.update(counters=state["counters"], rows=state["rows"], config=state["config"], state=state,
                       checkpointed=len(state["rows"]))
            if run["rows"]:
                done, physical = run["rows"][-1]["decision_steps"], run["rows"][-1]["physical_time_s"]
            made = state["config"]
        except Exception as e:  # noqa: BLE001 - a damaged or foreign file fails in many ways, each one line here
            fail(f"--resume: {checkpoint} is not a checkpoint of this run ({type(e).__name__}: {brief(e)})")
    elif args.resume and os.path.exists(progress):  # a clone has no checkpoint: read progress.csv's last whole row
        try:
            last = ([""] + Path(progress).read_text().split("\n")[1:-1])[-1].split(",")
            done, physical = int(last[0] or 0), float(last[2]) if last[0] else 0.0
        except (OSError, ValueError, IndexError) as e:
            fail(f"--resume: cannot read {progress} ({type(e).__name__}), and there is no checkpoint.pt")
        if done:  # rows logged: refuse other flags as a checkpoint would; config.json holds them
            try:
                made = json.loads(Path(run_dir, "config.json").read_text())
                if not isinstance(made, dict):
                    raise ValueError("not a JSON object")
                refuse_changed_flags(args, script, made, run_dir)
            except (OSError, ValueError) as e:
                fail(f"--resume: cannot read {run_dir}/config.json ({type(e).__name__}), and there is no checkpoint.pt")
    if made:  # a flag not given takes the run's own value
        take_own_values(args, made, given_flags(script.make_parser(), argv))
    if args.resume and not state and done and not finished(args, done, physical):
        fail(f"--resume: {run_dir} has {done:,} {script.unit} but no checkpoint.pt to continue from")
    flag, value = budget(args)
    key = flag[2:].replace("-", "_")
    if key in made and made[key] is None:  # made with the other kind of budget, which its name and rows follow
        other = "--total-steps" if key == "physical_time" else "--physical-time"
        fail(f"{flag}: {run_dir} was made with {other}; a run keeps its kind of budget (give {other}, "
             "or neither to keep its own)")
    if made.get(key, value) != value and not (done and finished(args, done, physical)):  # a budget may change
        shown = f"{made[key]:,}" if key == "total_steps" else f"{made[key]:g} s"
        now = f"{value:,}" if key == "total_steps" else f"{value:g} s"
        print(f"note: {run_dir} was made with {flag} {shown}; it now ends at {now}")
    if done and finished(args, done, physical):
        did = "nothing to do"
        if getattr(args, "save_model", False) and not os.path.exists(os.path.join(run_dir, "model.pt")):
            if not state:
                fail(f"--save-model: {run_dir} has no checkpoint.pt to take it from")
            save_model(run_dir, state)
            did = "wrote model.pt from its checkpoint"
        print(f"{run_dir} is finished: {spent(args, script, done, physical)}; {did}")
        sys.exit(0)
    if done and schedule(made, run) != schedule(vars(args), run):  # the rows after it evaluate otherwise: say so
        print(f"note: {run_dir} evaluated {schedule(made, run)}; it now evaluates {schedule(vars(args), run)}")
    code = (run["config"] or {"code": []})["code"] + [{"decision_steps": done, **code_version(script.path)}]
    config = {**config, **{k: getattr(args, k) for k in OWN_VALUES if hasattr(args, k)}}  # as taken
    run["config"] = {**config, "resumed_at_decision_steps": done or None, "code": code,  # flags of the latest (re)start
                     "versions": {p: version(p) for p in ("torch", "gymnasium", "mujoco", "numpy")}}
    save_atomic(os.path.join(run_dir, "progress.csv"), csv_text(script.columns, run["rows"], header=True))
    save_atomic(os.path.join(run_dir, "config.json"), json.dumps(run["config"], indent=2))
    if state is None:
        save_checkpoint(run)  # before the first row: a run killed before its first checkpoint resumes from the start
    return run


def schedule(flags, run):  # a run's evaluations, in words
    if flags.get("eval_every_s"):
        return f"every {flags['eval_every_s']:g} s of physical time"
    if flags.get("eval_every"):
        unit = "update" if "update" in run["counters"] else "row"
        return f"every {flags['eval_every']} {unit}{'s' * (flags['eval_every'] != 1)}"
    return "never"


OWN_VALUES = ("total_steps", "physical_time", "eval_every", "eval_every_s", "eval_episodes", "checkpoint_every")


def take_own_values(args, made, given):
    """A resumed run keeps its own budget and evaluations unless the command line gives them: a tiny run
    resumed without a budget stays tiny. Given, a budget is taken (and said, below)."""
    if not {"total_steps", "physical_time"} & given:
        args.total_steps = made.get("total_steps", args.total_steps)
        args.physical_time = made.get("physical_time", args.physical_time)
    schedule = {"eval_every", "eval_every_s"}  # one given: the run's other one is not taken
    for key in OWN_VALUES[2:]:
        if key not in given and key in made and not (key in schedule and schedule & given):
            setattr(args, key, made[key])


def as_it_stands(run_dir, script):
    """", finished by its own budget: 4,096 decisions reach --total-steps 4,096" or ", unfinished at 2,048
    decisions", or "" if its files cannot tell."""
    try:
        last = ([""] + Path(run_dir, "progress.csv").read_text().split("\n")[1:-1])[-1].split(",")
        made = json.loads(Path(run_dir, "config.json").read_text())
        done, physical = int(last[0]), float(last[2])
        args = argparse.Namespace(total_steps=made["total_steps"], physical_time=made.get("physical_time"))
    except (OSError, ValueError, IndexError, KeyError, TypeError, AttributeError):
        return ""
    if finished(args, done, physical):
        return f", finished by its own budget: {spent(args, script, done, physical)}"
    return f", unfinished at {done:,} {script.unit}"


def brief(error):  # an exception in a few words, for a one-line message
    text = " ".join(str(error).split())
    return f"{text[:100]}{'…' if len(text) > 100 else ''}"


def script_of(method):
    """The training script of a run's method name: FiGAR-C-TRPO → figar_trpo.py; TaCoS-PPO's is figar_ppo.py (its
    flags); an A2C run is the PPO scripts' (--a2c)."""
    if method.startswith("DAU"):
        return "dau.py"
    family = {"FiGAR": "figar", "TaCoS": "figar", "ARP": "arp"}.get(method.split("-")[0], "sar")
    return f"{family}_{'trpo' if 'TRPO' in method else 'ppo'}.py"


def refuse_changed_flags(args, script, made, run_dir):
    own = script_of(made.get("method", ""))
    if "method" in made and own != os.path.basename(script.path):  # another script's run: not this one's flags
        fail(f"--resume: {run_dir} is a {made['method']} run, made by {own}; resume it with {own}")
    made = {**script.added_later, **made}  # a run made before a flag existed had its value then
    changed = ["--" + k.replace("_", "-") for k, v in vars(args).items()
               if k not in script.resumable and made.get(k) != v]
    if changed:
        fail(f"--resume: {run_dir} was made with other {', '.join(changed)}")


def log_row(run, args, row, envs_now=None):
    """Append `row` to progress.csv, on the disk before the checkpoint that holds it: every --checkpoint-every
    updates (DAU: rows) and at the end. `envs_now`: what `save_checkpoint` saves of where the next step starts,
    or a function that reads it."""
    unit = "update" if "update" in run["counters"] else "row"
    if not math.isfinite(row["policy_loss"] + row["value_loss"]):  # before it reaches a row or a checkpoint
        sys.exit(f"{os.path.basename(sys.argv[0])}: the loss diverged in {unit} {run['counters'][unit]} (not "
                 f"logged); train anew under another --run-name with {run['script'].smaller_steps}")
    run["rows"].append(row)
    with open(os.path.join(run["dir"], "progress.csv"), "a", newline="") as f:
        f.write(csv_text(run["script"].columns, [row]))
        f.flush()
        os.fsync(f.fileno())  # on disk before its checkpoint, even through a power loss
    last = finished(args, row["decision_steps"], row["physical_time_s"])
    run["finished"] = last
    if run["counters"][unit] % args.checkpoint_every == 0 or last:
        if callable(envs_now):  # DAU's many envs: read only for a checkpoint
            envs_now = envs_now()
        run["state"] = save_checkpoint(run, envs_now)


def save_checkpoint(run, envs_now=None):
    """The run: each part of the learner, the counters, the rows, the config, the RNGs, and `envs_now`: a dict
    under its own key ("episode" for one env, "envs" for many), as `episode_state` (or dau.py's `envs_now`) makes it."""
    state = {name: stats_state(part) if isinstance(part, RunningMeanStd) else part.state_dict()
             for name, part in run["learner"].items()}
    state.update(counters=run["counters"], rows=run["rows"], config=run["config"], torch_rng=torch.get_rng_state())
    if run["rng"] is not None:
        state["numpy_rng"] = run["rng"].bit_generator.state
    state.update(envs_now or {})
    save_atomic(os.path.join(run["dir"], "checkpoint.pt"), state)
    run["checkpointed"] = len(run["rows"])
    return state


def save_model(run_dir, state):  # what a rollout needs: the agent and the statistics of its inputs; and its run
    model = {k: state[k] for k in ("agent", "obs_rms", "repetition_stats", "config") if k in state}
    save_atomic(os.path.join(run_dir, "model.pt"), model)


# ---------------------------------------------------------------- exact resume of episodes and simulators
EPISODE_ATTRIBUTES = ("obs", "force", "last_action", "held", "episode_return", "episode_length")  # of the wrappers
SIMULATOR = mujoco.mjtState.mjSTATE_INTEGRATION  # everything mj_step reads: time, qpos, qvel, act, warm start, forces
READ_BEFORE_STEP = ("xpos", "xipos")  # derived, not state, but read before mj_step (Ant: xpos; Humanoid: xipos)


def is_mujoco(env):  # another env starts a fresh episode on resume
    return isinstance(env.unwrapped, mujoco_env.MujocoEnv)


def as_saved(v):  # numbers as Python numbers (a numpy scalar too), arrays as tensors: what weights_only loads
    if isinstance(v, np.generic):
        return v.item()
    return v if v is None or isinstance(v, (bool, int, float)) else torch.as_tensor(np.array(v))


def env_state(env):
    """One env where its next step starts: each wrapper's state within the episode, the simulator, the positions
    read before a step, and the env's RNG (resets, Perturb's draws)."""
    layers, layer, raw = [], env, env.unwrapped
    while layer is not raw:
        layers.append({k: as_saved(v) for k, v in vars(layer).items() if k in EPISODE_ATTRIBUTES})
        layer = layer.env
    simulator = np.empty(mujoco.mj_stateSize(raw.model, SIMULATOR))
    mujoco.mj_getState(raw.model, raw.data, simulator, SIMULATOR)
    derived = {name: torch.as_tensor(getattr(raw.data, name).copy()) for name in READ_BEFORE_STEP}
    return {"layers": layers, "simulator": torch.as_tensor(simulator), "derived": derived,
            "env_rng": raw.np_random.bit_generator.state}


def restore_env(env, saved):
    layers = saved["layers"] if "layers" in saved else [saved["layer"]]  # "layer": DAU's checkpoints before this
    layer, raw = env, env.unwrapped
    for attributes in layers:
        for name, value in attributes.items():
            setattr(layer, name, value.numpy() if isinstance(value, torch.Tensor) else value)
        layer = layer.env
    mujoco.mj_setState(raw.model, raw.data, saved["simulator"].numpy(), SIMULATOR)
    for name, value in saved.get("derived", {}).items():  # checkpoints before it had none: Ant was then not exact
        getattr(raw.data, name)[:] = value.numpy()
    raw.np_random.bit_generator.state = saved["env_rng"]


def episode_state(env, raw_obs, obs, *tallies):
    """For save_checkpoint: where the next decision starts, the env and the rollout's own state (its tallies of
    the episode so far: the return, the scaling return, and a script's own)."""
    if not is_mujoco(env):
        return {}
    return {"episode": {**env_state(env), "raw_obs": as_saved(raw_obs), "obs": as_saved(obs),
                        "returns": [float(tally) for tally in tallies]}}


def restore_episode(env, run, tallies=2):
    """The episode as the checkpoint left it: (raw_obs, obs, then its `tallies` tallies, 0 for any the
    checkpoint predates); and the running statistics as saved, since env.reset() just fed them."""
    saved = run["state"]["episode"]
    restore_env(env, saved)
    for name, part in run["learner"].items():
        if isinstance(part, RunningMeanStd):
            load_stats(part, run["state"][name])
    missing = [0.0] * (tallies - len(saved["returns"]))
    return saved["raw_obs"].numpy(), saved["obs"].numpy(), *saved["returns"], *missing
