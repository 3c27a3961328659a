#!/usr/bin/env bash
# Runs the commands of a figure script (one per line on stdin) with N parallel workers (1 <= N <= 9999).
# Every command carries --resume, so running a figure script again continues unfinished runs
# and skips finished ones. Console output is discarded: each run logs to its progress.csv; a command that
# fails is shown with the last lines it wrote to stderr (its error), below its FAILED line.
# Exits 1 when any command failed, so that a figure script draws no figure after it. Each line reaches
# the shell as written, quotes and all: xargs gets it as one NUL-ended item, `sh -c` evaluates it.
#   bash benchmark/run.sh 2 < <(bash benchmark/early_ip_sar_vs_ppo.sh --list)
set -euo pipefail
if [ $# -gt 1 ]; then  # a figure script passes its own arguments: [workers], or --list which it handles itself
  echo "run.sh: error: takes one argument, the number of workers (or --list for the commands), got '$*'" >&2
  exit 2
fi
workers=${1-2}  # given empty, it is bad input, not the default
if [ "$workers" = --list ]; then  # called by hand with a run list's flag
  echo "run.sh: error: --list is a run list's flag (bash benchmark/<list>.sh --list); run.sh takes" \
    "[workers] and runs the commands on its stdin" >&2
  exit 2
fi
if [[ $workers == -* ]]; then  # a run list's other flags (--help) reach here: its usage, and nothing runs
  echo "run.sh: error: a run list takes [workers] (1 to 9999, default 2) or --list, got '$workers'" >&2
  exit 2
fi
if ! [[ "$workers" =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "run.sh: error: workers: must be a whole number from 1 to 9999, got '$workers'" >&2
  exit 2
fi
# A CRLF list (written on Windows) runs as its LF twin: a \r left in a line would end up in a flag's value
# (--log-dir runs\r, a folder of its own).
{ tr -d '\r' | grep -v '^\s*$' || true; } | tr '\n' '\0' | OMP_NUM_THREADS=1 xargs -0 -r -n 1 -P "$workers" sh -c '
  why=$(mktemp) || exit 1
  trap "rm -f \"\$why\"" EXIT
  echo "start: $1"
  # in a subshell: a syntax error (an unmatched quote) fails this line, with its message, not the worker
  if (eval "$1") > /dev/null 2> "$why"; then echo "done:  $1"; exit 0; fi
  printf "FAILED: %s\n%s\n" "$1" "$(tail -n 5 "$why" | sed "s/^/  | /")"  # why: the last lines it wrote to stderr
  exit 1' sh \
  || { echo "run.sh: some commands FAILED (see above)" >&2; exit 1; }
