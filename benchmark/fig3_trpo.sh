#!/usr/bin/env bash
# Fig. 3's TRPO row: SAR-TRPO, FiGAR-C-TRPO and TRPO on the eight tasks at δ_lowest and δ0, plus δ_middle
# on the two pendulums, with the PPO row's budgets (InvertedPendulum 200,000 decisions, Hopper 500,000,
# the other six 300,000; TRPO rounds up to whole updates of 1,024). Pendulums first.
#   bash benchmark/fig3_trpo.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig3_trpo.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000 lowest middle original" \
              "InvertedDoublePendulum-v5 300000 lowest middle original" \
              "Hopper-v5 500000 lowest original" "Walker2d-v5 300000 lowest original" \
              "HalfCheetah-v5 300000 lowest original" "Reacher-v5 300000 lowest original" \
              "Swimmer-v5 300000 lowest original" "Ant-v5 300000 lowest original"; do
    set -- $spec
    env_id=$1 steps=$2
    shift 2
    for dt in "$@"; do
      for seed in $SEEDS; do
        common="--env-id $env_id --dt $dt --total-steps $steps --seed $seed --log-dir results/runs --resume"
        echo "python sar_trpo.py $common"
        echo "python figar_trpo.py $common"
        echo "python sar_trpo.py $common --no-repeat"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
