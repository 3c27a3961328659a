#!/usr/bin/env bash
# δ-invariance (the paper's Fig. 3/5 and App. F.2 axes, on the part of the grid one machine affords):
# InvertedPendulum-v5 (200,000 decisions) and InvertedDoublePendulum-v5 (300,000) at δ ∈ {lowest,
# middle, original}, Hopper-v5 (500,000) at δ ∈ {lowest, original}; SAR-PPO, FiGAR-C-PPO, PPO.
#   bash benchmark/fig3_ppo_three_tasks.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig3_ppo_three_tasks.sh --list        print the commands (for benchmark/slurm.sh)
#   SEEDS="1 2 3 4 5 6 7 8" bash benchmark/fig3_ppo_three_tasks.sh 8     the paper's eight seeds
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000 lowest middle original" \
              "InvertedDoublePendulum-v5 300000 lowest middle original" \
              "Hopper-v5 500000 lowest original"; do
    set -- $spec
    env_id=$1 steps=$2
    shift 2
    for dt in "$@"; do
      for seed in $SEEDS; do
        common="--env-id $env_id --dt $dt --total-steps $steps --seed $seed --log-dir results/runs --resume"
        echo "python sar_ppo.py $common"
        echo "python figar_ppo.py $common"
        echo "python sar_ppo.py $common --no-repeat"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
