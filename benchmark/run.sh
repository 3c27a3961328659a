#!/usr/bin/env bash
# Runs the commands of a figure script (one per line on stdin) with N parallel workers (1 <= N <= 9999).
# Every command carries --resume, so running a figure script again continues unfinished runs
# and skips finished ones. Console output is discarded: each run logs to its progress.csv.
# Exits 1 when any command failed, so that a figure script draws no figure after it. Each line reaches
# the shell as written, quotes and all: xargs gets it as one NUL-ended item, `sh -c` evaluates it.
#   bash benchmark/run.sh 2 < <(bash benchmark/early_ip_sar_vs_ppo.sh --list)
set -euo pipefail
if [ $# -gt 1 ]; then  # a figure script passes its own arguments: [workers], or --list which it handles itself
  echo "run.sh: error: takes one argument, the number of workers (or --list for the commands), got '$*'" >&2
  exit 2
fi
workers=${1-2}  # given empty, it is bad input, not the default
if ! [[ "$workers" =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "run.sh: error: workers: must be a whole number from 1 to 9999, got '$workers'" >&2
  exit 2
fi
{ grep -v '^\s*$' || true; } | tr '\n' '\0' | OMP_NUM_THREADS=1 xargs -0 -r -n 1 -P "$workers" sh -c \
  'echo "start: $1"; if eval "$1" > /dev/null 2>&1; then echo "done:  $1"; else echo "FAILED: $1"; exit 1; fi' sh \
  || { echo "run.sh: some commands FAILED (see above)" >&2; exit 1; }
