#!/usr/bin/env bash
# Runs the commands of a figure script (one per line on stdin) with N parallel workers.
# Every command carries --resume, so running a figure script again continues unfinished runs
# and skips finished ones. Console output is discarded: each run logs to its progress.csv.
#   bash benchmark/run.sh 2 < <(bash benchmark/ip_sar_vs_ppo.sh --list)
set -euo pipefail
workers=${1:-2}
grep -v '^\s*$' | OMP_NUM_THREADS=1 xargs -P "$workers" -I CMD sh -c 'echo "start: CMD"; CMD > /dev/null 2>&1 && echo "done:  CMD" || echo "FAILED: CMD"'
