"""The run's bookkeeping, shared by every training script: its folder, its files and its messages, nothing of
any method (as CleanRL keeps its helpers in cleanrl_utils beside the scripts).

A run folder holds config.json, progress.csv and checkpoint.pt. The checkpoint is the run: the learner, every RNG,
the envs where the next step starts (each wrapper's `state()`), the logged rows and the config; progress.csv and
config.json are views of it, rewritten from it on --resume. A row reaches the disk before the checkpoint that holds
it; every file is written whole or not at all; one process at a time holds a run folder. config.json names the
script that made the run, which alone resumes it.
A script passes what is its own as a `Script`: its file, its CSV columns, the flags a resume may change, the flags
it gained after its first committed runs (with the value those runs had), the flags that make smaller steps.
The command line's helpers are flags.py's (taken here too, as the scripts call them).
"""
import argparse
import contextlib
import fcntl
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from gymnasium.envs.mujoco import mujoco_env
from gymnasium.wrappers.utils import RunningMeanStd

import envs
from flags import (SEED, add_budget_flags, add_run_flags, check_budget, checked, fail,  # noqa: F401 - the
                   given_flags, parser, read_config, take_run_flags, within)  # scripts' bookkeeping.parser, ...

RESUMABLE = {"total_steps", "physical_time", "eval_every", "eval_every_s", "eval_episodes", "log_dir",  # the run's
             "run_name", "checkpoint_every", "save_model", "resume", "threads", "method"}  # may differ on --resume


class Script(NamedTuple):
    path: str  # the script's __file__: provenance, config.json's "script"
    make_parser: object  # the script's parser: which flags a command line gives
    added_later: dict  # a run made before a flag existed had this value
    smaller_steps: str  # the flags that make smaller steps, named when the loss diverges
    columns: list  # progress.csv's
    resumable: set = RESUMABLE  # flags that may differ on --resume
    unit: str = "decisions"  # what progress.csv's first column counts (DAU: transitions)
    counters: tuple = ("update", "decision_steps", "env_steps", "episodes", "wall_time_s")  # a new run's, all 0
    tallies: int = 2  # an episode's running sums a checkpoint keeps: its return, reward scaling's, a script's own


OPENED = {}  # "run": the run this process trains, while its folder is locked (what guard says of an interruption)


class Terminated(KeyboardInterrupt):  # SIGTERM (kill, SLURM's time limit): ended as Ctrl-C is
    """Raised by the SIGTERM handler that guard installs."""


def terminate(signum, frame):
    raise Terminated


def guard(main):
    """Run a script's main: Ctrl-C, SIGTERM or a failed write (a full disk) is one line; the run resumes."""
    OPENED.clear()
    before = signal.signal(signal.SIGTERM, terminate)
    try:
        main()
    except FloatingPointError as e:  # the wrappers' check_finite: the env gave a non-finite observation or reward
        run, name = OPENED.get("run"), os.path.basename(sys.argv[0])
        if run is None:
            raise
        unit = "update" if "update" in run["counters"] else "row"  # the one in progress: rows logged + 1
        sys.exit(f"{name}: the environment failed in {unit} {len(run['rows']) + 1} ({' '.join(str(e).split())}); "
                 "the run is kept up to its last checkpoint")
    except (KeyboardInterrupt, OSError) as e:
        name, run = os.path.basename(sys.argv[0]), OPENED.get("run")
        again = "the same command" if "--resume" in sys.argv else "the same command plus --resume"
        since = ""  # rows logged after the last checkpoint (--checkpoint-every above 1: DAU's 500)
        first, last = (run["checkpointed"] + 1, len(run["rows"])) if run else (0, 0)
        if first <= last:
            since = f" (from its checkpoint: row{f's {first} to' if first < last else ''} {last} made again)"
        if isinstance(e, OSError):
            sys.exit(f"{name}: {e}; once that is mended, continue the run with {again}{since}")
        what = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
        print(f"{name}: {what}" + (" before the run folder was opened; its files are as they were" if run is None
                                   else " after the run finished; its checkpoint holds every row" if run["finished"]
                                   else f"; continue the run with {again}{since}"), file=sys.stderr)
        sys.exit(143 if isinstance(e, Terminated) else 130)  # as a shell's for SIGTERM, for Ctrl-C
    finally:
        OPENED.clear()  # the run (DAU: its replay memory) is not kept past main
        signal.signal(signal.SIGTERM, before)


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


def csv_text(columns, rows, header=False):  # what csv.DictWriter writes for these numbers (None: ""), \r\n too
    lines = ([columns] if header else []) + [["" if row[c] is None else row[c] for c in columns] for row in rows]
    return "".join(",".join(map(str, line)) + "\r\n" for line in lines)


