#!/usr/bin/env bash
# The first runs: SAR-PPO vs plain PPO on InvertedPendulum-v5 at δ_lowest = 2 ms, seeds 1-3, 100,000 decisions
# (the report's "The first runs"; the same run folders were later extended to 200,000 decisions).
# Usage: bash benchmark/early_ip_sar_vs_ppo.sh [workers]; --list prints the commands.
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for seed in $SEEDS; do
    for method in "" "--no-repeat"; do
      echo "python sar_ppo.py --env-id InvertedPendulum-v5 --dt lowest --total-steps 100000 --seed $seed $method --log-dir results/runs --resume"
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
