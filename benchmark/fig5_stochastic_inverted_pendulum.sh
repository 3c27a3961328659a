#!/usr/bin/env bash
# Stochasticity (the paper's Fig. 5): InvertedPendulum-v5 at δ_lowest under each of action,
# ext-force and ext-force-perceptible; SAR-PPO vs FiGAR-C-PPO, 200,000 decisions.
#   bash benchmark/fig5_stochastic_inverted_pendulum.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for noise in action ext-force ext-force-perceptible; do
    for seed in $SEEDS; do
      common="--env-id InvertedPendulum-v5 --dt lowest --total-steps 200000 --seed $seed --noise $noise --log-dir results/runs --resume"
      echo "python sar_ppo.py $common"
      echo "python figar_ppo.py $common"
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