def code_version(script):
    """The git commit, and whether the code that makes a run's numbers differs from it (None outside git)."""
    code = (os.path.basename(script), "envs.py", "bookkeeping.py", "flags.py", "requirements.txt")
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
def finished(args, decisions, physical_time):
    """Whether a run with these logged decisions (DAU: transitions) and physical seconds has spent its budget.
    DAU's --physical-time is its --total-steps in whole rows of transitions."""
    if args.total_steps is not None:
        return decisions >= args.total_steps
    return physical_time >= args.physical_time - 1e-9


def spent(args, script, decisions, physical_time):  # "4,096 decisions reach --total-steps 4,096", for messages
    if args.physical_time is None:
        return f"{decisions:,} {script.unit} reach --total-steps {args.total_steps:,}"
    done = f"{decisions:,} {script.unit}" if args.total_steps is not None else f"{physical_time:g} s"  # DAU's
    return f"{done} reach --physical-time {args.physical_time:g} s"


def evaluation_due(args, counters, steps, dt):
    """Whether the update just counted in `counters` ends with an evaluation: every --eval-every updates, or the
    first update that reaches each multiple of --eval-every-s seconds of physical time (one evaluation if it passes
    several; `steps`: the update's δ-steps)."""
    if args.eval_every_s:
        before, now = (counters["env_steps"] - steps) * dt, counters["env_steps"] * dt
        return int(now / args.eval_every_s + 1e-9) > int(before / args.eval_every_s + 1e-9)
    return bool(args.eval_every) and counters["update"] % args.eval_every == 0


# ---------------------------------------------------------------- an update-based script's run
def open_or_resume(args, argv, script, learner, config, rng):
    """Lock the run folder, start the run or load its checkpoint into `learner` (`open_run`: a finished run exits
    here), say its plan; return the run."""
    run = open_run(args, argv, script, learner, config, rng)
    run["start"] = time.time() - run["counters"]["wall_time_s"]  # the run's clock, across its sessions
    update = run["counters"]["update"]
    if args.total_steps is None:
        plan = f"updates of {args.num_steps:,} decisions until --physical-time {args.physical_time:g} s"
    else:
        updates = math.ceil(args.total_steps / args.num_steps)
        plan = f"{updates} update{'s' * (updates != 1)} of {args.num_steps:,} decisions"
        if args.total_steps % args.num_steps:
            plan += f" (--total-steps {args.total_steps:,} rounded up to {updates * args.num_steps:,})"
    print(f"{run['dir']}: {args.method}, {plan}", flush=True)
    if update and "episode" not in (run["state"] or {}):
        print(f"note: {args.env_id} is not a MuJoCo task, whose episode a checkpoint keeps: update {update + 1} "
              "starts a fresh episode, so the rows differ from an uninterrupted run's")
    return run


def resumed_episode(run, env):
    """A run resumed mid-episode (a MuJoCo task's checkpoint keeps it): `env` (just reset) set back to where the
    next decision starts, the learner's running statistics as saved (the reset fed them), and the episode's
    (raw_obs, obs, `script.tallies` sums); None if there is none to go on with."""
    saved = (run["state"] or {}).get("episode")
    if saved is None:
        return None
    restore_env(env, saved)
    for name, part in run["learner"].items():
        if isinstance(part, RunningMeanStd):
            load_stats(part, run["state"][name])
    tallies = saved["returns"] + [0.0] * (run["script"].tallies - len(saved["returns"]))  # 0: one it predates
    return (saved["raw_obs"].numpy(), saved["obs"].numpy(), *tallies)


def log_and_checkpoint(run, args, row, said, env, episode):
    """Log the update's `row` with the run's counters and clock, with a checkpoint and the `episode` in progress
    every --checkpoint-every updates (`log_row`: a diverged loss exits); print its line: how far, what the script
    `said`, its speeds, the time left."""
    counters, dt = run["counters"], run["config"]["dt"]
    counters["wall_time_s"] = time.time() - run["start"]
    row = {"decision_steps": counters["decision_steps"], "env_steps": counters["env_steps"],
           "physical_time_s": round(counters["env_steps"] * dt, 6), "wall_time_s": round(counters["wall_time_s"], 3),
           "episodes": counters["episodes"], **row}
    said = [*said, f"{row['decisions_per_s']:.0f} decisions/s",
            f"{row['env_steps_per_s']:.0f} δ-steps/s in the rollout"]
    log_row(run, args, row, episode_now(env, episode))
    update, n = run["counters"]["update"], args.num_steps
    if args.total_steps is None:  # updates as long in physical time as this one
        done = f"{update}"
        left = max(0.0, args.physical_time - row["physical_time_s"]) / (n * row["action_duration_mean_s"])
    else:
        updates = math.ceil(args.total_steps / n)
        done, left = f"{update}/{updates}", updates - update
    update_time = n / row["decisions_per_s"]
    print(" | ".join([f"update {done}", f"decisions {row['decision_steps']}",
                      f"physical {row['physical_time_s']:.0f}s", *said, f"left {left * update_time / 60:.1f} min"]),
          flush=True)


