#!/usr/bin/env bash
# Fig. 4 on equal terms, DAU's side: fig4_dau.sh's 54 runs (the same tasks, δ's, T, evaluations and seeds) with the
# official input normalisation, dau.py's default (run names __dau-norm__). The close tasks' δ_lowest cells first
# (Reacher, InvertedDoublePendulum, Swimmer, Walker2d, Ant), then the rest in fig4_dau.sh's order.
#   bash benchmark/fig4_dau_norm.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig4_dau_norm.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
export SEEDS
commands() {
  all=$(bash benchmark/fig4_dau.sh --list | sed 's/ --no-input-norm//')
  first="--env-id (Reacher|InvertedDoublePendulum|Swimmer|Walker2d|Ant)-v5 --dt lowest "
  for task in Reacher InvertedDoublePendulum Swimmer Walker2d Ant; do
    grep -E -- "--env-id $task-v5 --dt lowest " <<< "$all"
  done
  grep -v -E -- "$first" <<< "$all"
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
