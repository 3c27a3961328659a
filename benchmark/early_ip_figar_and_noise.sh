#!/usr/bin/env bash
# The first runs: FiGAR-C-PPO beside SAR-PPO on InvertedPendulum-v5 at δ_lowest = 2 ms, seeds 1-3, 100,000
# decisions; then both under --noise ext-force (the report's "The first runs"; the same run folders were later
# extended to 200,000 decisions).
# Usage: bash benchmark/early_ip_figar_and_noise.sh [workers]; --list prints the commands.
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  common="--env-id InvertedPendulum-v5 --dt lowest --total-steps 100000 --log-dir results/runs --resume"
  for seed in $SEEDS; do
    echo "python figar_ppo.py $common --seed $seed"
  done
  for seed in $SEEDS; do
    for script in sar_ppo.py figar_ppo.py; do
      echo "python $script $common --seed $seed --noise ext-force"
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
