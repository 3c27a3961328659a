#!/usr/bin/env bash
# App. F.2's PPO (scaled) (fig:ppo_multiple_x): plain PPO with Adam's learning rate × δ/δ0 (after
# Wawrzyński 2015) at δ_lowest on the eight tasks, with the PPO row's budgets (InvertedPendulum 200,000
# decisions, Hopper 500,000, the other six 300,000). SAR-PPO and PPO at δ_lowest are Fig. 3's runs.
#   bash benchmark/appF_ppo_scaled.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/appF_ppo_scaled.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "InvertedDoublePendulum-v5 300000" "Hopper-v5 500000" \
              "Walker2d-v5 300000" "HalfCheetah-v5 300000" "Reacher-v5 300000" "Swimmer-v5 300000" \
              "Ant-v5 300000"; do
    set -- $spec
    for seed in $SEEDS; do
      echo "python sar_ppo.py --env-id $1 --dt lowest --total-steps $2 --seed $seed --log-dir results/runs --resume --no-repeat --scale-lr"
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
