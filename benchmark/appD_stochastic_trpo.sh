#!/usr/bin/env bash
# Fig. 5 with TRPO (fig:stoch_trpo): SAR-TRPO vs FiGAR-C-TRPO under action, ext-force and
# ext-force-perceptible at δ_lowest on InvertedPendulum-v5 (200,000 decisions), InvertedDoublePendulum-v5
# and Hopper-v5 (300,000), as the PPO runs of Fig. 5.
#   bash benchmark/appD_stochastic_trpo.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "InvertedDoublePendulum-v5 300000" "Hopper-v5 300000"; do
    set -- $spec
    for noise in action ext-force ext-force-perceptible; do
      for seed in $SEEDS; do
        common="--env-id $1 --dt lowest --total-steps $2 --seed $seed --noise $noise --log-dir results/runs --resume"
        echo "python sar_trpo.py $common"
        echo "python figar_trpo.py $common"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
