#!/usr/bin/env bash
# Fig. 3 at the paper's budget on the five tasks besides Hopper (fig3_hopper_1m.sh): Walker2d-v5, HalfCheetah-v5,
# Ant-v5, Reacher-v5, Swimmer-v5 at δ_lowest and δ0, 1,000,000 decisions, the flags of their 300k runs
# (fig3_ppo_five_tasks.sh) but the budget, into results/runs_1m. Ordered so that what is finished answers a
# question: SAR-PPO and PPO seeds 1-3 (60 runs), then SAR-PPO seeds 4-8 (50), then FiGAR-C-PPO seeds 1-3 at
# δ_lowest (15); Reacher, Swimmer and Ant first, Walker2d last.
#   bash benchmark/fig3_1m.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig3_1m.sh --list        print the commands (for tools/status.py, tools/grid_hours.py)
cd "$(dirname "$0")/.."
ENVS="Reacher-v5 Swimmer-v5 Ant-v5 HalfCheetah-v5 Walker2d-v5"
common() { echo "--env-id $1 --dt $2 --total-steps 1000000 --seed $3 --log-dir results/runs_1m --resume"; }
commands() {
  for env_id in $ENVS; do
    for seed in 1 2 3; do
      for dt in lowest original; do
        echo "python sar_ppo.py $(common $env_id $dt $seed)"
        echo "python sar_ppo.py $(common $env_id $dt $seed) --no-repeat"
      done
    done
  done
  for env_id in $ENVS; do
    for seed in 4 5 6 7 8; do
      for dt in lowest original; do
        echo "python sar_ppo.py $(common $env_id $dt $seed)"
      done
    done
  done
  for env_id in $ENVS; do
    for seed in 1 2 3; do
      echo "python figar_ppo.py $(common $env_id lowest $seed)"
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
