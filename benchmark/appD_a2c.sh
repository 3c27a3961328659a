#!/usr/bin/env bash
# The paper's A2C appendix (fig:determ_a2c): SAR-A2C, FiGAR-C-A2C and A2C (the PPO scripts with --a2c) on
# InvertedPendulum-v5 (200,000 decisions), InvertedDoublePendulum-v5, Hopper-v5 (500,000) and Swimmer-v5
# (300,000) at δ_lowest and δ0.
#   bash benchmark/appD_a2c.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/appD_a2c.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "InvertedDoublePendulum-v5 300000" "Hopper-v5 500000" "Swimmer-v5 300000"; do
    set -- $spec
    for dt in lowest original; do
      for seed in $SEEDS; do
        common="--a2c --env-id $1 --dt $dt --total-steps $2 --seed $seed --log-dir results/runs --resume"
        echo "python sar_ppo.py $common"
        echo "python figar_ppo.py $common"
        echo "python sar_ppo.py $common --no-repeat"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
