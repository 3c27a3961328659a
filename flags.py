"""A training script's command line, shared by every script: one-line errors (exit status 2), ranges shown by
--help, the budget and the run-folder flags; on --resume, the run's own value of each flag not given.
"""
import argparse
import contextlib
import glob
import io
import json
import os
import sys
from pathlib import Path


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


# ---------------------------------------------------------------- --resume: the run's own flags
def read_config(run_dir):  # a run folder's config.json as a dict, None if there is none (or it is torn)
    try:
        made = json.loads(Path(run_dir, "config.json").read_text())
    except (OSError, ValueError):
        return None
    return made if isinstance(made, dict) else None


def take_run_flags(args, argv, script):
    """--resume continues a run as it was made: each flag not on the command line `argv` is the run's own (one it
    predates: the value it had); a budget or an evaluation schedule given is taken. Whether any flag was taken.
    A run under another budget is said, not passed over; a name with its budget (__T<s>) is never made untrue."""
    if not args.resume:
        return False
    run_dir = os.path.join(args.log_dir, args.run_name)
    made = read_config(run_dir)
    mark = f"__T{args.physical_time:g}" if args.physical_time is not None else None
    if made is None and mark and mark in args.run_name:  # no run of this budget: one of another?
        pattern = glob.escape(run_dir).replace(mark, "__T*")
        for other in sorted(glob.glob(pattern)):
            seconds = (read_config(other) or {}).get("physical_time")
            if seconds is not None:
                fail(f"--resume: no run in {run_dir} to continue; {other} is this run with --physical-time "
                     f"{seconds:g}: to extend it, rename its folder to {args.run_name} first; to start a new "
                     "run, leave out --resume")
    if made is None:
        return False
    p = script.make_parser()
    given = given_flags(p, argv)
    flags = {action.dest for action in p._actions} - {"help", "log_dir", "run_name", "resume"} - given
    if {"total_steps", "physical_time"} & given:
        flags -= {"total_steps", "physical_time"}
    if {"eval_every", "eval_every_s"} & given:
        flags -= {"eval_every", "eval_every_s"}
    made = {**script.added_later, **made}
    taken = [key for key in flags & set(made) if getattr(args, key, None) != made[key]]
    for key in taken:
        setattr(args, key, made[key])
    own = made.get("physical_time")
    if own not in (None, args.physical_time) and f"__T{own:g}" in args.run_name:
        new = args.run_name.replace(f"__T{own:g}", f"__T{args.physical_time:g}")
        fail(f"--physical-time: {args.run_name} is named for its {own:g} s; to train it for "
             f"{args.physical_time:g} s, rename its folder to {new} first")
    flag, other = ("--physical-time", "--total-steps") if own is None else ("--total-steps", "--physical-time")
    if (own is None) != (args.physical_time is None):  # its name and rows follow its kind of budget
        fail(f"{flag}: {run_dir} was made with {other}; a run keeps its kind of budget (give {other}, or "
             "neither to keep its own)")
    return bool(taken)
