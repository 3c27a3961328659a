#!/usr/bin/env bash
# The paper's full deterministic grid: 8 envs × 4 δ × {SAR-PPO, FiGAR-C-PPO, PPO} × 8 seeds,
# 1,000,000 decisions each (768 runs), plus Sec. 5.2's stochastic settings at δ_lowest for SAR-PPO and
# FiGAR-C-PPO (8 envs × 3 kinds × 2 methods × 8 seeds = 384 runs); the same with TRPO (Fig. 3's
# second row: 768 + 384 runs) and A2C (App. fig:determ_a2c, 4 envs × 4 δ × 3 methods × 8 seeds = 384
# runs): 2,688 runs. Meant for a cluster, in arrays below its MaxArraySize (SLURM's default: 1001):
#   bash benchmark/full_grid.sh --list > commands.txt   # then benchmark/slurm.sh's loop of three arrays
# Runs go to runs/full_grid (LOG_DIR=... to change it), never to results/runs, whose committed runs have
# other budgets under the same run names.
cd "$(dirname "$0")/.."
LOG_DIR=${LOG_DIR-runs/full_grid}
[[ $LOG_DIR =~ ^[A-Za-z0-9_.+/][A-Za-z0-9_.+/-]*$ ]] || { echo "full_grid.sh: error: LOG_DIR: a folder name of letters, digits and _ . + / - (the commands go through a shell), got '$LOG_DIR'" >&2; exit 2; }
SEEDS=${SEEDS-1 2 3 4 5 6 7 8}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
ENVS="Ant-v5 HalfCheetah-v5 InvertedDoublePendulum-v5 InvertedPendulum-v5 Swimmer-v5 Reacher-v5 Hopper-v5 Walker2d-v5"
commands() {
  for env_id in $ENVS; do
    for dt in lowest low middle original; do
      for seed in $SEEDS; do
        common="--env-id $env_id --dt $dt --seed $seed --log-dir $LOG_DIR --resume"
        for learner in ppo trpo; do
          echo "python sar_$learner.py $common"
          echo "python figar_$learner.py $common"
          echo "python sar_$learner.py $common --no-repeat"
        done
        case $env_id in InvertedPendulum-v5|InvertedDoublePendulum-v5|Hopper-v5|Swimmer-v5)
          echo "python sar_ppo.py $common --a2c"
          echo "python figar_ppo.py $common --a2c"
          echo "python sar_ppo.py $common --a2c --no-repeat"
        esac
      done
    done
    for noise in action ext-force ext-force-perceptible; do
      for seed in $SEEDS; do
        common="--env-id $env_id --dt lowest --seed $seed --noise $noise --log-dir $LOG_DIR --resume"
        for learner in ppo trpo; do
          echo "python sar_$learner.py $common"
          echo "python figar_$learner.py $common"
        done
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
