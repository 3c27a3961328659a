#!/usr/bin/env bash
# An early run: the check that the speed work kept the results (benchmark/README.md, Performance): SAR-PPO,
# InvertedPendulum-v5, δ_lowest, seed 1, 100,000 decisions, with the current code (compare with
# results/runs/InvertedPendulum-v5__sar__dt0.002__s1).
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for seed in $SEEDS; do
    echo "python sar_ppo.py --env-id InvertedPendulum-v5 --dt lowest --total-steps 100000 --seed $seed --log-dir results/speed_check --resume"
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
