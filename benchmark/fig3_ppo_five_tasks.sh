#!/usr/bin/env bash
# Fig. 3 on the five tasks fig3_ppo_three_tasks.sh does not cover: Walker2d-v5, HalfCheetah-v5,
# Ant-v5 (no normalisation, App. J.3), Reacher-v5, Swimmer-v5 at δ ∈ {lowest, original};
# SAR-PPO, FiGAR-C-PPO, PPO; 300,000 decisions. Ordered so that every task gets SAR-PPO and PPO
# at both δ (seed by seed) before any FiGAR-C-PPO run.
#   bash benchmark/fig3_ppo_five_tasks.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig3_ppo_five_tasks.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
ENVS="Walker2d-v5 HalfCheetah-v5 Ant-v5 Reacher-v5 Swimmer-v5"
common() { echo "--env-id $1 --dt $2 --total-steps 300000 --seed $3 --log-dir results/runs --resume"; }
commands() {
  for seed in $SEEDS; do
    for env_id in $ENVS; do
      for dt in lowest original; do
        echo "python sar_ppo.py $(common $env_id $dt $seed)"
        echo "python sar_ppo.py $(common $env_id $dt $seed) --no-repeat"
      done
    done
  done
  for seed in $SEEDS; do
    for env_id in $ENVS; do
      for dt in lowest original; do
        echo "python figar_ppo.py $(common $env_id $dt $seed)"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
