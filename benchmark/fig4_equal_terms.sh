#!/usr/bin/env bash
# Fig. 4 on equal terms: fig4_dau_norm.sh's 54 DAU runs and fig4_sar_ppo_to_T.sh's 54 SAR-PPO runs, alternating
# (both lists in their own order: the close tasks' δ_lowest cells first), so that both sides advance together.
#   bash benchmark/fig4_equal_terms.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig4_equal_terms.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
export SEEDS
commands() {
  paste -d '\n' <(bash benchmark/fig4_dau_norm.sh --list) <(bash benchmark/fig4_sar_ppo_to_T.sh --list) | grep -v '^$'
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
