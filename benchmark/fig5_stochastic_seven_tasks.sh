#!/usr/bin/env bash
# The paper's Fig. 5 on the seven tasks besides InvertedPendulum (fig5_stochastic_inverted_pendulum.sh):
# Hopper-v5, Walker2d-v5, HalfCheetah-v5, Reacher-v5, Swimmer-v5, InvertedDoublePendulum-v5, Ant-v5, in that
# order, at δ_lowest under action noise, external force and strong perceptible force (App. J.2's per-task σ);
# SAR-PPO vs FiGAR-C-PPO, 300,000 decisions. Seed by seed within a task, so a partial grid has every setting
# of a task.
#   bash benchmark/fig5_stochastic_seven_tasks.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
ENVS="Hopper-v5 Walker2d-v5 HalfCheetah-v5 Reacher-v5 Swimmer-v5 InvertedDoublePendulum-v5 Ant-v5"
commands() {
  for env_id in $ENVS; do
    for seed in $SEEDS; do
      for noise in action ext-force ext-force-perceptible; do
        common="--env-id $env_id --dt lowest --total-steps 300000 --seed $seed --noise $noise --log-dir results/runs --resume"
        echo "python sar_ppo.py $common"
        echo "python figar_ppo.py $common"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
