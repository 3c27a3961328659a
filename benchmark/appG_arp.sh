#!/usr/bin/env bash
# App. G's autoregressive policies (fig:arp): ARP-PPO and ARP-PPO (scaled) (arp_ppo.py, with App. G's (p, α) per task;
# --scale-lr: lr × δ/δ0) at δ_lowest on the eight tasks, with the PPO row's budgets (InvertedPendulum 200,000
# decisions, Hopper 500,000, the other six 300,000). SAR-PPO at δ_lowest is Fig. 3's runs.
#   bash benchmark/appG_arp.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/appG_arp.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "InvertedDoublePendulum-v5 300000" "Hopper-v5 500000" \
              "Walker2d-v5 300000" "HalfCheetah-v5 300000" "Reacher-v5 300000" "Swimmer-v5 300000" \
              "Ant-v5 300000"; do
    set -- $spec
    for seed in $SEEDS; do
      common="--env-id $1 --dt lowest --total-steps $2 --seed $seed --log-dir results/runs --resume"
      echo "python arp_ppo.py $common"
      echo "python arp_ppo.py $common --scale-lr"
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