def episode_now(env, episode):
    """For a checkpoint: the env and the `episode` (raw_obs, obs, tallies) where the next decision starts; {} if
    not MuJoCo."""
    if not is_mujoco(env):
        return {}
    raw_obs, obs, *tallies = episode
    return {"episode": {**env_state(env), "raw_obs": as_saved(raw_obs), "obs": as_saved(obs),
                        "returns": [float(tally) for tally in tallies]}}


def end(run, args, env):
    """The run is finished: model.pt if --save-model, and the env closed."""
    if args.save_model:
        save_model(run["dir"], run["state"])
    env.close()


# ---------------------------------------------------------------- the run folder
def open_run(args, argv, script, learner, config, rng=None):
    """Lock the run folder; continue the run from its checkpoint or start it (a finished run exits 0, a bad one 2).
    `learner`: the parts with a state (a RunningMeanStd, or anything with state_dict)."""
    run_dir = os.path.join(args.log_dir, args.run_name)
    progress, checkpoint = os.path.join(run_dir, "progress.csv"), os.path.join(run_dir, "checkpoint.pt")
    if os.path.isfile(run_dir):
        fail(f"--run-name: {run_dir} is a file, not a run folder; choose another --run-name")
    try:  # first: a run being trained is that, whatever its files say
        os.makedirs(run_dir, exist_ok=True)
        fcntl.flock(os.open(run_dir, os.O_RDONLY), fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until the process ends
    except BlockingIOError:
        fail(f"--run-name: {run_dir} is being trained by another process; wait for it, or choose another "
             "--run-name")
    except OSError as e:
        fail(f"--log-dir: cannot make {run_dir} ({e.strerror})")
    if not (os.path.exists(progress) or os.path.exists(checkpoint)):
        # a folder of something else (the run writes these, and hidden .tmp files, before its first row)
        others = sorted(f for f in os.listdir(run_dir) if f not in ("config.json", "model.pt") and f[0] != ".")
        if others:
            fail(f"--run-name: {run_dir} holds files that are not a run's ({', '.join(others[:3])}); choose "
                 "another --run-name or --log-dir")
        if args.resume:  # as a list starts its runs
            print(f"note: --resume: no run in {run_dir} yet; starting it")
    elif os.path.exists(checkpoint) and not args.resume:
        fail(f"--run-name: {run_dir} exists{as_it_stands(run_dir, script)}; pass --resume to continue it (with a "
             "larger budget to train it further) or choose another --run-name")
    elif not args.resume:  # a committed run in a clone: rows, no state to go on from
        fail(f"--run-name: {run_dir} exists without a checkpoint.pt to train further from"
             f"{as_it_stands(run_dir, script)}; choose another --run-name or --log-dir")
    counters = {name: 0 for name in script.counters}
    run = {"dir": run_dir, "script": script, "learner": learner, "rng": rng, "rows": [], "config": None,
           "state": None, "counters": counters, "checkpointed": 0, "finished": False}
    OPENED["run"] = run
    state, done, physical, made = None, 0, 0.0, {}
    if args.resume and os.path.exists(checkpoint):
        try:
            state = torch.load(checkpoint, weights_only=True)
        except Exception as e:  # noqa: BLE001 - a torn or overwritten file fails in many ways, each one line here
            fail(f"--resume: {checkpoint} is damaged ({type(e).__name__}: {brief(e)}), so the run cannot go on "
                 "from it; move the folder aside and train the run anew, or choose another --run-name")
        if not isinstance(state, dict) or not isinstance(state.get("config"), dict):
            fail(f"--resume: {checkpoint} is not a checkpoint of a run: it holds no config")
        refuse_changed_flags(args, script, state["config"], run_dir)
        try:
            for name, part in learner.items():
                if isinstance(part, RunningMeanStd):
                    load_stats(part, state[name])
                else:
                    part.load_state_dict(state[name])
            torch.set_rng_state(state["torch_rng"])
            if rng is not None:
                rng.bit_generator.state = state["numpy_rng"]
        except Exception as e:  # noqa: BLE001 - a foreign file fails in many ways, each one line here
            fail(f"--resume: {checkpoint} is not a checkpoint of this run ({type(e).__name__}: {brief(e)})")
        run.update(counters=state["counters"], rows=state["rows"], config=state["config"], state=state,
                   checkpointed=len(state["rows"]))
        if run["rows"]:
            done, physical = run["rows"][-1]["decision_steps"], run["rows"][-1]["physical_time_s"]
        made = state["config"]
    elif args.resume and os.path.exists(progress):  # a clone has no checkpoint: read progress.csv's last whole row
        try:
            last = ([""] + Path(progress).read_text().split("\n")[1:-1])[-1].split(",")
            done, physical = int(last[0] or 0), float(last[2]) if last[0] else 0.0
        except (OSError, ValueError, IndexError) as e:
            fail(f"--resume: cannot read {progress} ({type(e).__name__}), and there is no checkpoint.pt")
        if done:  # rows logged: refuse other flags as a checkpoint would; config.json holds them
            made = read_config(run_dir)
            if made is None:
                fail(f"--resume: cannot read {run_dir}/config.json, and there is no checkpoint.pt")
            refuse_changed_flags(args, script, made, run_dir)
    if args.resume and not state and done and not finished(args, done, physical):
        fail(f"--resume: {run_dir} has {done:,} {script.unit} but no checkpoint.pt to continue from")
    key = "total_steps" if args.physical_time is None else "physical_time"
    shown = (lambda v: f"{v:,}") if args.physical_time is None else (lambda v: f"{v:g} s")  # noqa: E731
    if made.get(key, getattr(args, key)) != getattr(args, key) and not (done and finished(args, done, physical)):
        print(f"note: {run_dir} was made with --{key.replace('_', '-')} {shown(made[key])}; it now ends at "
              f"{shown(getattr(args, key))}")  # a budget may change
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
    run["config"] = {**config, "script": os.path.basename(script.path),  # provenance; --resume compares it
                     "resumed_at_decision_steps": done or None, "code": code,  # flags of the latest (re)start
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


def refuse_changed_flags(args, script, made, run_dir):
    """A run resumes only by the script that made it (config.json's "script"; committed runs and runs in flight
    made before it was recorded have none: their flags alone are compared), and with its own flags."""
    own, this = made.get("script"), os.path.basename(script.path)
    if own not in (None, this):
        fail(f"--resume: {run_dir} is a {made.get('method')} run, made by {own}; resume it with {own}")
    made = {**script.added_later, **made}  # a run made before a flag existed had its value then
    for key, value in vars(args).items():
        if key not in script.resumable and made.get(key) != value:
            flag = "--" + key.replace("_", "-")
            fail(f"{flag}: {run_dir} was made with {flag} {made.get(key)}, not {value}; leave it out to "
                 "continue the run as it was made")


def log_row(run, args, row, envs_now=None):
    """Append `row` to progress.csv, on the disk before the checkpoint that holds it: every --checkpoint-every
    updates (DAU: rows) and at the end. `envs_now`: what `save_checkpoint` saves of where the next step starts,
    or a function that reads it. A diverged loss exits before it reaches a row or a checkpoint."""
    unit = "update" if "update" in run["counters"] else "row"
    if not math.isfinite(row["policy_loss"] + row["value_loss"]):
        sys.exit(f"{os.path.basename(sys.argv[0])}: the loss diverged in {unit} {run['counters'][unit]} (not "
                 f"logged); train anew under another --run-name with {run['script'].smaller_steps}")
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})  # Ctrl-C waits for both
    run["rows"].append(row)
    with open(os.path.join(run["dir"], "progress.csv"), "a", newline="") as f:
        f.write(csv_text(run["script"].columns, [row]))
        f.flush()
        os.fsync(f.fileno())  # on disk before its checkpoint, even through a power loss
    last = finished(args, row["decision_steps"], row["physical_time_s"])
    run["finished"] = last
    try:
        if run["counters"][unit] % args.checkpoint_every == 0 or last:
            if callable(envs_now):  # DAU's many envs: read only for a checkpoint
                envs_now = envs_now()
            run["state"] = save_checkpoint(run, envs_now)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def save_checkpoint(run, envs_now=None):
    """The run: each part of the learner, the counters, the rows, the config, the RNGs, and `envs_now`: a dict
    under its own key ("episode" for one env, "envs" for many)."""
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
def is_mujoco(env):  # another env starts a fresh episode on resume
    return isinstance(env.unwrapped, mujoco_env.MujocoEnv)


def as_saved(v):  # numbers as Python numbers (a numpy scalar too), arrays as tensors: what weights_only loads
    if isinstance(v, (dict, list)):
        return {k: as_saved(x) for k, x in v.items()} if isinstance(v, dict) else [as_saved(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v if v is None or isinstance(v, (bool, int, float, str)) else torch.as_tensor(np.array(v))


def as_numpy(v):  # what as_saved saved, its tensors as numpy arrays
    if isinstance(v, (dict, list)):
        return {k: as_numpy(x) for k, x in v.items()} if isinstance(v, dict) else [as_numpy(x) for x in v]
    return v.numpy() if isinstance(v, torch.Tensor) else v


def env_state(env):  # envs.env_state, as a checkpoint holds it
    return as_saved(envs.env_state(env))


def restore_env(env, saved):
    envs.restore_env(env, as_numpy(saved))
